// The shape parsers: a result's workload key ("gemm 64x48x40 f32 bias_relu") and a --shape text
// for each op. Whatever parses prints a key that parses back to the same workload.
#include <cstddef>
#include <cstdint>
#include <string>

#include "framework/workload.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<rooftune::Workload> w = rooftune::ParseWorkloadKey(text);
  if (w.ok()) {
    absl::StatusOr<rooftune::Workload> again = rooftune::ParseWorkloadKey(w->Key());
    FUZZ_CHECK(again.ok() && *again == *w);
  }
  for (rooftune::Op op : {rooftune::Op::kGemm, rooftune::Op::kGemv}) {
    absl::StatusOr<rooftune::Workload> shaped = rooftune::ParseWorkload(
        op, text, rooftune::Dtype::kF32, rooftune::Epilogue::kNone, /*memory_limit_bytes=*/1 << 30);
    if (shaped.ok()) {
      FUZZ_CHECK(shaped->m >= 1 && shaped->n >= 1 && shaped->k >= 1);
      absl::StatusOr<rooftune::Workload> again = rooftune::ParseWorkloadKey(shaped->Key());
      FUZZ_CHECK(again.ok() && *again == *shaped);
    }
  }
  return 0;
}
