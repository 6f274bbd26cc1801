// `rooftune db import`'s format: any JSON is an export or an error naming the problem.
#include <cstddef>
#include <cstdint>

#include "framework/tuning_db_export.h"
#include "nlohmann/json.hpp"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json j =
      nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  absl::StatusOr<rooftune::DbExport> parsed = rooftune::ParseDbExport(j);
  if (!parsed.ok()) FUZZ_CHECK(!parsed.status().message().empty());
  return 0;
}
