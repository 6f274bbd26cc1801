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

const std::vector<std::string> kShapes = {"256x256x256",    "512x512x512", "1024x1024x1024",
                                          "2048x2048x2048", "8x4096x4096", "64x4096x4096",
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

// The benchmark's state: the libraries, one executor per thread count, the problems and the
// rows registered; Register* adds a shape's benchmarks, Print* its summary tables.
class GemmBench {
 public:
  GemmBench(Context& context, const Options& options)
      : context_(context), options_(options), profile_(context.profile()) {
    for (int t : options.threads) executors_[t] = std::make_unique<Executor>(t);
  }

  // OpenBLAS and BLIS opened, and the FMA loop's operations per iteration calibrated.
  absl::Status Start() {
    for (const char* name : {"openblas", "blis"}) {
      absl::StatusOr<BlasLibrary> lib = BlasLibrary::Open(name);
      if (!lib.ok()) return lib.status();
      blas_[name] = std::make_unique<BlasLibrary>(*lib);
    }
    const uint64_t kCalibration = 1 << 16;
    f32_ops_per_iteration_ = probes::RunPeakLoop(Dtype::kF32, kCalibration) / kCalibration;
    if (f32_ops_per_iteration_ <= 0) return absl::UnavailableError("this CPU has no f32 peak loop");
    return absl::OkStatus();
  }

  absl::Status RegisterSquare(const std::string& shape) {
    Problem* p = ProblemFor(shape, Epilogue::kNone);
    if (p == nullptr) return absl::InvalidArgumentError("no problem for " + shape);
    for (int t : options_.threads) {
      std::string source;
      absl::StatusOr<Config> config = ConfigFor(p->workload, t, &source);
      if (!config.ok()) return config.status();
      const std::string base = absl::StrFormat("gemm/%s/threads:%d/", shape, t);
      configs_[base] = *config;
      // Every competitor of a row that streams from DRAM is timed cold (StreamsFromDram).
      const bool cold = StreamsFromDram(profile_, p->workload, t);
      rows_.push_back({shape, t, source, cold});
      std::function<void()> evict;
      if (cold) evict = Evicting(p->OperandBytes());
      RegisterOurs(base + "rooftune", ours_, *config, p, t, evict);
      RegisterPeakLoop(base, p->workload, t);
      RegisterOthers(base, p, t, evict);
    }
    return absl::OkStatus();
  }

  absl::Status RegisterFusion(const std::string& shape) {
    Problem* p = ProblemFor(shape, Epilogue::kBiasRelu);
    if (p == nullptr) return absl::InvalidArgumentError("no problem for " + shape);
    for (int t : options_.threads) {
      std::string source;
      absl::StatusOr<Config> config = ConfigFor(p->workload, t, &source);
      if (!config.ok()) return config.status();
      const std::string base = absl::StrFormat("gemm_bias_relu/%s/threads:%d/", shape, t);
      configs_[base] = *config;
      fusion_rows_.push_back({shape, t, source});
      RegisterOurs(base + "fused", ours_, *config, p, t, {});
      RegisterOurs(base + "unfused", unfused_, *config, p, t, {});
      Executor* executor = executors_[t].get();
      Register(
          base + "onednn", [=, this] { executor->Run(onednn_, Config(), *p).IgnoreError(); }, {},
          ArenaFor(onednn_, executor));
    }
    return absl::OkStatus();
  }

  void PrintSquare() {
    std::cout << "\n## fp32 GEMM, GFLOP/s (median of per-iteration times), ratio = rooftune / best "
                 "other library, attainment against the measured roofline; (cold): a memory-bound "
                 "shape, every library timed with its operands evicted from the caches before each "
                 "call\n\n";
    std::cerr << "paired runs: rooftune against the best other library and against the FMA peak "
                 "loop, fused against unfused\n";
    std::cout
        << "| M x N x K | threads | rooftune | oneDNN | OpenBLAS | BLIS | libxsmm (1 thread) | "
           "ratio | paired ratio (quartiles) | attainment rooftune / best other | of same-run "
           "FMA peak, paired (quartiles) | config |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const Row& r : rows_) PrintSquareRow(r);
  }

  void PrintFusion() {
    if (fusion_rows_.empty()) return;
    std::cout
        << "\n## bias+ReLU epilogue, GFLOP/s: fused into the micro-kernel's last store vs a "
           "separate pass\n\n| M x N x K | threads | fused | unfused | fused / unfused | paired "
           "(quartiles) | oneDNN post-ops |\n|---|---|---|---|---|---|---|\n";
    for (const Row& r : fusion_rows_) {
      const std::string base = absl::StrFormat("gemm_bias_relu/%s/threads:%d/", r.shape, r.threads);
      const Workload w = *ParseWorkload(Op::kGemm, r.shape, Dtype::kF32, Epilogue::kBiasRelu, 0);
      auto gflops = [&](const std::string& v) {
        return BillionsPerSecond(w.Operations(), base + v);
      };
      const PairedSpeedup paired = MeasurePaired(base + "fused", base + "unfused");
      std::cout << absl::StrFormat(
          "| %s | %d | %.1f | %.1f | %.2fx | %.2fx (%.2f-%.2f) | %.1f |\n", r.shape, r.threads,
          gflops("fused"), gflops("unfused"),
          gflops("unfused") > 0 ? gflops("fused") / gflops("unfused") : 0.0, paired.median,
          paired.low, paired.high, gflops("onednn"));
    }
  }

 private:
  Problem* ProblemFor(const std::string& shape, Epilogue epilogue) {
    absl::StatusOr<Workload> w = ParseWorkload(Op::kGemm, shape, Dtype::kF32, epilogue, 0);
    if (!w.ok()) return nullptr;
    absl::StatusOr<Problem> p = Problem::Create(*w);
    if (!p.ok()) return nullptr;
    problems_.push_back(std::make_unique<Problem>(*std::move(p)));
    return problems_.back().get();
  }

  // The row's config: stored or initial, with --config's values over it.
  absl::StatusOr<Config> ConfigFor(const Workload& w, int threads, std::string* source) {
    const Config base = context_.ConfigFor(ours_, w, threads, options_.tune_budget_seconds, source);
    if (options_.config.empty()) return base;
    absl::StatusOr<Config> given = ours_.params.Parse(options_.config, base);
    if (!given.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--config for ", w.Key(), " threads=", threads,
                                                     ": ", given.status().message()));
    }
    *source = "--config over " + *source;
    return given;
  }

  // Iterations of the FMA peak loop per thread that do at least the GEMM's operations.
  // The FMA loop runs in chunks taken as they come, as the product's paired loop runs: a split
  // fixed in advance waits for a thread the host preempts, and a GEMM whose threads take blocks
  // as they come would out-run it. Each chunk's iterations, for as many operations as `w` does.
  static constexpr int kPeakChunksPerThread = 16;
  uint64_t PeakChunkIterations(const Workload& w, int threads) const {
    return uint64_t(w.Operations() / f32_ops_per_iteration_ / (kPeakChunksPerThread * threads)) + 1;
  }

  // One of our kernels with `config`, decoded once as the harness does (its prepare step).
  void RegisterOurs(const std::string& name, const Kernel& kernel, const Config& config, Problem* p,
                    int threads, std::function<void()> evict) {
    Executor* executor = executors_[threads].get();
    const std::shared_ptr<const void> decoded = PreparedObject(kernel, config, *p);
    Register(
        name, [=, &kernel] { executor->Run(kernel, config, *p, decoded.get()).IgnoreError(); },
        std::move(evict), ArenaFor(kernel, executor));
  }

  // The peak this GEMM is judged by in this run: the probe's FMA loop on every thread, as many
  // operations as the GEMM does (the profile's peak is a best of five, measured earlier: a median
  // of this run is not comparable to it).
  void RegisterPeakLoop(const std::string& base, const Workload& w, int t) {
    Executor* executor = executors_[t].get();
    const int chunks = kPeakChunksPerThread * t;
    const uint64_t per_chunk = PeakChunkIterations(w, t);
    Register(
        base + "fma_peak",
        [=] {
          executor->Execute([=] {
            tbb::parallel_for(
                0, chunks,
                [=](int) { benchmark::DoNotOptimize(probes::RunPeakLoop(Dtype::kF32, per_chunk)); },
                tbb::simple_partitioner());
          });
        },
        {}, executor);
  }

  void RegisterOthers(const std::string& base, Problem* p, int t,
                      const std::function<void()>& evict) {
    Executor* executor = executors_[t].get();
    Register(
        base + "onednn", [=, this] { executor->Run(onednn_, Config(), *p).IgnoreError(); }, evict,
        ArenaFor(onednn_, executor));
    if (libxsmm_ != nullptr && executor->Run(*libxsmm_, Config(), *p).ok()) {
      const Kernel* libxsmm = libxsmm_;
      Register(
          base + "libxsmm", [=] { executor->Run(*libxsmm, Config(), *p).IgnoreError(); }, evict,
          ArenaFor(*libxsmm, executor));
    }
    for (const char* name : {"openblas", "blis"}) {
      const BlasLibrary* lib = blas_[name].get();
      Register(
          base + name,
          [=] {
            lib->SetThreads(t);
            const Workload& w = p->workload;
            lib->Sgemm(int(w.m), int(w.n), int(w.k), p->a.data(), int(p->lda), p->b.data(),
                       int(p->ldb), 0.0f, p->c.data(), int(p->ldc));
          },
          evict, CompetitorArena(executor));
    }
  }

  void PrintSquareRow(const Row& r) {
    const std::string base = absl::StrFormat("gemm/%s/threads:%d/", r.shape, r.threads);
    const Workload w = *ParseWorkload(Op::kGemm, r.shape, Dtype::kF32, Epilogue::kNone, 0);
    auto gflops = [&](const std::string& lib) {
      return BillionsPerSecond(w.Operations(), base + lib);
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
    const double peak_ops = double(PeakChunkIterations(w, r.threads)) * kPeakChunksPerThread *
                            r.threads * f32_ops_per_iteration_;
    const double to_attainment = w.Operations() / peak_ops;
    Traffic compulsory;
    compulsory.bytes.fill(w.CompulsoryBytes());
    std::cout << absl::StrFormat(
        "| %s%s | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.2fx | %.2fx (%.2f-%.2f) vs %s | %.2f / "
        "%.2f | %.2f (%.2f-%.2f) | `%s` (%s) |\n",
        r.shape, r.cold ? " (cold)" : "", r.threads, gflops("rooftune"), gflops("onednn"),
        gflops("openblas"), gflops("blis"), gflops("libxsmm"),
        best_other > 0 ? gflops("rooftune") / best_other : 0.0, paired.median, paired.low,
        paired.high, best_lib,
        Attainment(profile_, w, r.threads, ours_.TrafficFor(w, configs_[base], r.threads, profile_),
                   MedianSeconds(base + "rooftune"), r.cold),
        Attainment(profile_, w, r.threads, compulsory, best_other_seconds, r.cold),
        of_peak.median * to_attainment, of_peak.low * to_attainment, of_peak.high * to_attainment,
        ours_.params.Format(configs_[base]), r.config_source);
  }

  Context& context_;
  const Options& options_;
  const MachineProfile& profile_;
  const Kernel& ours_ = *KernelRegistry::Global().Find("gemm_f32");
  const Kernel& unfused_ = *KernelRegistry::Global().Find("gemm_f32_unfused");
  const Kernel& onednn_ = *KernelRegistry::Global().Find("onednn_gemm_f32");
  const Kernel* libxsmm_ = KernelRegistry::Global().Find("libxsmm_gemm_f32");
  std::map<std::string, std::unique_ptr<BlasLibrary>> blas_;
  std::map<int, std::unique_ptr<Executor>> executors_;
  std::vector<std::unique_ptr<Problem>> problems_;
  std::vector<Row> rows_, fusion_rows_;
  std::map<std::string, Config> configs_;
  double f32_ops_per_iteration_ = 0;
};

