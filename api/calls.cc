// The API's kernel calls: arguments checked before any work, the workload's plan looked up, the
// kernel run on the context's threads.
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/context_impl.h"

namespace rooftune {
namespace {

// Builds one call's argument errors; the first one found is returned.
class Checker {
 public:
  explicit Checker(const char* call) : call_(call) {}
  Checker& AtLeastOne(const char* name, int64_t value) {
    if (error_.empty() && value < 1) error_ = absl::StrCat(name, " must be at least 1 (got ", value, ")");
    return *this;
  }
  Checker& NotNull(const char* name, const void* pointer) {
    if (error_.empty() && pointer == nullptr) error_ = absl::StrCat(name, " is null");
    return *this;
  }
  // A matrix of `rows` rows `width` wide, `ld` apart, must not be narrower than its rows nor
  // span more elements than an int64_t counts.
  Checker& Matrix(const char* ld_name, int64_t ld, int64_t width, int64_t rows) {
    if (!error_.empty()) return *this;
    if (ld < width) {
      error_ = absl::StrCat(ld_name, " (", ld, ") is below the row's width (", width, ")");
    } else if (rows > 0 && ld > std::numeric_limits<int64_t>::max() / 8 / rows) {
      error_ = absl::StrCat("a ", rows, " x ", ld, " matrix is too large to address");
    }
    return *this;
  }
  Status Result() const {
    if (error_.empty()) return {};
    return {StatusCode::kInvalidArgument, absl::StrCat(call_, ": ", error_)};
  }

