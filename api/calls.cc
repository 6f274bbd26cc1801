// The API's kernel calls: arguments checked before any work, the workload's plan looked up, the
// kernel run on the context's threads. GEMV and fp32 GEMM weights prepared ahead, for the plan
// of their shape.
#include <algorithm>
#include <concepts>
#include <limits>
#include <memory>
#include <new>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/context_impl.h"
#include "kernels/workspace.h"
#include "plugins/builtin/gemv_blocking.h"

namespace rooftune {
namespace {

// Builds one call's argument errors; the first one found is returned.
class Checker {
 public:
  explicit Checker(const char* call) : call_(call) {}
  Checker& AtLeastOne(const char* name, int64_t value) {
    if (error_.empty() && value < 1)
      error_ = absl::StrCat(name, " must be at least 1 (got ", value, ")");
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

// A call with prepared weights takes its shape from them.
template <typename Call>
Call WithPreparedShape(Call c) {
  if (c.weights == nullptr) return c;
  if (c.n == 0) c.n = c.weights->n();
  if (c.k == 0) c.k = c.weights->k();
  return c;
}

GemmF32Call WithTightStrides(GemmF32Call c) {
  c = WithPreparedShape(c);
  if (c.lda == 0) c.lda = c.k;
  if (c.ldb == 0) c.ldb = c.n;
  if (c.ldc == 0) c.ldc = c.n;
  return c;
}

// Prepared weights must be of the call's shape.
Status CheckPreparedShape(const GemmF32Call& c) {
  if (c.weights == nullptr || (c.n == c.weights->n() && c.k == c.weights->k())) return {};
  return {StatusCode::kInvalidArgument,
          absl::StrCat("gemm f32: k x n (", c.k, " x ", c.n, ") is not the prepared weights' (",
                       c.weights->k(), " x ", c.weights->n(), ")")};
}

// B, the caller's or prepared (then of the call's shape), and the rest of the call.
Status Check(const GemmF32Call& c) {
  Checker check("gemm f32");
  check.AtLeastOne("m", c.m).AtLeastOne("n", c.n).AtLeastOne("k", c.k);
  if (c.weights == nullptr) {
    check.NotNull("b", c.b).Matrix("ldb", c.ldb, c.n, c.k);
  } else if (Status s = CheckPreparedShape(c); !s.ok()) {
    return s;
  }
  return check.NotNull("a", c.a)
      .NotNull("c", c.c)
      .Matrix("lda", c.lda, c.k, c.m)
      .Matrix("ldc", c.ldc, c.n, c.m)
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

constexpr bool IsS8(const GemvF32Call&) { return false; }
constexpr bool IsS8(const GemvS8Call&) { return true; }
const char* NameOf(const GemvF32Call&) { return "gemv f32"; }
const char* NameOf(const GemvS8Call&) { return "gemv s8"; }

// The weights a call (or a preparation, which has no x or y yet) reads.
template <typename Call>
Checker CheckGemvWeights(const Call& c) {
  Checker check(NameOf(c));
  check.AtLeastOne("n", c.n).AtLeastOne("k", c.k).NotNull("w", c.w).Matrix("ldw", c.ldw, c.k, c.n);
  if constexpr (std::same_as<Call, GemvS8Call>) check.NotNull("row_scales", c.row_scales);
  return check;
}

// Prepared weights must be of the call's type and shape.
template <typename Call>
Status CheckPreparedShape(const Call& c) {
  if (c.weights == nullptr) return {};
  const std::string name = NameOf(c);
  if (c.weights->s8() != IsS8(c)) {
    return {StatusCode::kInvalidArgument,
            absl::StrCat(name, ": the weights were prepared for a ",
                         c.weights->s8() ? "gemv s8" : "gemv f32", " call")};
  }
  if (c.n != c.weights->n() || c.k != c.weights->k()) {
    return {StatusCode::kInvalidArgument,
            absl::StrCat(name, ": n x k (", c.n, " x ", c.k, ") is not the prepared weights' (",
                         c.weights->n(), " x ", c.weights->k(), ")")};
  }
  return {};
}

template <typename Call>
Status CheckGemv(const Call& c) {
  if (c.weights == nullptr) return CheckGemvWeights(c).NotNull("x", c.x).NotNull("y", c.y).Result();
  if (Status s = CheckPreparedShape(c); !s.ok()) return s;
  return Checker(NameOf(c)).NotNull("x", c.x).NotNull("y", c.y).Result();
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
  if (c.weights == nullptr) {
    g.w = c.w, g.ldw = c.ldw;
  } else {
    g.w = c.weights->impl().data.get(), g.ldw = c.weights->impl().ldw;
  }
  g.x = c.x, g.y = c.y;
  g.epilogue = KernelEpilogue(epilogue);
  g.bias = epilogue == Epilogue::kNone ? nullptr : c.bias != nullptr ? c.bias : ZeroBias(c.n);
  return g;
}

// The plan a call runs: its prepared weights' (GEMV; fp32 GEMM when they are packed for it),
// else its workload's.
template <typename Call>
absl::StatusOr<const Plan*> PlanOf(const Context::Impl& impl, const Call& c) {
  return impl.PlanFor(KernelFor(c), WorkloadOf(c));
}
absl::StatusOr<const Plan*> PlanOf(const Context::Impl& impl, const GemmF32Call& c) {
  if (c.weights != nullptr && c.weights->impl().Packed()) return &c.weights->impl().plan;
  return impl.PlanFor(KernelFor(c), WorkloadOf(c));
}
template <typename Call>
requires std::same_as<Call, GemvF32Call> || std::same_as<Call, GemvS8Call>
    absl::StatusOr<const Plan*> PlanOf(const Context::Impl& impl, const Call& c) {
  if (c.weights != nullptr) return &c.weights->impl().plan;
  return impl.PlanFor(KernelFor(c), WorkloadOf(c));
}

}  // namespace

Status Context::Gemm(const GemmF32Call& call) const {
  const GemmF32Call c = WithTightStrides(call);
  if (Status s = Check(c); !s.ok()) return s;
  const Workload w = WorkloadOf(c);
  absl::StatusOr<const Plan*> plan = PlanOf(*impl_, c);
  if (!plan.ok()) return ToApiStatus(plan.status());
  kernels::GemmF32Args args;
  args.m = c.m, args.n = c.n, args.k = c.k;
  args.alpha = c.alpha, args.beta = c.beta;
  args.a = c.a, args.lda = c.lda;
  if (c.weights == nullptr) {
    args.b = c.b, args.ldb = c.ldb;
  } else {
    args.b = static_cast<const float*>(c.weights->impl().data.get()), args.ldb = c.n;
  }
  args.c = c.c, args.ldc = c.ldc;
  args.epilogue = KernelEpilogue(w.epilogue);
  args.bias = w.epilogue == Epilogue::kNone ? nullptr : c.bias != nullptr ? c.bias : ZeroBias(c.n);
  const kernels::GemmF32Plan& gemm = *(*plan)->gemm_f32;
  // The small-matrix path spawns no task: it runs on the calling thread, outside the pool.
  if (kernels::RunsOnCallingThread(gemm.blocking())) return ToApiStatus(gemm.Run(args));
  return ToApiStatus(impl_->Run((*plan)->threads, [&] { return gemm.Run(args); }));
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
    return impl_->Run((*plan)->threads,
                      [&] { return kernels::GemmS8(g, (*plan)->gemm_s8.blocking); });
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
  const GemvF32Call c = WithPreparedShape(WithTightGemvStride(call));
  if (Status s = CheckGemv(c); !s.ok()) return s;
  absl::StatusOr<const Plan*> plan = PlanOf(*impl_, c);
  if (!plan.ok()) return ToApiStatus(plan.status());
  const kernels::GemvArgs g = GemvArgsOf(c, WorkloadOf(c).epilogue);
  return ToApiStatus(
      impl_->Run((*plan)->threads, [&] { return kernels::GemvF32(g, (*plan)->gemv); }));
}

Status Context::Gemv(const GemvS8Call& call) const {
  const GemvS8Call c = WithPreparedShape(WithTightGemvStride(call));
  if (Status s = CheckGemv(c); !s.ok()) return s;
  absl::StatusOr<const Plan*> plan = PlanOf(*impl_, c);
  if (!plan.ok()) return ToApiStatus(plan.status());
  kernels::GemvArgs g = GemvArgsOf(c, WorkloadOf(c).epilogue);
  g.row_scale = c.weights != nullptr ? c.weights->impl().row_scales.data() : c.row_scales;
  return ToApiStatus(
      impl_->Run((*plan)->threads, [&] { return kernels::GemvS8F32(g, (*plan)->gemv); }));
}

WeightsF32::WeightsF32(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WeightsF32::~WeightsF32() = default;
int64_t WeightsF32::k() const { return impl_->k; }
int64_t WeightsF32::n() const { return impl_->n; }

// B packed for the config its call's workload runs with prepared weights, or copied, rows n
// apart, for a config that reads B as the call brings it. On huge pages where the system grants
// them: B streams from memory.
Status Context::PrepareWeightsF32(const GemmF32Call& call,
                                  std::shared_ptr<const WeightsF32>* weights) const {
  if (weights == nullptr)
    return {StatusCode::kInvalidArgument, "prepare gemm f32 weights: no output"};
  if (call.weights != nullptr) {
    return {StatusCode::kInvalidArgument,
            "prepare gemm f32 weights: the call's weights are prepared already"};
  }
  GemmF32Call c = call;
  if (c.ldb == 0) c.ldb = c.n;
  if (Status s = Checker("prepare gemm f32 weights")
                     .AtLeastOne("m", c.m)
                     .AtLeastOne("n", c.n)
                     .AtLeastOne("k", c.k)
                     .NotNull("b", c.b)
                     .Matrix("ldb", c.ldb, c.n, c.k)
                     .Result();
      !s.ok()) {
    return s;
  }
  absl::StatusOr<const Plan*> plan =
      impl_->PlanFor(KernelFor(c), WorkloadOf(c), WeightsRead::kPrepared);
  if (!plan.ok()) return ToApiStatus(plan.status());
  auto prepared = std::make_unique<WeightsF32::Impl>();
  prepared->k = c.k, prepared->n = c.n, prepared->plan = **plan;
  if (prepared->Packed()) {
    absl::StatusOr<kernels::PreparedB> b =
        kernels::PrepareB(c.b, c.k, c.n, c.ldb, prepared->plan.gemm_f32->blocking());
    if (!b.ok()) {
      return ToApiStatus(absl::Status(
          b.status().code(), absl::StrCat("prepare gemm f32 weights: ", b.status().message())));
    }
    prepared->data = b->floats;
  } else {
    // A copy, rows n apart, so that the weights outlive the caller's B as prepared ones do.
    const size_t row_bytes = size_t(c.n) * sizeof(float);
    prepared->data = kernels::CopyRowsOnHugePages(c.b, size_t(c.k), row_bytes,
                                                  size_t(c.ldb) * sizeof(float), row_bytes);
    if (prepared->data == nullptr) {
      return {StatusCode::kResourceExhausted, "prepare gemm f32 weights: no memory for B"};
    }
  }
  *weights = std::make_shared<const WeightsF32>(std::move(prepared));
  return {};
}

GemvWeights::GemvWeights(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GemvWeights::~GemvWeights() = default;
int64_t GemvWeights::n() const { return impl_->n; }
int64_t GemvWeights::k() const { return impl_->k; }
bool GemvWeights::s8() const { return impl_->s8; }

namespace {

// Copies the call's weights into the layout of the config its workload runs with prepared
// weights. A config that reads W in place gets a plain copy, rows ldw apart as in the source.
template <typename Call>
Status PrepareGemv(const Context::Impl& impl, const Call& call,
                   std::shared_ptr<const GemvWeights>* weights) {
  if (weights == nullptr) {
    return {StatusCode::kInvalidArgument,
            absl::StrCat("prepare ", NameOf(call), " weights: no output")};
  }
  const Call c = WithTightGemvStride(call);
  if (c.weights != nullptr) {
    return {
        StatusCode::kInvalidArgument,
        absl::StrCat("prepare ", NameOf(c), " weights: the call's weights are prepared already")};
  }
  if (Status s = CheckGemvWeights(c).Result(); !s.ok()) return s;
  absl::StatusOr<const Plan*> plan =
      impl.PlanFor(KernelFor(c), WorkloadOf(c), WeightsRead::kPrepared);
  if (!plan.ok()) return ToApiStatus(plan.status());
  auto prepared = std::make_unique<GemvWeights::Impl>();
  prepared->n = c.n, prepared->k = c.k, prepared->ldw = c.ldw, prepared->s8 = IsS8(c);
  prepared->plan = **plan;
  const GemvLayout layout = GemvLayoutOf((*plan)->config);
  absl::StatusOr<std::shared_ptr<void>> data =
      PrepareGemvWeights(layout == GemvLayout::kInPlace ? GemvLayout::kCopied : layout,
                         (*plan)->gemv, c.w, c.n, c.k, c.ldw, IsS8(c) ? 1 : int(sizeof(float)));
  if (!data.ok()) {
    return ToApiStatus(
        absl::Status(data.status().code(),
                     absl::StrCat("prepare ", NameOf(c), " weights: ", data.status().message())));
  }
  prepared->data = *std::move(data);
  if constexpr (std::same_as<Call, GemvS8Call>) {
    try {
      prepared->row_scales.assign(c.row_scales, c.row_scales + c.n);
    } catch (const std::bad_alloc&) {
      return {StatusCode::kResourceExhausted,
              "prepare gemv s8 weights: no memory for the row scales"};
    }
  }
  *weights = std::make_shared<const GemvWeights>(std::move(prepared));
  return {};
}

}  // namespace

Status Context::PrepareGemvWeights(const GemvF32Call& call,
                                   std::shared_ptr<const GemvWeights>* weights) const {
  return PrepareGemv(*impl_, call, weights);
}
Status Context::PrepareGemvWeights(const GemvS8Call& call,
                                   std::shared_ptr<const GemvWeights>* weights) const {
  return PrepareGemv(*impl_, call, weights);
}

namespace {

// The explanation of the plan a call would run. Its shape is checked, its pointers are not.
template <typename Call>
Status ExplainCall(const Context::Impl& impl, const Call& call, Explanation* explanation) {
  if (explanation == nullptr)
    return {StatusCode::kInvalidArgument, "explain: no explanation to fill"};
  const Workload w = WorkloadOf(call);
  if (w.m < 1 || w.n < 1 || w.k < 1) {
    return {StatusCode::kInvalidArgument,
            absl::StrCat("explain: dimensions must be at least 1 (got ", w.ShapeString(), ")")};
  }
  absl::StatusOr<const Plan*> plan = PlanOf(impl, call);
  if (!plan.ok()) return ToApiStatus(plan.status());
  *explanation = (*plan)->explanation;
  return {};
}

}  // namespace

Status Context::Explain(const GemmF32Call& call, Explanation* e) const {
  const GemmF32Call c = WithPreparedShape(call);
  if (Status s = CheckPreparedShape(c); !s.ok()) return s;
  return ExplainCall(*impl_, c, e);
}
Status Context::Explain(const GemmU8S8Call& call, Explanation* e) const {
  if (call.weights == nullptr) return {StatusCode::kInvalidArgument, "explain: weights is null"};
  return ExplainCall(*impl_, call, e);
}
Status Context::Explain(const GemvF32Call& call, Explanation* e) const {
  const GemvF32Call c = WithPreparedShape(call);
  if (Status s = CheckPreparedShape(c); !s.ok()) return s;
  return ExplainCall(*impl_, c, e);
}
Status Context::Explain(const GemvS8Call& call, Explanation* e) const {
  const GemvS8Call c = WithPreparedShape(call);
  if (Status s = CheckPreparedShape(c); !s.ok()) return s;
  return ExplainCall(*impl_, c, e);
}

}  // namespace rooftune
