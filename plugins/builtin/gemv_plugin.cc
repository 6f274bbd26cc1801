// Registers the GEMV kernels for the decode shape: f32 weights, and s8 weights with per-row scales
// dequantised in registers. Both stream W once per call, so their traffic model is W's bytes at
// every level plus x re-read from cache for every group of rows.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>

#include "absl/strings/str_format.h"
#include "framework/kernel.h"
#include "kernels/gemv/gemv.h"
#include "kernels/workspace.h"
#include "plugins/builtin/gemv_blocking.h"

namespace rooftune {

kernels::GemvBlocking GemvBlockingOf(const Config& c) {
  kernels::GemvBlocking b;
  b.rows_per_task = int(c.Get("ROWS"));
  b.rows_together = int(c.Get("TOGETHER"));
  b.prefetch_bytes = int(c.Get("PF"));
  b.prefetch_into_l2 = c.Get("PFL") == 2;
  b.packed_w = GemvLayoutOf(c) == GemvLayout::kGrouped;
  b.spread_groups = c.Get("SPREAD") == 1;
  b.widen_dot = c.Has("DOT") && c.Get("DOT") == 1;
  return b;
}

GemvLayout GemvLayoutOf(const Config& c) { return GemvLayout(c.Get("PACKW")); }

absl::StatusOr<std::shared_ptr<void>> PrepareGemvWeights(GemvLayout layout,
                                                         const kernels::GemvBlocking& blocking,
                                                         const void* w, int64_t n, int64_t k,
                                                         int64_t ldw, int element_bytes) {
  if (layout == GemvLayout::kInPlace) return nullptr;
  const size_t row_bytes = size_t(k * element_bytes), stride = size_t(ldw * element_bytes);
  if (layout == GemvLayout::kCopied) {
    // Rows ldw apart, as in the source.
    std::shared_ptr<void> copy =
        kernels::CopyRowsOnHugePages(w, size_t(n), row_bytes, stride, stride);
    if (copy == nullptr)
      return absl::ResourceExhaustedError("no memory for the prepared GEMV weights");
    return copy;
  }
  // The grouped layout fills n * k elements.
  std::shared_ptr<void> packed = kernels::AllocateOnHugePages(size_t(n) * row_bytes);
  if (packed == nullptr)
    return absl::ResourceExhaustedError("no memory for the prepared GEMV weights");
  if (absl::Status s =
          kernels::PackGemvWeights(w, n, k, ldw, element_bytes, blocking, packed.get());
      !s.ok()) {
    return s;
  }
  return packed;
}

namespace {

// W as this config reads it, prepared once ahead of time as inference does (PrepareGemvWeights),
// or nothing when the config reads the caller's W in place. The copies live on huge pages where
// the system grants them: a DRAM stream on 4 KiB pages is slower, and the grouped layout's speed
// then depends on where the process's pages happen to lie.
absl::StatusOr<Prepared> PrepareWeights(const Config& c, const void* w, int64_t n, int64_t k,
                                        int64_t ldw, int element_bytes) {
  absl::StatusOr<std::shared_ptr<void>> copy =
      PrepareGemvWeights(GemvLayoutOf(c), GemvBlockingOf(c), w, n, k, ldw, element_bytes);
  if (!copy.ok()) return copy.status();
  if (*copy == nullptr) return Prepared();
  // What a call streams: the rows as copied (the last ends after k elements), or packed.
  const size_t bytes = GemvLayoutOf(c) == GemvLayout::kCopied
                           ? size_t(((n - 1) * ldw + k) * element_bytes)
                           : size_t(n * k * element_bytes);
  const ByteSpan streamed = BytesOf(static_cast<const uint8_t*>(copy->get()), bytes);
  return Prepared{*std::move(copy), {streamed}};
}

absl::StatusOr<Prepared> PrepareF32Weights(const Config& c, const Problem& p) {
  return PrepareWeights(c, p.b.data(), p.workload.n, p.workload.k, p.ldb, sizeof(float));
}

absl::StatusOr<Prepared> PrepareS8Weights(const Config& c, const Problem& p) {
  return PrepareWeights(c, p.b_s8.data(), p.workload.n, p.workload.k, p.ldb, 1);
}

}  // namespace

ParamSpace GemvSpace() {
  ParamSpace space;
  space.Add("ROWS", {4, 16, 64, 256, 1024}, "rows of W per task (threads split the tasks)")
      .Add("TOGETHER", {1, 2, 4, 8, 16}, "rows that share each load of x (and stream at once)")
      .Add("PF", {0, 512, 4096, 32768},
           "software prefetch distance in bytes along each row (0: none); past the row's end it "
           "reaches the same row of the next group, whose pages the hardware prefetchers (which "
           "stop at page boundaries) would otherwise find late")
      .Add("PFL", {1, 2},
           "the cache level the software prefetch fills: 1 = L1 (prefetcht0), 2 = only L2 "
           "(prefetcht1)")
      .OnlyWhen("PF > 0", [](const Config& c) { return c.Get("PF") > 0; })
      .AddChoice("PACKW", {"in_place", "grouped", "copied"},
                 "how W is prepared once, ahead of time: not at all (read row-major in place); "
                 "packed line by line across each group of rows read together, so that the group "
                 "streams as one sequence; copied as it is (row-major); the copies on huge pages")
      .AddChoice("SPREAD", {"neighbours", "spread"},
                 "which rows of a task form a group: TOGETHER neighbouring rows, or rows spread "
                 "evenly over the task, so that each of the group's streams runs on through "
                 "consecutive rows of W instead of jumping TOGETHER rows at every row's end")
      .AsBefore("neighbours")
      .OnlyWhen("PACKW is not grouped (grouped rows are neighbours)",
                [](const Config& c) { return GemvLayoutOf(c) != GemvLayout::kGrouped; });
  return space;
}

// u8 x s8 also chooses its dot product.
ParamSpace GemvU8S8Space() {
  ParamSpace space = GemvSpace();
  space
      .AddChoice("DOT", {"fastest", "s16_pairs"},
                 "the u8 x s8 dot product, exact either way: the CPU's fastest (vpdpbusd with "
                 "VNNI), or both widened to s16 and pairs multiplied (vpmaddwd), which issues "
                 "loads more slowly and can stream DRAM faster")
      .AsBefore("fastest");
  return space;
}

namespace {

// W, y, and the bias, row scales and row sums cross every level once; x (a row of the GEMM's A)
// stays in L1 for the TOGETHER rows that share each load of it and in L2 for a task's ROWS.
Traffic GemvTraffic(const Workload& w, const Config& c, int, const MachineProfile&) {
  const kernels::GemvBlocking b = GemvBlockingOf(c);
  const double n = double(w.n);
  const double x = double(w.k) * ElementSizesOf(w.dtype, w.epilogue).a;
  const double once = w.CompulsoryBytes() - x;
  Traffic t;
  t[MemoryLevel::kDram] = once + x;
  t[MemoryLevel::kL3] = once + x;
  t[MemoryLevel::kL2] = once + x * std::ceil(n / double(b.rows_per_task));
  t[MemoryLevel::kL1] = once + x * std::ceil(n / double(b.rows_together));
  return t;
}

// The weights the prepare step made (PACKW grouped or copied), else the problem's, row-major. A
// config run without its prepare step is refused: a grouped one would read row-major weights as
// packed.
absl::StatusOr<const void*> WeightsOf(const Config& c, const RunContext& context,
                                      const void* in_place) {
  if (GemvLayoutOf(c) == GemvLayout::kInPlace) return in_place;
  if (context.prepared == nullptr) {
    return absl::FailedPreconditionError(
        "a GEMV config with W grouped or copied needs the "
        "weights the prepare step makes");
  }
  return context.prepared;
}

kernels::GemvArgs ArgsOf(Problem& p) {
  kernels::GemvArgs g;
  g.n = p.workload.n;
  g.k = p.workload.k;
  g.ldw = p.ldb;
  g.x = p.a.data();
  g.y = p.c.data();
  g.bias = p.bias.data();
  g.epilogue = p.workload.epilogue == Epilogue::kNone   ? kernels::GemmEpilogue::kNone
               : p.workload.epilogue == Epilogue::kBias ? kernels::GemmEpilogue::kBias
                                                        : kernels::GemmEpilogue::kBiasRelu;
  return g;
}

const std::vector<std::string> kShapes = {"4096x4096", "8192x8192"};
const std::vector<std::string> kQuickShapes = {"4096x4096"};

absl::Status RunGemvF32(const Config& c, Problem& p, const RunContext& context) {
  absl::StatusOr<const void*> weights = WeightsOf(c, context, p.b.data());
  if (!weights.ok()) return weights.status();
  kernels::GemvArgs g = ArgsOf(p);
  g.w = *weights;
  return kernels::GemvF32(g, GemvBlockingOf(c));
}

absl::Status RunGemvS8(const Config& c, Problem& p, const RunContext& context) {
  absl::StatusOr<const void*> weights = WeightsOf(c, context, p.b_s8.data());
  if (!weights.ok()) return weights.status();
  kernels::GemvArgs g = ArgsOf(p);
  g.w = *weights;
  g.row_scale = p.scale_b.data();
  return kernels::GemvS8F32(g, GemvBlockingOf(c));
}

absl::Status RunGemvU8S8(const Config& c, Problem& p, const RunContext& context) {
  absl::StatusOr<const void*> weights = WeightsOf(c, context, p.b_s8.data());
  if (!weights.ok()) return weights.status();
  const Workload& w = p.workload;
  kernels::GemvU8S8Args g;
  g.n = w.n, g.k = w.k, g.ldw = p.ldb;
  g.w = static_cast<const int8_t*>(*weights);
  g.row_sums = p.colsum_b.data();
  g.row_scale = p.scale_b.data();
  g.x = p.a_u8.data(), g.scale_x = p.scale_a, g.zero_point_x = p.zero_point_a;
  if (w.epilogue == Epilogue::kNone) {
    g.acc = p.c_s32.data();
  } else {
    g.y = p.c.data();
    g.bias = p.bias.data();
    g.relu = w.epilogue == Epilogue::kBiasRelu;
  }
  return kernels::GemvU8S8(g, GemvBlockingOf(c));
}

// What the three GEMVs share: the op with every epilogue, the traffic model, how a call's own W
// is read, the default shapes.
Kernel Gemv(const char* name, const char* description, Dtype dtype) {
  Kernel kernel(name);
  kernel.Describe(description)
      .Computes(Op::kGemv, {dtype}, kAllEpilogues)
      .Moves(&GemvTraffic)
      .ReadsWeightsFromTheCallAs(&GemvWithWFromEachCall)
      .ByDefaultOn(kShapes, kQuickShapes);
  return kernel;
}

}  // namespace

ROOFTUNE_REGISTER_KERNEL(Gemv("gemv_f32",
                              "GEMV y = W x with f32 weights, rows split across threads",
                              Dtype::kF32)
                             .Tunes(GemvSpace())
                             .StartsFrom(&GemvInitialConfig)
                             .Prepares(&PrepareF32Weights)
                             .Runs(&RunGemvF32)
                             .NarrowsTo("gemv_s8"));

ROOFTUNE_REGISTER_KERNEL(Gemv("gemv_s8",
                              "GEMV with s8 weights and per-row scales, dequantised in registers "
                              "against f32 x: a quarter of the weight bytes",
                              Dtype::kS8F32)
                             .Tunes(GemvSpace())
                             .StartsFrom(&GemvInitialConfig)
                             .Prepares(&PrepareS8Weights)
                             .Runs(&RunGemvS8)
                             .ComparedWithF32("gemv_f32"));

ROOFTUNE_REGISTER_KERNEL(Gemv("gemv_u8s8",
                              "GEMV with s8 weights against u8-quantised activations: exact "
                              "integer dot products, dequantised once per output",
                              Dtype::kU8S8)
                             .Tunes(GemvU8S8Space())
                             .StartsFrom(&GemvU8S8InitialConfig)
                             .Prepares(&PrepareS8Weights)
                             .Runs(&RunGemvU8S8)
                             .ComparedWithF32("gemv_f32"));

}  // namespace rooftune
