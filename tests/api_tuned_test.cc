// The library API's dispatch of tuned rows: the stored config is what a call runs, GEMV weights
// prepared ahead in the tuned layout, and readers of a database while it is written.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "tests/api_fixture.h"

namespace rooftune::api_testing {
namespace {

TEST_F(Api, ATunedRowIsTheConfigACallRuns) {
  const rooftune::GemmF32Call call{.m = 37, .n = 41, .k = 43};
  rooftune::Explanation initial;
  ASSERT_TRUE(Open(1)->Explain(call, &initial).ok());
  EXPECT_EQ(initial.source, rooftune::Explanation::Source::kInitial);
  EXPECT_EQ(initial.kernel, "gemm_f32");
  EXPECT_EQ(initial.workload, "gemm 37x41x43 f32 none");
  // A KC the initial config did not pick.
  const std::string kc = HasItem(initial.config, "KC=64") ? "KC=128" : "KC=64";
  const std::string db = (dir_ / "tuned.db").string();
  SeedRow(db, "gemm_f32", initial.workload, "f32", 1, kc);
  {  // A row of another machine for the same workload, as a fleet database holds: not ours.
    auto handle = rooftune::TuningDb::Open(db);
    ASSERT_TRUE(handle.ok());
    rooftune::TunedResult other;
    other.fingerprint = "0123456789abcdef";
    other.kernel = "gemm_f32", other.workload = initial.workload,
    other.dtype = rooftune::Dtype::kF32;
    other.threads = 1, other.config = "KC=32";
    ASSERT_TRUE((*handle)->Put(other).ok());
  }
  auto context = Open(1, db);
  ASSERT_NE(context, nullptr);
  EXPECT_EQ(context->database(), db);
  EXPECT_EQ(context->tuned_rows(), 1);
  rooftune::Explanation tuned;
  ASSERT_TRUE(context->Explain(call, &tuned).ok());
  EXPECT_EQ(tuned.source, rooftune::Explanation::Source::kTuned) << tuned.ToString();
  EXPECT_TRUE(HasItem(tuned.config, kc)) << tuned.ToString();
  EXPECT_NE(tuned.ToString().find("tuned (tuned for this workload at 1 thread)"), std::string::npos)
      << tuned.ToString();
  // At another thread count, or for another epilogue, the row does not apply.
  rooftune::GemmF32Call relu = call;
  relu.relu = true;
  rooftune::Explanation other;
  ASSERT_TRUE(context->Explain(relu, &other).ok());
  EXPECT_EQ(other.source, rooftune::Explanation::Source::kInitial) << other.ToString();
  // The default path finds the same file through $ROOFTUNE_DB.
  setenv("ROOFTUNE_DB", db.c_str(), 1);
  ASSERT_TRUE(Open(1)->Explain(call, &other).ok());
  EXPECT_EQ(other.source, rooftune::Explanation::Source::kTuned);
}

// tune --threads auto's choice of fewer threads, stored, is what a context of the threads it was
// offered runs the workload on: its explanation says so, and the result is the same product.
TEST_F(Api, AStoredThreadChoiceRunsACallOnFewerThreads) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs two CPUs";
  const int64_t n = 300, k = 257;
  const std::string db = (dir_ / "threads.db").string();
  const std::string workload = "gemv 300x257 f32 none";
  const rooftune::GemvF32Call shape{.n = n, .k = k};
  rooftune::Explanation initial;
  ASSERT_TRUE(Open(1)->Explain(shape, &initial).ok());
  SeedRow(db, "gemv_f32", workload, "f32", 1, initial.config);
  {
    auto handle = rooftune::TuningDb::Open(db);
    ASSERT_TRUE(handle.ok());
    const rooftune::MachineProfile facts = rooftune::probes::ReadSystemFacts();
    ASSERT_TRUE(
        (*handle)->PutThreadChoice({facts.Fingerprint(), "gemv_f32", workload, 2, 1, 0.05}).ok());
  }
  const std::vector<float> w = RandomFloats(size_t(n * k), 61), x = RandomFloats(size_t(k), 62);
  std::vector<float> y(size_t(n), NAN), want(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double acc = 0;
    for (int64_t p = 0; p < k; ++p) acc += double(w[size_t(i * k + p)]) * x[size_t(p)];
    want[size_t(i)] = float(acc);
  }
  const rooftune::GemvF32Call call{.n = n, .k = k, .w = w.data(), .x = x.data(), .y = y.data()};
  auto two = Open(2, db);
  ASSERT_NE(two, nullptr);
  rooftune::Explanation e;
  ASSERT_TRUE(two->Explain(call, &e).ok());
  EXPECT_EQ(e.threads, 1) << e.ToString();
  EXPECT_EQ(e.source, rooftune::Explanation::Source::kTuned) << e.ToString();
  EXPECT_NE(e.reason.find("on 1 thread of the 2 offered"), std::string::npos) << e.ToString();
  ASSERT_TRUE(two->Gemv(call).ok());
  ExpectClose(y, want, double(k), "gemv on the chosen thread");
  // A context of one thread was not what tune offered: the rule leaves it as it is.
  ASSERT_TRUE(Open(1, db)->Explain(call, &e).ok());
  EXPECT_EQ(e.reason.find("offered"), std::string::npos) << e.ToString();
}

// A tuned row of the blocked fp32 GEMM reading B prepared, with a register block of this CPU's
// target (the initial config's for a large decode shape) and KC=64, MC=24, NC=192.
std::string BlockedDecodeRow(const rooftune::Context& context) {
  rooftune::Explanation e;
  EXPECT_TRUE(context.Explain(rooftune::GemmF32Call{.m = 8, .n = 4096, .k = 4096}, &e).ok());
  std::string row = "PATH=blocked,KC=64,MC=24,NC=192,PAR=columns,PACKA=in_place,PACKB=prepared";
  const std::vector<std::string> items = absl::StrSplit(e.config, ',');
  for (const std::string& item : items) {
    if (item.rfind("MR=", 0) == 0 || item.rfind("NR=", 0) == 0) row += "," + item;
  }
  return row;
}

// A tuned fp32 GEMM row that reads B prepared ahead (PACKB=prepared) cannot run as stored from a
// call that brings B: the call reads B as the analytic rule would for its shape (few rows: in
// place), keeps the rest of the row, says so, and matches a plain loop.
TEST_F(Api, ATunedRowWithPreparedBReadsTheCallsB) {
  const int64_t m = 8, n = 77, k = 130;
  const rooftune::GemmF32Call shape{.m = m, .n = n, .k = k};
  rooftune::Explanation initial;
  ASSERT_TRUE(Open(1)->Explain(shape, &initial).ok());
  const std::string db = (dir_ / "prepared_b.db").string();
  SeedRow(db, "gemm_f32", initial.workload, "f32", 1, BlockedDecodeRow(*Open(1)));
  auto context = Open(1, db);
  ASSERT_NE(context, nullptr);
  const std::vector<float> a = RandomFloats(size_t(m * k), 31), b = RandomFloats(size_t(k * n), 32);
  std::vector<float> c(size_t(m * n), NAN), want(size_t(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p) acc += double(a[i * k + p]) * b[p * n + j];
      want[i * n + j] = float(acc);
    }
  }
  const rooftune::GemmF32Call call{
      .m = m, .n = n, .k = k, .a = a.data(), .b = b.data(), .c = c.data()};
  rooftune::Explanation e;
  ASSERT_TRUE(context->Explain(call, &e).ok());
  EXPECT_EQ(e.source, rooftune::Explanation::Source::kTuned) << e.ToString();
  EXPECT_TRUE(HasItem(e.config, "PACKB=in_place")) << e.ToString();
  // The register block and column block as tuned (KC follows B read in place: its own rule).
  EXPECT_TRUE(HasItem(e.config, "MC=24") && HasItem(e.config, "NC=192")) << e.ToString();
  EXPECT_NE(e.reason.find("PACKB prepared->in_place"), std::string::npos) << e.ToString();
  EXPECT_NE(e.reason.find("needs them prepared ahead (PrepareWeightsF32)"), std::string::npos)
      << e.ToString();
  ASSERT_TRUE(context->Gemm(call).ok());
  ExpectClose(c, want, double(k), "gemm f32 tuned with prepared B");
}

