#include "framework/workload.h"

#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace rooftune {

absl::string_view ToString(Op op) { return op == Op::kGemm ? "gemm" : "gemv"; }

absl::string_view ToString(Dtype dtype) {
  switch (dtype) {
    case Dtype::kF32: return "f32";
    case Dtype::kF64: return "f64";
    case Dtype::kU8S8: return "u8s8";
    case Dtype::kS8F32: return "s8f32";
  }
  return "?";
}

absl::string_view ToString(Epilogue epilogue) {
  switch (epilogue) {
    case Epilogue::kNone: return "none";
    case Epilogue::kBias: return "bias";
    case Epilogue::kBiasRelu: return "bias_relu";
  }
  return "?";
}

absl::StatusOr<Op> ParseOp(absl::string_view text) {
  if (text == "gemm") return Op::kGemm;
  if (text == "gemv") return Op::kGemv;
  return absl::InvalidArgumentError(absl::StrCat("unknown op '", text, "' (gemm, gemv)"));
}

absl::StatusOr<Dtype> ParseDtype(absl::string_view text) {
  for (Dtype d : {Dtype::kF32, Dtype::kF64, Dtype::kU8S8, Dtype::kS8F32}) {
    if (text == ToString(d)) return d;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype '", text, "' (f32, f64, u8s8, s8f32)"));
}

absl::StatusOr<Epilogue> ParseEpilogue(absl::string_view text) {
  for (Epilogue e : {Epilogue::kNone, Epilogue::kBias, Epilogue::kBiasRelu}) {
    if (text == ToString(e)) return e;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown epilogue '", text, "' (none, bias, bias_relu)"));
}

bool CountsIntegerOps(Dtype dtype) { return dtype == Dtype::kU8S8; }

ElementSizes ElementSizesOf(Dtype dtype, Epilogue epilogue) {
  switch (dtype) {
    case Dtype::kF32: return {4, 4, 4};
    case Dtype::kF64: return {8, 8, 8};
    case Dtype::kU8S8: return {1, 1, 4};  // s32 accumulators or dequantised f32: 4 bytes either way
    case Dtype::kS8F32: return {4, 1, 4};
  }
  (void)epilogue;
  return {};
}

double Workload::CompulsoryBytes() const {
  const ElementSizes size = ElementSizesOf(dtype, epilogue);
  double bytes = double(m) * k * size.a + double(k) * n * size.b + double(m) * n * size.c;
  if (epilogue != Epilogue::kNone) bytes += 4.0 * n;                           // bias
  if (dtype == Dtype::kU8S8 && epilogue != Epilogue::kNone) bytes += 8.0 * n;  // scales, colsums
  if (dtype == Dtype::kS8F32) bytes += 4.0 * n;                                // row scales
  return bytes;
}

std::string Workload::ShapeString() const {
  if (op == Op::kGemv) return absl::StrFormat("%dx%d", n, k);
  return absl::StrFormat("%dx%dx%d", m, n, k);
}

std::string Workload::Key() const {
  return absl::StrCat(ToString(op), " ", ShapeString(), " ", ToString(dtype), " ",
                      ToString(epilogue));
}

absl::StatusOr<Workload> ParseWorkloadKey(absl::string_view key) {
  const std::vector<absl::string_view> parts = absl::StrSplit(key, ' ');
  if (parts.size() != 4)
    return absl::InvalidArgumentError(absl::StrCat("bad workload key '", key, "'"));
  absl::StatusOr<Op> op = ParseOp(parts[0]);
  if (!op.ok()) return op.status();
  absl::StatusOr<Dtype> dtype = ParseDtype(parts[2]);
  if (!dtype.ok()) return dtype.status();
  absl::StatusOr<Epilogue> epilogue = ParseEpilogue(parts[3]);
  if (!epilogue.ok()) return epilogue.status();
  return ParseWorkload(*op, parts[1], *dtype, *epilogue, 0);
}

double OperandBytes(const Workload& workload) {
  // Inputs, the output, the reference output (f64 accumulation, so 8 bytes) and its error bound.
  return workload.CompulsoryBytes() + 16.0 * double(workload.m) * double(workload.n);
}

absl::StatusOr<Workload> ParseWorkload(Op op, absl::string_view shape, Dtype dtype,
                                       Epilogue epilogue, uint64_t memory_limit_bytes) {
  const std::vector<absl::string_view> parts = absl::StrSplit(shape, 'x');
  const size_t expected = op == Op::kGemm ? 3 : 2;
  const char* form = op == Op::kGemm ? "MxNxK" : "NxK";
  if (parts.size() != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad shape '", shape, "': ", ToString(op), " takes ", form));
  }
  std::vector<int64_t> dims;
  for (absl::string_view part : parts) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(part, &value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad shape '", shape, "': '", part, "' is not an integer (", form, ")"));
    }
    if (value <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad shape '", shape, "': every dimension must be at least 1 (", form, ")"));
    }
    // Keep every index product (M*K, K*N, M*N) representable.
    if (value > (int64_t{1} << 31)) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad shape '", shape, "': dimension ", value, " is too large"));
    }
    dims.push_back(value);
  }
  Workload workload{op, 1, 1, 1, dtype, epilogue};
  if (op == Op::kGemm) {
    workload.m = dims[0], workload.n = dims[1], workload.k = dims[2];
  } else {
    workload.n = dims[0], workload.k = dims[1];
  }
  const double bytes = OperandBytes(workload);
  if (memory_limit_bytes != 0 && bytes > double(memory_limit_bytes)) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "shape %s needs %.1f GiB for its operands and reference, more than the %.1f GiB of "
        "memory available",
        shape, bytes / (1 << 30), double(memory_limit_bytes) / (1 << 30)));
  }
  return workload;
}

}  // namespace rooftune
