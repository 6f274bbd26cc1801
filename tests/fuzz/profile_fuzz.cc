// A stored machine profile, as `report`, `predict` and the library read it from the database:
// any JSON is a profile or an error, never a crash; a profile writes JSON that reads back.
#include <cstddef>
#include <cstdint>

#include "framework/machine_profile.h"
#include "nlohmann/json.hpp"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json j =
      nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  absl::StatusOr<rooftune::MachineProfile> profile = rooftune::MachineProfile::FromJson(j);
  if (!profile.ok()) return 0;
  (void)profile->Fingerprint();
  absl::StatusOr<rooftune::MachineProfile> again =
      rooftune::MachineProfile::FromJson(profile->ToJson());
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->Fingerprint() == profile->Fingerprint());
  return 0;
}
