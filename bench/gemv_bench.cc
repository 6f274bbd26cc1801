// GEMV for the decode shape: rooftune's gemv_f32, gemv_s8 (s8 weights, per-row scales) and
// gemv_u8s8 against OpenBLAS sgemv and oneDNN (M = 1 matmul, f32 and u8 x s8), at each thread
// count, with W streamed from DRAM on every call (its bytes are evicted from the caches before each
// timed call). Reports GB/s of weight bytes against the measured DRAM read bandwidth, and the int8
// speedup over f32 against its analytic bound: the ratio of the bytes each format moves.
//
//   gemv_bench [--threads=1,2] [--shapes=4096x4096,8192x8192] [--tune-budget=SECONDS]
#include <algorithm>
#include <iostream>
#include <memory>
#include <tuple>

#include "absl/strings/str_format.h"
#include "bench/bench_main.h"
#include "bench/blas_library.h"
#include "benchmark/benchmark.h"
#include "framework/cold_cache.h"
#include "framework/executor.h"
#include "framework/harness.h"
#include "framework/int8_speedup.h"
#include "kernels/workspace.h"
#include "oneapi/tbb/parallel_for.h"
#include "probes/bandwidth.h"

namespace rooftune::bench {
namespace {

const std::vector<std::string> kShapes = {"4096x4096", "8192x8192"};

std::string ReadName(const std::string& read, const Reader& reader) {
  return absl::StrFormat("%s/%s", read, reader.Name());
}

// The read of that name whose median was shortest: the reader that reads fastest here.
std::string FastestRead(const std::string& base, const std::string& read) {
  std::string fastest = ReadName(read, probes::kReaders[0]);
  for (const Reader& reader : probes::kReaders) {
    const double s = MedianSeconds(base + ReadName(read, reader));
    if (s > 0 && (MedianSeconds(base + fastest) <= 0 || s < MedianSeconds(base + fastest))) {
      fastest = ReadName(read, reader);
    }
  }
  return fastest;
}

struct Row {
  std::string shape;
  int threads;
  std::string f32_config, s8_config, u8s8_config;
};

// The three formats of one shape's GEMV: f32 weights, s8 weights with f32 x, u8 x s8.
struct Problems {
  Problem* f32;
  Problem* s8;
  Problem* u8s8;
  float* read_data;  // as many f32 as W holds, on huge pages: what the stream reads read
};

// The benchmark's state; RegisterShape adds a shape's benchmarks at one thread count, Print* the
// summaries.
class GemvBench {
 public:
  GemvBench(Context& context, const Options& options)
      : context_(context), options_(options), profile_(context.profile()) {
    for (int t : options.threads) executors_[t] = std::make_unique<Executor>(t);
  }

  absl::Status Start() {
    absl::StatusOr<BlasLibrary> openblas = BlasLibrary::Open("openblas");
    if (!openblas.ok()) return openblas.status();
    openblas_ = std::make_unique<BlasLibrary>(*openblas);
    return absl::OkStatus();
  }

  absl::StatusOr<Problems> Create(const std::string& shape) {
    Problems out;
    for (auto [dtype, epilogue, slot] : {std::tuple{Dtype::kF32, Epilogue::kNone, &out.f32},
                                         std::tuple{Dtype::kS8F32, Epilogue::kNone, &out.s8},
                                         std::tuple{Dtype::kU8S8, Epilogue::kBias, &out.u8s8}}) {
      absl::StatusOr<Workload> w = ParseWorkload(Op::kGemv, shape, dtype, epilogue, 0);
      if (!w.ok()) return w.status();
      absl::StatusOr<Problem> p = Problem::Create(*w);
      if (!p.ok()) return p.status();
      problems_.push_back(std::make_unique<Problem>(*std::move(p)));
      *slot = problems_.back().get();
    }
    const size_t floats = out.f32->b.size();
    const std::shared_ptr<void> pages = kernels::AllocateOnHugePages(floats * sizeof(float));
    if (pages == nullptr)
      return absl::ResourceExhaustedError("no memory for the stream read's buffer");
    out.read_data = static_cast<float*>(pages.get());
    std::fill(out.read_data, out.read_data + floats, 1.0f);
    kept_.push_back(pages);
    return out;
  }

