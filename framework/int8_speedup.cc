#include "framework/int8_speedup.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace rooftune {

bool HasInt8Weights(Dtype dtype) { return dtype == Dtype::kU8S8 || dtype == Dtype::kS8F32; }

Workload F32Counterpart(const Workload& w) {
  Workload f32 = w;
  f32.dtype = Dtype::kF32;
  return f32;
}

absl::StatusOr<SpeedupBound> Int8SpeedupBound(const MachineProfile& profile, const Workload& w,
                                              int threads, bool warm) {
  if (!HasInt8Weights(w.dtype)) {
    return absl::InvalidArgumentError(absl::StrCat(ToString(w.dtype), " has no int8 weights"));
  }
  const Workload f32 = F32Counterpart(w);
  const Ceiling* compute_int8 = profile.FindCompute(w.dtype, threads);
  const Ceiling* compute_f32 = profile.FindCompute(Dtype::kF32, threads);
  const Ceiling* dram = profile.FillBandwidth(MemoryLevel::kDram, threads);
  if (compute_int8 == nullptr || compute_f32 == nullptr || dram == nullptr) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the profile lacks a compute ceiling for %s or f32, or DRAM bandwidth, at %d threads",
        ToString(w.dtype), threads));
  }
  // The bandwidth the compulsory bytes of `x` come at: DRAM, or when warm the nearest cache that
  // holds them whole.
  auto bandwidth = [&](const Workload& x) {
    const std::optional<int> level =
        warm ? profile.NearestCacheHolding(x.CompulsoryBytes()) : std::nullopt;
    const Ceiling* cache =
        level ? profile.FillBandwidth(MemoryLevel(*level - 1), threads) : nullptr;
    return (cache != nullptr ? cache : dram)->per_second;
  };
  const double compute_f32_s = f32.Operations() / compute_f32->per_second;
  const double compute_int8_s = w.Operations() / compute_int8->per_second;
  const double bytes_f32_s = f32.CompulsoryBytes() / bandwidth(f32);
  const double bytes_int8_s = w.CompulsoryBytes() / bandwidth(w);
  SpeedupBound bound;
  bound.f32_bound_seconds = std::max(compute_f32_s, bytes_f32_s);
  bound.int8_bound_seconds = std::max(compute_int8_s, bytes_int8_s);
  bound.ratio = bound.f32_bound_seconds / bound.int8_bound_seconds;
  bound.memory_bound = bytes_f32_s >= compute_f32_s && bytes_int8_s >= compute_int8_s;
  if (bound.memory_bound) {
    bound.basis = absl::StrFormat("bytes: %.1f MB f32 / %.1f MB int8 (weights, scales, x, y)",
                                  f32.CompulsoryBytes() / 1e6, w.CompulsoryBytes() / 1e6);
  } else if (compute_f32_s >= bytes_f32_s && compute_int8_s >= bytes_int8_s) {
    bound.basis = absl::StrFormat("compute ceilings: %s %.1f / f32 %.1f G(FL)OP/s, %d thread%s",
                                  ToString(ComputeDtype(w.dtype)), compute_int8->per_second / 1e9,
                                  compute_f32->per_second / 1e9, threads, threads == 1 ? "" : "s");
  } else {
    bound.basis =
        absl::StrCat("f32 bound by compute, int8 by ", warm ? "cache" : "DRAM", " bandwidth");
  }
  return bound;
}

}  // namespace rooftune
