// int8 GEMM (u8 x s8 -> s32): rooftune's gemm_s8 against oneDNN's int8 matmul in the same run, at
// each thread count, and against rooftune's own f32 GEMM on the square shapes, with the analytic
// bound of that speedup: the ratio of the measured int8 and f32 compute ceilings. Inputs are
// 7-bit activations (what a quantiser targeting vpmaddubsw produces, and where oneDNN is exact on
// every ISA) unless --full-range is given. Shapes the roofline calls memory-bound are timed cold
// for both libraries, as gemm_bench times them.
//
//   gemm_s8_bench [--threads=1,2] [--shapes=...] [--tune-budget=SECONDS] [--full-range]
#include <cstring>
#include <iostream>
#include <memory>

#include "absl/strings/str_format.h"
#include "bench/bench_main.h"
#include "framework/int8_speedup.h"
#include "benchmark/benchmark.h"
#include "framework/cold_cache.h"
#include "framework/executor.h"
#include "framework/harness.h"
#include "framework/judged_trial.h"
#include "framework/roofline.h"

namespace rooftune::bench {
namespace {

const std::vector<std::string> kShapes = {"256x256x256",  "512x512x512",  "1024x1024x1024",
                                          "2048x2048x2048", "64x4096x4096", "512x512x4096"};

bool IsSquare(const Workload& w) { return w.m == w.n && w.n == w.k; }

int Main(int argc, char** argv) {
  Options options;
  const Usage usage{
      .name = "gemm_s8_bench",
      .summary = "int8 GEMM (u8 x s8 -> s32): rooftune's gemm_s8 against oneDNN's int8 matmul in the\n"
                 "same run, at each thread count, and against rooftune's f32 GEMM on square shapes\n"
                 "with the analytic bound of that speedup.",
      .op = Op::kGemm,
      .default_shapes = "256^3 to 2048^3, 64x4096x4096, 512x512x4096",
      .takes_full_range = true};
  std::unique_ptr<Context> context = StartBenchmark(&argc, argv, usage, &options);
  if (context == nullptr) return 1;
  const MachineProfile& profile = context->profile();
  const bool full_range = options.full_range;
  const Kernel& s8 = *KernelRegistry::Global().Find("gemm_s8");
  const Kernel& f32 = *KernelRegistry::Global().Find("gemm_f32");
  const Kernel& onednn = *KernelRegistry::Global().Find("onednn_gemm_s8");
  std::map<int, std::unique_ptr<Executor>> executors;
  for (int t : options.threads) executors[t] = std::make_unique<Executor>(t);
  std::vector<std::unique_ptr<Problem>> problems;
  std::vector<std::shared_ptr<const void>> prepared;
  struct Row {
    std::string shape;
    int threads;
    Config config;
    std::string source;
    bool cold;
  };
  std::vector<Row> rows;
  for (const std::string& shape : options.shapes.empty() ? kShapes : options.shapes) {
    const Workload w8 = *ParseWorkload(Op::kGemm, shape, Dtype::kU8S8, Epilogue::kNone, 0);
    const Workload wf = *ParseWorkload(Op::kGemm, shape, Dtype::kF32, Epilogue::kNone, 0);
    problems.push_back(std::make_unique<Problem>(*Problem::Create(w8)));
    Problem* p8 = problems.back().get();
    if (!full_range) {
      for (size_t i = 0; i < p8->a_u8.size(); ++i) p8->a_u8[i] &= 0x7f;
    }
    Problem* pf = nullptr;
    if (IsSquare(wf)) {
      problems.push_back(std::make_unique<Problem>(*Problem::Create(wf)));
      pf = problems.back().get();
    }
    for (int t : options.threads) {
      Executor* executor = executors[t].get();
      std::string source;
      const Config c8 = context->ConfigFor(s8, w8, t, options.tune_budget_seconds, &source);
      absl::StatusOr<Prepared> packed = Prepare(s8, c8, *p8);
      if (!packed.ok()) {
        std::cerr << packed.status() << "\n";
        return 1;
      }
      prepared.push_back(packed->object);
      const void* weights = packed->object.get();
      // A shape the roofline calls memory-bound (the decode-like 64 x 4096 x 4096) streams its
      // weights from DRAM in use: both libraries are timed with their operands evicted, rooftune's
      // packed weights included.
      const bool cold = StreamsFromDram(profile, w8, t);
      rows.push_back({shape, t, c8, source, cold});
      std::function<void()> evict_ours, evict_theirs;
      if (cold) {
        evict_ours = Evicting(ColdBytes(*p8, *packed));
        evict_theirs = Evicting(p8->OperandBytes());
      }
      const std::string base = absl::StrFormat("gemm_s8/%s/threads:%d/", shape, t);
      Register(base + "rooftune_s8", [=, &s8] { executor->Run(s8, c8, *p8, weights).IgnoreError(); },
               evict_ours);
      Register(base + "onednn_s8", OnRooftunesCpus(executor, [=, &onednn] {
                 executor->Run(onednn, Config(), *p8).IgnoreError();
               }), evict_theirs);
      if (pf != nullptr) {
        std::string source_f32;
        const Config cf = context->ConfigFor(f32, wf, t, 0, &source_f32);
        Register(base + "rooftune_f32", [=, &f32] { executor->Run(f32, cf, *pf).IgnoreError(); });
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  std::cout << absl::StrFormat(
      "\n## int8 GEMM u8 x s8 -> s32 (%s activations), GOP/s (median); analytic bound of "
      "int8 / f32 = measured int8 compute ceiling / f32 compute ceiling\n\n",
      full_range ? "full-range" : "7-bit");
  std::cerr << "paired runs: rooftune s8 against oneDNN s8\n";
  std::cout << "(cold): a shape the roofline calls memory-bound, both libraries timed with their "
               "operands evicted before each call; attainment s8: against rooftune's roofline "
               "(its traffic model at every level and the int8 compute ceiling)\n\n";
  std::cout << "| M x N x K | threads | rooftune s8 | oneDNN s8 | vs oneDNN | paired (quartiles) | "
               "rooftune f32 | s8 / f32 | bound | of bound | attainment s8 |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|\n";
  bool above_bound = false;
  for (const Row& r : rows) {
    const Workload w = *ParseWorkload(Op::kGemm, r.shape, Dtype::kU8S8, Epilogue::kNone, 0);
    const std::string base = absl::StrFormat("gemm_s8/%s/threads:%d/", r.shape, r.threads);
    auto rate = [&](const std::string& name) {
      const double s = MedianSeconds(base + name);
      return s > 0 ? w.Operations() / s / 1e9 : 0.0;
    };
    const absl::StatusOr<SpeedupBound> speedup_bound =
        Int8SpeedupBound(profile, w, r.threads, /*warm=*/!r.cold);
    const double bound = speedup_bound.ok() ? speedup_bound->ratio : 0;
    const double speedup = rate("rooftune_f32") > 0 ? rate("rooftune_s8") / rate("rooftune_f32") : 0;
    Trial trial;
    trial.workload = w;
    trial.config = r.config;
    trial.threads = r.threads;
    trial.cache = r.cold ? CacheMode::kCold : CacheMode::kWarm;
    trial.seconds.median = MedianSeconds(base + "rooftune_s8");
    const double attainment =
        trial.seconds.median > 0 ? JudgeTrial(profile, s8, trial).attainment : 0;
    const bool above = speedup > 0 && bound > 0 && speedup > bound;
    above_bound |= above;
    const PairedSpeedup paired = MeasurePaired(base + "rooftune_s8", base + "onednn_s8");
    std::cout << absl::StrFormat(
        "| %s%s | %d | %.1f | %.1f | %.2fx | %.2fx (%.2f-%.2f) | %s | %s | %.2fx | %s | %.2f |\n",
        r.shape, r.cold ? " (cold)" : "", r.threads, rate("rooftune_s8"), rate("onednn_s8"),
        rate("onednn_s8") > 0 ? rate("rooftune_s8") / rate("onednn_s8") : 0.0, paired.median,
        paired.low, paired.high,
        speedup > 0 ? absl::StrFormat("%.1f", rate("rooftune_f32")) : "-",
        speedup > 0 ? absl::StrFormat("%.2fx", speedup) : "-", bound,
        speedup > 0 && bound > 0 ? absl::StrFormat("%.0f%%%s", 100 * speedup / bound, above ? " *" : "")
                                 : "-",
        attainment);
  }
  if (above_bound) {
    std::cout << "\n* above 100%: the bound assumes both kernels at the same attainment; here the "
                 "f32 kernel ran further below its ceiling than the int8 one (of bound = int8 "
                 "attainment / f32 attainment). Not a kernel faster than its roofline.\n";
  }
  std::cout << "\nconfigs:\n";
  for (const Row& r : rows) {
    std::cout << "  " << r.shape << " threads=" << r.threads << ": " << s8.params.Format(r.config) << " ("
              << r.source << ")\n";
  }
  return 0;
}

}  // namespace
}  // namespace rooftune::bench

int main(int argc, char** argv) { return rooftune::bench::Main(argc, argv); }