  absl::Status RegisterShape(const std::string& shape, const Problems& p, int t) {
    Executor* executor = executors_[t].get();
    const std::string base = absl::StrFormat("gemv/%s/threads:%d/", shape, t);
    Row row{shape, t};
    for (auto [kernel, problem, name, config_text] :
         {std::tuple{&f32_, p.f32, "rooftune_f32", &row.f32_config},
          std::tuple{&s8_, p.s8, "rooftune_s8", &row.s8_config},
          std::tuple{&u8s8_, p.u8s8, "rooftune_u8s8", &row.u8s8_config}}) {
      absl::Status s = RegisterOurs(base + name, *kernel, problem, t, config_text);
      if (!s.ok()) return s;
    }
    rows_.push_back(row);
    Register(
        base + "onednn_f32", [=, this] { executor->Run(onednn_, Config(), *p.f32).IgnoreError(); },
        Evicting(p.f32->OperandBytes()), ArenaFor(onednn_, executor));
    Register(
        base + "onednn_u8s8",
        [=, this] { executor->Run(onednn_u8s8_, Config(), *p.u8s8).IgnoreError(); },
        Evicting(p.u8s8->OperandBytes()), ArenaFor(onednn_u8s8_, executor));
    RegisterReads(base + "stream_read", p.read_data, p.f32->b.size(), t);
    RegisterReads(base + "stream_read_int8", p.read_data, p.f32->b.size() / 4, t);
    const BlasLibrary* lib = openblas_.get();
    Problem* pf = p.f32;
    Register(
        base + "openblas_f32",
        [=] {
          lib->SetThreads(t);
          lib->Sgemv(int(pf->workload.n), int(pf->workload.k), pf->b.data(), int(pf->ldb),
                     pf->a.data(), pf->c.data());
        },
        Evicting(pf->OperandBytes()), CompetitorArena(executor));
    return absl::OkStatus();
  }

  void PrintRates() const {
    std::cout
        << "\n## GEMV y = W x, W streamed from DRAM every call (its bytes evicted from the "
           "caches), GB/s of weight bytes (median)\n\n"
           "\"stream read\": the probe's read kernel in this run (the fastest of its readers: "
           "1, 2, 4 or 8 streams, sums in registers or in memory) over as many bytes as the "
           "f32 weights, and over as many as the int8 weights, evicted and timed the same "
           "way; each format is divided by the read of its own bytes. \"DRAM read\": the "
           "profile's ceiling (best of 5, 4x the largest cache).\n\n"
           "| N x K | threads | DRAM read | stream read f32 / int8 bytes | rooftune f32 | "
           "OpenBLAS | oneDNN f32 | rooftune s8 | rooftune u8s8 | oneDNN u8s8 | f32 / stream "
           "| s8 / stream | u8s8 / stream | f32 / DRAM | u8s8 / DRAM |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const Row& r : rows_) PrintRateRow(r);
  }

  void PrintSpeedups() const {
    std::cout << "\n## int8 GEMV speedup over f32 GEMV against its analytic bound (the bytes "
                 "ratio)\n\n| N x K | threads | s8 / f32 | bound | of bound | u8s8 / f32 | bound | "
                 "of bound |\n|---|---|---|---|---|---|---|---|\n";
    for (const Row& r : rows_) {
      // Every byte each format moves (weights, scales, x and y), priced by the roofline.
      const std::string base = Base(r);
      const double t_f32 = MedianSeconds(base + "rooftune_f32");
      auto speedup = [&](const char* name) {
        const double t = MedianSeconds(base + name);
        return t > 0 ? t_f32 / t : 0;
      };
      auto bound = [&](Dtype dtype, Epilogue epilogue) {
        const Workload w = *ParseWorkload(Op::kGemv, r.shape, dtype, epilogue, 0);
        const absl::StatusOr<SpeedupBound> b = Int8SpeedupBound(profile_, w, r.threads);
        return b.ok() ? b->ratio : 0;
      };
      const double s8 = speedup("rooftune_s8"), u8s8 = speedup("rooftune_u8s8");
      const double s8_bound = bound(Dtype::kS8F32, Epilogue::kNone);
      const double u8s8_bound = bound(Dtype::kU8S8, Epilogue::kBias);
      std::cout << absl::StrFormat(
          "| %s | %d | %.2fx | %.2fx | %.0f%% | %.2fx | %.2fx | %.0f%% |\n", r.shape, r.threads, s8,
          s8_bound, Percent(s8, s8_bound), u8s8, u8s8_bound, Percent(u8s8, u8s8_bound));
    }
  }

