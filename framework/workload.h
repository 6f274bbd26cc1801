// What to compute: an op, a shape, the data types and the epilogue. Kernels, the harness, the
// tuning database and the reports all speak in Workloads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rooftune {

enum class Op { kGemm, kGemv };

// The arithmetic a workload does. kU8S8 is the int8 path: u8 activations x s8 weights -> s32
// accumulators. kS8F32 is GEMV with s8 weights and per-row f32 scales against f32 activations.
enum class Dtype { kF32, kF64, kU8S8, kS8F32 };

// What happens to the accumulator before it is stored. For kU8S8 any epilogue other than kNone
// dequantises to f32 first: y = s_a * s_w[n] * (acc - z_a * colsum_w[n]) + bias[n].
enum class Epilogue { kNone, kBias, kBiasRelu };

// Integer work (u8 x s8) is counted in operations (OP/s), floating-point work in FLOPs.
bool CountsIntegerOps(Dtype dtype);

absl::string_view ToString(Op op);
absl::string_view ToString(Dtype dtype);
absl::string_view ToString(Epilogue epilogue);
absl::StatusOr<Op> ParseOp(absl::string_view text);
absl::StatusOr<Dtype> ParseDtype(absl::string_view text);
absl::StatusOr<Epilogue> ParseEpilogue(absl::string_view text);

// Bytes of one element of A (activations), B (weights) and C (output) for a dtype.
struct ElementSizes {
  int a = 4, b = 4, c = 4;
};
ElementSizes ElementSizesOf(Dtype dtype, Epilogue epilogue);

// GEMM: C[M x N] = A[M x K] * B[K x N], row-major. GEMV: y[N] = W[N x K] * x[K], stored with
// m = 1 so that both ops share one shape triple.
struct Workload {
  Op op = Op::kGemm;
  int64_t m = 1, n = 1, k = 1;
  Dtype dtype = Dtype::kF32;
  Epilogue epilogue = Epilogue::kNone;

  // Multiply-adds count as two operations, for every dtype (GFLOP/s, or GOP/s for int8).
  double Operations() const { return 2.0 * double(m) * double(n) * double(k); }
  // The bytes of every operand, each touched once: the floor of any traffic model.
  double CompulsoryBytes() const;
  // "gemm 256x256x256 f32 bias_relu": the key the tuning database and reports use.
  std::string Key() const;
  std::string ShapeString() const;

  friend bool operator==(const Workload&, const Workload&) = default;
};

// Parses "MxNxK" for gemm and "NxK" for gemv. Every dimension must be a positive integer, and the
// operands must fit in memory (`memory_limit_bytes`, 0 = no limit).
absl::StatusOr<Workload> ParseWorkload(Op op, absl::string_view shape, Dtype dtype,
                                       Epilogue epilogue, uint64_t memory_limit_bytes);

// Parses Workload::Key() back ("gemm 256x256x256 f32 none").
absl::StatusOr<Workload> ParseWorkloadKey(absl::string_view key);

// Bytes needed to hold all operands of a workload plus the reference output.
double OperandBytes(const Workload& workload);

}  // namespace rooftune