// fp32 weights prepared for a few-row call run the config that reads B prepared (tuned or
// initial), for that call and for calls of other m, and match a plain loop; a call without them
// reads B in place. Weights prepared for a config that reads B as calls bring it are a copy,
// and each call runs its own shape's config on it. Misuse is an error, never a wrong result.
TEST_F(Api, PreparedGemmWeightsRunTheConfigThatReadsThem) {
  const int64_t n = 77, k = 130, ldb = 80;
  const std::vector<float> b = RandomFloats(size_t(k * ldb), 41),
                           bias = RandomFloats(size_t(n), 42);
  const std::string db = (dir_ / "weights_f32.db").string();
  SeedRow(db, "gemm_f32", "gemm 8x77x130 f32 bias_relu", "f32", 1, BlockedDecodeRow(*Open(1)));
  auto context = Open(1, db);
  ASSERT_NE(context, nullptr);
  std::shared_ptr<const rooftune::WeightsF32> weights;
  const rooftune::GemmF32Call prepare{
      .m = 8, .n = n, .k = k, .b = b.data(), .ldb = ldb, .bias = bias.data(), .relu = true};
  ASSERT_TRUE(context->PrepareWeightsF32(prepare, &weights).ok());
  EXPECT_EQ(weights->n(), n);
  EXPECT_EQ(weights->k(), k);
  for (const int64_t m : {int64_t(8), int64_t(3), int64_t(50)}) {
    const std::vector<float> a = RandomFloats(size_t(m * k), 43 + m);
    std::vector<float> c(size_t(m * n), NAN);
    const rooftune::GemmF32Call call{.m = m,
                                     .a = a.data(),
                                     .c = c.data(),
                                     .bias = bias.data(),
                                     .relu = true,
                                     .weights = weights.get()};
    rooftune::Explanation e;
    ASSERT_TRUE(context->Explain(call, &e).ok());
    EXPECT_TRUE(HasItem(e.config, "PACKB=prepared")) << e.ToString();
    EXPECT_TRUE(HasItem(e.config, "KC=64")) << e.ToString();  // the tuned row, for every m
    ASSERT_TRUE(context->Gemm(call).ok()) << m;
    const rooftune::GemmF32Call plain{.m = m,
                                      .n = n,
                                      .k = k,
                                      .a = a.data(),
                                      .b = b.data(),
                                      .ldb = ldb,
                                      .bias = bias.data(),
                                      .relu = true};
    ExpectClose(c, PlainGemm(plain, c), double(k),
                "gemm f32 with prepared B, m = " + std::to_string(m));
  }
  // Without the weights, the tuned row reads the call's B in place.
  rooftune::Explanation in_place;
  ASSERT_TRUE(context->Explain(prepare, &in_place).ok());
  EXPECT_TRUE(HasItem(in_place.config, "PACKB=in_place")) << in_place.ToString();

  // A config that reads B as the call brings it: a copy, and each call's own config.
  auto initial = Open(1);
  std::shared_ptr<const rooftune::WeightsF32> copied;
  const rooftune::GemmF32Call square{.m = 64, .n = n, .k = k, .b = b.data(), .ldb = ldb};
  ASSERT_TRUE(initial->PrepareWeightsF32(square, &copied).ok());
  const std::vector<float> a = RandomFloats(size_t(64 * k), 44);
  std::vector<float> c(size_t(64 * n), NAN);
  const rooftune::GemmF32Call call{.m = 64, .a = a.data(), .c = c.data(), .weights = copied.get()};
  rooftune::Explanation e;
  ASSERT_TRUE(initial->Explain(call, &e).ok());
  EXPECT_FALSE(HasItem(e.config, "PACKB=prepared")) << e.ToString();
  ASSERT_TRUE(initial->Gemm(call).ok());
  const rooftune::GemmF32Call plain{
      .m = 64, .n = n, .k = k, .a = a.data(), .b = b.data(), .ldb = ldb};
  ExpectClose(c, PlainGemm(plain, c), double(k), "copied B");

  // Misuse: another shape, no output, weights prepared twice, a bad B.
  rooftune::GemmF32Call wrong = call;
  wrong.n = n + 1;
  EXPECT_EQ(initial->Gemm(wrong).code(), rooftune::StatusCode::kInvalidArgument);
  const rooftune::Status explained = initial->Explain(wrong, &e);
  EXPECT_EQ(explained.code(), rooftune::StatusCode::kInvalidArgument);
  EXPECT_NE(explained.message().find("is not the prepared weights'"), std::string::npos)
      << explained.message();
  EXPECT_EQ(initial->PrepareWeightsF32(square, nullptr).code(),
            rooftune::StatusCode::kInvalidArgument);
  EXPECT_EQ(initial->PrepareWeightsF32(call, &copied).code(),
            rooftune::StatusCode::kInvalidArgument);
  rooftune::GemmF32Call narrow = square;
  narrow.ldb = n - 1;
  const rooftune::Status s = initial->PrepareWeightsF32(narrow, &copied);
  EXPECT_EQ(s.code(), rooftune::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("ldb"), std::string::npos) << s.message();
}