  // The same comparison with the stream read, in back-to-back evicted pairs (see MeasurePaired):
  // each kernel's weight-byte rate as a share of the read's over as many bytes, in the same pair.
  // The pairs see the same moment of the machine; the medians above do not.
  void PrintPaired() const {
    std::cerr << "paired runs: each GEMV against the stream read of its own weight bytes\n";
    std::cout << "\n## Paired with the stream read of as many bytes: weight GB/s as a share of the "
                 "read's, median of back-to-back evicted pairs (quartiles)\n\n"
                 "| N x K | threads | f32 | s8 | u8s8 |\n|---|---|---|---|---|\n";
    for (const Row& r : rows_) {
      const std::string base = Base(r);
      auto share = [&](const std::string& kernel, const std::string& read) {
        const PairedSpeedup p = MeasurePaired(base + kernel, base + FastestRead(base, read), 0);
        return absl::StrFormat("%.0f%% (%.0f-%.0f)", 100 * p.median, 100 * p.low, 100 * p.high);
      };
      std::cout << absl::StrFormat(
          "| %s | %d | %s | %s | %s |\n", r.shape, r.threads, share("rooftune_f32", "stream_read"),
          share("rooftune_s8", "stream_read_int8"), share("rooftune_u8s8", "stream_read_int8"));
    }
  }

  // The configs each row ran, and which reader set each stream read (the fastest one differs
  // from machine to machine).
  void PrintConfigsAndReaders() const {
    std::cout << "\nconfigs:\n";
    for (const Row& r : rows_) {
      std::cout << "  " << r.shape << " threads=" << r.threads << ": f32 " << r.f32_config
                << "; s8 " << r.s8_config << "; u8s8 " << r.u8s8_config << "\n";
    }
    std::cout << "\nfastest readers (f32 bytes; int8 bytes):\n";
    for (const Row& r : rows_) {
      const std::string base = Base(r);
      std::cout << "  " << r.shape << " threads=" << r.threads << ": "
                << FastestRead(base, "stream_read") << "; " << FastestRead(base, "stream_read_int8")
                << "\n";
    }
  }

 private:
  static std::string Base(const Row& r) {
    return absl::StrFormat("gemv/%s/threads:%d/", r.shape, r.threads);
  }
  static double Percent(double part, double whole) { return whole > 0 ? 100 * part / whole : 0.0; }

  // One of our GEMVs with its stored or initial config. Weights are prepared ahead of time where
  // the config asks for it (PACKW grouped or copied), as in inference; every call's operands, and
  // the weights it streams, are evicted before it.
  absl::Status RegisterOurs(const std::string& name, const Kernel& kernel, Problem* p, int t,
                            std::string* config_text) {
    std::string source;
    const Config config =
        context_.ConfigFor(kernel, p->workload, t, options_.tune_budget_seconds, &source);
    *config_text = kernel.params.Format(config) + " (" + source + ")";
    absl::StatusOr<Prepared> packed = Prepare(kernel, config, *p);
    if (!packed.ok()) return packed.status();
    kept_.push_back(packed->object);
    const void* weights = packed->object.get();
    Executor* executor = executors_[t].get();
    Register(
        name, [=, &kernel] { executor->Run(kernel, config, *p, weights).IgnoreError(); },
        Evicting(ColdBytes(*p, *packed)), ArenaFor(kernel, executor));
    return absl::OkStatus();
  }

  // The reference a streaming kernel is judged by in this run: the probe's read kernel over as
  // many bytes as the kernel's weights (f32, then int8: a quarter as many), evicted and timed like
  // the kernels. Like for like: a call's fixed costs (waking the threads, the prefetchers' ramp,
  // the slower thread's tail) weigh four times more in a quarter of the bytes, and a read of the
  // f32 bytes had made the int8 kernels look 4-9% slower. It reads a buffer on huge pages, as the
  // probe and the packed weights are (4 KiB pages stream 5-7% slower). (The profile's DRAM read
  // is a best of five over a larger buffer, measured earlier: a median of this run is not
  // comparable.) As the probe does, it reads with each of its readers, and the fastest counts.
  void RegisterReads(const std::string& name, const float* read_data, size_t floats, int t) {
    Executor* executor = executors_[t].get();
    const std::string base = name.substr(0, name.rfind('/') + 1);
    const std::string read = name.substr(name.rfind('/') + 1);
    for (const Reader& reader : probes::kReaders) {
      Register(
          base + ReadName(read, reader),
          [=] {
            // In chunks taken as they come, as the GEMV's threads take rows: slices split in
            // advance wait for a thread the host preempts, and the GEMV out-ran such a read on
            // two threads (135% of it).
            executor->Execute([=] {
              const size_t chunk = probes::kDramReadChunkFloats;
              const int chunks = int((floats + chunk - 1) / chunk);
              tbb::parallel_for(
                  0, chunks,
                  [=](int c) {
                    const size_t from = size_t(c) * chunk;
                    benchmark::DoNotOptimize(
                        probes::ReadPass(read_data + from, std::min(chunk, floats - from), reader));
                  },
                  tbb::simple_partitioner());
            });
          },
          Evicting({BytesOf(read_data, floats)}), executor);
    }
  }

