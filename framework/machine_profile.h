// What rooftune knows about the machine it runs on: facts read from the OS and CPUID, the cache
// levels (as sysfs reports them and as the latency probe discovers them), and the measured
// ceilings. Every verdict is priced against this profile, and its fingerprint keys the tuning
// database.
#pragma once

#include "absl/strings/string_view.h"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/workload.h"
#include "nlohmann/json.hpp"

namespace rooftune {

// The memory hierarchy as a roofline sees it: each level feeds the one nearer the core.
enum class MemoryLevel { kL1 = 0, kL2 = 1, kL3 = 2, kDram = 3 };
inline constexpr int kNumMemoryLevels = 4;
absl::string_view ToString(MemoryLevel level);

struct CacheLevel {
  int level = 0;              // 1, 2, 3, ...
  std::string type;           // "Data", "Unified", "Instruction"
  uint64_t size_bytes = 0;
  int ways = 0;               // 0 when unknown
  int line_bytes = 64;
  int shared_by_cpus = 1;     // logical CPUs sharing one instance
};

// One measured limit. Compute ceilings are per data type and thread count; bandwidth ceilings per
// memory level and thread count.
struct Ceiling {
  enum class Kind { kCompute, kBandwidth };
  Kind kind = Kind::kCompute;
  Dtype dtype = Dtype::kF32;              // compute only
  MemoryLevel level = MemoryLevel::kDram;  // bandwidth only
  int threads = 1;
  double per_second = 0;  // operations/s (compute) or bytes/s (bandwidth)
  std::string source;     // which probe measured it, e.g. "fma_f32", "read"

  std::string Name() const;  // "f32 compute, 2 threads" / "DRAM bandwidth, 1 thread"
};

struct MachineProfile {
  std::string cpu_model;
  std::string vendor;
  std::vector<std::string> isa;          // "avx2", "fma", "avx512f", "avx512vnni", ...
  std::vector<std::string> hwy_targets;  // Highway targets this CPU supports, best first
  int logical_cpus = 1;                  // CPUs this process may run on
  int physical_cores = 1;
  std::vector<CacheLevel> caches;        // data and unified caches, as the OS reports them
  std::string os_kernel;
  std::string transparent_hugepages;
  std::string rooftune_version;
  std::vector<Ceiling> ceilings;

  // A stable hash of the facts that make tuned results transferable: CPU model, ISA flags,
  // cores, cache geometry, kernel, THP setting and rooftune version. Not the measured ceilings.
  std::string Fingerprint() const;

  // Capacity of the data (or unified) cache at `level` (1-based) as the OS reports it, or
  // nullopt where there is no such level.
  std::optional<CacheLevel> DataCache(int level) const;
  bool HasIsa(absl::string_view flag) const;

  // The compute ceiling for the arithmetic `dtype` does, at exactly `threads` threads.
  const Ceiling* FindCompute(Dtype dtype, int threads) const;
  const Ceiling* FindBandwidth(MemoryLevel level, int threads) const;

  nlohmann::json ToJson() const;
  static absl::StatusOr<MachineProfile> FromJson(const nlohmann::json& json);
};

// The dtype whose compute ceiling prices a workload of `dtype`: s8 weights dequantised against f32
// activations run on the f32 FMA units.
Dtype ComputeDtype(Dtype dtype);

}  // namespace rooftune
