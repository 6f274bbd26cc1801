// The rooftune commands: their table (names, flags, help) and running one. Each command returns
// the process exit status, or an error that main() prints as one line (status 2 for usage
// errors, 1 for everything else).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "cli/args.h"

namespace rooftune::cli {

// Runs `args.command` with the flags already parsed into their Abseil flag values; a flag the
// command does not take is a usage error.
absl::StatusOr<int> RunCommand(const Arguments& args);

// `rooftune --help` (an empty command): every command in a line or two; `rooftune <command>
// --help`: that command's usage, what it does and each of its flags explained.
absl::StatusOr<std::string> HelpText(const std::string& command);

}  // namespace rooftune::cli