  void PrintRateRow(const Row& r) const {
    const Workload w = *ParseWorkload(Op::kGemv, r.shape, Dtype::kF32, Epilogue::kNone, 0);
    const std::string base = Base(r);
    const double f32_bytes = 4.0 * w.n * w.k, s8_bytes = 1.0 * w.n * w.k;
    auto gbs = [&](const std::string& name, double bytes) {
      return BillionsPerSecond(bytes, base + name);
    };
    const Ceiling* read = profile_.FindBandwidth(MemoryLevel::kDram, r.threads, "read");
    const double dram_read = read != nullptr ? read->per_second / 1e9 : 0;
    const double stream = gbs(FastestRead(base, "stream_read"), f32_bytes);
    const double stream_int8 = gbs(FastestRead(base, "stream_read_int8"), s8_bytes);
    const double f32 = gbs("rooftune_f32", f32_bytes), s8 = gbs("rooftune_s8", s8_bytes),
                 u8s8 = gbs("rooftune_u8s8", s8_bytes);
    std::cout << absl::StrFormat(
        "| %s | %d | %.1f | %.1f / %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f%% | "
        "%.0f%% | "
        "%.0f%% | %.0f%% | %.0f%% |\n",
        r.shape, r.threads, dram_read, stream, stream_int8, f32, gbs("openblas_f32", f32_bytes),
        gbs("onednn_f32", f32_bytes), s8, u8s8, gbs("onednn_u8s8", s8_bytes), Percent(f32, stream),
        Percent(s8, stream_int8), Percent(u8s8, stream_int8), Percent(f32, dram_read),
        Percent(u8s8, dram_read));
  }

  Context& context_;
  const Options& options_;
  const MachineProfile& profile_;
  const Kernel& f32_ = *KernelRegistry::Global().Find("gemv_f32");
  const Kernel& s8_ = *KernelRegistry::Global().Find("gemv_s8");
  const Kernel& u8s8_ = *KernelRegistry::Global().Find("gemv_u8s8");
  const Kernel& onednn_ = *KernelRegistry::Global().Find("onednn_gemv_f32");
  const Kernel& onednn_u8s8_ = *KernelRegistry::Global().Find("onednn_gemv_u8s8");
  std::unique_ptr<BlasLibrary> openblas_;
  std::map<int, std::unique_ptr<Executor>> executors_;
  std::vector<std::unique_ptr<Problem>> problems_;
  std::vector<std::shared_ptr<const void>> kept_;  // what the benchmarks read, kept alive
  std::vector<Row> rows_;
};

int Main(int argc, char** argv) {
  Options options;
  const Usage usage{
      .name = "gemv_bench",
      .summary =
          "GEMV for the decode shape, W streamed from DRAM (its bytes evicted from the caches "
          "before every call):\n"
          "rooftune's f32, s8-weight and u8 x s8 GEMV against OpenBLAS sgemv, oneDNN and a\n"
          "same-run stream read of W's bytes, as GB/s of weights; the int8 speedup over f32\n"
          "against its bytes bound.",
      .op = Op::kGemv,
      .default_shapes = "4096x4096,8192x8192"};
  std::unique_ptr<Context> context = StartBenchmark(&argc, argv, usage, &options);
  if (context == nullptr) return 1;
  GemvBench bench(*context, options);
  absl::Status status = bench.Start();
  for (const std::string& shape : options.shapes.empty() ? kShapes : options.shapes) {
    if (!status.ok()) break;
    absl::StatusOr<Problems> problems = bench.Create(shape);
    status = problems.status();
    for (int t : options.threads) {
      if (status.ok()) status = bench.RegisterShape(shape, *problems, t);
    }
  }
  if (!RunRegistered(status, usage.name)) return 1;
  bench.PrintRates();
  bench.PrintSpeedups();
  bench.PrintPaired();
  bench.PrintConfigsAndReaders();
  return 0;
}

}  // namespace
}  // namespace rooftune::bench

int main(int argc, char** argv) { return rooftune::bench::Main(argc, argv); }
