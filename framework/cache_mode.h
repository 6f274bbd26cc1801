// Whether a workload's operands are timed in the caches a previous call left them in (warm) or
// evicted before every call (cold). A result is tuned, stored and looked up per mode.
#pragma once

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rooftune {

enum class CacheMode { kWarm, kCold };

absl::string_view ToString(CacheMode mode);
// "warm" or "cold"; anything else is InvalidArgument.
absl::StatusOr<CacheMode> ParseCacheMode(absl::string_view text);

}  // namespace rooftune