// A GEMV's operands with W's rows `ldw` apart, in fp32 and in int8 with row scales, and what a
// plain loop gives for each with bias and ReLU.
struct GemvOperands {
  std::vector<float> wf, x, bias, scales;
  std::vector<int8_t> ws;
  std::vector<float> want, want_s8;
};
GemvOperands MakeGemvOperands(int64_t n, int64_t k, int64_t ldw) {
  GemvOperands o{.wf = RandomFloats(size_t(n * ldw), 21),
                 .x = RandomFloats(size_t(k), 22),
                 .bias = RandomFloats(size_t(n), 23),
                 .scales = RandomFloats(size_t(n), 24, 0.001f, 0.02f),
                 .ws = std::vector<int8_t>(size_t(n * ldw)),
                 .want = std::vector<float>(size_t(n)),
                 .want_s8 = std::vector<float>(size_t(n))};
  std::mt19937_64 rng(k);
  for (auto& v : o.ws) v = int8_t(std::uniform_int_distribution<int>(-128, 127)(rng));
  for (int64_t i = 0; i < n; ++i) {
    double acc = o.bias[i], acc_s8 = 0;
    for (int64_t p = 0; p < k; ++p) {
      acc += double(o.wf[i * ldw + p]) * o.x[p];
      acc_s8 += double(o.ws[i * ldw + p]) * o.x[p];
    }
    o.want[i] = float(std::max(acc, 0.0));
    o.want_s8[i] = float(std::max(o.scales[i] * acc_s8 + o.bias[i], 0.0));
  }
  return o;
}

