// rooftune predict: an MLP's forward pass priced on the measured roofline before it runs, layer by
// layer, at each batch; with --measure, then run R times through the same kernels and configs and
// set beside the prediction.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "absl/algorithm/container.h"
#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/common.h"
#include "cli/flags.h"
#include "cli/options.h"
#include "cli/subcommands.h"
#include "framework/cold_cache.h"
#include "framework/executor.h"
#include "framework/harness.h"
#include "framework/prediction.h"
#include "framework/stats.h"
#include "nlohmann/json.hpp"
#include "probes/paired_ceiling.h"
#include "reports/svg.h"

namespace rooftune::cli {
namespace {

// The largest width or batch predict takes: beyond it no layer fits a server's memory.
constexpr int64_t kLargestWidth = int64_t(1) << 24;

struct PredictOptions {
  MlpSpec mlp;
  std::vector<int64_t> batches;
  std::string sweep;  // "", "batch" or "width"
  bool measure = false;
  bool json = false;
  std::string out;
};

absl::StatusOr<PredictOptions> PredictOptionsFromFlags(Session& session) {
  PredictOptions o;
  const std::string mlp = absl::GetFlag(FLAGS_mlp);
  if (mlp.empty()) return UsageError("predict needs --mlp WIDTHS (input,hidden...,output)");
  absl::StatusOr<std::vector<int64_t>> widths = PositiveIntegers("mlp", mlp, kLargestWidth);
  if (!widths.ok()) return widths.status();
  if (widths->size() < 2) return UsageError("--mlp needs at least two widths: input and output");
  o.mlp.widths = *widths;
  const std::string batch = absl::GetFlag(FLAGS_batch);
  absl::StatusOr<std::vector<int64_t>> batches =
      PositiveIntegers("batch", batch.empty() ? "1,64" : batch, kLargestWidth);
  if (!batches.ok()) return batches.status();
  o.batches = *batches;
  const std::string dtype = absl::GetFlag(FLAGS_dtype);
  if (dtype == "u8s8") {
    o.mlp.dtype = Dtype::kU8S8;
  } else if (!dtype.empty() && dtype != "f32") {
    return UsageError("predict's --dtype is f32 or u8s8");
  }
  absl::StatusOr<std::vector<int>> threads = session.ParseThreads(
      absl::GetFlag(FLAGS_threads).empty() ? "1" : absl::GetFlag(FLAGS_threads));
  if (!threads.ok()) return threads.status();
  if (threads->size() != 1) return UsageError("predict takes one thread count");
  o.mlp.threads = threads->front();
  o.mlp.repeat = absl::GetFlag(FLAGS_repeat);
  if (o.mlp.repeat < 1 || o.mlp.repeat > 100000) {
    return UsageError("--repeat must be between 1 and 100000");
  }
  o.sweep = absl::GetFlag(FLAGS_sweep);
  if (o.sweep == "batch") {
    if (!batch.empty())
      return UsageError("--sweep batch sets the batches (1 to 1024): drop --batch");
    o.batches.clear();
    for (int64_t b = 1; b <= 1024; b *= 2) o.batches.push_back(b);
  } else if (o.sweep == "width") {
    if (o.mlp.widths.size() < 3) {
      return UsageError("--sweep width grows the hidden widths: --mlp needs one (in,hidden,out)");
    }
    o.batches.resize(1);  // the first batch given (default 1)
  } else if (!o.sweep.empty()) {
    return UsageError("--sweep is batch or width");
  }
  o.measure = absl::GetFlag(FLAGS_measure);
  o.json = JsonFlag();
  o.out = absl::GetFlag(FLAGS_out);
  // Every layer's operands must fit in memory, before anything runs (a width sweep stops short
  // of that on its own).
  for (int64_t batch : o.sweep == "width" ? std::vector<int64_t>{} : o.batches) {
    double bytes = 0;
    for (const Workload& w : MlpLayers(o.mlp, batch)) bytes += OperandBytes(w);
    if (bytes > double(AvailableMemoryBytes())) {
      return UsageError(
          absl::StrFormat("batch %d: the layers' operands (%.1f GiB) do not fit in "
                          "available memory",
                          batch, bytes / double(1 << 30)));
    }
  }
  return o;
}

// One round of --measure: the R passes, then each layer's binding ceiling timed beside it.
struct Round {
  // Medians over the passes, as a tuned row's time is: a pass the host delays (a vCPU it
  // descheduled, the first call a sleeping thread joins late) does not move them.
  std::vector<double> layer_seconds;
  double total_seconds = 0;  // the median pass, not the sum of the layers' medians
  // Each layer's ceiling's rate now over the profile's, and the layer's prediction priced at that
  // rate over its measured time, minus one (both 0 where none was paired). The prediction at the
  // rate now tells a wrong model from a shared machine in a slow phase, which no profile taken
  // earlier foresees.
  std::vector<double> ceiling_now, error_now;
  std::optional<double> total_error_now;  // where every layer was paired
  // Whether each layer, and the pass, ran faster than its bound beyond the measured noise (the
  // one rule of ImpossibleTolerance): a layer judged beside its ceiling by the pairs, as tune,
  // bench and run judge, and by its passes at that ceiling's rate now (PassesOrPairsAboveBound);
  // otherwise by its passes (BeyondBoundOverRepeats); the pass by its total's, at the ceilings'
  // rates now where every layer was paired.
  std::vector<RepeatsAgainstBound> layer_check;
  RepeatsAgainstBound total_check;
};

// A shared host's slow phase lasts seconds. Measured once, the passes could fall in one phase and
// the pairs after them in another (one run measured a layer at 0.67 of its ceiling while the
// pairs after it ran the ceiling at 0.94x the profile's; the next two runs measured 0.93 and
// 0.88), so the passes and the pairs alternate in rounds, each round's error priced at its own
// pairs, and the medians over the rounds are reported.
constexpr int kRoundsBesideCeilings = 5;
// Each round's pairs: enough for a rate, few enough that the round stays within one phase.
constexpr double kRoundPairingSeconds = 0.05;
constexpr int kRoundMinPairs = 5;

struct Measured {
  std::vector<Round> rounds;  // in the order they ran
  // Each figure's median over the rounds (the lower of an even count); a check is the round's
  // whose attainment is the median.
  Round median;
};

// The median round of `rounds`, figure by figure.
Round MedianOfRounds(const std::vector<Round>& rounds) {
  auto median = [&](auto figure) {
    std::vector<double> values;
    for (const Round& r : rounds) values.push_back(figure(r));
    return QuartilesOf(values).median;
  };
  auto median_check = [&](auto check) {
    std::vector<RepeatsAgainstBound> checks;
    for (const Round& r : rounds) checks.push_back(check(r));
    absl::c_sort(checks, [](const RepeatsAgainstBound& a, const RepeatsAgainstBound& b) {
      return a.attainment < b.attainment;
    });
    return checks[(checks.size() - 1) / 2];
  };
  Round m;
  m.total_seconds = median([](const Round& r) { return r.total_seconds; });
  m.total_check = median_check([](const Round& r) { return r.total_check; });
  if (absl::c_all_of(rounds, [](const Round& r) { return r.total_error_now.has_value(); })) {
    m.total_error_now = median([](const Round& r) { return *r.total_error_now; });
  }
  const Round& first = rounds.front();
  for (size_t i = 0; i < first.layer_seconds.size(); ++i) {
    m.layer_seconds.push_back(median([&](const Round& r) { return r.layer_seconds[i]; }));
    m.layer_check.push_back(median_check([&](const Round& r) { return r.layer_check[i]; }));
  }
  for (size_t i = 0; i < first.ceiling_now.size(); ++i) {
    m.ceiling_now.push_back(median([&](const Round& r) { return r.ceiling_now[i]; }));
    m.error_now.push_back(median([&](const Round& r) { return r.error_now[i]; }));
  }
  return m;
}

// The layers of a pass made ready to run: operands, prepared weights, an executor per thread
// count (LayerPrediction::threads).
class RunnableLayers {
 public:
  static absl::StatusOr<RunnableLayers> Create(const PassPrediction& pass) {
    RunnableLayers r;
    for (const LayerPrediction& layer : pass.layers) {
      absl::StatusOr<Problem> problem = Problem::Create(layer.workload);
      if (!problem.ok()) return problem.status();
      r.problems.push_back(*std::move(problem));
      absl::StatusOr<Prepared> p = Prepare(*layer.kernel, layer.choice.config, r.problems.back());
      if (!p.ok()) return p.status();
      r.prepared.push_back(*std::move(p));
      for (ByteSpan span : r.problems.back().OperandBytes()) r.operands.push_back(span);
      for (ByteSpan span : r.prepared.back().streamed) r.operands.push_back(span);
    }
    return r;
  }
  Executor& ExecutorFor(const LayerPrediction& layer) {
    std::unique_ptr<Executor>& e = executors_[layer.threads];
    if (e == nullptr) e = std::make_unique<Executor>(layer.threads);
    return *e;
  }
  absl::Status Run(const PassPrediction& pass, size_t i) {
    const LayerPrediction& layer = pass.layers[i];
    return ExecutorFor(layer).Run(*layer.kernel, layer.choice.config, problems[i], prepared[i]);
  }

