// Attainment measured in pairs: a kernel and the loop of the ceiling that binds it, timed back to
// back, order alternating, on the same pinned threads. The stored profile is the prior: it says
// which ceiling binds (and so which loop to run) and what the levers are; the pairs give the
// denominator. On a shared machine a probe taken minutes earlier, in a slow or fast phase, prices
// every later verdict wrong; a pair's two calls lie milliseconds apart and see the same machine.
#pragma once

#include "absl/status/statusor.h"
#include "framework/executor.h"
#include "framework/harness.h"
#include "framework/kernel.h"
#include "framework/machine_profile.h"
#include "framework/roofline.h"

namespace rooftune::probes {

struct PairingOptions {
  double seconds = 0.5;  // pairs keep coming for this long...
  int min_pairs = 11;    // ...and at least this many,
  int max_pairs = 401;   // but no more than this.
  // Cold: the kernel's operands are evicted before each of its calls, and the stream read's bytes
  // before each read. Warm: each timed call follows an untimed call of its own, so that it finds
  // the caches as its own repetitions left them, not as the other side of the pair did.
  CacheMode cache = CacheMode::kWarm;
};

// Times `kernel` under `config` on `problem` (its output already validated; `prepared` made for
// it) beside the loop of the ceiling that binds `prior` (a Judge of the same kernel against the
// profile): the compute loop of that ceiling's dtype and path, ops for ops, or the stream read of
// the level's bytes from a buffer the level holds (the probe's working set for that level), read
// by the fastest of the probe's readers. Each pair's attainment is the binding work at the
// fastest rate the loop reached in that pair or the two on either side (a loop call the host
// preempted does not lower the ceiling), plus the prior's separate pass, over the kernel's time.
// A bound of the other kind close behind the binding one (compute beside a read, or a read
// beside compute) has its loop timed in the same pairs, and a pair's bound is then the larger of
// the two at their rates in it: in another phase of a shared machine the other one binds.
// NotFound when the binding ceiling has no loop here (a plugin's ceiling, no bound at all).
absl::StatusOr<PairedAttainment> MeasurePairedAttainment(const MachineProfile& profile,
                                                         const Kernel& kernel, const Config& config,
                                                         Problem& problem, const Prepared& prepared,
                                                         Executor& executor, const Verdict& prior,
                                                         const PairingOptions& options);

// A validated trial judged as tune, bench and run judge it: against the profile (the prior), then
// beside its binding ceiling, the verdict taken from the pairs. Where no loop can be paired, the
// profile's verdict is returned as it is (Verdict::Basis() says "profile").
absl::StatusOr<Verdict> JudgeBesideCeiling(const MachineProfile& profile, const Kernel& kernel,
                                           const Trial& trial, Problem& problem, Executor& executor,
                                           PairingOptions options = {});
// The same with the trial's operands already prepared (a caller that ran the kernel holds them:
// preparing again can copy a layer's weights a second time).
absl::StatusOr<Verdict> JudgeBesideCeiling(const MachineProfile& profile, const Kernel& kernel,
                                           const Trial& trial, Problem& problem,
                                           const Prepared& prepared, Executor& executor,
                                           PairingOptions options = {});

}  // namespace rooftune::probes