// The int8 half of PreparedGemvWeightsRunTheTunedLayout: weights prepared in the tuned layout
// `packw` run as tuned and match a plain loop.
void ExpectPreparedS8RunsTheTunedLayout(rooftune::Context& context, const GemvOperands& o,
                                        int64_t n, int64_t k, int64_t ldw, const std::string& packw,
                                        const std::string& what) {
  rooftune::GemvS8Call q{.n = n,
                         .k = k,
                         .w = o.ws.data(),
                         .ldw = ldw,
                         .row_scales = o.scales.data(),
                         .bias = o.bias.data(),
                         .relu = true};
  std::shared_ptr<const rooftune::GemvWeights> pq;
  ASSERT_TRUE(context.PrepareGemvWeights(q, &pq).ok()) << what;
  EXPECT_TRUE(pq->s8());
  std::vector<float> y(size_t(n), NAN);
  const rooftune::GemvS8Call run_s8{.n = n,
                                    .weights = pq.get(),
                                    .x = o.x.data(),
                                    .y = y.data(),
                                    .bias = o.bias.data(),
                                    .relu = true};
  rooftune::Explanation e;
  ASSERT_TRUE(context.Explain(run_s8, &e).ok());
  EXPECT_EQ(e.kernel, "gemv_s8");
  EXPECT_TRUE(HasItem(e.config, packw)) << e.ToString();
  ASSERT_TRUE(context.Gemv(run_s8).ok()) << what;
  ExpectClose(y, o.want_s8, 3 * double(k) + 1, "prepared gemv s8 " + what);
}

