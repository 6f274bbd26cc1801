// libxsmm as the small-matrix baseline: the kernel its JIT generates for each shape
// (libxsmm_smmdispatch), made on a shape's first call, cached by libxsmm and by each thread for
// the shape it last ran.
//
// libxsmm is column-major: the row-major C = A B is its C^T = B^T A^T, so it is asked for an
// n x m x k product with B as the first operand. Its JIT takes alpha = 1 and beta 0 or 1; other
// scales run the product into a scratch C and scale it into C after. A shape its JIT returns no
// kernel for is unsupported: libxsmm would hand it to a BLAS, and the BLAS libraries have
// baselines of their own. The bias and ReLU are a pass after the product
// (libxsmm 1.17's GEMM has no epilogue). A call runs on the calling
// thread whatever the thread count: libxsmm's threaded GEMM is its OpenMP extension, which
// small products do not use.
#include <libxsmm.h>

#include <array>
#include <mutex>
#include <vector>

#include "framework/kernel.h"
#include "kernels/code_paths.h"

namespace rooftune {
namespace {

void InitialiseOnce() {
  static std::once_flag once;
  std::call_once(once, [] { libxsmm_init(); });
}

bool HasAvx() {
  static const bool has = __builtin_cpu_supports("avx");
  return has;
}

// At least `floats` floats of this thread's scratch C.
float* Scratch(size_t floats) {
  thread_local std::vector<float> scratch;
  if (scratch.size() < floats) scratch.resize(floats);
  return scratch.data();
}

// The kernel of the last shape this thread ran, as a program calling one shape in a loop keeps
// it: a dispatch is a lookup in libxsmm's registry, about 100 ns.
struct LastKernel {
  std::array<libxsmm_blasint, 7> key{};
  libxsmm_smmfunction kernel = nullptr;
};
thread_local LastKernel last;

absl::Status RunLibxsmm(Problem& p) {
  InitialiseOnce();
  const Workload& w = p.workload;
  const libxsmm_blasint m = w.n, n = w.m, k = w.k;  // column-major: C^T = B^T A^T
  const libxsmm_blasint lda = p.ldb, ldb = p.lda;
  // Other scales than the JIT's: the product into a scratch C, then scaled into C.
  const bool jit_scales = p.alpha == 1.0f && (p.beta == 0.0f || p.beta == 1.0f);
  float* c = jit_scales ? p.c.data() : Scratch(size_t(w.m * w.n));
  const libxsmm_blasint ldc = jit_scales ? p.ldc : w.n;
  const float alpha = 1.0f, beta = jit_scales ? p.beta : 0.0f;
  const std::array<libxsmm_blasint, 7> key{m, n, k, lda, ldb, ldc, beta == 0.0f ? 0 : 1};
  LastKernel& cached = last;
  if (key != cached.key || cached.kernel == nullptr) {
    const int flags = LIBXSMM_GEMM_FLAG_NONE;
    cached.kernel = libxsmm_smmdispatch(m, n, k, &lda, &ldb, &ldc, &alpha, &beta, &flags, nullptr);
    cached.key = key;
  }
  const libxsmm_smmfunction kernel = cached.kernel;
  if (kernel == nullptr) {
    return absl::UnimplementedError("libxsmm generates no kernel for " + w.ShapeString() +
                                    " (its JIT covers small products only)");
  }
  if (kernels::RecordingCodePaths()) {
    kernels::NoteCodePath(jit_scales ? "libxsmm jit" : "libxsmm jit, scaled after");
  }
  kernel(p.b.data(), p.a.data(), c);
  // The generated code leaves the vector registers' upper halves dirty; the SSE code after it
  // (ours, the harness's) would pay a transition on every instruction.
  if (HasAvx()) asm volatile("vzeroupper" ::: "memory");
  if (jit_scales && w.epilogue == Epilogue::kNone) return absl::OkStatus();
  for (int64_t i = 0; i < w.m; ++i) {
    float* row = p.c.data() + i * p.ldc;
    for (int64_t j = 0; j < w.n; ++j) {
      float v = row[j];
      if (!jit_scales) v = p.alpha * c[i * w.n + j] + (p.beta == 0.0f ? 0.0f : p.beta * v);
      if (w.epilogue != Epilogue::kNone) {
        v += p.bias[size_t(j)];
        if (w.epilogue == Epilogue::kBiasRelu && v < 0.0f) v = 0.0f;
      }
      row[j] = v;
    }
  }
  return absl::OkStatus();
}

}  // namespace

ROOFTUNE_REGISTER_KERNEL(
    Kernel("libxsmm_gemm_f32")
        .Describe("baseline: libxsmm 1.17's JIT-generated small-matrix kernel per shape (one "
                  "thread), bias and ReLU as a pass after it")
        .Computes(Op::kGemm, {Dtype::kF32}, kAllEpilogues)
        .Threads(Threading::kSelf)
        .Runs([](const Config&, Problem& p, const RunContext&) { return RunLibxsmm(p); }));

}  // namespace rooftune
