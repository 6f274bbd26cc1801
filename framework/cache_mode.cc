#include "framework/cache_mode.h"

#include "absl/strings/str_cat.h"

namespace rooftune {

absl::string_view ToString(CacheMode mode) { return mode == CacheMode::kWarm ? "warm" : "cold"; }

absl::StatusOr<CacheMode> ParseCacheMode(absl::string_view text) {
  for (CacheMode mode : {CacheMode::kWarm, CacheMode::kCold}) {
    if (text == ToString(mode)) return mode;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("cache mode '", text, "' is neither warm nor cold"));
}

}  // namespace rooftune
