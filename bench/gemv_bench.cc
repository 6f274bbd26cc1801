// GEMV for the decode shape: rooftune's gemv_f32, gemv_s8 (s8 weights, per-row scales) and
// gemv_u8s8 against OpenBLAS sgemv and oneDNN (M = 1 matmul, f32 and u8 x s8), at each thread count, with W streamed from DRAM on
// every call (its bytes are evicted from the caches before each timed call). Reports GB/s of weight bytes
// against the measured DRAM read bandwidth, and the int8 speedup over f32 against its analytic
// bound: the ratio of the bytes each format moves.
//
//   gemv_bench [--threads=1,2] [--shapes=4096x4096,8192x8192] [--tune-budget=SECONDS]
#include <algorithm>
#include <iostream>
#include <memory>
#include <tuple>

#include "absl/strings/str_format.h"
#include "bench/bench_main.h"
#include "framework/int8_speedup.h"
#include "bench/blas_library.h"
#include "benchmark/benchmark.h"
#include "framework/cold_cache.h"
#include "framework/executor.h"
#include "framework/harness.h"
#include "kernels/workspace.h"
#include "oneapi/tbb/parallel_for.h"
#include "probes/bandwidth.h"

namespace rooftune::bench {
namespace {

const std::vector<std::string> kShapes = {"4096x4096", "8192x8192"};

std::string ReadName(const std::string& read, const probes::Reader& reader) {
  return absl::StrFormat("%s/%s", read, reader.Name());
}

// The read of that name whose median was shortest: the reader that reads fastest here.
std::string FastestRead(const std::string& base, const std::string& read) {
  std::string fastest = ReadName(read, probes::kReaders[0]);
  for (const probes::Reader& reader : probes::kReaders) {
    const double s = MedianSeconds(base + ReadName(read, reader));
    if (s > 0 && (MedianSeconds(base + fastest) <= 0 || s < MedianSeconds(base + fastest))) {
      fastest = ReadName(read, reader);
    }
  }
  return fastest;
}

int Main(int argc, char** argv) {
  Options options;
  const Usage usage{
      .name = "gemv_bench",
      .summary = "GEMV for the decode shape, W streamed from DRAM (its bytes evicted from the caches before every call):\n"
                 "rooftune's f32, s8-weight and u8 x s8 GEMV against OpenBLAS sgemv, oneDNN and a\n"
                 "same-run stream read of W's bytes, as GB/s of weights; the int8 speedup over f32\n"
                 "against its bytes bound.",
      .op = Op::kGemv,
      .default_shapes = "4096x4096,8192x8192"};
  std::unique_ptr<Context> context = StartBenchmark(&argc, argv, usage, &options);
  if (context == nullptr) return 1;
  const MachineProfile& profile = context->profile();
  absl::StatusOr<BlasLibrary> openblas = BlasLibrary::Open("openblas");
  if (!openblas.ok()) {
    std::cerr << openblas.status().message() << "\n";
    return 1;
  }
  const Kernel& f32 = *KernelRegistry::Global().Find("gemv_f32");
  const Kernel& s8 = *KernelRegistry::Global().Find("gemv_s8");
  const Kernel& u8s8 = *KernelRegistry::Global().Find("gemv_u8s8");
  const Kernel& onednn = *KernelRegistry::Global().Find("onednn_gemv_f32");
  const Kernel& onednn_u8s8 = *KernelRegistry::Global().Find("onednn_gemv_u8s8");

  std::map<int, std::unique_ptr<Executor>> executors;
  for (int t : options.threads) executors[t] = std::make_unique<Executor>(t);
  std::vector<std::unique_ptr<Problem>> problems;
  struct Row {
    std::string shape;
    int threads;
    std::string f32_config, s8_config, u8s8_config;
  };
  std::vector<Row> rows;
  std::vector<std::shared_ptr<const void>> kept;  // what the benchmarks read, kept alive
  for (const std::string& shape : options.shapes.empty() ? kShapes : options.shapes) {
    absl::StatusOr<Workload> wf = ParseWorkload(Op::kGemv, shape, Dtype::kF32, Epilogue::kNone, 0);
    absl::StatusOr<Workload> ws = ParseWorkload(Op::kGemv, shape, Dtype::kS8F32, Epilogue::kNone, 0);
    if (!wf.ok() || !ws.ok()) return 1;
    problems.push_back(std::make_unique<Problem>(*Problem::Create(*wf)));
    Problem* pf = problems.back().get();
    problems.push_back(std::make_unique<Problem>(*Problem::Create(*ws)));
    Problem* ps = problems.back().get();
    absl::StatusOr<Workload> wi = ParseWorkload(Op::kGemv, shape, Dtype::kU8S8, Epilogue::kBias, 0);
    problems.push_back(std::make_unique<Problem>(*Problem::Create(*wi)));
    Problem* pi = problems.back().get();
    // What the stream reads below read (see there): as many f32 as W holds, on huge pages.
    const std::shared_ptr<void> read_pages = kernels::AllocateOnHugePages(pf->b.size() * sizeof(float));
    if (read_pages == nullptr) {
      std::cerr << "no memory for the stream read's buffer\n";
      return 1;
    }
    float* read_data = static_cast<float*>(read_pages.get());
    std::fill(read_data, read_data + pf->b.size(), 1.0f);
    kept.push_back(read_pages);
    for (int t : options.threads) {
      Executor* executor = executors[t].get();
      std::string source_f32, source_s8;
      const Config cf = context->ConfigFor(f32, *wf, t, options.tune_budget_seconds, &source_f32);
      const Config cs = context->ConfigFor(s8, *ws, t, options.tune_budget_seconds, &source_s8);
      std::string source_u8s8;
      const Config ci = context->ConfigFor(u8s8, *wi, t, options.tune_budget_seconds, &source_u8s8);
      rows.push_back({shape, t, f32.params.Format(cf) + " (" + source_f32 + ")", s8.params.Format(cs) + " (" + source_s8 + ")",
                      u8s8.params.Format(ci) + " (" + source_u8s8 + ")"});
      // Weights prepared ahead of time where a config asks for it (PACKW grouped or copied), as in inference;
      // every call's operands, and the weights it streams, are evicted before it.
      const void* weights[3];
      std::vector<ByteSpan> cold_bytes[3];
      for (auto [i, kernel, config, problem] :
           {std::tuple{0, &f32, &cf, pf}, std::tuple{1, &s8, &cs, ps}, std::tuple{2, &u8s8, &ci, pi}}) {
        absl::StatusOr<Prepared> packed = Prepare(*kernel, *config, *problem);
        if (!packed.ok()) {
          std::cerr << packed.status() << "\n";
          return 1;
        }
        kept.push_back(packed->object);
        weights[i] = packed->object.get();
        cold_bytes[i] = ColdBytes(*problem, *packed);
      }
      const std::string base = absl::StrFormat("gemv/%s/threads:%d/", shape, t);
      Register(base + "rooftune_f32", [=, &f32] { executor->Run(f32, cf, *pf, weights[0]).IgnoreError(); },
               Evicting(cold_bytes[0]));
      Register(base + "rooftune_s8", [=, &s8] { executor->Run(s8, cs, *ps, weights[1]).IgnoreError(); },
               Evicting(cold_bytes[1]));
      Register(base + "rooftune_u8s8",
               [=, &u8s8] { executor->Run(u8s8, ci, *pi, weights[2]).IgnoreError(); },
               Evicting(cold_bytes[2]));
      Register(base + "onednn_f32", OnRooftunesCpus(executor, [=, &onednn] {
                 executor->Run(onednn, Config(), *pf).IgnoreError();
               }), Evicting(pf->OperandBytes()));
      Register(base + "onednn_u8s8", OnRooftunesCpus(executor, [=, &onednn_u8s8] {
                 executor->Run(onednn_u8s8, Config(), *pi).IgnoreError();
               }), Evicting(pi->OperandBytes()));
      // The reference a streaming kernel is judged by in this run: the probe's read kernel over
      // as many bytes as the kernel's weights (f32, then int8: a quarter as many), evicted and
      // timed like the kernels. Like for like: a call's fixed costs (waking the threads, the
      // prefetchers' ramp, the slower thread's tail) weigh four times more in a quarter of the
      // bytes, and a read of the f32 bytes had made the int8 kernels look 4-9% slower. It
      // reads a buffer on huge pages, as the probe and the packed weights are (4 KiB pages
      // stream 5-7% slower here). (The profile's DRAM read is a best of five over a larger
      // buffer, measured earlier: a median of this run is not comparable.)
      // As the probe does, it reads with each of its readers, and the fastest counts.
      auto register_read = [&](const std::string& name, size_t floats) {
        for (const probes::Reader& reader : probes::kReaders) {
          Register(base + ReadName(name, reader), [=] {
            executor->Execute([=] {
              const size_t slice = floats / size_t(t) / 16 * 16;  // whole cache lines
              tbb::parallel_for(0, t, [=](int i) {
                benchmark::DoNotOptimize(
                    probes::ReadPass(read_data + size_t(i) * slice, slice, reader));
              }, tbb::static_partitioner());
            });
          }, Evicting({BytesOf(read_data, floats)}));
        }
      };
      register_read("stream_read", pf->b.size());
      register_read("stream_read_int8", pf->b.size() / 4);
      const BlasLibrary* lib = &*openblas;
      Register(base + "openblas_f32", OnRooftunesCpus(executor, [=] {
                 lib->SetThreads(t);
                 lib->Sgemv(int(pf->workload.n), int(pf->workload.k), pf->b.data(), int(pf->ldb),
                            pf->a.data(), pf->c.data());
               }), Evicting(pf->OperandBytes()));
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  std::cout << "\n## GEMV y = W x, W streamed from DRAM every call (its bytes evicted from the caches), GB/s of weight "
               "bytes (median)\n\n"
               "\"stream read\": the probe's read kernel in this run (the fastest of its readers: 1, 2, 4 or 8 streams, sums in registers or in memory) over as many bytes as the f32 "
               "weights, and over as many as the int8 weights, evicted and timed the same way; each "
               "format is divided by the read of its own bytes. \"DRAM read\": the profile's ceiling "
               "(best of 5, 4x the largest cache).\n\n"
               "| N x K | threads | DRAM read | stream read f32 / int8 bytes | rooftune f32 | OpenBLAS | "
               "oneDNN f32 | rooftune s8 | rooftune u8s8 | oneDNN u8s8 | f32 / stream | s8 / stream | "
               "u8s8 / stream | f32 / DRAM | u8s8 / DRAM |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::string speedups =
      "\n## int8 GEMV speedup over f32 GEMV against its analytic bound (the bytes ratio)\n\n"
      "| N x K | threads | s8 / f32 | bound | of bound | u8s8 / f32 | bound | of bound |\n"
      "|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : rows) {
    const Workload wf = *ParseWorkload(Op::kGemv, r.shape, Dtype::kF32, Epilogue::kNone, 0);
    const Workload ws = *ParseWorkload(Op::kGemv, r.shape, Dtype::kS8F32, Epilogue::kNone, 0);
    const Workload wi = *ParseWorkload(Op::kGemv, r.shape, Dtype::kU8S8, Epilogue::kBias, 0);
    const std::string base = absl::StrFormat("gemv/%s/threads:%d/", r.shape, r.threads);
    const double f32_bytes = 4.0 * wf.n * wf.k, s8_bytes = 1.0 * ws.n * ws.k;
    auto gbs = [&](const std::string& name, double bytes) {
      const double s = MedianSeconds(base + name);
      return s > 0 ? bytes / s / 1e9 : 0.0;
    };
    auto percent = [](double part, double whole) { return whole > 0 ? 100 * part / whole : 0.0; };
    const Ceiling* read = profile.FindBandwidth(MemoryLevel::kDram, r.threads, "read");
    const double dram_read = read != nullptr ? read->per_second / 1e9 : 0;
    const double stream = gbs(FastestRead(base, "stream_read"), f32_bytes);
    const double stream_int8 = gbs(FastestRead(base, "stream_read_int8"), s8_bytes);
    const double f32 = gbs("rooftune_f32", f32_bytes), s8 = gbs("rooftune_s8", s8_bytes),
                 u8s8 = gbs("rooftune_u8s8", s8_bytes);
    std::cout << absl::StrFormat(
        "| %s | %d | %.1f | %.1f / %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f%% | %.0f%% | "
        "%.0f%% | %.0f%% | %.0f%% |\n",
        r.shape, r.threads, dram_read, stream, stream_int8, f32, gbs("openblas_f32", f32_bytes),
        gbs("onednn_f32", f32_bytes), s8, u8s8, gbs("onednn_u8s8", s8_bytes), percent(f32, stream),
        percent(s8, stream_int8), percent(u8s8, stream_int8), percent(f32, dram_read),
        percent(u8s8, dram_read));
    // Every byte each format moves (weights, scales, x and y), priced by the roofline.
    const double t_f32 = MedianSeconds(base + "rooftune_f32");
    const double t_s8 = MedianSeconds(base + "rooftune_s8"), t_u8s8 = MedianSeconds(base + "rooftune_u8s8");
    const absl::StatusOr<SpeedupBound> s8_bound = Int8SpeedupBound(profile, ws, r.threads);
    const absl::StatusOr<SpeedupBound> u8s8_bound = Int8SpeedupBound(profile, wi, r.threads);
    const double speedup = t_s8 > 0 ? t_f32 / t_s8 : 0, speedup_int = t_u8s8 > 0 ? t_f32 / t_u8s8 : 0;
    const double bound = s8_bound.ok() ? s8_bound->ratio : 0;
    const double bound_int = u8s8_bound.ok() ? u8s8_bound->ratio : 0;
    speedups += absl::StrFormat("| %s | %d | %.2fx | %.2fx | %.0f%% | %.2fx | %.2fx | %.0f%% |\n", r.shape,
                                r.threads, speedup, bound, percent(speedup, bound), speedup_int,
                                bound_int, percent(speedup_int, bound_int));
  }
  std::cout << speedups;

  // The same comparison with the stream read, in back-to-back evicted pairs (see MeasurePaired):
  // each kernel's weight-byte rate as a share of the read's over as many bytes, in the same pair.
  // The pairs see the same moment of the machine; the medians above do not.
  std::cerr << "paired runs: each GEMV against the stream read of its own weight bytes\n";
  std::cout << "\n## Paired with the stream read of as many bytes: weight GB/s as a share of the "
               "read's, median of back-to-back evicted pairs (quartiles)\n\n"
               "| N x K | threads | f32 | s8 | u8s8 |\n|---|---|---|---|---|\n";
  for (const Row& r : rows) {
    const std::string base = absl::StrFormat("gemv/%s/threads:%d/", r.shape, r.threads);
    auto share = [&](const std::string& kernel, const std::string& read) {
      const PairedSpeedup p = MeasurePaired(base + kernel, base + read, 0);
      return absl::StrFormat("%.0f%% (%.0f-%.0f)", 100 * p.median, 100 * p.low, 100 * p.high);
    };
    std::cout << absl::StrFormat("| %s | %d | %s | %s | %s |\n", r.shape, r.threads,
                                 share("rooftune_f32", FastestRead(base, "stream_read")),
                                 share("rooftune_s8", FastestRead(base, "stream_read_int8")),
                                 share("rooftune_u8s8", FastestRead(base, "stream_read_int8")));
  }
  std::cout << "\nconfigs:\n";
  for (const Row& r : rows) {
    std::cout << "  " << r.shape << " threads=" << r.threads << ": f32 " << r.f32_config << "; s8 "
              << r.s8_config << "; u8s8 " << r.u8s8_config << "\n";
  }
  // Which reader set each stream read: the fastest one differs from machine to machine.
  std::cout << "\nfastest readers (f32 bytes; int8 bytes):\n";
  for (const Row& r : rows) {
    const std::string base = absl::StrFormat("gemv/%s/threads:%d/", r.shape, r.threads);
    std::cout << "  " << r.shape << " threads=" << r.threads << ": "
              << FastestRead(base, "stream_read") << "; " << FastestRead(base, "stream_read_int8")
              << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace rooftune::bench

int main(int argc, char** argv) { return rooftune::bench::Main(argc, argv); }