int Main(int argc, char** argv) {
  Options options;
  const Usage usage{
      .name = "gemm_bench",
      .summary =
          "fp32 GEMM: rooftune's gemm_f32 (its tuned config for this machine) against oneDNN,\n"
          "OpenBLAS and BLIS in the same run, at each thread count; fused against unfused\n"
          "bias+ReLU; every figure's attainment against the measured roofline, and the\n"
          "fraction of the probe's FMA peak loop reached in back-to-back pairs of calls.\n"
          "Shapes the roofline calls memory-bound (8x4096x4096) are timed cold for every\n"
          "library: its operands evicted from the caches before each call, so they stream from "
          "DRAM.",
      .op = Op::kGemm,
      .default_shapes = "the issue's eight, and three fusion shapes",
      .takes_config = true};
  std::unique_ptr<Context> context = StartBenchmark(&argc, argv, usage, &options);
  if (context == nullptr) return 1;
  GemmBench bench(*context, options);
  absl::Status status = bench.Start();
  for (const std::string& shape : options.shapes.empty() ? kShapes : options.shapes) {
    if (status.ok()) status = bench.RegisterSquare(shape);
  }
  for (const std::string& shape : kFusionShapes) {
    // --shapes selects the fusion rows too: those of its shapes that have one.
    const bool selected =
        options.shapes.empty() ||
        std::find(options.shapes.begin(), options.shapes.end(), shape) != options.shapes.end();
    if (status.ok() && selected) status = bench.RegisterFusion(shape);
  }
  if (!RunRegistered(status, usage.name)) return 1;
  bench.PrintSquare();
  bench.PrintFusion();
  return 0;
}

}  // namespace
}  // namespace rooftune::bench

int main(int argc, char** argv) { return rooftune::bench::Main(argc, argv); }