 private:
  const char* call_;
  std::string error_;
};

Epilogue EpilogueOf(const float* bias, bool relu) {
  if (relu) return Epilogue::kBiasRelu;
  return bias != nullptr ? Epilogue::kBias : Epilogue::kNone;
}

kernels::GemmEpilogue KernelEpilogue(Epilogue e) {
  return e == Epilogue::kNone   ? kernels::GemmEpilogue::kNone
         : e == Epilogue::kBias ? kernels::GemmEpilogue::kBias
                                : kernels::GemmEpilogue::kBiasRelu;
}

// The bias of a ReLU call that gives none: n zeros, kept per calling thread (which waits in the
// call while the context's threads read them), so that only a wider call allocates.
const float* ZeroBias(int64_t n) {
  thread_local std::vector<float> zeros;
  if (zeros.size() < size_t(n)) zeros.assign(size_t(n), 0.0f);
  return zeros.data();
}

GemmF32Call WithTightStrides(GemmF32Call c) {
  if (c.lda == 0) c.lda = c.k;
  if (c.ldb == 0) c.ldb = c.n;
  if (c.ldc == 0) c.ldc = c.n;
  return c;
}

Status Check(const GemmF32Call& c) {
  return Checker("gemm f32")
      .AtLeastOne("m", c.m).AtLeastOne("n", c.n).AtLeastOne("k", c.k)
      .NotNull("a", c.a).NotNull("b", c.b).NotNull("c", c.c)
      .Matrix("lda", c.lda, c.k, c.m).Matrix("ldb", c.ldb, c.n, c.k).Matrix("ldc", c.ldc, c.n, c.m)
      .Result();
}

Workload WorkloadOf(const GemmF32Call& c) {
  return {Op::kGemm, c.m, c.n, c.k, Dtype::kF32, EpilogueOf(c.bias, c.relu)};
}

GemmU8S8Call WithTightStrides(GemmU8S8Call c) {
  if (c.weights != nullptr && c.lda == 0) c.lda = c.weights->k();
  if (c.weights != nullptr && c.ldy == 0) c.ldy = c.weights->n();
  return c;
}

Status Check(const GemmU8S8Call& c) {
  Checker check("gemm u8s8");
  check.AtLeastOne("m", c.m).NotNull("weights", c.weights).NotNull("a", c.a).NotNull("y", c.y);
  if (c.weights != nullptr) {
    check.Matrix("lda", c.lda, c.weights->k(), c.m).Matrix("ldy", c.ldy, c.weights->n(), c.m);
  }
  return check.Result();
}

// The int8 GEMM always dequantises: a call without a bias runs the bias epilogue with zeros.
Workload WorkloadOf(const GemmU8S8Call& c) {
  const int64_t n = c.weights != nullptr ? c.weights->n() : 1;
  const int64_t k = c.weights != nullptr ? c.weights->k() : 1;
  return {Op::kGemm, c.m, n, k, Dtype::kU8S8, c.relu ? Epilogue::kBiasRelu : Epilogue::kBias};
}

template <typename Call>
Call WithTightGemvStride(Call c) {
  if (c.ldw == 0) c.ldw = c.k;
  return c;
}

template <typename Call>
Checker CheckGemv(const char* name, const Call& c) {
  Checker check(name);
  check.AtLeastOne("n", c.n).AtLeastOne("k", c.k).NotNull("w", c.w).NotNull("x", c.x)
      .NotNull("y", c.y).Matrix("ldw", c.ldw, c.k, c.n);
  return check;
}

Status Check(const GemvF32Call& c) { return CheckGemv("gemv f32", c).Result(); }
Status Check(const GemvS8Call& c) {
  return CheckGemv("gemv s8", c).NotNull("row_scales", c.row_scales).Result();
}

Workload WorkloadOf(const GemvF32Call& c) {
  return {Op::kGemv, 1, c.n, c.k, Dtype::kF32, EpilogueOf(c.bias, c.relu)};
}
Workload WorkloadOf(const GemvS8Call& c) {
  return {Op::kGemv, 1, c.n, c.k, Dtype::kS8F32, EpilogueOf(c.bias, c.relu)};
}

const char* KernelFor(const GemmF32Call&) { return "gemm_f32"; }
const char* KernelFor(const GemmU8S8Call&) { return "gemm_s8"; }
const char* KernelFor(const GemvF32Call&) { return "gemv_f32"; }
const char* KernelFor(const GemvS8Call&) { return "gemv_s8"; }

kernels::GemvArgs GemvArgsOf(const auto& c, Epilogue epilogue) {
  kernels::GemvArgs g;
  g.n = c.n, g.k = c.k;
  g.w = c.w, g.ldw = c.ldw;
  g.x = c.x, g.y = c.y;
  g.epilogue = KernelEpilogue(epilogue);
  g.bias = epilogue == Epilogue::kNone ? nullptr : c.bias != nullptr ? c.bias : ZeroBias(c.n);
  return g;
}

}  // namespace

Status Context::Gemm(const GemmF32Call& call) const {
  const GemmF32Call c = WithTightStrides(call);
  if (Status s = Check(c); !s.ok()) return s;
  const Workload w = WorkloadOf(c);
  absl::StatusOr<const Plan*> plan = impl_->PlanFor(KernelFor(c), w);
  if (!plan.ok()) return ToApiStatus(plan.status());
  kernels::GemmF32Args args;
  args.m = c.m, args.n = c.n, args.k = c.k;
  args.alpha = c.alpha, args.beta = c.beta;
  args.a = c.a, args.lda = c.lda;
  args.b = c.b, args.ldb = c.ldb;
  args.c = c.c, args.ldc = c.ldc;
  args.epilogue = KernelEpilogue(w.epilogue);
  args.bias = w.epilogue == Epilogue::kNone ? nullptr : c.bias != nullptr ? c.bias : ZeroBias(c.n);
  return ToApiStatus(impl_->Run([&] { return kernels::GemmF32(args, (*plan)->gemm_f32); }));
}

Status Context::Gemm(const GemmU8S8Call& call) const {
  const GemmU8S8Call c = WithTightStrides(call);
  if (Status s = Check(c); !s.ok()) return s;
  absl::StatusOr<const Plan*> plan = impl_->PlanFor(KernelFor(c), WorkloadOf(c));
  if (!plan.ok()) return ToApiStatus(plan.status());
  const WeightsS8::Impl& weights = c.weights->impl();
  kernels::GemmS8Args g;
  g.m = c.m, g.n = weights.n, g.k = weights.k;
  g.a = c.a, g.lda = c.lda;
  g.y = c.y, g.ldy = c.ldy;
  g.scale_a = c.scale_a, g.zero_point_a = c.zero_point_a;
  g.scale_b = weights.scales.data();
  g.bias = c.bias != nullptr ? c.bias : weights.zeros.data();
  g.relu = c.relu;
  auto run = [&](kernels::S8Path path) {
    absl::StatusOr<const kernels::PackedWeightsS8*> packed = weights.PackedFor(path);
    if (!packed.ok()) return packed.status();
    g.b = *packed;
    return impl_->Run([&] { return kernels::GemmS8(g, (*plan)->gemm_s8.blocking); });
  };
  absl::Status status = run((*plan)->gemm_s8.path);
  // The fast path without VNNI refuses full-range operands (its s16 pair sums would saturate):
  // the exact path computes them.
  if (status.code() == absl::StatusCode::kFailedPrecondition &&
      (*plan)->gemm_s8.path == kernels::S8Path::kFast) {
    status = run(kernels::S8Path::kExact);
  }
  return ToApiStatus(status);
}

Status Context::Gemv(const GemvF32Call& call) const {
  const GemvF32Call c = WithTightGemvStride(call);
  if (Status s = Check(c); !s.ok()) return s;
  const Workload w = WorkloadOf(c);
  absl::StatusOr<const Plan*> plan = impl_->PlanFor(KernelFor(c), w);
  if (!plan.ok()) return ToApiStatus(plan.status());
  const kernels::GemvArgs g = GemvArgsOf(c, w.epilogue);
  return ToApiStatus(impl_->Run([&] { return kernels::GemvF32(g, (*plan)->gemv); }));
}

Status Context::Gemv(const GemvS8Call& call) const {
  const GemvS8Call c = WithTightGemvStride(call);
  if (Status s = Check(c); !s.ok()) return s;
  const Workload w = WorkloadOf(c);
  absl::StatusOr<const Plan*> plan = impl_->PlanFor(KernelFor(c), w);
  if (!plan.ok()) return ToApiStatus(plan.status());
  kernels::GemvArgs g = GemvArgsOf(c, w.epilogue);
  g.row_scale = c.row_scales;
  return ToApiStatus(impl_->Run([&] { return kernels::GemvS8F32(g, (*plan)->gemv); }));
}

namespace {

// The explanation of the plan a call would run. Its shape is checked, its pointers are not.
template <typename Call>
Status ExplainCall(const Context::Impl& impl, const Call& call, Explanation* explanation) {
  if (explanation == nullptr) return {StatusCode::kInvalidArgument, "explain: no explanation to fill"};
  const Workload w = WorkloadOf(call);
  if (w.m < 1 || w.n < 1 || w.k < 1) {
    return {StatusCode::kInvalidArgument,
            absl::StrCat("explain: dimensions must be at least 1 (got ", w.ShapeString(), ")")};
  }
  absl::StatusOr<const Plan*> plan = impl.PlanFor(KernelFor(call), w);
  if (!plan.ok()) return ToApiStatus(plan.status());
  *explanation = (*plan)->explanation;
  return {};
}

}  // namespace

Status Context::Explain(const GemmF32Call& call, Explanation* e) const {
  return ExplainCall(*impl_, call, e);
}
Status Context::Explain(const GemmU8S8Call& call, Explanation* e) const {
  if (call.weights == nullptr) return {StatusCode::kInvalidArgument, "explain: weights is null"};
  return ExplainCall(*impl_, call, e);
}
Status Context::Explain(const GemvF32Call& call, Explanation* e) const {
  return ExplainCall(*impl_, call, e);
}
Status Context::Explain(const GemvS8Call& call, Explanation* e) const {
  return ExplainCall(*impl_, call, e);
}

}  // namespace rooftune
