// rooftune sweep batch: one weight matrix against B inputs, as B decode GEMVs (each re-streaming
// the weights) and as one GEMM of M = B (streaming them once), measured cold at each B: the time
// per token, where the GEMM turns compute-bound (measured, and predicted by the roofline), and
// Little's law for the GEMV's stream from DRAM.
#include <algorithm>
#include <chrono>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "cli/common.h"
#include "cli/flags.h"
#include "cli/options.h"
#include "cli/subcommands.h"
#include "framework/cold_cache.h"
#include "framework/dispatch.h"
#include "framework/executor.h"
#include "framework/harness.h"
#include "framework/roofline.h"
#include "framework/stats.h"
#include "nlohmann/json.hpp"
#include "reports/report.h"

namespace rooftune::cli {
namespace {

struct SweepOptions {
  int64_t n = 0, k = 0;
  Dtype dtype = Dtype::kF32;
  std::vector<int64_t> batches;
  int threads = 1;
  bool json = false;
};

absl::StatusOr<SweepOptions> SweepOptionsFromFlags(Session& session) {
  SweepOptions o;
  const std::string shape = absl::GetFlag(FLAGS_shape);
  if (shape.empty()) return UsageError("sweep batch needs --shape NxK (the weights, N outputs)");
  const std::string dtype = absl::GetFlag(FLAGS_dtype);
  if (dtype == "u8s8") {
    o.dtype = Dtype::kU8S8;
  } else if (!dtype.empty() && dtype != "f32") {
    return UsageError("sweep batch's --dtype is f32 or u8s8");
  }
  absl::StatusOr<Workload> w =
      ParseWorkload(Op::kGemv, shape, o.dtype, Epilogue::kBias, AvailableMemoryBytes() / 4);
  if (!w.ok()) return UsageError(absl::StrCat("--shape: ", w.status().message()));
  o.n = w->n, o.k = w->k;
  const std::string batch = absl::GetFlag(FLAGS_batch);
  absl::StatusOr<std::vector<int64_t>> batches =
      PositiveIntegers("batch", batch.empty() ? "1,2,4,8,16,32,64,128,256" : batch, 65536);
  if (!batches.ok()) return batches.status();
  o.batches = *std::move(batches);
  std::sort(o.batches.begin(), o.batches.end());
  o.batches.erase(std::unique(o.batches.begin(), o.batches.end()), o.batches.end());
  absl::StatusOr<std::vector<int>> threads = session.ParseThreads(
      absl::GetFlag(FLAGS_threads).empty() ? "1" : absl::GetFlag(FLAGS_threads));
  if (!threads.ok()) return threads.status();
  if (threads->size() != 1) return UsageError("sweep batch takes one thread count");
  o.threads = threads->front();
  o.json = JsonFlag();
  return o;
}

// One kernel on one workload at the config the library API would run, ready to time cold.
struct Timed {
  const Kernel* kernel = nullptr;
  Workload workload;
  dispatch::Choice choice;
  Problem problem;
  Prepared prepared;
  RooflineBound bound;
};

absl::StatusOr<Timed> Ready(const char* kernel_name, const Workload& w, int threads,
                            const MachineProfile& profile, const std::vector<TunedResult>& rows) {
  Timed t;
  t.kernel = KernelRegistry::Global().Find(kernel_name);
  if (t.kernel == nullptr)
    return absl::InternalError(absl::StrCat(kernel_name, " is not registered"));
  t.workload = w;
  t.choice = dispatch::ChooseConfig(*t.kernel, w, threads, profile, rows);
  absl::StatusOr<Problem> problem = Problem::Create(w);
  if (!problem.ok()) return problem.status();
  t.problem = *std::move(problem);
  absl::StatusOr<Prepared> prepared = Prepare(*t.kernel, t.choice.config, t.problem);
  if (!prepared.ok()) return prepared.status();
  t.prepared = *std::move(prepared);
  t.bound = BoundOf(profile, SelectCeilings(profile, w.dtype, threads), w,
                    t.kernel->TrafficFor(w, t.choice.config, threads, profile), /*warm=*/false);
  return t;
}

// The median of `calls` cold calls: operands and prepared weights evicted before each.
absl::StatusOr<double> ColdMedianSeconds(Timed& t, Executor& executor, int calls) {
  std::vector<ByteSpan> spans = t.problem.OperandBytes();
  for (ByteSpan s : t.prepared.streamed) spans.push_back(s);
  std::vector<double> seconds;
  for (int i = 0; i < calls; ++i) {
    EvictBeforeColdCall(*t.kernel, spans, executor);
    const auto start = std::chrono::steady_clock::now();
    absl::Status s = executor.Run(*t.kernel, t.choice.config, t.problem, t.prepared.object.get());
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!s.ok()) return s;
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

// The smallest batch whose time per call is at least twice batch 1's: where streaming the
// weights stops being the whole cost. 0 when none is.
int64_t Crossover(const std::vector<int64_t>& batches, const std::vector<double>& seconds) {
  for (size_t i = 0; i < batches.size(); ++i) {
    if (seconds[i] >= 2 * seconds.front()) return batches[i];
  }
  return 0;
}

// What the sweep measured: B GEMVs against one GEMM of M = B at every batch, with the roofline's
// bound of each GEMM.
struct SweepPoints {
  double gemv_seconds = 0;
  std::vector<double> gemm_seconds, bound_seconds;
  nlohmann::json points = nlohmann::json::array();
};

absl::StatusOr<SweepPoints> MeasureSweep(const SweepOptions& o, const MachineProfile& profile,
                                         const std::vector<TunedResult>& rows) {
  const bool int8 = o.dtype == Dtype::kU8S8;
  Executor executor(o.threads);
  absl::StatusOr<Timed> gemv =
      Ready(int8 ? "gemv_u8s8" : "gemv_f32", {Op::kGemv, 1, o.n, o.k, o.dtype, Epilogue::kBias},
            o.threads, profile, rows);
  if (!gemv.ok()) return gemv.status();
  std::cerr << "sweep: timing the GEMV (cold, 7 calls)\n";
  absl::StatusOr<double> gemv_seconds = ColdMedianSeconds(*gemv, executor, 7);
  if (!gemv_seconds.ok()) return gemv_seconds.status();
  SweepPoints out;
  out.gemv_seconds = *gemv_seconds;
  for (int64_t b : o.batches) {
    std::cerr << "sweep: timing the GEMM at M = " << b << " (cold)\n";
    absl::StatusOr<Timed> gemm =
        Ready(int8 ? "gemm_s8" : "gemm_f32", {Op::kGemm, b, o.n, o.k, o.dtype, Epilogue::kBias},
              o.threads, profile, rows);
    if (!gemm.ok()) return gemm.status();
    absl::StatusOr<double> seconds = ColdMedianSeconds(*gemm, executor, b <= 64 ? 7 : 3);
    if (!seconds.ok()) return seconds.status();
    out.gemm_seconds.push_back(*seconds);
    out.bound_seconds.push_back(gemm->bound.seconds);
    const double gemv_calls = double(b) * out.gemv_seconds;
    out.points.push_back({{"batch", b},
                          {"gemv_calls_seconds", gemv_calls},
                          {"gemm_seconds", *seconds},
                          {"gemm_bound_seconds", gemm->bound.seconds},
                          {"gemm_binding", gemm->bound.binding},
                          {"gemm_config", ConfigText(gemm->kernel->params, gemm->choice.config)},
                          {"seconds_per_token", std::min(gemv_calls, *seconds) / double(b)}});
  }
  return out;
}

// Little's law: bytes in flight = bandwidth x latency, a 64-byte line each: the lines needed to
// reach the DRAM bandwidth, and the lines the GEMV kept in flight.
struct LinesInFlight {
  const Ceiling* dram = nullptr;
  double needed = 0, achieved = 0;
};

LinesInFlight LittlesLaw(const SweepOptions& o, const MachineProfile& profile,
                         double gemv_seconds) {
  LinesInFlight lines;
  lines.dram = profile.FillBandwidth(MemoryLevel::kDram, o.threads);
  const double latency = profile.memory_latency_ns * 1e-9;
  const double weight_bytes = double(o.n) * double(o.k) * (o.dtype == Dtype::kU8S8 ? 1 : 4);
  lines.needed = lines.dram != nullptr ? lines.dram->per_second * latency / 64 : 0;
  lines.achieved = weight_bytes / gemv_seconds * latency / 64;
  return lines;
}

void PrintSweep(const SweepOptions& o, const MachineProfile& profile, const SweepPoints& s,
                const LinesInFlight& lines, int64_t measured, int64_t predicted) {
  std::cout << absl::StrFormat(
      "sweep batch: W %dx%d %s, %d thread(s); B GEMVs against one GEMM of M = B, cold\n"
      "  %6s %14s %14s %14s %-28s %14s\n",
      o.n, o.k, ToString(o.dtype), o.threads, "B", "B GEMVs", "GEMM", "GEMM bound", "bound by",
      "per token");
  for (size_t i = 0; i < o.batches.size(); ++i) {
    const double b = double(o.batches[i]);
    std::cout << absl::StrFormat(
        "  %6d %14s %14s %14s %-28s %14s\n", o.batches[i],
        reports::FormatSeconds(b * s.gemv_seconds), reports::FormatSeconds(s.gemm_seconds[i]),
        reports::FormatSeconds(s.bound_seconds[i]), s.points[i]["gemm_binding"].get<std::string>(),
        reports::FormatSeconds(std::min(b * s.gemv_seconds, s.gemm_seconds[i]) / b));
  }
  auto batch_text = [](int64_t b) {
    return b > 0 ? absl::StrCat("batch ", b) : std::string("beyond the largest batch");
  };
  std::cout << absl::StrFormat(
      "  crossover (the GEMM's time per call twice batch 1's): measured at %s, predicted by the "
      "roofline at %s\n",
      batch_text(measured), batch_text(predicted));
  std::cout << absl::StrFormat(
      "  Little's law: %.0f lines of 64 bytes in flight to reach %s at %.0f ns; the GEMV keeps "
      "%.0f in flight (%.0f%%)\n",
      lines.needed, lines.dram != nullptr ? lines.dram->Name() : "the DRAM bandwidth",
      profile.memory_latency_ns, lines.achieved,
      lines.needed > 0 ? 100 * lines.achieved / lines.needed : 0.0);
}

// Times the sweep, then prints it with the crossover, measured and predicted, and Little's law.
absl::StatusOr<int> SweepBatch(const SweepOptions& o, const Session::Machine& machine) {
  const MachineProfile& profile = machine.profile;
  absl::StatusOr<SweepPoints> s = MeasureSweep(o, profile, machine.rows);
  if (!s.ok()) return s.status();
  const int64_t measured = Crossover(o.batches, s->gemm_seconds);
  const int64_t predicted = Crossover(o.batches, s->bound_seconds);
  const LinesInFlight lines = LittlesLaw(o, profile, s->gemv_seconds);
  if (!o.json) {
    PrintSweep(o, profile, *s, lines, measured, predicted);
    return 0;
  }
  auto batch_or_null = [](int64_t b) { return b > 0 ? nlohmann::json(b) : nlohmann::json(); };
  nlohmann::json j = {{"schema_version", 1},
                      {"shape", absl::StrCat(o.n, "x", o.k)},
                      {"dtype", ToString(o.dtype)},
                      {"threads", o.threads},
                      {"gemv_seconds", s->gemv_seconds},
                      {"points", s->points},
                      {"crossover_batch_measured", batch_or_null(measured)},
                      {"crossover_batch_predicted", batch_or_null(predicted)},
                      {"littles_law",
                       {{"memory_latency_ns", profile.memory_latency_ns},
                        {"lines_in_flight_needed", lines.needed},
                        {"lines_in_flight_achieved", lines.achieved}}}};
  std::cout << j.dump(2) << "\n";
  return 0;
}

}  // namespace

absl::StatusOr<int> SweepCommand(Session& session, const std::vector<std::string>& operands) {
  if (operands.size() != 1 || operands[0] != "batch") {
    return UsageError("sweep takes one kind: batch (rooftune sweep batch --shape NxK)");
  }
  return WithProfileAndRows(session, SweepOptionsFromFlags(session), SweepBatch);
}

}  // namespace rooftune::cli
