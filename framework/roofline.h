// The hierarchical roofline: a workload's bound time is the largest of its compute time at the
// ceiling of its own data type and its transfer time at each memory level's bandwidth, all at the
// thread count it ran with; a kernel that makes a second pass after its main loop (an unfused
// epilogue) adds that pass's own bound. Attainment = bound time / measured time, legally at most 1.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/machine_profile.h"
#include "framework/traffic.h"
#include "framework/workload.h"

namespace rooftune {

// The ceilings a verdict is priced against. Normally chosen by SelectCeilings; tests and the
// diagnosis build others on purpose.
struct CeilingSet {
  std::vector<Ceiling> ceilings;   // one compute ceiling and any number of bandwidth ceilings
  std::vector<std::string> notes;  // e.g. "no 2-thread DRAM ceiling measured; using 2 x 1-thread"
};

// The compute ceiling for the workload's dtype and every bandwidth ceiling, at `threads`. A
// ceiling not measured at that thread count is bounded from the counts that were (the probe
// measures 1, 2, 4, ...): the lowest of threads / t x the t-thread ceiling for each t below and
// the t-thread ceiling for each t above, an over-estimate either way so the bound stays legal.
// A note says which it used.
CeilingSet SelectCeilings(const MachineProfile& profile, Dtype dtype, int threads);

struct LevelBound {
  Ceiling ceiling;
  double work = 0;     // operations or bytes
  double seconds = 0;  // work / ceiling
};

// Attainment measured in pairs: the kernel and its binding ceiling's own loop (the compute loop
// of its dtype and path, or the stream read of as many bytes from the same level) timed back to
// back, order alternating, on the same threads. A shared machine's slow phase lasts seconds and a
// pair milliseconds, so both sides of a pair see the same machine: the ratio holds where a
// profile measured in another phase does not. See probes/paired_ceiling.h.
struct PairedAttainment {
  double median = 0, low = 0, high = 0;  // of the per-pair attainments; low, high: quartiles
  int pairs = 0;
  // The loop timed beside the kernel, "f32 compute, 2 threads (AVX3 fma)", and a runner-up's
  // where one was timed too: "..., and beside it L2 bandwidth, 1 thread (read: ...), the larger
  // bound in 3 of 41 pairs".
  std::string ceiling;
  // The loop's rate in the pairs over the stored profile's rate of that ceiling (median): how
  // fast the machine runs the ceiling now, against its profile; below 1 in a slow phase.
  double ceiling_now = 0;
};

struct Verdict {
  enum class Class { kAtBound, kHeadroom, kImpossible, kNoModel };
  Class verdict = Class::kNoModel;
  double bound_seconds = 0;  // the main loop's bound, plus pass_seconds
  double pass_seconds = 0;   // the bound of a separate pass after it (Traffic::after), if any
  double measured_seconds = 0;
  // The attainment the verdict used: the paired one where there is one, else profile_attainment.
  double attainment = 0;
  double profile_attainment = 0;  // bound_seconds (at the stored profile's ceilings) / measured
  std::optional<PairedAttainment> paired;
  // Attainment above 1 + tolerance is impossible (ImpossibleTolerance); printed with the verdict.
  double tolerance = 0;
  std::string binding;  // the name of the ceiling that sets the bound
  std::vector<LevelBound> bounds;
  std::string diagnosis;  // why an attainment above 1 is a broken model, with the evidence

