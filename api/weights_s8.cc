// Prepared int8 weights: a copy of the caller's, packed for each int8 path on its first use.
#include <algorithm>
#include <cstdlib>
#include <limits>

#include "api/context_impl.h"

namespace rooftune {

WeightsS8::WeightsS8(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WeightsS8::~WeightsS8() = default;
int64_t WeightsS8::k() const { return impl_->k; }
int64_t WeightsS8::n() const { return impl_->n; }

absl::StatusOr<const kernels::PackedWeightsS8*> WeightsS8::Impl::PackedFor(
    kernels::S8Path path) const {
  const int i = int(path);
  std::call_once(once_[i], [&] {
    absl::StatusOr<kernels::PackedWeightsS8> packed =
        kernels::PackWeightsS8(w.data(), k, n, n, path);
    if (packed.ok()) {
      packed_[i] = *std::move(packed);
    } else {
      status_[i] = packed.status();
    }
  });
  if (!status_[i].ok()) return status_[i];
  return &*packed_[i];
}

Status Context::PrepareWeightsS8(const int8_t* w, int64_t k, int64_t n, int64_t ldw,
                                 const float* column_scales,
                                 std::shared_ptr<const WeightsS8>* weights) const {
  if (weights == nullptr) return {StatusCode::kInvalidArgument, "prepare s8 weights: no output"};
  if (ldw == 0) ldw = n;
  if (k < 1 || n < 1) {
    return {StatusCode::kInvalidArgument, "prepare s8 weights: k and n must be at least 1 (got k=" +
                                              std::to_string(k) + ", n=" + std::to_string(n) + ")"};
  }
  if (ldw < n) {
    return {StatusCode::kInvalidArgument, "prepare s8 weights: ldw (" + std::to_string(ldw) +
                                              ") is below n (" + std::to_string(n) + ")"};
  }
  if (w == nullptr || column_scales == nullptr) {
    return {StatusCode::kInvalidArgument, "prepare s8 weights: null weights or column scales"};
  }
  auto impl = std::make_unique<WeightsS8::Impl>();
  impl->k = k, impl->n = n;
  try {
    impl->w.resize(size_t(k * n));
    impl->scales.assign(column_scales, column_scales + n);
    impl->zeros.assign(size_t(n), 0.0f);
  } catch (const std::bad_alloc&) {
    return {StatusCode::kResourceExhausted,
            "prepare s8 weights: no memory for a copy of " + std::to_string(k * n) + " weights"};
  }
  for (int64_t row = 0; row < k; ++row) {
    std::copy(w + row * ldw, w + row * ldw + n, impl->w.begin() + row * n);
  }
  for (int8_t v : impl->w) impl->max_abs_weight = std::max(impl->max_abs_weight, std::abs(int(v)));
  // The u8 activations can reach 255: past this bound an output may not fit the exact s32
  // accumulator, and the int8 kernels would return it wrapped.
  if (double(k) * 255 * impl->max_abs_weight > double(std::numeric_limits<int32_t>::max())) {
    return {StatusCode::kInvalidArgument,
            "prepare s8 weights: k = " + std::to_string(k) + " with weights up to " +
                std::to_string(impl->max_abs_weight) +
                " in magnitude can overflow the s32 accumulator (k x 255 x max |w| must stay "
                "below 2^31): split k, or narrow the weights"};
  }
  *weights = std::make_shared<const WeightsS8>(std::move(impl));
  return {};
}

}  // namespace rooftune
