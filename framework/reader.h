// How a read streams memory: the shapes the bandwidth probe times (probes/bandwidth.h), the
// fastest of which a read ceiling records, so that kernels whose loop is a read stream (GEMV)
// can start from the access pattern this core streams a level fastest with.
#pragma once

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace rooftune {

// `streams` streams at once (1, 2, 4 or 8), each over its share of the array into its own sum,
// which stays in a register or, with `sums_in_memory`, is stored and reloaded with every vector;
// with `dot`, each vector is multiplied by a cached one as it is added (a GEMV's row times x);
// with `prefetch`, each stream is fetched in software a page ahead, into L1 (prefetcht0) or, with
// `prefetch_into_l2`, as far as L2 (prefetcht1).
struct Reader {
  int streams = 8;
  bool sums_in_memory = false;
  bool prefetch = false;
  bool prefetch_into_l2 = false;
  bool dot = false;
  // "streams:2", "streams:2/sums_in_memory", "streams:2/prefetch", "streams:1/dot/prefetch_l2"
  std::string Name() const;
  // Name()'s inverse; nothing for any other text.
  static std::optional<Reader> Parse(absl::string_view name);
};

}  // namespace rooftune
