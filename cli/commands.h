// The rooftune subcommands. Each returns the process exit status, or an error that main() prints
// as one line (status 2 for usage errors, 1 for everything else).
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace rooftune::cli {

// Runs `command` with the flags already parsed into their Abseil flag values.
absl::StatusOr<int> RunCommand(const std::string& command);

// The text of `rooftune --help` (and `rooftune <command> --help`).
std::string HelpText(const std::string& command);

}  // namespace rooftune::cli
