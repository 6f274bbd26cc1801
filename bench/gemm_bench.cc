// fp32 GEMM: rooftune's gemm_f32 (tuned config for this machine) against oneDNN, OpenBLAS and BLIS,
// measured in the same run, at each thread count; fused against unfused bias+ReLU; each figure's
// attainment against the measured roofline. Prints Google Benchmark's table, then a Markdown
// summary of ratios for bench/RESULTS.md: the ratio of the medians, and the same comparison
// measured in back-to-back pairs of calls (see MeasurePaired); and, also in pairs, the fraction
// of the FMA peak that the probe's loop reaches at the same moment.
//
//   gemm_bench [--threads=1,2] [--shapes=1024x1024x1024,...] [--tune-budget=SECONDS]
//              [Google Benchmark flags]
#include <algorithm>
#include <functional>
#include <iostream>
#include <memory>

#include "absl/strings/str_format.h"
#include "bench/bench_main.h"
#include "bench/blas_library.h"
#include "benchmark/benchmark.h"
#include "framework/executor.h"
#include "framework/harness.h"
#include "framework/roofline.h"
#include "oneapi/tbb/parallel_for.h"
#include "probes/peak_compute.h"

namespace rooftune::bench {
namespace {

const std::vector<std::string> kShapes = {"256x256x256",    "512x512x512",   "1024x1024x1024",
                                          "2048x2048x2048", "8x4096x4096",   "64x4096x4096",
                                          "512x512x4096",   "4096x64x4096"};
// The two shapes, where C stays in cache, and one with a short K, where C (64 MiB) leaves
// the caches and the separate bias+ReLU pass costs a second round trip to DRAM.
const std::vector<std::string> kFusionShapes = {"1024x1024x1024", "64x4096x4096", "4096x4096x64"};
// libxsmm runs on one thread at every thread count (its threaded GEMM is its OpenMP extension);
// it is left out of a build without libxsmm-dev, and of a shape its JIT generates no kernel for.
const std::vector<std::string> kCompetitors = {"onednn", "openblas", "blis", "libxsmm"};

struct Row {
  std::string shape;
  int threads;
  std::string config_source;
  bool cold = false;
};

// What the kernel's prepare step makes for this config (its decoded blocking), or null.
std::shared_ptr<const void> PreparedObject(const Kernel& kernel, const Config& config,
                                           const Problem& p) {
  absl::StatusOr<Prepared> prepared = Prepare(kernel, config, p);
  return prepared.ok() ? prepared->object : nullptr;
}

double Attainment(const MachineProfile& profile, const Workload& w, int threads,
                  const Traffic& traffic, double seconds, bool cold) {
  if (seconds <= 0) return 0;
  // Warm caches unless the row is timed cold: the benchmark repeats each call on the same operands.
  return Judge(profile, SelectCeilings(profile, w.dtype, threads), w, threads, traffic, seconds, 0,
               {.warm = !cold})
      .attainment;
}

int Main(int argc, char** argv) {
  Options options;
  const Usage usage{
      .name = "gemm_bench",
      .summary = "fp32 GEMM: rooftune's gemm_f32 (its tuned config for this machine) against oneDNN,\n"
                 "OpenBLAS and BLIS in the same run, at each thread count; fused against unfused\n"
                 "bias+ReLU; every figure's attainment against the measured roofline, and the\n"
                 "fraction of the probe's FMA peak loop reached in back-to-back pairs of calls.\n"
                 "Shapes the roofline calls memory-bound (8x4096x4096) are timed cold for every\n"
                 "library: its operands evicted from the caches before each call, so they stream from DRAM.",
      .op = Op::kGemm,
      .default_shapes = "the issue's eight, and three fusion shapes",
      .takes_config = true};
  std::unique_ptr<Context> context = StartBenchmark(&argc, argv, usage, &options);
  if (context == nullptr) return 1;
  const MachineProfile& profile = context->profile();
  std::map<std::string, std::unique_ptr<BlasLibrary>> blas;
  for (const char* name : {"openblas", "blis"}) {
    absl::StatusOr<BlasLibrary> lib = BlasLibrary::Open(name);
    if (!lib.ok()) {
      std::cerr << lib.status().message() << "\n";
      return 1;
    }
    blas[name] = std::make_unique<BlasLibrary>(*lib);
  }
  const Kernel& ours = *KernelRegistry::Global().Find("gemm_f32");
  const Kernel& unfused = *KernelRegistry::Global().Find("gemm_f32_unfused");
  const Kernel& onednn = *KernelRegistry::Global().Find("onednn_gemm_f32");
  const Kernel* libxsmm = KernelRegistry::Global().Find("libxsmm_gemm_f32");
  std::map<int, std::unique_ptr<Executor>> executors;
  for (int t : options.threads) executors[t] = std::make_unique<Executor>(t);
  std::vector<std::unique_ptr<Problem>> problems;
  std::vector<Row> rows, fusion_rows;
  std::map<std::string, Config> configs;

  auto problem_for = [&](const std::string& shape, Epilogue epilogue) -> Problem* {
    absl::StatusOr<Workload> w = ParseWorkload(Op::kGemm, shape, Dtype::kF32, epilogue, 0);
    absl::StatusOr<Problem> p = Problem::Create(*w);
    if (!p.ok()) return nullptr;
    problems.push_back(std::make_unique<Problem>(*std::move(p)));
    return problems.back().get();
  };

  // The row's config: stored or initial, with --config's values over it.
  auto config_for = [&](const Workload& w, int threads,
                        std::string* source) -> absl::StatusOr<Config> {
    const Config base = context->ConfigFor(ours, w, threads, options.tune_budget_seconds, source);
    if (options.config.empty()) return base;
    absl::StatusOr<Config> given = ours.params.Parse(options.config, base);
    if (!given.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--config for ", w.Key(), " threads=", threads,
                                                     ": ", given.status().message()));
    }
    *source = "--config over " + *source;
    return given;
  };