// Tuned GEMV rows that lay W out anew (grouped across the rows read together, or copied onto
// huge pages) run as tuned only with weights prepared ahead: the prepared call explains the
// tuned PACKW and matches a plain loop (grouped weights read as row-major would not), the call
// without them reads W in place and says what preparing would run.
TEST_F(Api, PreparedGemvWeightsRunTheTunedLayout) {
  const std::string db = (dir_ / "gemv.db").string();
  struct Case {
    int64_t n, k;
    std::string tuned;
  };
  // TOGETHER=4 over a prime count of rows leaves a partial group; n = 1 and k = 1 at the edges.
  const std::vector<Case> cases = {{1, 1, "PACKW=grouped,TOGETHER=4"},
                                   {61, 127, "PACKW=grouped,TOGETHER=4,ROWS=16"},
                                   {300, 257, "PACKW=copied,TOGETHER=2"},
                                   {97, 1, "PACKW=in_place,TOGETHER=8"},
                                   {1024, 1000, "PACKW=grouped,TOGETHER=8,PF=512"}};
  auto context0 = Open(1);
  for (const Case& c : cases) {
    for (const char* dtype : {"f32", "s8f32"}) {
      rooftune::Explanation e;
      const bool s8 = std::string(dtype) == "s8f32";
      if (s8) {
        ASSERT_TRUE(
            context0->Explain(rooftune::GemvS8Call{.n = c.n, .k = c.k, .relu = true}, &e).ok());
      } else {
        ASSERT_TRUE(
            context0->Explain(rooftune::GemvF32Call{.n = c.n, .k = c.k, .relu = true}, &e).ok());
      }
      SeedRow(db, s8 ? "gemv_s8" : "gemv_f32", e.workload, dtype, 1, c.tuned);
    }
  }
  auto context = Open(1, db);
  ASSERT_NE(context, nullptr);
  for (const Case& c : cases) {
    const int64_t n = c.n, k = c.k, ldw = k + 3;
    const std::string packw = c.tuned.substr(0, c.tuned.find(','));
    const GemvOperands o = MakeGemvOperands(n, k, ldw);
    const std::vector<float>&wf = o.wf, &x = o.x, &bias = o.bias;
    const std::vector<float>& want = o.want;
    const std::string what = std::to_string(n) + "x" + std::to_string(k) + " " + c.tuned;

    rooftune::GemvF32Call f{
        .n = n, .k = k, .w = wf.data(), .ldw = ldw, .bias = bias.data(), .relu = true};
    std::shared_ptr<const rooftune::GemvWeights> pf;
    ASSERT_TRUE(context->PrepareGemvWeights(f, &pf).ok()) << what;
    EXPECT_EQ(pf->n(), n);
    EXPECT_EQ(pf->k(), k);
    EXPECT_FALSE(pf->s8());
    std::vector<float> source = wf;
    std::fill(source.begin(), source.end(), NAN);  // the prepared copy must not read the caller's
    std::vector<float> y(size_t(n), NAN);
    const rooftune::GemvF32Call run{
        .weights = pf.get(), .x = x.data(), .y = y.data(), .bias = bias.data(), .relu = true};
    rooftune::Explanation e;
    ASSERT_TRUE(context->Explain(run, &e).ok());
    EXPECT_EQ(e.source, rooftune::Explanation::Source::kTuned) << e.ToString();
    EXPECT_TRUE(HasItem(e.config, packw)) << e.ToString();
    ASSERT_TRUE(context->Gemv(run).ok()) << what;
    ExpectClose(y, want, double(k) + 1, "prepared gemv f32 " + what);
    // Without prepared weights: in place, and the reason names what preparing would run.
    rooftune::Explanation in_place;
    ASSERT_TRUE(context->Explain(f, &in_place).ok());
    EXPECT_TRUE(HasItem(in_place.config, "PACKW=in_place")) << in_place.ToString();
    if (packw != "PACKW=in_place") {
      const std::string changed = "PACKW " + packw.substr(packw.find('=') + 1) + "->in_place";
      EXPECT_NE(in_place.reason.find(changed), std::string::npos) << in_place.ToString();
      EXPECT_NE(in_place.reason.find("needs them prepared ahead (PrepareGemvWeights)"),
                std::string::npos)
          << in_place.ToString();
    }

    ExpectPreparedS8RunsTheTunedLayout(*context, o, n, k, ldw, packw, what);
  }
}

