// The command line: rooftune's arguments, one per line of the input. Whatever parses names a
// command or asks for help, and every flag it took is one of rooftune's own.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "cli/args.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> words = {"rooftune"};
  for (absl::string_view line : absl::StrSplit(text, '\n')) words.emplace_back(line);
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  absl::StatusOr<rooftune::cli::Arguments> args =
      rooftune::cli::ParseArguments(int(words.size()), argv.data());
  if (args.ok()) {
    for (const std::string& flag : args->flags) FUZZ_CHECK(!flag.empty());
    FUZZ_CHECK(args->positional.empty() || !args->command.empty());
  } else {
    FUZZ_CHECK(!args.status().message().empty());
  }
  return 0;
}
