// int8 GEMM (u8 x s8 -> s32): rooftune's gemm_s8 against oneDNN's int8 matmul in the same run, at
// each thread count, and against rooftune's own f32 GEMM on the square shapes, with the analytic
// bound of that speedup: the ratio of the measured int8 and f32 compute ceilings. Inputs are
// 7-bit activations (what a quantiser targeting vpmaddubsw produces, and where oneDNN is exact on
// every ISA) unless --full-range is given. Shapes the roofline calls memory-bound are timed cold
// for both libraries, as gemm_bench times them.
//
//   gemm_s8_bench [--threads=1,2] [--shapes=...] [--tune-budget=SECONDS] [--full-range]
//                 [--max-isa=avx2]
#include <cstring>
#include <iostream>
#include <memory>
#include <set>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/bench_main.h"
#include "benchmark/benchmark.h"
#include "framework/cold_cache.h"
#include "framework/executor.h"
#include "framework/harness.h"
#include "framework/int8_speedup.h"
#include "framework/judged_trial.h"
#include "framework/roofline.h"
#include "kernels/code_paths.h"

namespace rooftune::bench {
namespace {

const std::vector<std::string> kShapes = {"256x256x256",    "512x512x512",  "1024x1024x1024",
                                          "2048x2048x2048", "64x4096x4096", "512x512x4096"};

bool IsSquare(const Workload& w) { return w.m == w.n && w.n == w.k; }

struct Row {
  std::string shape;
  int threads;
  Config config;
  std::string source;
  bool cold;
  std::string code_path;  // what rooftune's kernel ran ("gemm_s8 AVX3_DL fast vpdpbusd MR=6 ...")
};

// The benchmark's state; RegisterShape adds a shape's benchmarks at every thread count, Print
// the summary.
class GemmS8Bench {
 public:
  GemmS8Bench(Context& context, const Options& options)
      : context_(context), options_(options), profile_(context.profile()) {
    for (int t : options.threads) executors_[t] = std::make_unique<Executor>(t);
  }

  absl::Status RegisterShape(const std::string& shape) {
    absl::StatusOr<Problem*> p8 = Create(shape, Dtype::kU8S8);
    if (!p8.ok()) return p8.status();
    if (!options_.full_range) {
      Buffer<uint8_t>& a = (*p8)->a_u8;
      for (size_t i = 0; i < a.size(); ++i) a[i] &= 0x7f;
    }
    // The f32 comparison prices both at this machine's full-width ceilings: not under --max-isa.
    Problem* pf = nullptr;
    if (IsSquare((*p8)->workload) && !options_.max_isa_avx2) {
      absl::StatusOr<Problem*> p = Create(shape, Dtype::kF32);
      if (!p.ok()) return p.status();
      pf = *p;
    }
    for (int t : options_.threads) {
      const std::string base = absl::StrFormat("gemm_s8/%s/threads:%d/", shape, t);
      absl::Status s = RegisterInt8(base, shape, *p8, t);
      if (!s.ok()) return s;
      if (pf != nullptr) {
        Executor* executor = executors_[t].get();
        std::string source_f32;
        const Config cf = context_.ConfigFor(f32_, pf->workload, t, 0, &source_f32);
        // The timed calls ignore their status: a config that fails must fail here, not time
        // an early return.
        if (absl::Status ran = executor->Run(f32_, cf, *pf); !ran.ok()) {
          return absl::Status(ran.code(), absl::StrCat("gemm_f32 ", f32_.params.Format(cf), " on ",
                                                       shape, ": ", ran.message()));
        }
        Register(
            base + "rooftune_f32", [=, this] { executor->Run(f32_, cf, *pf).IgnoreError(); }, {},
            ArenaFor(f32_, executor));
      }
    }
    return absl::OkStatus();
  }

