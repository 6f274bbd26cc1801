// A growable scratch buffer for packed panels, page aligned and, once it spans a huge page,
// backed by transparent huge pages (madvise(MADV_HUGEPAGE), which THP's "madvise" mode needs).
#pragma once

#include <cstddef>
#include <memory>

namespace rooftune::kernels {

class HugePageBuffer {
 public:
  // `stagger_bytes` (a multiple of 64) shifts the start past the page boundary, so that buffers
  // used together do not all begin in the same L1 set and evict one another.
  explicit HugePageBuffer(size_t stagger_bytes = 0) : stagger_bytes_(stagger_bytes) {}
  HugePageBuffer(const HugePageBuffer&) = delete;
  HugePageBuffer& operator=(const HugePageBuffer&) = delete;
  ~HugePageBuffer();

  // At least `bytes` bytes; the contents are not kept when the buffer grows. Throws
  // std::bad_alloc when the memory cannot be mapped.
  void* ReserveBytes(size_t bytes);
  template <typename T>
  T* Reserve(size_t count) {
    return static_cast<T*>(ReserveBytes(count * sizeof(T)));
  }

 private:
  void Release();

  size_t stagger_bytes_;
  void* mapping_ = nullptr;
  size_t mapped_bytes_ = 0;
  char* data_ = nullptr;
  size_t usable_bytes_ = 0;
};

// A buffer of at least `bytes` that lives as long as its last owner, on huge pages where the
// system grants them (as HugePageBuffer); null when the memory cannot be mapped.
std::shared_ptr<void> AllocateOnHugePages(size_t bytes);

// A copy of `rows` rows of `row_bytes` each, `source_stride` bytes apart in `source`, placed
// `copy_stride` bytes apart (at least row_bytes) on huge pages as AllocateOnHugePages gives them:
// weights that must outlive the caller's and stream from memory. Null when the memory cannot be
// mapped.
std::shared_ptr<void> CopyRowsOnHugePages(const void* source, size_t rows, size_t row_bytes,
                                          size_t source_stride, size_t copy_stride);

}  // namespace rooftune::kernels
