// Command-line parsing on top of Abseil flags. Abseil's own parser exits the process with status 1
// on an unknown flag or a bad value; rooftune promises status 2 for usage errors, so it walks argv
// itself and hands each value to the flag's own parser through Abseil's reflection API.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rooftune::cli {

struct Arguments {
  std::string command;                  // "list", "verify", ...; empty with --help alone
  std::vector<std::string> positional;  // anything else that is not a flag
  std::vector<std::string> flags;       // the flags given, by name ("budget_seconds")
  bool help = false;
};

// Accepts --name=value, --name value, --flag / --noflag for booleans; '-' and '_' are the same in
// names (--budget-seconds). Errors are InvalidArgument with a message for the user.
absl::StatusOr<Arguments> ParseArguments(int argc, char** argv);

}  // namespace rooftune::cli