TEST_F(Api, PreparedGemvWeightsRefuseAnotherShapeOrType) {
  auto context = Open(1);
  const std::vector<float> w = RandomFloats(12 * 5, 1), x = RandomFloats(5, 2);
  const std::vector<int8_t> w8(12 * 5, 1);
  std::vector<float> y(12, 7.0f);
  std::shared_ptr<const rooftune::GemvWeights> f32, s8;
  ASSERT_TRUE(
      context->PrepareGemvWeights(rooftune::GemvF32Call{.n = 12, .k = 5, .w = w.data()}, &f32)
          .ok());
  rooftune::Status s =
      context->PrepareGemvWeights(rooftune::GemvS8Call{.n = 12, .k = 5, .w = w8.data()}, &s8);
  EXPECT_EQ(s.code(), rooftune::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("row_scales is null"), std::string::npos) << s.message();
  EXPECT_EQ(s8, nullptr);
  s = context->PrepareGemvWeights(rooftune::GemvF32Call{.n = 12, .k = 5}, &s8);
  EXPECT_NE(s.message().find("w is null"), std::string::npos) << s.message();
  s = context->PrepareGemvWeights(rooftune::GemvF32Call{.n = 12, .k = 5, .w = w.data(), .ldw = 4},
                                  &s8);
  EXPECT_NE(s.message().find("ldw (4) is below"), std::string::npos) << s.message();
  s = context->PrepareGemvWeights(rooftune::GemvF32Call{.n = 12, .k = 5, .weights = f32.get()},
                                  &s8);
  EXPECT_NE(s.message().find("prepared already"), std::string::npos) << s.message();
  EXPECT_EQ(
      context->PrepareGemvWeights(rooftune::GemvF32Call{.n = 12, .k = 5, .w = w.data()}, nullptr)
          .code(),
      rooftune::StatusCode::kInvalidArgument);

  s = context->Gemv(
      rooftune::GemvF32Call{.n = 11, .weights = f32.get(), .x = x.data(), .y = y.data()});
  EXPECT_EQ(s.code(), rooftune::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("n x k (11 x 5) is not the prepared weights' (12 x 5)"),
            std::string::npos)
      << s.message();
  const std::vector<float> scales(12, 1.0f);
  s = context->Gemv(rooftune::GemvS8Call{
      .row_scales = scales.data(), .weights = f32.get(), .x = x.data(), .y = y.data()});
  EXPECT_NE(s.message().find("prepared for a gemv f32 call"), std::string::npos) << s.message();
  s = context->Gemv(rooftune::GemvF32Call{.weights = f32.get(), .x = x.data()});
  EXPECT_NE(s.message().find("y is null"), std::string::npos) << s.message();
  rooftune::Explanation e;
  EXPECT_EQ(context->Explain(rooftune::GemvF32Call{.k = 6, .weights = f32.get()}, &e).code(),
            rooftune::StatusCode::kInvalidArgument);
  for (float v : y) EXPECT_EQ(v, 7.0f);
}