  const std::vector<std::string>& shapes = options.shapes.empty() ? kShapes : options.shapes;
  const uint64_t kCalibration = 1 << 16;
  const double f32_ops_per_iteration = probes::RunPeakLoop(Dtype::kF32, kCalibration) / kCalibration;
  if (f32_ops_per_iteration <= 0) {
    std::cerr << "this CPU has no f32 peak loop\n";
    return 1;
  }
  // Iterations of the FMA peak loop per thread that do at least the GEMM's operations.
  auto peak_iterations = [&](const Workload& w, int threads) {
    return uint64_t(w.Operations() / threads / f32_ops_per_iteration) + 1;
  };
  for (const std::string& shape : shapes) {
    Problem* p = problem_for(shape, Epilogue::kNone);
    if (p == nullptr) return 1;
    for (int t : options.threads) {
      Executor* executor = executors[t].get();
      std::string source;
      const absl::StatusOr<Config> given = config_for(p->workload, t, &source);
      if (!given.ok()) {
        std::cerr << given.status().message() << "\n";
        return 1;
      }
      const Config config = *given;
      const std::string base = absl::StrFormat("gemm/%s/threads:%d/", shape, t);
      configs[base] = config;
      // Every competitor of a row that streams from DRAM is timed cold (StreamsFromDram).
      const bool cold = StreamsFromDram(profile, p->workload, t);
      rows.push_back({shape, t, source, cold});
      std::function<void()> evict;
      if (cold) evict = Evicting(p->OperandBytes());
      // The config decoded once, as the harness does (the kernel's prepare step).
      const std::shared_ptr<const void> decoded = PreparedObject(ours, config, *p);
      Register(base + "rooftune",
               [=, &ours] { executor->Run(ours, config, *p, decoded.get()).IgnoreError(); }, evict);
      // The peak this GEMM is judged by in this run: the probe's FMA loop on every thread, as
      // many operations as the GEMM does (the profile's peak is a best of five, measured
      // earlier: a median of this run is not comparable to it).
      const uint64_t iterations = peak_iterations(p->workload, t);
      Register(base + "fma_peak", [=] {
        executor->Execute([=] {
          tbb::parallel_for(0, t, [=](int) {
            benchmark::DoNotOptimize(probes::RunPeakLoop(Dtype::kF32, iterations));
          }, tbb::static_partitioner());
        });
      });
      Register(base + "onednn", OnRooftunesCpus(executor, [=, &onednn] {
                 executor->Run(onednn, Config(), *p).IgnoreError();
               }), evict);
      if (libxsmm != nullptr && executor->Run(*libxsmm, Config(), *p).ok()) {
        Register(base + "libxsmm", OnRooftunesCpus(executor, [=] {
                   executor->Run(*libxsmm, Config(), *p).IgnoreError();
                 }), evict);
      }
      for (const char* name : {"openblas", "blis"}) {
        const BlasLibrary* lib = blas[name].get();
        Register(base + name, OnRooftunesCpus(executor, [=] {
                   lib->SetThreads(t);
                   const Workload& w = p->workload;
                   lib->Sgemm(int(w.m), int(w.n), int(w.k), p->a.data(), int(p->lda), p->b.data(),
                              int(p->ldb), 0.0f, p->c.data(), int(p->ldc));
                 }), evict);
      }
    }
  }
  for (const std::string& shape : kFusionShapes) {
    // --shapes selects the fusion rows too: those of its shapes that have one.
    if (!options.shapes.empty() &&
        std::find(options.shapes.begin(), options.shapes.end(), shape) == options.shapes.end()) {
      continue;
    }
    Problem* p = problem_for(shape, Epilogue::kBiasRelu);
    if (p == nullptr) return 1;
    for (int t : options.threads) {
      Executor* executor = executors[t].get();
      std::string source;
      const absl::StatusOr<Config> given = config_for(p->workload, t, &source);
      if (!given.ok()) {
        std::cerr << given.status().message() << "\n";
        return 1;
      }
      const Config config = *given;
      const std::string base = absl::StrFormat("gemm_bias_relu/%s/threads:%d/", shape, t);
      configs[base] = config;
      fusion_rows.push_back({shape, t, source});
      const std::shared_ptr<const void> fused = PreparedObject(ours, config, *p);
      const std::shared_ptr<const void> separate = PreparedObject(unfused, config, *p);
      Register(base + "fused",
               [=, &ours] { executor->Run(ours, config, *p, fused.get()).IgnoreError(); });
      Register(base + "unfused", [=, &unfused] {
        executor->Run(unfused, config, *p, separate.get()).IgnoreError();
      });
      Register(base + "onednn", OnRooftunesCpus(executor, [=, &onednn] {
                 executor->Run(onednn, Config(), *p).IgnoreError();
               }));
    }
  }

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  std::cout << "\n## fp32 GEMM, GFLOP/s (median of per-iteration times), ratio = rooftune / best "
               "other library, attainment against the measured roofline; (cold): a memory-bound "
               "shape, every library timed with its operands evicted from the caches before each call\n\n";
  std::cerr << "paired runs: rooftune against the best other library and against the FMA peak "
               "loop, fused against unfused\n";
  std::cout << "| M x N x K | threads | rooftune | oneDNN | OpenBLAS | BLIS | libxsmm (1 thread) | "
               "ratio | paired ratio (quartiles) | attainment rooftune / best other | of same-run "
               "FMA peak, paired (quartiles) | config |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : rows) {
    const std::string base = absl::StrFormat("gemm/%s/threads:%d/", r.shape, r.threads);
    const Workload w = *ParseWorkload(Op::kGemm, r.shape, Dtype::kF32, Epilogue::kNone, 0);
    auto gflops = [&](const std::string& lib) {
      const double s = MedianSeconds(base + lib);
      return s > 0 ? w.Operations() / s / 1e9 : 0.0;
    };
    double best_other = 0, best_other_seconds = 0;
    std::string best_lib;
    for (const std::string& lib : kCompetitors) {
      if (gflops(lib) > best_other) {
        best_other = gflops(lib), best_other_seconds = MedianSeconds(base + lib), best_lib = lib;
      }
    }
    const PairedSpeedup paired = MeasurePaired(base + "rooftune", base + best_lib);
    // time(peak loop) / time(GEMM) per pair, times the peak loop's operations over the GEMM's.
    const PairedSpeedup of_peak = MeasurePaired(base + "rooftune", base + "fma_peak");
    const double peak_ops = double(peak_iterations(w, r.threads)) * r.threads * f32_ops_per_iteration;
    const double to_attainment = w.Operations() / peak_ops;
    Traffic compulsory;
    compulsory.bytes.fill(w.CompulsoryBytes());
    std::cout << absl::StrFormat(
        "| %s%s | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.2fx | %.2fx (%.2f-%.2f) vs %s | %.2f / "
        "%.2f | %.2f (%.2f-%.2f) | `%s` (%s) |\n",
        r.shape, r.cold ? " (cold)" : "", r.threads, gflops("rooftune"), gflops("onednn"), gflops("openblas"),
        gflops("blis"), gflops("libxsmm"), best_other > 0 ? gflops("rooftune") / best_other : 0.0, paired.median,
        paired.low, paired.high, best_lib,
        Attainment(profile, w, r.threads, ours.TrafficFor(w, configs[base], r.threads, profile),
                   MedianSeconds(base + "rooftune"), r.cold),
        Attainment(profile, w, r.threads, compulsory, best_other_seconds, r.cold),
        of_peak.median * to_attainment, of_peak.low * to_attainment, of_peak.high * to_attainment,
        ours.params.Format(configs[base]), r.config_source);
  }
  if (!fusion_rows.empty()) {
    std::cout << "\n## bias+ReLU epilogue, GFLOP/s: fused into the micro-kernel's last store vs a "
                 "separate pass\n\n| M x N x K | threads | fused | unfused | fused / unfused | paired "
                 "(quartiles) | oneDNN post-ops |\n|---|---|---|---|---|---|---|\n";
    for (const Row& r : fusion_rows) {
      const std::string base = absl::StrFormat("gemm_bias_relu/%s/threads:%d/", r.shape, r.threads);
      const Workload w = *ParseWorkload(Op::kGemm, r.shape, Dtype::kF32, Epilogue::kBiasRelu, 0);
      auto gflops = [&](const std::string& v) {
        const double s = MedianSeconds(base + v);
        return s > 0 ? w.Operations() / s / 1e9 : 0.0;
      };
      const PairedSpeedup paired = MeasurePaired(base + "fused", base + "unfused");
      std::cout << absl::StrFormat("| %s | %d | %.1f | %.1f | %.2fx | %.2fx (%.2f-%.2f) | %.1f |\n",
                                   r.shape, r.threads, gflops("fused"), gflops("unfused"),
                                   gflops("unfused") > 0 ? gflops("fused") / gflops("unfused") : 0.0,
                                   paired.median, paired.low, paired.high, gflops("onednn"));
    }
  }
  return 0;
}

}  // namespace
}  // namespace rooftune::bench

int main(int argc, char** argv) { return rooftune::bench::Main(argc, argv); }
