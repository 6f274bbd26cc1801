// The batch sweep: the same int8 weights (a decode-shape N x K matrix, s8 with per-row scales)
// against B = 1, 2, 4, ..., 512 quantised inputs. B GEMV calls (timed up to B = 64) re-stream
// the weights B times; one int8 GEMM (M = B) streams them once and does B times the work per
// byte. Arithmetic intensity rises with B until the kernel turns compute-bound; the sweep takes
// whichever path is faster at each B and prints both, with the roofline bound
// min(int8 ceiling, DRAM x intensity).
//
//   batch_sweep_bench [--threads=1,2] [--shapes=4096x4096]
#include <iostream>
#include <memory>

#include "absl/strings/str_format.h"
#include "bench/bench_main.h"
#include "benchmark/benchmark.h"
#include "framework/cold_cache.h"
#include "framework/executor.h"
#include "framework/harness.h"
#include "kernels/amx.h"
#include "kernels/gemm_s8/gemm_s8.h"
#include "kernels/gemv/gemv.h"
#include "plugins/builtin/gemv_blocking.h"

namespace rooftune::bench {
namespace {

// Past 64 the GEMM path alone: B GEMV calls only get slower, and with AMX the bound turns
// compute-bound only at a few hundred inputs.
const std::vector<int> kBatches = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
constexpr int kLargestGemvBatch = 64;

// One weight matrix and every batch's inputs and outputs, with the GEMM path's packed weights.
struct Sweep {
  std::string shape;
  Workload w;
  Problem p;  // W (N x K s8), row scales and sums, bias
  Buffer<uint8_t> x;
  Buffer<float> y;
  kernels::S8Path path;
  kernels::PackedWeightsS8 packed;
  std::vector<ByteSpan> gemm_bytes;  // evicted before every GEMM call
};

absl::StatusOr<std::unique_ptr<Sweep>> CreateSweep(const std::string& shape) {
  absl::StatusOr<Workload> w = ParseWorkload(Op::kGemv, shape, Dtype::kU8S8, Epilogue::kBias, 0);
  if (!w.ok()) return w.status();
  absl::StatusOr<Problem> p = Problem::Create(*w);
  if (!p.ok()) return p.status();
  const int max_batch = kBatches.back();
  // The GEMM path reads W transposed (B[k][n] = W[n][k]), packed once, for the best exact path:
  // AMX tiles, else vpdpbusd, else the s16 pairs.
  const kernels::S8Path path = kernels::AmxInt8Available()       ? kernels::S8Path::kAmx
                               : kernels::GemmS8FastPathIsVnni() ? kernels::S8Path::kFast
                                                                 : kernels::S8Path::kExact;
  absl::StatusOr<kernels::PackedWeightsS8> packed =
      kernels::PackWeightsS8(p->b_s8.data(), w->k, w->n, 1, path, p->ldb);
  if (!packed.ok()) return packed.status();
  auto sweep = std::unique_ptr<Sweep>(new Sweep{shape,
                                                *w,
                                                *std::move(p),
                                                Buffer<uint8_t>(size_t(max_batch) * w->k),
                                                Buffer<float>(size_t(max_batch) * w->n),
                                                path,
                                                *std::move(packed),
                                                {}});
  for (size_t i = 0; i < sweep->x.size(); ++i) sweep->x[i] = uint8_t((i * 2654435761u) >> 24);
  // Before every call its weights, inputs and outputs are evicted from the caches: the GEMM's
  // packed weights here, the GEMV's (what its prepare step made) in RegisterBatches.
  sweep->gemm_bytes = sweep->p.OperandBytes();
  sweep->gemm_bytes.push_back(sweep->x.bytes());
  sweep->gemm_bytes.push_back(sweep->y.bytes());
  for (const ByteSpan& bytes : sweep->packed.StreamedBytes()) sweep->gemm_bytes.push_back(bytes);
  return sweep;
}

// B GEMV calls, and one GEMM of M = B, for every batch B at `t` threads. The GEMV blocking is
// the one gemv_bench measures: tuned (cold) for this shape, else the initial one; its weights as
// that config reads them (packed once by the kernel's prepare step, or row-major in place).
absl::Status RegisterBatches(Context& context, const Options& options, Sweep& sweep,
                             Executor* executor, int t,
                             std::vector<std::shared_ptr<const void>>& kept) {
  const Kernel& gemv = *KernelRegistry::Global().Find("gemv_u8s8");
  const Workload w = sweep.w;
  std::string source;
  const Config c = context.ConfigFor(gemv, w, t, options.tune_budget_seconds, &source);
  const kernels::GemvBlocking gemv_blocking = GemvBlockingOf(c);
  absl::StatusOr<Prepared> packed_w = Prepare(gemv, c, sweep.p);
  if (!packed_w.ok()) return packed_w.status();
  const int8_t* gemv_w = packed_w->object != nullptr
                             ? static_cast<const int8_t*>(packed_w->object.get())
                             : sweep.p.b_s8.data();
  kept.push_back(packed_w->object);
  std::vector<ByteSpan> gemv_bytes = ColdBytes(sweep.p, *packed_w);
  gemv_bytes.push_back(sweep.x.bytes());
  gemv_bytes.push_back(sweep.y.bytes());
  std::cout << "GEMV threads=" << t << ": " << gemv.params.Format(c) << " (" << source << ")\n";
  Sweep* s = &sweep;
  for (int batch : kBatches) {
    const std::string base = absl::StrFormat("batch/%s/threads:%d/B:%d/", sweep.shape, t, batch);
    if (batch <= kLargestGemvBatch)
      Register(
          base + "gemv",
          [=] {
            executor->Execute([&] {
              for (int b = 0; b < batch; ++b) {
                kernels::GemvU8S8Args g;
                g.n = w.n, g.k = w.k, g.w = gemv_w, g.ldw = s->p.ldb,
                g.row_sums = s->p.colsum_b.data();
                g.row_scale = s->p.scale_b.data(), g.x = s->x.data() + size_t(b) * w.k;
                g.scale_x = s->p.scale_a, g.zero_point_x = s->p.zero_point_a;
                g.y = s->y.data() + size_t(b) * w.n, g.bias = s->p.bias.data();
                kernels::GemvU8S8(g, gemv_blocking).IgnoreError();
              }
            });
          },
          Evicting(gemv_bytes), executor);
    Register(
        base + "gemm",
        [=] {
          executor->Execute([&] {
            kernels::GemmS8Args g;
            g.m = batch, g.n = w.n, g.k = w.k, g.a = s->x.data(), g.lda = w.k, g.b = &s->packed;
            g.y = s->y.data(), g.ldy = w.n, g.scale_a = s->p.scale_a,
            g.zero_point_a = s->p.zero_point_a;
            g.scale_b = s->p.scale_b.data(), g.bias = s->p.bias.data();
            const bool amx = s->path == kernels::S8Path::kAmx;
            const int mr = amx ? 8 : batch >= 6 ? 6 : 4;
            kernels::GemmS8(g, {mr, amx ? 64 : 48,
                                t > 1 ? kernels::ParallelLoop::kJc : kernels::ParallelLoop::kIc})
                .IgnoreError();
          });
        },
        Evicting(sweep.gemm_bytes), executor);
  }
  return absl::OkStatus();
}

void PrintSweep(const MachineProfile& profile, const Sweep& sweep,
                const std::vector<int>& threads) {
  const Workload& w = sweep.w;
  std::cout << absl::StrFormat(
      "\n## Batch sweep, int8 weights %s (s8, row scales) x B quantised inputs, W from DRAM each "
      "call; GEMM path %s\n\nintensity = 2 B N K / (bytes of W once + B inputs + B outputs); bound "
      "= min(int8 "
      "ceiling, DRAM read x intensity)\n\n| threads | B | intensity (op/B) | GEMV x B, GOP/s | "
      "GEMM, GOP/s | faster | bound GOP/s | bound by | attainment |\n"
      "|---|---|---|---|---|---|---|---|---|\n",
      sweep.shape,
      sweep.path == kernels::S8Path::kAmx    ? "AMX"
      : sweep.path == kernels::S8Path::kFast ? "vpdpbusd"
                                             : "exact s16");
  for (int t : threads) {
    const Ceiling* read = profile.FindBandwidth(MemoryLevel::kDram, t, "read");
    const double dram = read != nullptr ? read->per_second : 0;
    const Ceiling* compute = profile.FindCompute(Dtype::kU8S8, t);
    for (int batch : kBatches) {
      const std::string base = absl::StrFormat("batch/%s/threads:%d/B:%d/", sweep.shape, t, batch);
      const double ops = 2.0 * batch * double(w.n) * double(w.k);
      const double bytes = double(w.n) * w.k + 8.0 * w.n + batch * (double(w.k) + 4.0 * w.n);
      const double intensity = ops / bytes;
      const double gemv = batch <= kLargestGemvBatch ? MedianSeconds(base + "gemv") : 0;
      const double gemm = MedianSeconds(base + "gemm");
      const double peak = compute != nullptr ? compute->per_second : 1e300;
      const double bound = std::min(peak, dram * intensity);
      const bool gemv_wins = gemv > 0 && gemv <= gemm;
      const double best = gemv_wins ? gemv : gemm;
      std::cout << absl::StrFormat(
          "| %d | %d | %.1f | %s | %.1f | %s | %.1f | %s | %.2f |\n", t, batch, intensity,
          gemv > 0 ? absl::StrFormat("%.1f", ops / gemv / 1e9) : "-", ops / gemm / 1e9,
          gemv_wins ? "GEMV" : "GEMM", bound / 1e9, bound >= peak ? "compute" : "DRAM",
          best > 0 ? ops / best / bound : 0.0);
    }
  }
}

int Main(int argc, char** argv) {
  Options options;
  const Usage usage{
      .name = "batch_sweep_bench",
      .summary =
          "The batch sweep: one int8 weight matrix against B = 1 to 512 quantised inputs, as B\n"
          "GEMV calls and as one int8 GEMM (M = B), W from DRAM every call; arithmetic\n"
          "intensity and the roofline bound at each B. Only the first shape is used.",
      .op = Op::kGemv,
      .default_shapes = "4096x4096"};
  std::unique_ptr<Context> context = StartBenchmark(&argc, argv, usage, &options);
  if (context == nullptr) return 1;
  const std::string shape = options.shapes.empty() ? "4096x4096" : options.shapes.front();
  absl::StatusOr<std::unique_ptr<Sweep>> sweep = CreateSweep(shape);
  if (!sweep.ok()) {
    std::cerr << sweep.status().message() << "\n";
    return 1;
  }
  std::map<int, std::unique_ptr<Executor>> executors;
  std::vector<std::shared_ptr<const void>> kept;  // the GEMVs' prepared weights
  absl::Status status;
  for (int t : options.threads) {
    executors[t] = std::make_unique<Executor>(t);
    if (!status.ok()) continue;
    status = RegisterBatches(*context, options, **sweep, executors[t].get(), t, kept);
  }
  if (!RunRegistered(status, usage.name)) return 1;
  PrintSweep(context->profile(), **sweep, options.threads);
  return 0;
}

}  // namespace
}  // namespace rooftune::bench

int main(int argc, char** argv) { return rooftune::bench::Main(argc, argv); }
