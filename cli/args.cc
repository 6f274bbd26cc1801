#include "cli/args.h"

#include <algorithm>

#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace rooftune::cli {

absl::StatusOr<Arguments> ParseArguments(int argc, char** argv) {
  Arguments args;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help" || arg == "-help" || arg == "help") {
      args.help = true;
      continue;
    }
    if (!absl::StartsWith(arg, "--")) {
      if (args.command.empty()) {
        args.command = arg;
      } else {
        args.positional.push_back(arg);
      }
      continue;
    }
    std::string name = arg.substr(2), value;
    bool has_value = false;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    std::replace(name.begin(), name.end(), '-', '_');
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    bool negated = false;
    if (flag == nullptr && absl::StartsWith(name, "no")) {
      flag = absl::FindCommandLineFlag(name.substr(2));
      negated = flag != nullptr && flag->IsOfType<bool>();
      if (!negated) flag = nullptr;
    }
    // Only rooftune's own flags: Abseil registers some of its own (--flagfile, ...) that the CLI
    // does not document.
    if (flag == nullptr || !absl::StrContains(flag->Filename(), "cli/")) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag '", arg, "' (see rooftune --help)"));
    }
    if (flag->IsOfType<bool>()) {
      if (!has_value) value = negated ? "false" : "true";
    } else if (!has_value) {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(absl::StrCat("flag --", name, " needs a value"));
      }
      value = argv[++i];
    }
    args.flags.emplace_back(flag->Name());
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad value '", value, "' for --", name, ": ", error));
    }
  }
  return args;
}

}  // namespace rooftune::cli
