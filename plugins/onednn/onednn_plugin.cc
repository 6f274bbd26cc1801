// oneDNN as the baseline every report compares against: matmul f32 with the same epilogues as
// the reference (alpha as an output scale, beta as a sum post-op, bias as a binary-add post-op so
// that it is not scaled by alpha, ReLU as an eltwise post-op). Primitives are created once per
// shape and cached.
//
// int8 (u8 x s8) runs the same way, for GEMM and for the M = 1 GEMV.
//
// Debian's oneDNN runs on OpenMP. The kernel declares Threading::kSelf so the harness calls it from
// the main thread, never from a TBB worker, and it sizes the OpenMP team to the configured thread
// count before every call. A primitive fixes its work decomposition for the OpenMP thread count
// in force when it is created, so the cache key includes the thread count and the team is sized
// before creation: a 2-thread call must not run a primitive that was made for one thread (or
// the reverse), which happened when benchmarks ran in a different order.
#include <omp.h>

#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/kernel.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace rooftune {
namespace {

using dt = dnnl::memory::data_type;

struct MatmulKey {
  int64_t m, n, k, lda, ldb, ldc;
  Epilogue epilogue;
  float alpha, beta;
  bool weights_transposed;  // GEMV: W is N x K row-major, i.e. a column-major K x N matrix
  int threads;
  auto Tie() const {
    return std::tie(m, n, k, lda, ldb, ldc, epilogue, alpha, beta, weights_transposed, threads);
  }
  bool operator<(const MatmulKey& o) const { return Tie() < o.Tie(); }
};

struct Matmul {
  dnnl::matmul primitive;
  dnnl::memory::desc src, weights, dst, bias;
};

class OneDnn {
 public:
  static OneDnn& Get() {
    static OneDnn* instance = new OneDnn();
    return *instance;
  }

  // u8 x s8 matmul. Without an epilogue: raw s32 accumulators. With one: f32 output with the
  // source zero point and per-column output scales (s_a * s_w[n]) given at run time, then the bias
  // as a binary-add post-op, which oneDNN does not scale (DNNL_ARG_BIAS would be scaled), and ReLU.
  absl::Status RunS8(Problem& p, int threads) {
    const Workload& w = p.workload;
    const bool dequantise = w.epilogue != Epilogue::kNone;
    const bool gemv = w.op == Op::kGemv;
    const MatmulKey key{
        w.m,  w.n,  w.k,    gemv ? w.k : p.lda, p.ldb, gemv ? w.n : p.ldc, w.epilogue, 1.0f,
        0.0f, gemv, threads};
    omp_set_num_threads(threads);
    absl::StatusOr<const Matmul*> found = Find(s8_cache_, key, &OneDnn::CreateS8, "int8 matmul");
    if (!found.ok()) return found.status();
    const Matmul* matmul = *found;
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, dnnl::memory(matmul->src, engine_, p.a_u8.data())},
        {DNNL_ARG_WEIGHTS, dnnl::memory(matmul->weights, engine_, p.b_s8.data())},
        {DNNL_ARG_DST, dnnl::memory(matmul->dst, engine_,
                                    dequantise ? static_cast<void*>(p.c.data())
                                               : static_cast<void*>(p.c_s32.data()))}};
    std::vector<float> scales;
    int32_t zero_point = p.zero_point_a;
    if (dequantise) {
      scales.resize(size_t(w.n));
      for (int64_t j = 0; j < w.n; ++j) scales[size_t(j)] = p.scale_a * p.scale_b[j];
      args.emplace(DNNL_ARG_ATTR_OUTPUT_SCALES,
                   dnnl::memory({{w.n}, dt::f32, {1}}, engine_, scales.data()));
      args.emplace(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC,
                   dnnl::memory({{1}, dt::s32, {1}}, engine_, &zero_point));
      args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1,
                   dnnl::memory(matmul->bias, engine_, p.bias.data()));
    }
    matmul->primitive.execute(stream_, args);
    stream_.wait();
    return absl::OkStatus();
  }

  absl::Status RunF32(Problem& p, int threads) {
    const Workload& w = p.workload;
    const bool gemv = w.op == Op::kGemv;
    const MatmulKey key{w.m,
                        w.n,
                        w.k,
                        gemv ? w.k : p.lda,
                        p.ldb,
                        gemv ? w.n : p.ldc,
                        w.epilogue,
                        gemv ? 1.0f : p.alpha,
                        gemv ? 0.0f : p.beta,
                        gemv,
                        threads};
    omp_set_num_threads(threads);
    absl::StatusOr<const Matmul*> found = Find(cache_, key, &OneDnn::Create, "matmul");
    if (!found.ok()) return found.status();
    const Matmul* matmul = *found;
    dnnl::memory src(matmul->src, engine_, p.a.data());
    dnnl::memory weights(matmul->weights, engine_, p.b.data());
    dnnl::memory dst(matmul->dst, engine_, p.c.data());
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
    if (w.epilogue != Epilogue::kNone) {
      // The binary post-op follows the sum post-op (index 1) or is the first (index 0).
      const int index = key.beta != 0.0f ? 1 : 0;
      args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1,
                   dnnl::memory(matmul->bias, engine_, p.bias.data()));
    }
    matmul->primitive.execute(stream_, args);
    stream_.wait();
    return absl::OkStatus();
  }

 private:
  OneDnn() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {}

  Matmul Create(const MatmulKey& k) {
    Matmul m;
    m.src = dnnl::memory::desc({k.m, k.k}, dt::f32, {k.lda, 1});
    m.weights = k.weights_transposed ? dnnl::memory::desc({k.k, k.n}, dt::f32, {1, k.ldb})
                                     : dnnl::memory::desc({k.k, k.n}, dt::f32, {k.ldb, 1});
    m.dst = dnnl::memory::desc({k.m, k.n}, dt::f32, {k.ldc, 1});
    m.bias = dnnl::memory::desc({1, k.n}, dt::f32, {k.n, 1});
    dnnl::primitive_attr attr;
    if (k.alpha != 1.0f) attr.set_output_scales(0, {k.alpha});
    dnnl::post_ops ops;
    if (k.beta != 0.0f) ops.append_sum(k.beta);
    if (k.epilogue != Epilogue::kNone) ops.append_binary(dnnl::algorithm::binary_add, m.bias);
    if (k.epilogue == Epilogue::kBiasRelu)
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(ops);
    m.primitive = Primitive(m, attr);
    return m;
  }

  // The matmul of `m`'s descriptors with `attr`'s scales and post-ops.
  dnnl::matmul Primitive(const Matmul& m, const dnnl::primitive_attr& attr) {
    const dnnl::matmul::desc desc(m.src, m.weights, m.dst);
    return dnnl::matmul(dnnl::matmul::primitive_desc(desc, attr, engine_));
  }

  Matmul CreateS8(const MatmulKey& k) {
    const bool dequantise = k.epilogue != Epilogue::kNone;
    Matmul m;
    m.src = dnnl::memory::desc({k.m, k.k}, dt::u8, {k.lda, 1});
    m.weights = k.weights_transposed ? dnnl::memory::desc({k.k, k.n}, dt::s8, {1, k.ldb})
                                     : dnnl::memory::desc({k.k, k.n}, dt::s8, {k.ldb, 1});
    m.dst = dnnl::memory::desc({k.m, k.n}, dequantise ? dt::f32 : dt::s32, {k.ldc, 1});
    m.bias = dnnl::memory::desc({1, k.n}, dt::f32, {k.n, 1});
    dnnl::primitive_attr attr;
    if (dequantise) {
      attr.set_output_scales(1 << 1, {DNNL_RUNTIME_F32_VAL});
      attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
      dnnl::post_ops ops;
      ops.append_binary(dnnl::algorithm::binary_add, m.bias);
      if (k.epilogue == Epilogue::kBiasRelu)
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
      attr.set_post_ops(ops);
    }
    m.primitive = Primitive(m, attr);
    return m;
  }

  // The primitive for `key` from `cache`, made by `create` the first time it is asked for.
  absl::StatusOr<const Matmul*> Find(std::map<MatmulKey, Matmul>& cache, const MatmulKey& key,
                                     Matmul (OneDnn::*create)(const MatmulKey&), const char* what) {
    try {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = cache.find(key);
      if (it == cache.end()) it = cache.emplace(key, (this->*create)(key)).first;
      return &it->second;
    } catch (const dnnl::error& e) {
      return absl::InternalError(
          absl::StrCat("oneDNN could not create the ", what, ": ", e.what()));
    }
  }

  dnnl::engine engine_;
  dnnl::stream stream_;
  std::mutex mutex_;
  std::map<MatmulKey, Matmul> cache_, s8_cache_;
};

