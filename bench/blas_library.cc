#include "bench/blas_library.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"

namespace rooftune::bench {
namespace {
// CBLAS enum values (cblas.h): row-major 101, no transpose 111.
constexpr int kRowMajor = 101, kNoTrans = 111;
}  // namespace

absl::StatusOr<BlasLibrary> BlasLibrary::Open(const std::string& name) {
  const char* file = name == "openblas" ? "libopenblas.so.0"
                     : name == "blis"   ? "libblis.so.4"
                                        : nullptr;
  if (file == nullptr) return absl::InvalidArgumentError("unknown BLAS library " + name);
  void* handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return absl::NotFoundError(absl::StrCat("cannot open ", file,
                                            " (install libopenblas-dev and "
                                            "libblis-dev for the benchmarks): ",
                                            dlerror()));
  }
  BlasLibrary lib;
  lib.name_ = name;
  lib.sgemm_ = reinterpret_cast<SgemmFn>(dlsym(handle, "cblas_sgemm"));
  lib.sgemv_ = reinterpret_cast<SgemvFn>(dlsym(handle, "cblas_sgemv"));
  if (name == "openblas") {
    lib.set_threads_ = reinterpret_cast<SetThreadsFn>(dlsym(handle, "openblas_set_num_threads"));
  } else {
    lib.set_threads_long_ =
        reinterpret_cast<SetThreadsLongFn>(dlsym(handle, "bli_thread_set_num_threads"));
  }
  if (lib.sgemm_ == nullptr || lib.sgemv_ == nullptr ||
      (lib.set_threads_ == nullptr && lib.set_threads_long_ == nullptr)) {
    return absl::NotFoundError(
        absl::StrCat(file, " lacks cblas_sgemm, cblas_sgemv or its thread setter"));
  }
  return lib;
}

void BlasLibrary::SetThreads(int threads) const {
  if (set_threads_ != nullptr) set_threads_(threads);
  if (set_threads_long_ != nullptr) set_threads_long_(threads);
}

void BlasLibrary::Sgemm(int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                        float beta, float* c, int ldc) const {
  sgemm_(kRowMajor, kNoTrans, kNoTrans, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}

void BlasLibrary::Sgemv(int n, int k, const float* w, int ldw, const float* x, float* y) const {
  sgemv_(kRowMajor, kNoTrans, n, k, 1.0f, w, ldw, x, 1, 0.0f, y, 1);
}

}  // namespace rooftune::bench