TEST_F(Api, ManyThreadsShareOneContext) {
  auto context = Open(1);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        const int64_t m = 3 + t * 7 + round, n = 17 + t, k = 9 + round;
        const std::vector<float> a = RandomFloats(size_t(m * k), t),
                                 b = RandomFloats(size_t(k * n), round);
        std::vector<float> out(size_t(m * n));
        rooftune::GemmF32Call c{
            .m = m, .n = n, .k = k, .a = a.data(), .b = b.data(), .c = out.data()};
        if (!context->Gemm(c).ok()) ++wrong;
        const std::vector<float> want = PlainGemm(c, out);
        for (size_t i = 0; i < out.size(); ++i) {
          if (std::abs(out[i] - want[i]) > 1e-4f * float(k)) ++wrong;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

// While a writer replaces a row again and again, every reader sees the old or the new config,
// never a mix and never an error.
TEST_F(Api, ReadersDuringAWriteSeeTheOldOrTheNewRow) {
  const std::string db = (dir_ / "busy.db").string();
  const std::string workload = "gemm 64x64x64 f32 none";
  SeedRow(db, "gemm_f32", workload, "f32", 1, "KC=64");
  std::atomic<bool> done{false};
  std::thread writer([&] {
    auto handle = rooftune::TuningDb::Open(db);
    ASSERT_TRUE(handle.ok());
    auto rows = (*handle)->All();
    ASSERT_TRUE(rows.ok() && rows->size() == 1);
    rooftune::TunedResult row = (*rows)[0];
    for (int i = 0; i < 200; ++i) {
      row.config = i % 2 == 0 ? "KC=128" : "KC=64";
      ASSERT_TRUE((*handle)->Put(row).ok());
    }
    done = true;
  });
  int reads = 0;
  while (!done || reads < 5) {
    std::unique_ptr<rooftune::Context> context;
    const rooftune::Status s = rooftune::Context::Open({db, 1}, &context);
    ASSERT_TRUE(s.ok()) << s.message();
    rooftune::Explanation e;
    ASSERT_TRUE(context->Explain(rooftune::GemmF32Call{.m = 64, .n = 64, .k = 64}, &e).ok());
    ASSERT_EQ(e.source, rooftune::Explanation::Source::kTuned) << e.ToString();
    ASSERT_TRUE(HasItem(e.config, "KC=64") || HasItem(e.config, "KC=128")) << e.config;
    ++reads;
  }
  writer.join();
}

// Readers open contexts while a `rooftune tune` process stores its result for the very workload
// they ask about: each sees the row from before the tune or the one it stored, never an error
// (a busy database) or a mix of the two.
TEST_F(Api, ReadersWhileRooftuneTuneWritesSeeTheOldOrTheNewRow) {
  const std::string db = (dir_ / "tuning.db").string();
  const rooftune::GemmF32Call call{.m = 48, .n = 48, .k = 48};
  SeedRow(db, "gemm_f32", "gemm 48x48x48 f32 none", "f32", 1, "KC=64");
  rooftune::Explanation before;
  ASSERT_TRUE(Open(1, db)->Explain(call, &before).ok());
  ASSERT_EQ(before.source, rooftune::Explanation::Source::kTuned) << before.ToString();
  const std::string log = (dir_ / "tune.log").string();
  const pid_t tune = fork();
  ASSERT_GE(tune, 0);
  if (tune == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    execl(ROOFTUNE_BINARY, ROOFTUNE_BINARY, "tune", "--db", db.c_str(), "--kernel", "gemm_f32",
          "--shape", "48x48x48", "--threads", "1", "--budget-seconds", "2", nullptr);
    _exit(127);
  }
  std::set<std::string> seen;
  int reads = 0, status = 0;
  while (waitpid(tune, &status, WNOHANG) == 0) {
    std::unique_ptr<rooftune::Context> context;
    const rooftune::Status s = rooftune::Context::Open({db, 1}, &context);
    ASSERT_TRUE(s.ok()) << s.message();
    rooftune::Explanation e;
    ASSERT_TRUE(context->Explain(call, &e).ok());
    ASSERT_EQ(e.source, rooftune::Explanation::Source::kTuned) << e.ToString();
    seen.insert(e.config);
    ++reads;
  }
  std::stringstream output;
  output << std::ifstream(log).rdbuf();
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output.str();
  rooftune::Explanation after;
  ASSERT_TRUE(Open(1, db)->Explain(call, &after).ok());
  // The tune stored its row: a timed one where the seed had none (its config may be the seed's
  // own, when that one timed fastest).
  {
    auto handle = rooftune::TuningDb::OpenReadOnly(db);
    ASSERT_TRUE(handle.ok()) << handle.status();
    auto rows = (*handle)->All(rooftune::probes::ReadSystemFacts().Fingerprint());
    ASSERT_TRUE(rows.ok()) << rows.status();
    ASSERT_EQ(rows->size(), 1u);
    EXPECT_GT((*rows)[0].median_seconds, 0) << "the tune stored nothing: " << output.str();
  }
  EXPECT_GT(reads, 0);
  for (const std::string& config : seen) {
    EXPECT_TRUE(config == before.config || config == after.config) << config;
  }
}

}  // namespace
}  // namespace rooftune::api_testing