  std::vector<Problem> problems;
  std::vector<Prepared> prepared;
  std::vector<ByteSpan> operands;  // every byte a pass reads, for the eviction before it

 private:
  std::map<int, std::unique_ptr<Executor>> executors_;
};

// The operands evicted from every cache (the prediction charges the first pass cold) on the first
// layer's threads where it runs on the executor's (EvictBeforeColdCall), then the R timed passes;
// with `beside_ceilings`, each layer then judged beside its binding ceiling's loop.
absl::StatusOr<Round> MeasureRound(const PassPrediction& pass, const MlpSpec& spec,
                                   const MachineProfile& profile, RunnableLayers& layers,
                                   bool beside_ceilings) {
  const LayerPrediction& first = pass.layers.front();
  EvictBeforeColdCall(*first.kernel, layers.operands, layers.ExecutorFor(first));
  std::vector<std::vector<double>> layer_passes(pass.layers.size());
  std::vector<double> pass_totals;
  for (int r = 0; r < spec.repeat; ++r) {
    double total = 0;
    for (size_t i = 0; i < pass.layers.size(); ++i) {
      const auto start = std::chrono::steady_clock::now();
      absl::Status s = layers.Run(pass, i);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!s.ok()) return s;
      layer_passes[i].push_back(seconds);
      total += seconds;
    }
    pass_totals.push_back(total);
  }
  Round round;
  for (size_t i = 0; i < pass.layers.size(); ++i) {
    round.layer_seconds.push_back(QuartilesOf(layer_passes[i]).median);
    round.layer_check.push_back(
        BeyondBoundOverRepeats(pass.layers[i].bound.seconds, layer_passes[i]));
  }
  round.total_seconds = QuartilesOf(pass_totals).median;
  round.total_check = BeyondBoundOverRepeats(pass.bound_seconds, pass_totals);
  if (!beside_ceilings) return round;
  // Paired as the passes ran: from DRAM unless the pass stays in a cache between passes.
  const CacheMode cache =
      pass.resident_level && spec.repeat > 1 ? CacheMode::kWarm : CacheMode::kCold;
  double bound_now = 0, predicted_now = 0;
  for (size_t i = 0; i < pass.layers.size(); ++i) {
    const LayerPrediction& layer = pass.layers[i];
    Trial trial{.kernel = layer.kernel->name,
                .workload = layer.workload,
                .config = layer.choice.config,
                .threads = layer.threads,
                .cache = cache};
    trial.validation.ok = true;  // a config the tuner validated, or the kernel's initial one
    trial.seconds.median = round.layer_seconds[i];
    absl::StatusOr<Verdict> judged = probes::JudgeBesideCeiling(
        profile, *layer.kernel, trial, layers.problems[i], layers.prepared[i],
        layers.ExecutorFor(layer), {.seconds = kRoundPairingSeconds, .min_pairs = kRoundMinPairs});
    if (!judged.ok()) return judged.status();
    const double now = judged->paired ? judged->paired->ceiling_now : 0;
    if (judged->paired && now > 0) {
      round.layer_check[i] =
          PassesOrPairsAboveBound({.attainment = judged->attainment,
                                   .tolerance = judged->tolerance,
                                   .above = judged->verdict == Verdict::Class::kImpossible},
                                  layer.bound.seconds / now, layer_passes[i]);
    }
    round.ceiling_now.push_back(now);
    round.error_now.push_back(now > 0 ? layer.predicted_seconds / now / round.layer_seconds[i] - 1
                                      : 0);
    bound_now += now > 0 ? layer.bound.seconds / now : 0;
    predicted_now += now > 0 ? layer.predicted_seconds / now : 0;
  }
  if (absl::c_all_of(round.ceiling_now, [](double now) { return now > 0; })) {
    round.total_error_now = predicted_now / round.total_seconds - 1;
    // The pass's bound at the rates its layers' ceilings run now: the profile's, in a slow or
    // fast phase of the host, would flag the total where no layer is flagged, or hide one.
    round.total_check = BeyondBoundOverRepeats(bound_now, pass_totals);
  }
  return round;
}

// Runs the pass `repeat` times through the kernels and configs the prediction assumed, in
// kRoundsBesideCeilings rounds with `beside_ceilings`, else one.
// One untimed pass runs first, as the tuner's untimed calls do: the process's first kernel call
// paid twice its time here (the thread's first placement in the arena, lazy binding, first
// touches), a cost of starting the process that no pass repeats.
absl::StatusOr<Measured> MeasurePass(const PassPrediction& pass, const MlpSpec& spec,
                                     const MachineProfile& profile, bool beside_ceilings) {
  absl::StatusOr<RunnableLayers> layers = RunnableLayers::Create(pass);
  if (!layers.ok()) return layers.status();
  for (size_t i = 0; i < pass.layers.size(); ++i) {
    if (absl::Status s = layers->Run(pass, i); !s.ok()) return s;
  }
  Measured m;
  for (int r = 0; r < (beside_ceilings ? kRoundsBesideCeilings : 1); ++r) {
    absl::StatusOr<Round> round = MeasureRound(pass, spec, profile, *layers, beside_ceilings);
    if (!round.ok()) return round.status();
    m.rounds.push_back(*std::move(round));
  }
  m.median = MedianOfRounds(m.rounds);
  return m;
}

// The quartiles over the rounds of the pass's error at its ceilings' rates (zeros unless every
// round paired every layer).
Quartiles TotalErrorNowQuartiles(const Measured& m) {
  std::vector<double> errors;
  for (const Round& r : m.rounds) {
    if (!r.total_error_now) return {};
    errors.push_back(*r.total_error_now);
  }
  return QuartilesOf(errors);
}

std::string Seconds(double s) {
  if (s <= 0) return "-";
  if (s < 1e-3) return absl::StrFormat("%.1f us", s * 1e6);
  if (s < 1) return absl::StrFormat("%.3f ms", s * 1e3);
  return absl::StrFormat("%.3f s", s);
}

// Why a stored row's attainment does not price the layer: above 1 (at the bound within its
// noise, or a broken model) it would predict faster than the roofline allows.
std::string Unusable(const LayerPrediction& layer) {
  const double a = layer.choice.attainment;
  return a > 1 ? absl::StrFormat("at %.2f, above the bound", a) : "without an attainment";
}

std::string Basis(const LayerPrediction& layer) {
  switch (layer.choice.source) {
    case dispatch::Source::kTuned:
      return layer.bound_only ? absl::StrCat("bound only (tuned row ", Unusable(layer), ")")
                              : absl::StrFormat("tuned row at %.2f", layer.choice.attainment);
    case dispatch::Source::kNearestTuned:
      return layer.bound_only
                 ? absl::StrCat("bound only (nearest row ", Unusable(layer), ")")
                 : absl::StrFormat("nearest tuned %s at %.2f", layer.choice.tuned_workload,
                                   layer.choice.attainment);
    case dispatch::Source::kInitial: break;
  }
  return "bound only (no tuned row)";
}

std::string Residency(const PassPrediction& pass, int repeat) {
  const std::string size = absl::StrFormat("%.1f MiB", pass.footprint_bytes / double(1 << 20));
  if (!pass.resident_level) {
    return absl::StrCat("the pass's operands, ", size,
                        ", fit no measured cache: streamed from "
                        "DRAM every pass");
  }
  if (repeat == 1) {
    return absl::StrCat("the pass's operands, ", size, ", fit L", *pass.resident_level,
                        ", but one pass starts cold");
  }
  return absl::StrCat("the pass's operands, ", size, ", fit L", *pass.resident_level,
                      ": after the first of ", repeat,
                      " passes they come from there, not "
                      "from farther out");
}

void PrintPrediction(const PassPrediction& pass, const PredictOptions& o) {
  std::cout << absl::StrFormat("\nbatch %d: %s\n", pass.batch, Residency(pass, o.mlp.repeat));
  std::cout << absl::StrFormat("  %-5s %-36s %10s %10s %10s %10s %10s %11s  %-30s %11s  %s\n",
                               "layer", "workload", "GFLOP", "DRAM MB", "L3 MB", "L2 MB", "L1 MB",
                               "bound", "binds", "predicted", "from");
  auto row = [&](const std::string& name, const std::string& workload, double ops,
                 const std::array<double, kNumMemoryLevels>& bytes, double bound,
                 const std::string& binds, double predicted, const std::string& basis) {
    std::cout << absl::StrFormat(
        "  %-5s %-36s %10.3f %10.2f %10.2f %10.2f %10.2f %11s  %-30s %11s  %s\n", name, workload,
        ops / 1e9, bytes[3] / 1e6, bytes[2] / 1e6, bytes[1] / 1e6, bytes[0] / 1e6, Seconds(bound),
        binds, Seconds(predicted), basis);
  };
  for (size_t i = 0; i < pass.layers.size(); ++i) {
    const LayerPrediction& l = pass.layers[i];
    std::array<double, kNumMemoryLevels> bytes;
    for (int j = 0; j < kNumMemoryLevels; ++j) bytes[j] = l.traffic.Total(MemoryLevel(j));
    row(absl::StrCat(i + 1), l.workload.Key(), l.workload.Operations(), bytes, l.bound.seconds,
        l.bound.binding.empty() ? "(no ceiling)" : l.bound.binding, l.predicted_seconds, Basis(l));
  }
  row("total", "", pass.operations, pass.bytes, pass.bound_seconds, "", pass.predicted_seconds,
      pass.bound_only ? "bound only" : "");
}

void PrintMeasured(const PassPrediction& pass, const Measured& measured) {
  const Round& m = measured.median;
  std::cout << absl::StrFormat(
      "  measured in %d round(s) of the passes, each followed by every layer's binding ceiling "
      "timed\n  beside it (its rate now over the profile's); medians over the rounds, the error "
      "at it\n  each round's prediction priced at that round's rates:\n  %-5s %11s %11s %11s "
      "%10s %12s %14s\n",
      measured.rounds.size(), "layer", "predicted", "measured", "attainment", "error",
      "ceiling now", "error at it");
  // Faster than the bound beyond the noise is a broken model, never a fast kernel: most often a
  // cache larger than the probe measured (a VM's share of a big last level) holding what it
  // charged to DRAM.
  auto row = [](const std::string& name, double predicted, double bound, double measured,
                double ceiling_now, std::optional<double> error_now, const std::string& spread,
                const RepeatsAgainstBound& check) {
    std::cout << absl::StrFormat(
        "  %-5s %11s %11s %11.2f %+9.1f%% %12s %14s%s%s\n", name, Seconds(predicted),
        Seconds(measured), bound / measured, 100 * (predicted / measured - 1),
        ceiling_now > 0 ? absl::StrFormat("%.2fx", ceiling_now) : "-",
        error_now ? absl::StrFormat("%+.1f%%", 100 * *error_now) : "-", spread,
        check.above
            ? absl::StrFormat("  above the bound beyond its noise (%s%.2f > 1 + %.0f%%): the "
                              "model is wrong here (a cache larger than measured holding "
                              "the pass?)",
                              ceiling_now > 0 ? "at its ceiling now " : "", check.attainment,
                              100 * check.tolerance)
            : "");
  };
  for (size_t i = 0; i < pass.layers.size(); ++i) {
    const bool paired = i < m.ceiling_now.size() && m.ceiling_now[i] > 0;
    const LayerPrediction& l = pass.layers[i];
    row(absl::StrCat(i + 1), l.predicted_seconds, l.bound.seconds, m.layer_seconds[i],
        paired ? m.ceiling_now[i] : 0, paired ? std::optional(m.error_now[i]) : std::nullopt, "",
        m.layer_check[i]);
  }
  std::string spread;
  if (m.total_error_now && measured.rounds.size() > 1) {
    const Quartiles q = TotalErrorNowQuartiles(measured);
    spread = absl::StrFormat(" (%+.1f%% to %+.1f%%)", 100 * q.low, 100 * q.high);
  }
  row("total", pass.predicted_seconds, pass.bound_seconds, m.total_seconds, 0, m.total_error_now,
      spread, m.total_check);
}

nlohmann::json BytesJson(const std::array<double, kNumMemoryLevels>& bytes) {
  return {{"L1", bytes[0]}, {"L2", bytes[1]}, {"L3", bytes[2]}, {"DRAM", bytes[3]}};
}

nlohmann::json PassJson(const PassPrediction& pass, const Measured* m) {
  nlohmann::json layers = nlohmann::json::array();
  for (size_t i = 0; i < pass.layers.size(); ++i) {
    const LayerPrediction& l = pass.layers[i];
    std::array<double, kNumMemoryLevels> bytes;
    for (int j = 0; j < kNumMemoryLevels; ++j) bytes[j] = l.traffic.Total(MemoryLevel(j));
    nlohmann::json j = {
        {"workload", l.workload.Key()},
        {"kernel", l.kernel->name},
        {"threads", l.threads},
        {"config", ConfigText(l.kernel->params, l.choice.config)},
        {"config_source", l.choice.source == dispatch::Source::kTuned          ? "tuned"
                          : l.choice.source == dispatch::Source::kNearestTuned ? "nearest tuned"
                                                                               : "initial"},
        {"tuned_workload", l.choice.tuned_workload},
        {"tuned_attainment", l.choice.attainment},
        {"operations", l.workload.Operations()},
        {"bytes", BytesJson(bytes)},
        {"bound_seconds", l.bound.seconds},
        {"binding", l.bound.binding},
        {"predicted_seconds", l.predicted_seconds},
        {"bound_only", l.bound_only}};
    if (m != nullptr) {
      const Round& median = m->median;
      j["measured_seconds"] = median.layer_seconds[i];
      j["attainment"] = l.bound.seconds / median.layer_seconds[i];
      j["error"] = l.predicted_seconds / median.layer_seconds[i] - 1;
      j["above_bound"] = median.layer_check[i].above;
      j["tolerance"] = median.layer_check[i].tolerance;
      if (i < median.ceiling_now.size() && median.ceiling_now[i] > 0) {
        j["ceiling_now_of_profile"] = median.ceiling_now[i];
        j["error_at_ceiling_now"] = median.error_now[i];
      }
      j["rounds"] = nlohmann::json::array();
      for (const Round& r : m->rounds) {
        nlohmann::json round = {{"measured_seconds", r.layer_seconds[i]}};
        if (i < r.ceiling_now.size() && r.ceiling_now[i] > 0) {
          round["ceiling_now_of_profile"] = r.ceiling_now[i];
          round["error_at_ceiling_now"] = r.error_now[i];
        }
        j["rounds"].push_back(std::move(round));
      }
    }
    layers.push_back(std::move(j));
  }
  nlohmann::json total = {{"operations", pass.operations},
                          {"bytes", BytesJson(pass.bytes)},
                          {"bound_seconds", pass.bound_seconds},
                          {"predicted_seconds", pass.predicted_seconds},
                          {"bound_only", pass.bound_only}};
  if (m != nullptr) {
    const Round& median = m->median;
    total["measured_seconds"] = median.total_seconds;
    total["error"] = pass.predicted_seconds / median.total_seconds - 1;
    total["above_bound"] = median.total_check.above;
    total["tolerance"] = median.total_check.tolerance;
    total["rounds"] = m->rounds.size();
    if (median.total_error_now) {
      const Quartiles q = TotalErrorNowQuartiles(*m);
      total["error_at_ceiling_now"] = *median.total_error_now;
      total["error_at_ceiling_now_quartiles"] = {q.low, q.high};
    }
  }
  return {{"batch", pass.batch},
          {"footprint_bytes", pass.footprint_bytes},
          {"resident_level", pass.resident_level
                                 ? nlohmann::json(absl::StrCat("L", *pass.resident_level))
                                 : nlohmann::json()},
          {"layers", std::move(layers)},
          {"total", std::move(total)}};
}

// The widths of `spec` with every hidden width set to `hidden`.
MlpSpec WithHidden(const MlpSpec& spec, int64_t hidden) {
  MlpSpec grown = spec;
  for (size_t i = 1; i + 1 < grown.widths.size(); ++i) grown.widths[i] = hidden;
  return grown;
}

struct SweepPoint {
  int64_t batch = 1, hidden = 0;
  PassPrediction pass;
  std::optional<Measured> measured;
};

absl::Status WriteSweepSvg(const std::string& out, const std::string& sweep,
                           const std::vector<SweepPoint>& points, const MachineProfile& profile) {
  std::vector<reports::PlotSeries> series(points.front().measured ? 3 : 2);
  series[0].name = "predicted";
  series[1].name = "roofline bound";
  series[1].dashed = true;
  if (series.size() == 3) series[2].name = "measured";
  std::vector<reports::PlotMarker> markers;
  std::string svg;
  for (const SweepPoint& p : points) {
    // Batch: seconds per token (a pass serves `batch` tokens). Width: picoseconds per FLOP.
    const double x = sweep == "batch" ? double(p.batch) : p.pass.footprint_bytes;
    const double per = sweep == "batch" ? 1.0 / double(p.batch) : 1e12 / p.pass.operations;
    series[0].points.push_back({x, p.pass.predicted_seconds * per});
    series[1].points.push_back({x, p.pass.bound_seconds * per});
    if (p.measured) series[2].points.push_back({x, p.measured->median.total_seconds * per});
  }
  if (sweep == "batch") {
    svg = reports::LogLogPlotSvg("Time per token against batch", "batch (log scale)", false,
                                 "seconds per token (log scale)", series);
  } else {
    for (int level = 1; level <= 3; ++level) {
      if (std::optional<uint64_t> bytes = profile.EffectiveCacheBytes(level)) {
        markers.push_back({double(*bytes), absl::StrCat("L", level, " (measured)")});
      }
    }
    svg = reports::LogLogPlotSvg("Time per FLOP against the pass's footprint",
                                 "weights and activations of a pass (log scale)", true,
                                 "picoseconds per FLOP (log scale)", series, markers);
  }
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  return WriteFile(out + "/predict.svg", reports::StackSvg({svg}));
}

// The sweep's points, predicted (and measured with --measure), in order: batch 1 to 1024, or the
// hidden widths doubled from 64 until the pass outgrows the largest measured cache four times.
absl::StatusOr<std::vector<SweepPoint>> PredictPoints(const PredictOptions& o,
                                                      const Session::Machine& machine) {
  const MachineProfile& profile = machine.profile;
  std::vector<SweepPoint> points;
  const double largest = double(profile.LargestEffectiveCacheBytes());
  for (int64_t step = o.sweep == "batch" ? 1 : 64; step <= (o.sweep == "batch" ? 1024 : 65536);
       step *= 2) {
    SweepPoint p;
    p.batch = o.sweep == "batch" ? step : o.batches.front();
    p.hidden = o.sweep == "width" ? step : 0;
    const MlpSpec spec = o.sweep == "width" ? WithHidden(o.mlp, step) : o.mlp;
    absl::StatusOr<PassPrediction> pass =
        PredictMlp(spec, p.batch, profile, machine.rows, machine.thread_choices);
    if (!pass.ok()) return UsageError(pass.status().message());
    if (o.sweep == "width" &&
        (pass->footprint_bytes * 2 > double(AvailableMemoryBytes()) ||
         (!points.empty() && largest > 0 && points.back().pass.footprint_bytes > 4 * largest))) {
      break;
    }
    p.pass = *std::move(pass);
    if (o.measure) {
      std::cerr << "predict: measuring " << (o.sweep == "batch" ? "batch " : "hidden width ")
                << step << "\n";
      absl::StatusOr<Measured> m = MeasurePass(p.pass, spec, profile, false);
      if (!m.ok()) return m.status();
      p.measured = *std::move(m);
    }
    points.push_back(std::move(p));
  }
  return points;
}

// --sweep batch or width: a row per point, where each layer turns compute-bound, and the picture.
absl::StatusOr<int> Sweep(const PredictOptions& o, const Session::Machine& machine,
                          nlohmann::json& out) {
  const MachineProfile& profile = machine.profile;
  absl::StatusOr<std::vector<SweepPoint>> predicted = PredictPoints(o, machine);
  if (!predicted.ok()) return predicted.status();
  const std::vector<SweepPoint>& points = *predicted;
  const Ceiling* compute = profile.FindCompute(o.mlp.dtype, o.mlp.threads);
  const Ceiling* dram = profile.FillBandwidth(MemoryLevel::kDram, o.mlp.threads);
  const double ridge = compute && dram ? compute->per_second / dram->per_second : 0;
  nlohmann::json sweep = {
      {"kind", o.sweep}, {"ridge_ops_per_byte", ridge}, {"points", nlohmann::json::array()}};
  if (!o.json) {
    std::cout << absl::StrFormat("\nsweep %s: ridge %.1f %s per DRAM byte (%s over %s)\n", o.sweep,
                                 ridge, CountsIntegerOps(o.mlp.dtype) ? "OP" : "FLOP",
                                 compute ? compute->Name() : "no compute ceiling",
                                 dram ? dram->Name() : "no DRAM ceiling");
    std::cout << absl::StrFormat("  %-8s %12s %-10s %12s %12s %14s %14s %s\n",
                                 o.sweep == "batch" ? "batch" : "hidden", "footprint", "held in",
                                 "predicted", "bound",
                                 o.sweep == "batch" ? "per token" : "per GFLOP",
                                 o.measure ? "measured" : "", "layers compute-bound");
  }
  std::vector<int64_t> crossover(points.front().pass.layers.size(), 0);
  for (const SweepPoint& p : points) {
    int compute_bound = 0;
    for (size_t i = 0; i < p.pass.layers.size(); ++i) {
      const std::optional<bool> memory =
          dispatch::MemoryBound(p.pass.layers[i].workload, o.mlp.threads, profile);
      if (memory.has_value() && !*memory) {
        ++compute_bound;
        if (o.sweep == "batch" && crossover[i] == 0) crossover[i] = p.batch;
      }
    }
    const double per = o.sweep == "batch" ? 1.0 / double(p.batch) : 1e9 / p.pass.operations;
    if (!o.json) {
      std::cout << absl::StrFormat(
          "  %-8d %9.1f MiB %-10s %12s %12s %14s %14s %d of %d\n",
          o.sweep == "batch" ? p.batch : p.hidden, p.pass.footprint_bytes / double(1 << 20),
          p.pass.resident_level ? absl::StrCat("L", *p.pass.resident_level) : "DRAM",
          Seconds(p.pass.predicted_seconds), Seconds(p.pass.bound_seconds),
          Seconds(p.pass.predicted_seconds * per),
          p.measured ? Seconds(p.measured->median.total_seconds * per) : "", compute_bound,
          p.pass.layers.size());
    }
    nlohmann::json point = PassJson(p.pass, p.measured ? &*p.measured : nullptr);
    point["hidden"] = p.hidden;
    point["layers_compute_bound"] = compute_bound;
    sweep["points"].push_back(std::move(point));
  }
  if (o.sweep == "batch") {
    sweep["crossover_batch"] = nlohmann::json::array();
    for (size_t i = 0; i < crossover.size(); ++i) {
      sweep["crossover_batch"].push_back(crossover[i] > 0 ? nlohmann::json(crossover[i])
                                                          : nlohmann::json());
      if (!o.json) {
        std::cout << absl::StrFormat(
            "  layer %d (%s): %s\n", i + 1, points.front().pass.layers[i].workload.ShapeString(),
            crossover[i] > 0 ? absl::StrCat("compute-bound from batch ", crossover[i])
                             : std::string("memory-bound up to batch 1024"));
      }
    }
  }
  out["sweep"] = std::move(sweep);
  if (!o.out.empty()) {
    if (absl::Status s = WriteSweepSvg(o.out, o.sweep, points, profile); !s.ok()) return s;
    std::cerr << "wrote " << o.out << "/predict.svg\n";
  }
  return 0;
}

// Prints the prediction for each batch (or the sweep), then measures it where asked.
absl::StatusOr<int> Predict(const PredictOptions& o, const Session::Machine& machine) {
  const MachineProfile& profile = machine.profile;
  nlohmann::json out = {
      {"schema_version", 1},      {"mlp", o.mlp.widths},    {"dtype", ToString(o.mlp.dtype)},
      {"threads", o.mlp.threads}, {"repeat", o.mlp.repeat}, {"batches", nlohmann::json::array()}};
  if (!o.json) {
    std::cout << absl::StrFormat("MLP %s, %s, %d thread(s), %d pass(es) in a row\n",
                                 absl::StrJoin(o.mlp.widths, " -> "), ToString(o.mlp.dtype),
                                 o.mlp.threads, o.mlp.repeat);
  }
  if (!o.sweep.empty()) {
    absl::StatusOr<int> status = Sweep(o, machine, out);
    if (!status.ok() || *status != 0) return status;
  }
  for (int64_t batch : o.sweep.empty() ? o.batches : std::vector<int64_t>{}) {
    absl::StatusOr<PassPrediction> pass =
        PredictMlp(o.mlp, batch, profile, machine.rows, machine.thread_choices);
    if (!pass.ok()) return UsageError(pass.status().message());
    if (!o.json) {
      PrintPrediction(*pass, o);
      std::cout.flush();  // the prediction stands before anything is measured
    }
    std::optional<Measured> measured;
    if (o.measure) {
      std::cerr << "predict: measuring batch " << batch << " (" << o.mlp.repeat << " passes)\n";
      absl::StatusOr<Measured> m = MeasurePass(*pass, o.mlp, profile, true);
      if (!m.ok()) return m.status();
      measured = *std::move(m);
      if (!o.json) PrintMeasured(*pass, *measured);
    }
    out["batches"].push_back(PassJson(*pass, measured ? &*measured : nullptr));
  }
  if (o.json) std::cout << out.dump(2) << "\n";
  if (!o.out.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.out, ec);
    if (absl::Status s = WriteFile(o.out + "/predict.json", out.dump(2) + "\n"); !s.ok()) return s;
    std::cerr << "wrote " << o.out << "/predict.json\n";
  }
  return 0;
}

}  // namespace

absl::StatusOr<int> PredictCommand(Session& session) {
  return WithProfileAndRows(session, PredictOptionsFromFlags(session), Predict);
}

}  // namespace rooftune::cli
