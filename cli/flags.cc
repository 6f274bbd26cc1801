#include "cli/flags.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"

#define ROOFTUNE_FLAG(type, name, default_value, help) ABSL_FLAG(type, name, default_value, help);
#include "cli/flags.def"
#undef ROOFTUNE_FLAG