  void Print() const {
    std::cout << absl::StrFormat(
        "\n## int8 GEMM u8 x s8 -> s32 (%s activations), GOP/s (median); analytic bound of "
        "int8 / f32 = measured int8 compute ceiling / f32 compute ceiling\n\n",
        options_.full_range ? "full-range" : "7-bit");
    std::cerr << "paired runs: rooftune s8 against oneDNN s8\n";
    if (options_.max_isa_avx2) {
      std::cout << "--max-isa=avx2: both libraries held to AVX2 (and AVX-VNNI where the CPU has "
                   "it); the bound and the attainment stay against this machine's ceilings, "
                   "measured at its widest vectors\n\n";
    }
    std::cout << "(cold): a shape the roofline calls memory-bound, both libraries timed with their "
                 "operands evicted before each call; attainment s8: against rooftune's roofline "
                 "(its traffic model at every level and the int8 compute ceiling)\n\n";
    std::cout
        << "| M x N x K | threads | rooftune s8 | oneDNN s8 | vs oneDNN | paired (quartiles) | "
           "rooftune f32 | s8 / f32 | bound | of bound | attainment s8 |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|\n";
    bool above_bound = false;
    for (const Row& r : rows_) above_bound |= PrintRow(r);
    if (above_bound) {
      std::cout
          << "\n* above 100%: the bound assumes both kernels at the same attainment; here the "
             "f32 kernel ran further below its ceiling than the int8 one (of bound = int8 "
             "attainment / f32 attainment). Not a kernel faster than its roofline.\n";
    }
    std::cout << "\nconfigs:\n";
    for (const Row& r : rows_) {
      std::cout << "  " << r.shape << " threads=" << r.threads << ": "
                << s8_.params.Format(r.config) << " (" << r.source << "): " << r.code_path << "\n";
    }
  }

 private:
  absl::StatusOr<Problem*> Create(const std::string& shape, Dtype dtype) {
    absl::StatusOr<Workload> w = ParseWorkload(Op::kGemm, shape, dtype, Epilogue::kNone, 0);
    if (!w.ok()) return w.status();
    absl::StatusOr<Problem> p = Problem::Create(*w);
    if (!p.ok()) return p.status();
    problems_.push_back(std::make_unique<Problem>(*std::move(p)));
    return problems_.back().get();
  }

  absl::Status RegisterInt8(const std::string& base, const std::string& shape, Problem* p8, int t) {
    Executor* executor = executors_[t].get();
    std::string source;
    const Config c8 =
        context_.ConfigFor(s8_, p8->workload, t, options_.tune_budget_seconds, &source);
    absl::StatusOr<Prepared> packed = Prepare(s8_, c8, *p8);
    if (!packed.ok()) return packed.status();
    prepared_.push_back(packed->object);
    const void* weights = packed->object.get();
    // One untimed call with the code path recorded: which target and micro-kernel the figures
    // are of (--max-isa=avx2 must show AVX2).
    kernels::RecordCodePaths(true);
    const absl::Status ran = executor->Run(s8_, c8, *p8, weights);
    const std::set<std::string> paths = kernels::RecordedCodePaths();
    kernels::RecordCodePaths(false);
    if (!ran.ok()) return ran;
    const std::string code_path = absl::StrJoin(paths, "; ");
    // A shape the roofline calls memory-bound (the decode-like 64 x 4096 x 4096) streams its
    // weights from DRAM in use: both libraries are timed with their operands evicted, rooftune's
    // packed weights included.
    const bool cold = StreamsFromDram(profile_, p8->workload, t);
    rows_.push_back({shape, t, c8, source, cold, code_path});
    std::function<void()> evict_ours, evict_theirs;
    if (cold) {
      evict_ours = Evicting(ColdBytes(*p8, *packed));
      evict_theirs = Evicting(p8->OperandBytes());
    }
    Register(
        base + "rooftune_s8", [=, this] { executor->Run(s8_, c8, *p8, weights).IgnoreError(); },
        evict_ours, ArenaFor(s8_, executor));
    Register(
        base + "onednn_s8", [=, this] { executor->Run(onednn_, Config(), *p8).IgnoreError(); },
        evict_theirs, ArenaFor(onednn_, executor));
    return absl::OkStatus();
  }