absl::Status RunF32(const Config&, Problem& p, const RunContext& context) {
  return OneDnn::Get().RunF32(p, context.threads);
}

absl::Status RunS8(const Config&, Problem& p, const RunContext& context) {
  return OneDnn::Get().RunS8(p, context.threads);
}

// What every oneDNN baseline shares: every epilogue, and threads of its own (OpenMP).
Kernel Baseline(const char* name, const char* description, Op op, Dtype dtype) {
  Kernel kernel(name);
  kernel.Describe(description).Computes(op, {dtype}, kAllEpilogues).Threads(Threading::kSelf);
  kernel.Runs(dtype == Dtype::kU8S8 ? &RunS8 : &RunF32);
  return kernel;
}

}  // namespace

ROOFTUNE_REGISTER_KERNEL(
    Baseline("onednn_gemm_f32",
             "baseline: oneDNN matmul f32 (OpenMP), post-ops for beta, bias and ReLU", Op::kGemm,
             Dtype::kF32)
        .NarrowsTo("onednn_gemm_s8")
        .ByDefaultOn({"256x256x256", "512x512x512", "1024x1024x1024"}, {"256x256x256"}));

ROOFTUNE_REGISTER_KERNEL(
    Baseline("onednn_gemm_s8",
             "baseline: oneDNN matmul u8 x s8 -> s32, or f32 with run-time zero point, "
             "per-column scales, bias and ReLU post-ops",
             Op::kGemm, Dtype::kU8S8)
        .ComparedWithF32("gemm_f32")
        .ByDefaultOn({"512x512x512"}, {}));

ROOFTUNE_REGISTER_KERNEL(
    Baseline("onednn_gemv_f32",
             "baseline: oneDNN matmul f32 with M = 1 against W as column-major weights", Op::kGemv,
             Dtype::kF32)
        .NarrowsTo("gemv_s8")
        .ByDefaultOn({"4096x4096"}, {}));

ROOFTUNE_REGISTER_KERNEL(
    Baseline("onednn_gemv_u8s8",
             "baseline: oneDNN matmul u8 x s8 with M = 1 (W as column-major weights), "
             "run-time zero point, per-row scales, bias and ReLU post-ops",
             Op::kGemv, Dtype::kU8S8)
        .ComparedWithF32("gemv_f32"));

}  // namespace rooftune
