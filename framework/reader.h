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
// with `prefetch`, each stream is fetched in software a page ahead.
struct Reader {
  int streams = 8;
  bool sums_in_memory = false;
  bool prefetch = false;
  std::string Name() const;  // "streams:2", "streams:2/sums_in_memory", "streams:2/prefetch"
  // Name()'s inverse; nothing for any other text.
  static std::optional<Reader> Parse(absl::string_view name);
};

}  // namespace rooftune