  // Prints the row; true when its int8 speedup is above its bound.
  bool PrintRow(const Row& r) const {
    const Workload w = *ParseWorkload(Op::kGemm, r.shape, Dtype::kU8S8, Epilogue::kNone, 0);
    const std::string base = absl::StrFormat("gemm_s8/%s/threads:%d/", r.shape, r.threads);
    auto rate = [&](const std::string& name) {
      return BillionsPerSecond(w.Operations(), base + name);
    };
    const absl::StatusOr<SpeedupBound> speedup_bound =
        Int8SpeedupBound(profile_, w, r.threads, /*warm=*/!r.cold);
    const double bound = speedup_bound.ok() ? speedup_bound->ratio : 0;
    const double speedup =
        rate("rooftune_f32") > 0 ? rate("rooftune_s8") / rate("rooftune_f32") : 0;
    Trial trial;
    trial.workload = w;
    trial.config = r.config;
    trial.threads = r.threads;
    trial.cache = r.cold ? CacheMode::kCold : CacheMode::kWarm;
    trial.seconds.median = MedianSeconds(base + "rooftune_s8");
    const double attainment =
        trial.seconds.median > 0 ? JudgeTrial(profile_, s8_, trial).attainment : 0;
    const bool above = speedup > 0 && bound > 0 && speedup > bound;
    const PairedSpeedup paired = MeasurePaired(base + "rooftune_s8", base + "onednn_s8");
    std::cout << absl::StrFormat(
        "| %s%s | %d | %.1f | %.1f | %.2fx | %.2fx (%.2f-%.2f) | %s | %s | %.2fx | %s | %.2f |\n",
        r.shape, r.cold ? " (cold)" : "", r.threads, rate("rooftune_s8"), rate("onednn_s8"),
        rate("onednn_s8") > 0 ? rate("rooftune_s8") / rate("onednn_s8") : 0.0, paired.median,
        paired.low, paired.high, speedup > 0 ? absl::StrFormat("%.1f", rate("rooftune_f32")) : "-",
        speedup > 0 ? absl::StrFormat("%.2fx", speedup) : "-", bound,
        speedup > 0 && bound > 0
            ? absl::StrFormat("%.0f%%%s", 100 * speedup / bound, above ? " *" : "")
            : "-",
        attainment);
    return above;
  }

  Context& context_;
  const Options& options_;
  const MachineProfile& profile_;
  const Kernel& s8_ = *KernelRegistry::Global().Find("gemm_s8");
  const Kernel& f32_ = *KernelRegistry::Global().Find("gemm_f32");
  const Kernel& onednn_ = *KernelRegistry::Global().Find("onednn_gemm_s8");
  std::map<int, std::unique_ptr<Executor>> executors_;
  std::vector<std::unique_ptr<Problem>> problems_;
  std::vector<std::shared_ptr<const void>> prepared_;
  std::vector<Row> rows_;
};

int Main(int argc, char** argv) {
  Options options;
  const Usage usage{
      .name = "gemm_s8_bench",
      .summary =
          "int8 GEMM (u8 x s8 -> s32): rooftune's gemm_s8 against oneDNN's int8 matmul in the\n"
          "same run, at each thread count, and against rooftune's f32 GEMM on square shapes\n"
          "with the analytic bound of that speedup.",
      .op = Op::kGemm,
      .default_shapes = "256^3 to 2048^3, 64x4096x4096, 512x512x4096",
      .takes_full_range = true,
      .takes_max_isa = true};
  std::unique_ptr<Context> context = StartBenchmark(&argc, argv, usage, &options);
  if (context == nullptr) return 1;
  GemmS8Bench bench(*context, options);
  absl::Status status;
  for (const std::string& shape : options.shapes.empty() ? kShapes : options.shapes) {
    if (status.ok()) status = bench.RegisterShape(shape);
  }
  if (!RunRegistered(status, usage.name)) return 1;
  bench.Print();
  return 0;
}

}  // namespace
}  // namespace rooftune::bench

int main(int argc, char** argv) { return rooftune::bench::Main(argc, argv); }
