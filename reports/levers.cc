#include "reports/levers.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/kernel.h"
#include "framework/traffic.h"
#include "framework/workload.h"

namespace rooftune::reports {
namespace {

using Bytes = std::array<double, kNumMemoryLevels>;

// A verdict's bounds by ceiling: the compute time, and per memory level the bytes and the rate
// they were priced at.
struct Bounds {
  double compute_seconds = 0;
  Bytes bytes{};
  Bytes rate{};             // bytes/s; 0 where the level has no ceiling
  double pass_seconds = 0;  // a separate pass after the main loop (an unfused epilogue)

  explicit Bounds(const Verdict& v) : pass_seconds(v.pass_seconds) {
    for (const LevelBound& b : v.bounds) {
      if (b.ceiling.kind == Ceiling::Kind::kCompute) {
        compute_seconds = b.seconds;
      } else {
        bytes[int(b.ceiling.level)] = b.work;
        rate[int(b.ceiling.level)] = b.ceiling.per_second;
      }
    }
  }
  double MemorySeconds(const Bytes& moved) const {
    double seconds = 0;
    for (int i = 0; i < kNumMemoryLevels; ++i) {
      if (rate[i] > 0) seconds = std::max(seconds, moved[i] / rate[i]);
    }
    return seconds;
  }
  // The bound time were `moved` the bytes of the main loop at each level (and `compute` its
  // operations' time); a separate pass adds its own.
  double With(const Bytes& moved) const { return With(moved, compute_seconds); }
  double With(const Bytes& moved, double compute) const {
    return std::max(compute, MemorySeconds(moved)) + pass_seconds;
  }
  double Now() const { return With(bytes); }
  // The memory time were every level beyond L1 to move each operand once. (What L1 feeds the
  // registers is the register block's reuse: the inner loop's business.)
  Bytes CompulsoryBeyondL1(double compulsory) const {
    Bytes moved = bytes;
    for (int i = int(MemoryLevel::kL2); i < kNumMemoryLevels; ++i) {
      moved[i] = std::min(moved[i], compulsory);
    }
    return moved;
  }
};

// The fastest stored time for a workload key at `threads`, whichever kernel ran it.
std::optional<double> BestSeconds(const std::vector<TunedResult>& rows, const std::string& key,
                                  int threads) {
  std::optional<double> best;
  for (const TunedResult& r : rows) {
    if (r.workload == key && r.threads == threads && r.median_seconds > 0) {
      best = std::min(best.value_or(r.median_seconds), r.median_seconds);
    }
  }
  return best;
}

const TunedResult* FindRow(const std::vector<TunedResult>& rows, const std::string& kernel,
                           const std::string& key, int threads) {
  for (const TunedResult& r : rows) {
    if (r.kernel == kernel && r.workload == key && r.threads == threads) return &r;
  }
  return nullptr;
}

// The narrower operands the row's kernel could run on: the dtype of the kernel it declares it
// narrows to (NarrowsTo: int8 weights for f32), if that kernel is registered.
std::optional<Dtype> NarrowerDtype(const TunedResult& row) {
  const Kernel* kernel = KernelRegistry::Global().Find(row.kernel);
  if (kernel == nullptr || kernel->narrower.empty()) return std::nullopt;
  const Kernel* narrower = KernelRegistry::Global().Find(kernel->narrower);
  if (narrower == nullptr || narrower->dtypes.empty()) return std::nullopt;
  return narrower->dtypes.front();
}

// Whether a verdict prices its row: bounds from ceilings, and a model that is not broken.
bool Priced(const Verdict& v) {
  return !v.bounds.empty() && v.measured_seconds > 0 && v.bound_seconds > 0 &&
         v.verdict != Verdict::Class::kImpossible && v.verdict != Verdict::Class::kNoModel;
}

Lever FewerBytes(const ReportInput& in, const Bounds& b, const Workload& w,
                 const TunedResult& row) {
  const std::vector<TunedResult>& rows = in.results;
  const std::vector<Verdict>& verdicts = in.verdicts;
  Lever lever{Lever::Kind::kFewerBytes};
  const std::optional<Dtype> narrower = NarrowerDtype(row);
  if (!narrower) {
    lever.how = w.dtype == Dtype::kF32 ? "no kernel on narrower operands declared (NarrowsTo)"
                                       : "its weights are one byte already";
    return lever;
  }
  Workload narrowed = w;
  narrowed.dtype = *narrower;
  const double ratio = narrowed.CompulsoryBytes() / w.CompulsoryBytes();
  lever.how = absl::StrFormat("%s operands (%.2fx the bytes)", ToString(*narrower), ratio);
  // The narrower workload's bound: its fastest judged row's, or its best kernel's by that
  // kernel's own model: a kernel built for the narrower types blocks for them (an AMX int8 GEMM
  // moves other bytes than an f32 one). Else this row's traffic shrunk as the operands do, with
  // the operations at the narrower type's own compute ceiling.
  const TunedResult* fastest = nullptr;
  double narrowed_bound = 0;
  for (size_t j = 0; j < rows.size() && j < verdicts.size(); ++j) {
    if (rows[j].workload != narrowed.Key() || rows[j].threads != row.threads) continue;
    if (!Priced(verdicts[j])) continue;
    if (fastest == nullptr || rows[j].median_seconds < fastest->median_seconds) {
      fastest = &rows[j], narrowed_bound = verdicts[j].bound_seconds;
    }
  }
  std::optional<ModelBound> modelled;
  if (fastest == nullptr && in.model_bound) modelled = in.model_bound(narrowed, row.threads);
  if (fastest != nullptr) {
    absl::StrAppend(&lever.how, ", priced by the ", fastest->kernel, " row");
  } else if (modelled && modelled->seconds > 0) {
    narrowed_bound = modelled->seconds;
    absl::StrAppend(&lever.how, ", priced by the ", modelled->kernel, " model");
  } else {
    Bytes moved = b.bytes;
    for (double& bytes : moved) bytes *= ratio;
    double compute = b.compute_seconds;
    for (const Ceiling& c : SelectCeilings(in.profile, narrowed.dtype, row.threads).ceilings) {
      if (c.kind == Ceiling::Kind::kCompute && c.per_second > 0) {
        compute = narrowed.Operations() / c.per_second;
      }
    }
    narrowed_bound = b.With(moved, compute);
  }
  lever.gain = b.Now() / narrowed_bound;
  if (b.compute_seconds > 0 && b.compute_seconds >= b.Now()) {
    // Fewer bytes cannot lower a bound that the operations set: the gain is the narrower type's
    // compute ceiling, which a reader of "fewer bytes" would not guess.
    absl::StrAppend(&lever.how, "; compute binds now, so the gain is mostly ", ToString(*narrower),
                    " arithmetic");
  }
  if (std::optional<double> best = BestSeconds(rows, narrowed.Key(), row.threads)) {
    lever.measured = row.median_seconds / *best;
  }
  return lever;
}

Lever MoreWorkPerByte(const Bounds& b, const Workload& w) {
  Lever lever{Lever::Kind::kMoreWorkPerByte};
  // What the workload itself moves: each operand once beyond L1. Bytes past that are reuse's
  // business; this lever is for a workload whose own intensity falls short of the ridge.
  const double compulsory = b.MemorySeconds(b.CompulsoryBeyondL1(w.CompulsoryBytes()));
  if (b.compute_seconds <= 0 || compulsory <= b.compute_seconds) {
    lever.how = "the workload's own intensity clears the ridge: each byte carries enough work";
    return lever;
  }
  // Reusing each weight for more inputs: the bytes stay about those of the weights while the
  // operations grow with the inputs, until they bind at the ridge.
  lever.gain = std::min(b.Now(), compulsory) / b.compute_seconds;
  if (w.op == Op::kGemv) {
    const double ridge = std::ceil(lever.gain);
    lever.how = absl::StrFormat(
        "per input: %.0f or more inputs per pass over W (a GEMM with M >= %.0f)", ridge, ridge);
  } else {
    const bool rows_are_inputs = w.m <= w.n;
    const double inputs = double(rows_are_inputs ? w.m : w.n);
    lever.how =
        absl::StrFormat("per input: %s >= %.0f per pass over %s", rows_are_inputs ? "M" : "N",
                        std::ceil(inputs * lever.gain), rows_are_inputs ? "B" : "A");
  }
  return lever;
}

Lever BetterReuse(const Bounds& b, const Workload& w) {
  Lever lever{Lever::Kind::kBetterReuse};
  const double compulsory = w.CompulsoryBytes();
  lever.gain = b.Now() / b.With(b.CompulsoryBeyondL1(compulsory));
  // The level whose excess over the compulsory bytes costs the most time (a few percent over
  // them is the model's small terms, the bias, a row's edge: not a reuse to name).
  int worst = -1;
  for (int i = int(MemoryLevel::kL2); i < kNumMemoryLevels; ++i) {
    if (b.bytes[i] <= 1.05 * compulsory || b.rate[i] <= 0) continue;
    if (worst < 0 || b.bytes[i] / b.rate[i] > b.bytes[worst] / b.rate[worst]) worst = i;
  }
  if (worst < 0) {
    lever.how = "every level beyond L1 moves about the compulsory bytes";
  } else {
    lever.how = absl::StrFormat("%s moves %.1fx the compulsory bytes", ToString(MemoryLevel(worst)),
                                b.bytes[worst] / compulsory);
    absl::StrAppend(&lever.how, lever.Pays() ? ": blocks that bring each operand in once"
                                             : ", but that is not what binds");
  }
  return lever;
}

Lever Fusion(const MachineProfile& profile, const Bounds& b, const Workload& w,
             const TunedResult& row, const std::vector<TunedResult>& rows) {
  Lever lever{Lever::Kind::kFusion};
  if (w.epilogue == Epilogue::kNone) {
    lever.how = "no epilogue to fuse";
    return lever;
  }
  const KernelRegistry& registry = KernelRegistry::Global();
  const Kernel* kernel = registry.Find(row.kernel);
  const bool unfused = kernel != nullptr && !kernel->unfused_variant_of.empty();
  const std::string fused_kernel = unfused ? kernel->unfused_variant_of : row.kernel;
  const Kernel* unfused_kernel = unfused ? kernel : registry.UnfusedVariantOf(row.kernel);
  const TunedResult* other =
      unfused_kernel == nullptr
          ? nullptr
          : FindRow(rows, unfused ? fused_kernel : unfused_kernel->name, row.workload, row.threads);
  // The pass over C after the main loop: its time adds to the bound, the main loop's overlap
  // of compute and traffic cannot hide it.
  if (unfused) {
    lever.gain = b.Now() / (b.Now() - b.pass_seconds);
    if (other != nullptr) lever.measured = row.median_seconds / other->median_seconds;
    lever.how = absl::StrFormat("%s in the final store (%s): no pass over C after the GEMM",
                                ToString(w.epilogue), fused_kernel);
    return lever;
  }
  lever.pulled = true;
  const double pass = b.MemorySeconds(EpiloguePassTraffic(w, profile).bytes);
  if (other != nullptr) lever.measured = other->median_seconds / row.median_seconds;
  lever.how = absl::StrFormat("fused: a separate %s pass would raise the bound %.2fx",
                              ToString(w.epilogue), (b.Now() + pass) / b.Now());
  return lever;
}

Lever Threads(const MachineProfile& profile, const Bounds& b, const Workload& w,
              const TunedResult& row, const std::vector<TunedResult>& rows) {
  Lever lever{Lever::Kind::kThreads};
  const int most = std::max(1, profile.logical_cpus);
  if (row.threads >= most) {
    lever.how = absl::StrFormat("it runs on every CPU (%d)", most);
    return lever;
  }
  // The same operations and bytes against the ceilings of every CPU (a separate pass, if any,
  // left as it is).
  Bounds wide = b;
  for (const Ceiling& c : SelectCeilings(profile, w.dtype, most).ceilings) {
    if (c.per_second <= 0) continue;
    if (c.kind == Ceiling::Kind::kCompute) {
      wide.compute_seconds = w.Operations() / c.per_second;
    } else if (b.rate[int(c.level)] > 0) {
      wide.rate[int(c.level)] = c.per_second;
    }
  }
  lever.gain = b.Now() / wide.Now();
  if (const TunedResult* there = FindRow(rows, row.kernel, row.workload, most)) {
    lever.measured = row.median_seconds / there->median_seconds;
  }
  lever.how = absl::StrFormat("%d threads instead of %d", most, row.threads);
  return lever;
}

// About what the cheapest call costs before its work starts (dispatch, checks, the edges: some
// tens of nanoseconds on the small-matrix path, a microsecond where threads are woken): the
// roofline does not model it, so a bound below it cannot be reached by any inner loop.
constexpr double kCallFixedCostSeconds = 1e-7;

Lever InnerLoop(const Bounds& b, const Verdict& v) {
  Lever lever{Lever::Kind::kInnerLoop};
  // Paired, the gap is the one measured beside the bound's own loop, whatever phase the profile
  // was measured in.
  lever.gain = v.paired ? 1 / v.paired->median : v.measured_seconds / b.Now();
  lever.how = absl::StrFormat("%.0f%% of its bound (%s%s): ", 100 / lever.gain, v.binding,
                              v.paired ? ", paired" : "");
  if (b.Now() < kCallFixedCostSeconds && lever.Pays()) {
    absl::StrAppend(&lever.how, "a bound of ", FormatSeconds(b.Now()),
                    " is below a call's fixed cost (0.1 us on the small-matrix path, about 1 us "
                    "where threads are woken), which the roofline does not model: more work per "
                    "call");
  } else {
    absl::StrAppend(&lever.how, "instruction schedule, prefetch, blocking");
  }
  return lever;
}

}  // namespace

absl::string_view ToString(Lever::Kind kind) {
  switch (kind) {
    case Lever::Kind::kFewerBytes: return "fewer bytes";
    case Lever::Kind::kMoreWorkPerByte: return "more work per byte";
    case Lever::Kind::kBetterReuse: return "better reuse";
    case Lever::Kind::kFusion: return "fusion";
    case Lever::Kind::kThreads: return "threads";
    case Lever::Kind::kInnerLoop: return "inner loop";
  }
  return "?";
}

std::vector<Lever> LeversOf(const ReportInput& in, size_t i) {
  if (i >= in.results.size() || i >= in.verdicts.size() || !Priced(in.verdicts[i])) return {};
  const TunedResult& row = in.results[i];
  absl::StatusOr<Workload> w = ParseWorkloadKey(row.workload);
  if (!w.ok()) return {};
  const Bounds b(in.verdicts[i]);
  return {FewerBytes(in, b, *w, row),
          MoreWorkPerByte(b, *w),
          BetterReuse(b, *w),
          Fusion(in.profile, b, *w, row, in.results),
          Threads(in.profile, b, *w, row, in.results),
          InnerLoop(b, in.verdicts[i])};
}

const Lever* FirstThatPays(const std::vector<Lever>& levers) {
  for (const Lever& lever : levers) {
    if (lever.Pays()) return &lever;
  }
  return nullptr;
}

nlohmann::json LeversJson(const std::vector<Lever>& levers) {
  nlohmann::json out = nlohmann::json::array();
  for (const Lever& lever : levers) {
    out.push_back(
        {{"lever", ToString(lever.kind)},
         {"gain", lever.gain},
         {"pays", lever.Pays()},
         {"pulled", lever.pulled},
         {"measured", lever.measured ? nlohmann::json(*lever.measured) : nlohmann::json()},
         {"how", lever.how}});
  }
  return out;
}

std::string LeversText(const std::vector<Lever>& levers, const std::string& indent) {
  const Lever* first = FirstThatPays(levers);
  std::string out;
  for (const Lever& lever : levers) {
    std::string figure = lever.pulled ? "pulled" : absl::StrFormat("%.2fx", lever.gain);
    if (lever.measured) {
      absl::StrAppend(&figure, absl::StrFormat(" (%.2fx measured)", *lever.measured));
    }
    absl::StrAppend(&out, absl::StrFormat("%s%-19s %-22s %s%s\n", indent, ToString(lever.kind),
                                          figure, lever.how, &lever == first ? "  <- first" : ""));
  }
  return out;
}

}  // namespace rooftune::reports
