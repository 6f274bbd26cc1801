// rooftune's command line: parse, run one command, turn an error into one line on stderr and an
// exit status (2 for usage errors, 1 for runtime failures).
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  absl::StatusOr<rooftune::cli::Arguments> args = rooftune::cli::ParseArguments(argc, argv);
  if (!args.ok()) {
    std::cerr << "rooftune: " << args.status().message() << "\n";
    return 2;
  }
  if (args->help || args->command.empty()) {
    absl::StatusOr<std::string> help = rooftune::cli::HelpText(args->command);
    if (!help.ok()) {
      std::cerr << "rooftune: " << help.status().message() << "\n";
      return 2;
    }
    std::cout << *help;
    return args->help ? 0 : 2;
  }
  absl::StatusOr<int> status = rooftune::cli::RunCommand(*args);
  if (!status.ok()) {
    std::cerr << "rooftune: " << status.status().message() << "\n";
    return absl::IsInvalidArgument(status.status()) ? 2 : 1;
  }
  return *status;
}