  // "paired" or "profile": which attainment the verdict used.
  absl::string_view Basis() const { return paired ? "paired" : "profile"; }
  // The binding bound, whose ceiling the paired loop measures (null when there is none).
  const LevelBound* Binding() const;
};
absl::string_view ToString(Verdict::Class c);
// The inverse of ToString; anything else is InvalidArgument.
absl::StatusOr<Verdict::Class> ParseVerdictClass(absl::string_view text);

// At or above this attainment a kernel is "at bound": what is left, about a shared machine's
// noise, does not repay work on its inner loop (DESIGN.md: a kernel at 0.9 of its bound gets no
// inner-loop advice, and the report's levers give it none).
inline constexpr double kAtBoundFrom = 0.9;

// The noise below which no measurement claims anything: attainment up to 1 + 5% is still legal.
inline constexpr double kNoiseFloor = 0.05;

// The one rule for "impossible": an attainment above 1 + ImpossibleTolerance is a broken model,
// and nothing above it is ever at-bound. The tolerance is the measured noise and never less than
// kNoiseFloor. Paired, the noise is the spread of the per-pair attainments: the interquartile
// range relative to the median (half the pairs lie inside it, so a median beyond 1 by more than
// that is not one unlucky pair). Unpaired (a stored row from before pairing, a bench figure on its
// own), it is 3 x the timing's coefficient of variation.
double ImpossibleTolerance(const std::optional<PairedAttainment>& paired, double cv);

// Whether repeated timings of one piece of work ran faster than its bound beyond their own
// spread: the attainment of the median time, and ImpossibleTolerance over the quartiles of the
// repetitions' attainments, read as it reads the pairs' (`predict --measure`'s passes).
struct RepeatsAgainstBound {
  double attainment = 0;
  double tolerance = 0;
  bool above = false;
};
RepeatsAgainstBound BeyondBoundOverRepeats(double bound_seconds,
                                           const std::vector<double>& seconds);

// Repeated passes of a piece of work whose kernel was also judged in pairs beside its ceiling:
// the pairs time the kernel as tune does (cold calls where the work streams from DRAM), while the
// passes after the first may find what a cache larger than the probe measured kept (a VM's share
// of a big last level). Either above its bound beyond its noise says the model is wrong there:
// the passes (against the bound at the rate the ceiling ran beside them) where they are above,
// else the pairs.
RepeatsAgainstBound PassesOrPairsAboveBound(const RepeatsAgainstBound& pairs,
                                            double bound_seconds_now,
                                            const std::vector<double>& passes);

struct JudgeOptions {
  double at_bound_from = kAtBoundFrom;
  bool warm = false;  // repeated calls on cached data: see WarmTraffic
  // Measured beside the kernel: when given, the verdict uses its median, and the profile's
  // attainment is kept beside it (the profile still decides which ceiling binds).
  std::optional<PairedAttainment> paired;
};

// A warm measurement repeats the call on data the previous call left in cache: the levels beyond
// the nearest cache that holds the whole working set (the compulsory bytes, against what the level
// may hold between calls: MachineProfile::HeldCacheBytes) move nothing. Charging them the model's
// cold traffic is the classic way to call a cache-resident kernel memory-bound. Judge applies this
// when `warm`.
Traffic WarmTraffic(const Traffic& cold, const Workload& workload, const MachineProfile& profile);

// The traffic of an epilogue run as a separate pass over the output (bias, then ReLU): C and the
// bias loaded into registers once more, and C filled again into every level its size outgrows
// (capacities as measured, else as the OS reports them; a level of unknown size is not charged,
// so the bound stays legal). Empty for a workload without an epilogue. What fusing the epilogue
// into the kernel's final store saves; an unfused kernel's model puts it in Traffic::after.
Traffic EpiloguePassTraffic(const Workload& workload, const MachineProfile& profile);

// Whether a workload is about streaming its operands from DRAM, and so is timed (and tuned)
// cold by default: a GEMV whose operands fill half the largest cache or more (as measured, else
// as the OS reports it), or a GEMM whose operands outgrow it and that the roofline calls
// memory-bound, its compulsory bytes taking longer from DRAM than its operations at the compute
// peak (the decode shape).
// Warm, a host whose last level is larger than what this process measures (480 MiB reported,
// 13-25 MiB measured on one of ours) serves part of it from cache: 8x4096x4096 warm read B
// faster than DRAM allows. False when the profile has no ceiling to judge by.
bool StreamsFromDram(const MachineProfile& profile, const Workload& w, int threads);

// A workload whose compulsory bytes lie within 2x of a cache level's effective capacity (either
// side): timed warm, such a working set is partly held in that level and partly not, so pricing
// it at either side alone would be silently wrong (DESIGN.md). Judge adds the description to a
// warm verdict's binding when the binding ceiling is that level's or the one beyond it.
struct Straddle {
  int level = 0;            // the cache level (1, 2, ...) whose size the working set is near
  std::string description;  // "working set 25.0 MiB near L3's 32.0 MiB: partly held, partly not"
};
std::optional<Straddle> StraddledCache(const Workload& w, const MachineProfile& profile);

// The roofline's bound on a workload before anything is measured: each ceiling's bound on
// `cold_traffic` (priced warm, with what the measured caches hold, when `warm`), the one that
// binds (plus a separate pass's, after the main loop), and its name.
struct RooflineBound {
  std::vector<LevelBound> bounds;
  double seconds = 0;  // 0 when no ceiling prices the workload
  std::string binding;
  double pass_seconds = 0;  // the separate pass's share of `seconds`
};
RooflineBound BoundOf(const MachineProfile& profile, const CeilingSet& ceilings,
                      const Workload& workload, const Traffic& cold_traffic, bool warm);

// Judges one measurement. `working_set_bytes` is what the kernel touches (for the byte-count
// diagnosis); `cv` is the measurement's coefficient of variation.
Verdict Judge(const MachineProfile& profile, const CeilingSet& ceilings, const Workload& workload,
              int threads, const Traffic& traffic, double measured_seconds, double cv,
              const JudgeOptions& options = {});

// What a PMU counted over one call, where it could: the bytes filled into each level (indexed as
// Traffic::bytes) and the floating-point operations.
struct CountedTraffic {
  std::array<std::optional<double>, kNumMemoryLevels> bytes;
  std::optional<double> flops;
};

// For a verdict judged impossible, which of the two causes the counters point to, or "" when
// they counted nothing that bears on the ceiling that binds. Counted bytes at that level well
// under the model's: the byte count is wrong. About the model's: the bytes did move, faster
// than the ceiling allows, so the ceiling is measured low. The same for a compute bound with
// FLOPs.
std::string CounterEvidence(const Verdict& verdict, const CountedTraffic& counted);

}  // namespace rooftune
