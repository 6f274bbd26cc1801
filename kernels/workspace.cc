#include "kernels/workspace.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <new>

namespace rooftune::kernels {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kPage = 4096;

size_t RoundUpTo(size_t n, size_t multiple) { return (n + multiple - 1) / multiple * multiple; }

}  // namespace

HugePageBuffer::~HugePageBuffer() { Release(); }

void HugePageBuffer::Release() {
  if (mapping_ != nullptr) munmap(mapping_, mapped_bytes_);
  mapping_ = nullptr;
  data_ = nullptr;
  mapped_bytes_ = usable_bytes_ = 0;
}

void* HugePageBuffer::ReserveBytes(size_t bytes) {
  if (data_ != nullptr && bytes <= usable_bytes_) return data_;
  const size_t wanted = bytes + stagger_bytes_;
  Release();
  // A huge page must start on a 2 MiB boundary and mmap only promises 4 KiB: map one huge page
  // more than needed and use the aligned part.
  const bool huge = wanted >= kHugePage;
  const size_t usable = RoundUpTo(wanted, huge ? kHugePage : kPage);
  const size_t mapped = usable + (huge ? kHugePage : 0);
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  mapping_ = p;
  mapped_bytes_ = mapped;
  const uintptr_t start = reinterpret_cast<uintptr_t>(p);
  char* first = reinterpret_cast<char*>(huge ? RoundUpTo(start, kHugePage) : start);
  if (huge) madvise(first, usable, MADV_HUGEPAGE);  // advice only: without THP, 4 KiB pages
  data_ = first + stagger_bytes_;
  usable_bytes_ = usable - stagger_bytes_;
  return data_;
}

std::shared_ptr<void> AllocateOnHugePages(size_t bytes) {
  auto buffer = std::make_shared<HugePageBuffer>();
  try {
    return std::shared_ptr<void>(buffer, buffer->ReserveBytes(bytes));
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

std::shared_ptr<void> CopyRowsOnHugePages(const void* source, size_t rows, size_t row_bytes,
                                          size_t source_stride, size_t copy_stride) {
  if (rows == 0) return nullptr;
  std::shared_ptr<void> copy = AllocateOnHugePages((rows - 1) * copy_stride + row_bytes);
  if (copy == nullptr) return nullptr;
  const auto* from = static_cast<const char*>(source);
  auto* to = static_cast<char*>(copy.get());
  for (size_t r = 0; r < rows; ++r) {
    std::memcpy(to + r * copy_stride, from + r * source_stride, row_bytes);
  }
  return copy;
}

}  // namespace rooftune::kernels
