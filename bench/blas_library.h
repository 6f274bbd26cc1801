// A CBLAS library opened with dlopen(RTLD_LOCAL), so that OpenBLAS and BLIS, which both export
// cblas_sgemm, can be measured in one binary without one's symbols shadowing the other's.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace rooftune::bench {

class BlasLibrary {
 public:
  // `name` is "openblas" or "blis".
  static absl::StatusOr<BlasLibrary> Open(const std::string& name);

  const std::string& name() const { return name_; }
  void SetThreads(int threads) const;
  // Row-major C = A * B (+ beta C), no transposes.
  void Sgemm(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float beta,
             float* c, int ldc) const;
  // Row-major y = W x, W is n x k.
  void Sgemv(int n, int k, const float* w, int ldw, const float* x, float* y) const;

 private:
  using SgemmFn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*,
                           int, float, float*, int);
  using SgemvFn = void (*)(int, int, int, int, float, const float*, int, const float*, int, float,
                           float*, int);
  using SetThreadsFn = void (*)(int);
  using SetThreadsLongFn = void (*)(long);
  std::string name_;
  SgemmFn sgemm_ = nullptr;
  SgemvFn sgemv_ = nullptr;
  SetThreadsFn set_threads_ = nullptr;           // openblas_set_num_threads(int)
  SetThreadsLongFn set_threads_long_ = nullptr;  // bli_thread_set_num_threads(dim_t)
};

}  // namespace rooftune::bench
