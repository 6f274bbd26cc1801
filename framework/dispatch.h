// Which config a call of a workload runs: the rule the library API (its dispatch and explain)
// and `rooftune predict` share.
//
//   1. A tuned row of this machine for exactly this kernel, workload and thread count.
//   2. Else the nearest tuned workload of the same kernel, op, dtype, epilogue and thread count:
//      nearest in log space (the distance between two shapes is the Euclidean distance of their
//      dimensions' logarithms, so 512 is as far from 256 as from 1024), and only one on the same
//      side of the roofline's ridge (memory-bound or compute-bound at this thread count on the
//      measured profile): a config tuned to stream weights says nothing about a compute-bound
//      shape. Without measured ceilings the side is unknown and no row is borrowed.
//   3. Else the kernel's analytic initial config.
// The thread count comes first (ChooseThreads): the rule then runs at the count chosen.
// A stored config that is stale (tuned before the kernel's config schema changed) or no longer
// parses for the kernel (tuned on another SIMD target) is never run; it is skipped and counted.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "framework/kernel.h"
#include "framework/machine_profile.h"
#include "framework/tuning_db.h"
#include "framework/workload.h"

namespace rooftune::dispatch {

enum class Source { kTuned, kNearestTuned, kInitial };

struct Choice {
  Config config;
  Source source = Source::kInitial;
  std::string tuned_workload;  // the row's Workload::Key() for kTuned and kNearestTuned
  double distance = 0;         // log-space distance to that row's shape (0 when tuned)
  double attainment = 0;       // that row's attainment (0 for the initial config)
  std::string reason;          // one clause for people: why this config
};

// Whether `w` on `threads` threads is memory-bound on `profile`: its compulsory intensity below
// the ridge of its compute ceiling and the DRAM fill bandwidth. nullopt without both ceilings.
std::optional<bool> MemoryBound(const Workload& w, int threads, const MachineProfile& profile);

// Euclidean distance of the logarithms of the two shapes' dimensions (m, n, k).
double LogShapeDistance(const Workload& a, const Workload& b);

// The rule above, over `rows` (this machine's tuned results, any kernel).
Choice ChooseConfig(const Kernel& kernel, const Workload& w, int threads,
                    const MachineProfile& profile, const std::vector<TunedResult>& rows);

// The threads a call of `w` runs on when `threads` are offered: fewer where `tune --threads
// auto` offered exactly that many for this kernel and workload and found fewer as fast (a
// memory-bound GEMV that one core streams as fast as two), else all of them. `why` (when not
// null) gets a clause for people where it chose fewer.
int ChooseThreads(const Kernel& kernel, const Workload& w, int threads,
                  const std::vector<TuningDb::ThreadChoice>& choices, std::string* why = nullptr);

}  // namespace rooftune::dispatch
