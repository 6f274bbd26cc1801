// The config parser (--config and stored configs) over a space with integer and named parameters
// and a constraint: whatever parses is valid and formats to a text that parses back to itself.
#include <cstddef>
#include <cstdint>
#include <string>

#include "framework/param_space.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

const rooftune::ParamSpace& Space() {
  static const rooftune::ParamSpace* space = [] {
    auto* s = new rooftune::ParamSpace();
    s->Add("MR", {4, 6, 8, 16}, "rows of the register block")
        .Add("KC", {16, 64, 256, 1024}, "depth of a packed panel")
        .AddChoice("PACKB", {"ahead", "in_place", "first_use"}, "when B is packed")
        .Add("PF", {0, 512, 4096}, "prefetch distance")
        .OnlyWhen("PACKB is not first_use",
                  [](const rooftune::Config& c) { return c.Get("PACKB") != 2; })
        .Require("MR x KC within 4096",
                 [](const rooftune::Config& c) { return c.Get("MR") * c.Get("KC") <= 4096; });
    return s;
  }();
  return *space;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const rooftune::ParamSpace& space = Space();
  const rooftune::Config base{{"MR", 6}, {"KC", 64}, {"PACKB", 0}, {"PF", 512}};
  absl::StatusOr<rooftune::Config> config = space.Parse(text, base);
  if (config.ok()) {
    FUZZ_CHECK(space.Validate(*config).ok());
    absl::StatusOr<rooftune::Config> again = space.Parse(space.Format(*config), base);
    FUZZ_CHECK(again.ok() && *again == *config);
  }
  bool completed = false;
  absl::StatusOr<rooftune::Config> stored = space.ParseStored(text, base, &completed);
  if (stored.ok()) FUZZ_CHECK(space.CheckDomains(*stored).ok());
  return 0;
}
