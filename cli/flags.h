// rooftune's command-line flags, listed once in flags.def. Each command reads the ones it takes;
// the command table (commands.cc) lists which, refuses the rest and prints their help. napkin's
// own flags are defined beside it.
#pragma once

#include <string>
#include <vector>

#include "absl/flags/declare.h"

#define ROOFTUNE_FLAG(type, name, default_value, help) ABSL_DECLARE_FLAG(type, name);
#include "cli/flags.def"
#undef ROOFTUNE_FLAG
