// The library API (include/rooftune/rooftune.h) as a program sees it, linked against
// librooftune.so: every call against a plain loop on awkward shapes, the dispatch of tuned rows
// from a database, bad input as error values, and concurrent use. The database is seeded through
// rooftune's own TuningDb, as `rooftune tune` writes it.
#include "rooftune/rooftune.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <algorithm>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sstream>
#include <thread>
#include <vector>

#include "framework/tuning_db.h"
#include "probes/system_facts.h"

// Counts operator new calls while `counting` is set (the library's included: the executable's
// replacement serves every shared object).
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};

void* operator new(size_t bytes) {
  if (counting) ++allocations;
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace {

namespace fs = std::filesystem;

std::vector<float> RandomFloats(size_t count, uint64_t seed, float lo = -1, float hi = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(count);
  for (float& x : v) x = u(rng);
  return v;
}

// C = alpha A B + beta C (+ bias, ReLU), in double.
std::vector<float> PlainGemm(rooftune::GemmF32Call c, const std::vector<float>& c0) {
  if (c.lda == 0) c.lda = c.k;
  if (c.ldb == 0) c.ldb = c.n;
  if (c.ldc == 0) c.ldc = c.n;
  std::vector<float> out = c0;
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < c.k; ++p) acc += double(c.a[i * c.lda + p]) * c.b[p * c.ldb + j];
      double v = c.alpha * acc + (c.beta == 0 ? 0.0 : c.beta * double(c0[i * c.ldc + j]));
      if (c.bias != nullptr) v += c.bias[j];
      if (c.relu) v = std::max(v, 0.0);
      out[i * c.ldc + j] = float(v);
    }
  }
  return out;
}

// |got - want| within a few ulps of the sum of |terms| (k products), or both equally infinite.
void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, double scale,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i) {
    if (std::isinf(want[i]) && got[i] == want[i]) continue;
    if (!(std::abs(double(got[i]) - want[i]) <= 1e-5 * scale + 1e-6 * std::abs(want[i]))) {
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", want " << want[i];
      ++bad;
    }
  }
}

class Api : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("rooftune_api_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // No database: initial configs, whatever the user's cache holds.
    setenv("ROOFTUNE_DB", (dir_ / "none.db").c_str(), 1);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<rooftune::Context> Open(int threads, const std::string& database = "") {
    std::unique_ptr<rooftune::Context> context;
    const rooftune::Status s = rooftune::Context::Open({database, threads}, &context);
    EXPECT_TRUE(s.ok()) << s.message();
    return context;
  }

  fs::path dir_;
};

struct Shape {
  int64_t m, n, k;
};
// 1, primes, sizes off every register block, K = 1, and one that spans several cache blocks.
const std::vector<Shape> kGemmShapes = {{1, 1, 1},    {1, 17, 5},    {7, 1, 13},  {13, 29, 1},
                                        {31, 37, 41}, {6, 64, 256}, {97, 131, 67}, {200, 300, 517}};

TEST_F(Api, GemmF32MatchesAPlainLoopOnAwkwardShapesStridesAndEpilogues) {
  for (int threads : {1, 2}) {
    if (threads > int(std::thread::hardware_concurrency())) continue;
    auto context = Open(threads);
    ASSERT_NE(context, nullptr);
    for (const Shape& s : kGemmShapes) {
      for (int variant = 0; variant < 4; ++variant) {
        const int64_t pad = variant % 2 == 1 ? 3 : 0;  // leading dimensions past the width
        rooftune::GemmF32Call c{.m = s.m, .n = s.n, .k = s.k};
        c.lda = s.k + pad, c.ldb = s.n + pad, c.ldc = s.n + pad;
        const std::vector<float> a = RandomFloats(size_t(s.m * c.lda), 1);
        const std::vector<float> b = RandomFloats(size_t(s.k * c.ldb), 2);
        const std::vector<float> bias = RandomFloats(size_t(s.n), 3);
        std::vector<float> out = RandomFloats(size_t(s.m * c.ldc), 4);
        c.a = a.data(), c.b = b.data(), c.c = out.data();
        c.alpha = variant >= 2 ? 0.5f : 1.0f;
        c.beta = variant == 3 ? 2.0f : 0.0f;
        c.bias = variant >= 1 ? bias.data() : nullptr;
        c.relu = variant >= 2;
        const std::vector<float> want = PlainGemm(c, out);
        const rooftune::Status status = context->Gemm(c);
        ASSERT_TRUE(status.ok()) << status.message();
        ExpectClose(out, want, double(s.k) + 2,
                    "gemm " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                        std::to_string(s.k) + " variant " + std::to_string(variant));
      }
    }
  }
}

TEST_F(Api, GemmF32ReluWithoutABiasAndValuesThatOverflow) {
  auto context = Open(1);
  rooftune::GemmF32Call c{.m = 5, .n = 19, .k = 11};
  const std::vector<float> a = RandomFloats(5 * 11, 7), b = RandomFloats(11 * 19, 8);
  std::vector<float> out(5 * 19, NAN);  // beta = 0 never reads C
  c.a = a.data(), c.b = b.data(), c.c = out.data(), c.relu = true;
  ASSERT_TRUE(context->Gemm(c).ok());
  ExpectClose(out, PlainGemm(c, out), 13, "relu without bias");
  for (float v : out) EXPECT_GE(v, 0.0f);
  // Products of 1e30 overflow to +inf in the kernel as in the loop.
  const std::vector<float> huge_a(5 * 11, 1e30f), huge_b(11 * 19, 1e30f);
  c.a = huge_a.data(), c.b = huge_b.data(), c.relu = false;
  ASSERT_TRUE(context->Gemm(c).ok());
  for (float v : out) EXPECT_EQ(v, INFINITY);
}

// y = sa * s[j] * (A W - za * colsum[j]) + bias[j], exactly in integers before the scales.
std::vector<float> PlainGemmU8S8(int64_t m, int64_t n, int64_t k, const std::vector<uint8_t>& a,
                                 const std::vector<int8_t>& w, const std::vector<float>& scales,
                                 float sa, int32_t za, const float* bias, bool relu) {
  std::vector<float> y(size_t(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t acc = 0, colsum = 0;
      for (int64_t p = 0; p < k; ++p) {
        acc += int64_t(a[i * k + p]) * w[p * n + j];
        colsum += w[p * n + j];
      }
      double v = double(sa) * scales[j] * double(acc - int64_t(za) * colsum);
      if (bias != nullptr) v += bias[j];
      if (relu) v = std::max(v, 0.0);
      y[i * n + j] = float(v);
    }
  }
  return y;
}

TEST_F(Api, GemmU8S8MatchesExactIntegersIncludingTheFullRange) {
  auto context = Open(0);  // every CPU
  ASSERT_NE(context, nullptr);
  for (const Shape& s : kGemmShapes) {
    for (bool extreme : {false, true}) {
      std::mt19937_64 rng(s.m * 131 + s.n);
      std::uniform_int_distribution<int> ua(0, 255), uw(-128, 127);
      std::vector<uint8_t> a(size_t(s.m * s.k));
      std::vector<int8_t> w(size_t(s.k * s.n));
      for (auto& v : a) v = extreme ? 255 : uint8_t(ua(rng));
      for (auto& v : w) v = extreme ? -128 : int8_t(uw(rng));
      const std::vector<float> scales = RandomFloats(size_t(s.n), 5, 0.001f, 0.01f);
      const std::vector<float> bias = RandomFloats(size_t(s.n), 6);
      std::shared_ptr<const rooftune::WeightsS8> weights;
      ASSERT_TRUE(
          context->PrepareWeightsS8(w.data(), s.k, s.n, 0, scales.data(), &weights).ok());
      ASSERT_EQ(weights->k(), s.k);
      ASSERT_EQ(weights->n(), s.n);
      for (bool relu : {false, true}) {
        std::vector<float> y(size_t(s.m * s.n), NAN);
        rooftune::GemmU8S8Call c{.m = s.m, .a = a.data(), .scale_a = 0.02f,
                                 .zero_point_a = 7, .weights = weights.get(), .y = y.data(),
                                 .bias = relu ? nullptr : bias.data(), .relu = relu};
        const rooftune::Status status = context->Gemm(c);
        ASSERT_TRUE(status.ok()) << status.message();
        const std::vector<float> want = PlainGemmU8S8(s.m, s.n, s.k, a, w, scales, 0.02f, 7,
                                                      c.bias, relu);
        ExpectClose(y, want, 1e-2 * double(s.k) * 255 * 128 * 0.01 * 0.02 + 1,
                    "u8s8 " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                        std::to_string(s.k));
      }
    }
  }
}

TEST_F(Api, GemvF32AndS8MatchAPlainLoop) {
  auto context = Open(1);
  for (const Shape& s : std::vector<Shape>{{1, 1, 1}, {1, 7, 1}, {1, 1, 9}, {1, 61, 127},
                                           {1, 300, 257}, {1, 1024, 1000}}) {
    const int64_t n = s.n, k = s.k, ldw = k + 5;
    const std::vector<float> wf = RandomFloats(size_t(n * ldw), 11), x = RandomFloats(size_t(k), 12);
    const std::vector<float> bias = RandomFloats(size_t(n), 13);
    const std::vector<float> scales = RandomFloats(size_t(n), 14, 0.001f, 0.02f);
    std::vector<int8_t> ws(size_t(n * ldw));
    std::mt19937_64 rng(n);
    for (auto& v : ws) v = int8_t(std::uniform_int_distribution<int>(-128, 127)(rng));
    for (bool relu : {false, true}) {
      std::vector<float> y(size_t(n), NAN), want(static_cast<size_t>(n)),
          want_s8(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        double acc = 0, acc_s8 = 0;
        for (int64_t p = 0; p < k; ++p) {
          acc += double(wf[i * ldw + p]) * x[p];
          acc_s8 += double(ws[i * ldw + p]) * x[p];
        }
        acc += bias[i];
        acc_s8 = scales[i] * acc_s8 + bias[i];
        want[i] = float(relu ? std::max(acc, 0.0) : acc);
        want_s8[i] = float(relu ? std::max(acc_s8, 0.0) : acc_s8);
      }
      rooftune::GemvF32Call f{.n = n, .k = k, .w = wf.data(), .ldw = ldw, .x = x.data(),
                              .y = y.data(), .bias = bias.data(), .relu = relu};
      ASSERT_TRUE(context->Gemv(f).ok());
      ExpectClose(y, want, double(k) + 1, "gemv f32 " + std::to_string(n) + "x" + std::to_string(k));
      rooftune::GemvS8Call q{.n = n, .k = k, .w = ws.data(), .ldw = ldw,
                             .row_scales = scales.data(), .x = x.data(), .y = y.data(),
                             .bias = bias.data(), .relu = relu};
      ASSERT_TRUE(context->Gemv(q).ok());
      ExpectClose(y, want_s8, 3 * double(k) + 1,
                  "gemv s8 " + std::to_string(n) + "x" + std::to_string(k));
    }
  }
}

// Bad input is an error value, checked before any work: the output is untouched.
TEST_F(Api, BadCallsAreErrorValuesThatTouchNothing) {
  auto context = Open(1);
  const std::vector<float> a(64, 1), b(64, 1);
  std::vector<float> out(64, 42);
  auto expect_invalid = [&](const rooftune::GemmF32Call& c, const std::string& says) {
    const rooftune::Status s = context->Gemm(c);
    EXPECT_EQ(s.code(), rooftune::StatusCode::kInvalidArgument) << says;
    EXPECT_NE(s.message().find(says), std::string::npos) << s.message();
    for (float v : out) ASSERT_EQ(v, 42);
  };
  const rooftune::GemmF32Call good{.m = 4, .n = 4, .k = 4, .a = a.data(), .b = b.data(),
                                   .c = out.data()};
  rooftune::GemmF32Call c = good;
  c.m = 0;
  expect_invalid(c, "m must be at least 1 (got 0)");
  c = good, c.k = -3;
  expect_invalid(c, "k must be at least 1 (got -3)");
  c = good, c.b = nullptr;
  expect_invalid(c, "b is null");
  c = good, c.lda = 3;
  expect_invalid(c, "lda (3) is below the row's width (4)");
  c = good, c.ldc = 2;
  expect_invalid(c, "ldc (2) is below");
  c = good, c.m = int64_t(1) << 40, c.lda = int64_t(1) << 40;
  expect_invalid(c, "too large to address");

  rooftune::GemmU8S8Call q{.m = 2, .a = nullptr, .weights = nullptr, .y = out.data()};
  EXPECT_EQ(context->Gemm(q).code(), rooftune::StatusCode::kInvalidArgument);
  std::shared_ptr<const rooftune::WeightsS8> weights;
  const std::vector<int8_t> w(16, 1);
  const std::vector<float> scales(4, 1);
  EXPECT_EQ(context->PrepareWeightsS8(w.data(), 4, 4, 2, scales.data(), &weights).code(),
            rooftune::StatusCode::kInvalidArgument);
  EXPECT_EQ(context->PrepareWeightsS8(w.data(), 4, 4, 0, nullptr, &weights).code(),
            rooftune::StatusCode::kInvalidArgument);
  EXPECT_EQ(weights, nullptr);
  // Weights that could overflow the s32 accumulator at this depth are refused up front.
  const int64_t deep = 65794;
  std::vector<int8_t> full(deep, -128), half(deep, -64);
  const rooftune::Status overflow =
      context->PrepareWeightsS8(full.data(), deep, 1, 0, scales.data(), &weights);
  EXPECT_EQ(overflow.code(), rooftune::StatusCode::kInvalidArgument);
  EXPECT_NE(overflow.message().find("overflow the s32 accumulator"), std::string::npos)
      << overflow.message();
  EXPECT_TRUE(context->PrepareWeightsS8(half.data(), deep, 1, 0, scales.data(), &weights).ok());
  weights.reset();
  rooftune::GemvF32Call g{.n = 4, .k = 4, .w = a.data(), .ldw = 2, .x = b.data(), .y = out.data()};
  EXPECT_EQ(context->Gemv(g).code(), rooftune::StatusCode::kInvalidArgument);
  rooftune::GemvS8Call s8{.n = 4, .k = 4, .w = w.data(), .x = b.data(), .y = out.data()};
  EXPECT_NE(context->Gemv(s8).message().find("row_scales is null"), std::string::npos);
  for (float v : out) ASSERT_EQ(v, 42);
}

TEST_F(Api, OpeningABadDatabaseOrThreadCountIsAnErrorNamingIt) {
  std::unique_ptr<rooftune::Context> context;
  rooftune::Status s = rooftune::Context::Open({"", -1}, &context);
  EXPECT_EQ(s.code(), rooftune::StatusCode::kInvalidArgument);
  s = rooftune::Context::Open({"", 100000}, &context);
  EXPECT_EQ(s.code(), rooftune::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("threads must be between 1 and"), std::string::npos) << s.message();

  const std::string missing = (dir_ / "missing.db").string();
  s = rooftune::Context::Open({missing, 1}, &context);
  EXPECT_EQ(s.code(), rooftune::StatusCode::kNotFound);
  EXPECT_NE(s.message().find(missing), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(missing));  // never created

  const fs::path garbage = dir_ / "garbage.db";
  std::ofstream(garbage) << "not a database at all, but long enough to look like a file header";
  s = rooftune::Context::Open({garbage.string(), 1}, &context);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(garbage.string()), std::string::npos) << s.message();

  // Another application's SQLite file is refused and left exactly as it was.
  const fs::path foreign = dir_ / "foreign.db";
  ASSERT_EQ(std::system(("python3 -c \"import sqlite3; c = sqlite3.connect('" + foreign.string() +
                         "'); c.execute('create table t (x)'); c.commit()\"")
                            .c_str()),
            0);
  std::stringstream before;
  before << std::ifstream(foreign, std::ios::binary).rdbuf();
  s = rooftune::Context::Open({foreign.string(), 1}, &context);
  EXPECT_EQ(s.code(), rooftune::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("is not a rooftune tuning database"), std::string::npos)
      << s.message();
  std::stringstream after;
  after << std::ifstream(foreign, std::ios::binary).rdbuf();
  EXPECT_EQ(before.str(), after.str());
  EXPECT_EQ(context, nullptr);
}

// Writes this machine's profile (facts only) and one tuned row, as `rooftune tune` stores them.
void SeedRow(const std::string& path, const std::string& kernel, const std::string& workload,
             const std::string& dtype, int threads, const std::string& config) {
  auto db = rooftune::TuningDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status();
  const rooftune::MachineProfile facts = rooftune::probes::ReadSystemFacts();
  ASSERT_TRUE((*db)->PutProfile(facts.Fingerprint(), facts.ToJson().dump()).ok());
  rooftune::TunedResult row;
  row.fingerprint = facts.Fingerprint();
  absl::StatusOr<rooftune::Dtype> parsed = rooftune::ParseDtype(dtype);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  row.kernel = kernel, row.workload = workload, row.dtype = *parsed, row.threads = threads;
  row.config = config;
  ASSERT_TRUE((*db)->Put(row).ok());
}

bool HasItem(const std::string& config, const std::string& item) {
  std::stringstream items(config);
  std::string each;
  while (std::getline(items, each, ',')) {
    if (each == item) return true;
  }
  return false;
}

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
    other.kernel = "gemm_f32", other.workload = initial.workload, other.dtype = rooftune::Dtype::kF32;
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
        ASSERT_TRUE(context0->Explain(rooftune::GemvS8Call{.n = c.n, .k = c.k, .relu = true}, &e).ok());
      } else {
        ASSERT_TRUE(context0->Explain(rooftune::GemvF32Call{.n = c.n, .k = c.k, .relu = true}, &e).ok());
      }
      SeedRow(db, s8 ? "gemv_s8" : "gemv_f32", e.workload, dtype, 1, c.tuned);
    }
  }
  auto context = Open(1, db);
  ASSERT_NE(context, nullptr);
  for (const Case& c : cases) {
    const int64_t n = c.n, k = c.k, ldw = k + 3;
    const std::string packw = c.tuned.substr(0, c.tuned.find(','));
    const std::vector<float> wf = RandomFloats(size_t(n * ldw), 21), x = RandomFloats(size_t(k), 22);
    const std::vector<float> bias = RandomFloats(size_t(n), 23);
    const std::vector<float> scales = RandomFloats(size_t(n), 24, 0.001f, 0.02f);
    std::vector<int8_t> ws(size_t(n * ldw));
    std::mt19937_64 rng(k);
    for (auto& v : ws) v = int8_t(std::uniform_int_distribution<int>(-128, 127)(rng));
    std::vector<float> want(static_cast<size_t>(n)), want_s8(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      double acc = bias[i], acc_s8 = 0;
      for (int64_t p = 0; p < k; ++p) {
        acc += double(wf[i * ldw + p]) * x[p];
        acc_s8 += double(ws[i * ldw + p]) * x[p];
      }
      want[i] = float(std::max(acc, 0.0));
      want_s8[i] = float(std::max(scales[i] * acc_s8 + bias[i], 0.0));
    }
    const std::string what = std::to_string(n) + "x" + std::to_string(k) + " " + c.tuned;

    rooftune::GemvF32Call f{.n = n, .k = k, .w = wf.data(), .ldw = ldw, .bias = bias.data(),
                            .relu = true};
    std::shared_ptr<const rooftune::GemvWeights> pf;
    ASSERT_TRUE(context->PrepareGemvWeights(f, &pf).ok()) << what;
    EXPECT_EQ(pf->n(), n);
    EXPECT_EQ(pf->k(), k);
    EXPECT_FALSE(pf->s8());
    std::vector<float> source = wf;
    std::fill(source.begin(), source.end(), NAN);  // the prepared copy must not read the caller's
    std::vector<float> y(size_t(n), NAN);
    const rooftune::GemvF32Call run{.weights = pf.get(), .x = x.data(), .y = y.data(),
                                    .bias = bias.data(), .relu = true};
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
      EXPECT_NE(in_place.reason.find(packw + " needs weights prepared ahead"), std::string::npos)
          << in_place.ToString();
    }

    rooftune::GemvS8Call q{.n = n, .k = k, .w = ws.data(), .ldw = ldw, .row_scales = scales.data(),
                           .bias = bias.data(), .relu = true};
    std::shared_ptr<const rooftune::GemvWeights> pq;
    ASSERT_TRUE(context->PrepareGemvWeights(q, &pq).ok()) << what;
    EXPECT_TRUE(pq->s8());
    std::fill(y.begin(), y.end(), NAN);
    const rooftune::GemvS8Call run_s8{.n = n, .weights = pq.get(), .x = x.data(), .y = y.data(),
                                      .bias = bias.data(), .relu = true};
    ASSERT_TRUE(context->Explain(run_s8, &e).ok());
    EXPECT_EQ(e.kernel, "gemv_s8");
    EXPECT_TRUE(HasItem(e.config, packw)) << e.ToString();
    ASSERT_TRUE(context->Gemv(run_s8).ok()) << what;
    ExpectClose(y, want_s8, 3 * double(k) + 1, "prepared gemv s8 " + what);
  }
}

TEST_F(Api, PreparedGemvWeightsRefuseAnotherShapeOrType) {
  auto context = Open(1);
  const std::vector<float> w = RandomFloats(12 * 5, 1), x = RandomFloats(5, 2);
  const std::vector<int8_t> w8(12 * 5, 1);
  std::vector<float> y(12, 7.0f);
  std::shared_ptr<const rooftune::GemvWeights> f32, s8;
  ASSERT_TRUE(context->PrepareGemvWeights(rooftune::GemvF32Call{.n = 12, .k = 5, .w = w.data()}, &f32).ok());
  rooftune::Status s = context->PrepareGemvWeights(
      rooftune::GemvS8Call{.n = 12, .k = 5, .w = w8.data()}, &s8);
  EXPECT_EQ(s.code(), rooftune::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("row_scales is null"), std::string::npos) << s.message();
  EXPECT_EQ(s8, nullptr);
  s = context->PrepareGemvWeights(rooftune::GemvF32Call{.n = 12, .k = 5}, &s8);
  EXPECT_NE(s.message().find("w is null"), std::string::npos) << s.message();
  s = context->PrepareGemvWeights(rooftune::GemvF32Call{.n = 12, .k = 5, .w = w.data(), .ldw = 4}, &s8);
  EXPECT_NE(s.message().find("ldw (4) is below"), std::string::npos) << s.message();
  s = context->PrepareGemvWeights(
      rooftune::GemvF32Call{.n = 12, .k = 5, .weights = f32.get()}, &s8);
  EXPECT_NE(s.message().find("prepared already"), std::string::npos) << s.message();
  EXPECT_EQ(context->PrepareGemvWeights(rooftune::GemvF32Call{.n = 12, .k = 5, .w = w.data()},
                                        nullptr).code(),
            rooftune::StatusCode::kInvalidArgument);

  s = context->Gemv(rooftune::GemvF32Call{.n = 11, .weights = f32.get(), .x = x.data(), .y = y.data()});
  EXPECT_EQ(s.code(), rooftune::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("n x k (11 x 5) is not the prepared weights' (12 x 5)"),
            std::string::npos) << s.message();
  const std::vector<float> scales(12, 1.0f);
  s = context->Gemv(rooftune::GemvS8Call{.row_scales = scales.data(), .weights = f32.get(),
                                         .x = x.data(), .y = y.data()});
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
        const std::vector<float> a = RandomFloats(size_t(m * k), t), b = RandomFloats(size_t(k * n), round);
        std::vector<float> out(size_t(m * n));
        rooftune::GemmF32Call c{.m = m, .n = n, .k = k, .a = a.data(), .b = b.data(),
                                .c = out.data()};
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
  EXPECT_NE(after.config, before.config) << "the tune stored nothing new: " << output.str();
  EXPECT_GT(reads, 0);
  for (const std::string& config : seen) {
    EXPECT_TRUE(config == before.config || config == after.config) << config;
  }
}

// After a shape's first call, its calls allocate nothing: the plan comes from memory.
TEST_F(Api, RepeatedCallsOfAShapeAllocateNothing) {
  for (int threads : {1, 2}) {
    if (threads > int(std::thread::hardware_concurrency())) continue;
    auto context = Open(threads);
    const std::vector<float> a = RandomFloats(64 * 64, 1), b = RandomFloats(64 * 64, 2);
    std::vector<float> out(64 * 64);
    std::vector<uint8_t> a8(64 * 64, 3);
    const std::vector<int8_t> w8(64 * 64, -2);
    std::shared_ptr<const rooftune::WeightsS8> weights;
    ASSERT_TRUE(context->PrepareWeightsS8(w8.data(), 64, 64, 0, a.data(), &weights).ok());
    const rooftune::GemmF32Call gemm{.m = 64, .n = 64, .k = 64, .a = a.data(), .b = b.data(),
                                     .c = out.data(), .relu = true};
    const rooftune::GemmU8S8Call layer{.m = 64, .a = a8.data(), .weights = weights.get(),
                                       .y = out.data()};
    const rooftune::GemvF32Call gemv{.n = 64, .k = 64, .w = a.data(), .x = b.data(),
                                     .y = out.data()};
    std::shared_ptr<const rooftune::GemvWeights> prepared;
    ASSERT_TRUE(context->PrepareGemvWeights(gemv, &prepared).ok());
    const rooftune::GemvF32Call decode{.weights = prepared.get(), .x = b.data(), .y = out.data()};
    auto calls = [&] {
      return context->Gemm(gemm).ok() && context->Gemm(layer).ok() && context->Gemv(gemv).ok() &&
             context->Gemv(decode).ok();
    };
    ASSERT_TRUE(calls());  // first calls: plans made, buffers sized
    allocations = 0;
    counting = true;
    bool ok = true;
    for (int i = 0; i < 10; ++i) ok = calls() && ok;
    counting = false;
    EXPECT_TRUE(ok);
    EXPECT_EQ(allocations.load(), 0) << threads << " thread(s)";
  }
}

TEST_F(Api, TheLibraryIsTheVersionOfItsHeader) {
  EXPECT_EQ(std::string(rooftune::LibraryVersion()),
            std::to_string(ROOFTUNE_VERSION_MAJOR) + "." + std::to_string(ROOFTUNE_VERSION_MINOR) +
                "." + std::to_string(ROOFTUNE_VERSION_PATCH));
}

}  // namespace

namespace {

#if defined(ROOFTUNE_BUILD_DIR) && defined(ROOFTUNE_SOURCE_DIR)

struct Output {
  int status;
  std::string text;
};

Output Shell(const std::string& command) {
  Output o{0, ""};
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) o.text.append(buffer, n);
  const int status = pclose(pipe);
  o.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

// The explain lines a consumer run printed, by kernel: "gemm_f32" -> the whole line.
std::map<std::string, std::string> ExplainLines(const std::string& output) {
  std::map<std::string, std::string> lines;
  std::stringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("explain: ", 0) == 0) {
      const std::string rest = line.substr(9);
      lines[rest.substr(0, rest.find(' '))] = rest;
    }
  }
  return lines;
}

std::string ConfigOf(const std::string& explain_line) {
  return explain_line.substr(explain_line.rfind("): ") + 3);
}

std::string WorkloadOf(const std::string& explain_line) {
  const size_t start = explain_line.find(' ') + 1;
  return explain_line.substr(start, explain_line.find(',') - start);
}

// The out-of-tree example (examples/consumer) copied out of the source tree, configured and
// built against an installed prefix only, then run without a database and with tuned rows for
// the three calls it makes: it must use them. pkg-config finds the same library.
TEST_F(Api, AnOutOfTreeProgramBuildsAgainstTheInstalledPackageAndRunsTheTunedConfigs) {
  const fs::path prefix = dir_ / "prefix", source = dir_ / "consumer", build = dir_ / "build";
  Output o = Shell("cmake --install " + std::string(ROOFTUNE_BUILD_DIR) + " --prefix " +
                   prefix.string());
  ASSERT_EQ(o.status, 0) << o.text;
  for (const char* file : {"include/rooftune/rooftune.h", "lib/cmake/rooftune/rooftuneConfig.cmake",
                           "lib/cmake/rooftune/rooftuneConfigVersion.cmake",
                           "lib/pkgconfig/rooftune.pc", "bin/rooftune"}) {
    EXPECT_TRUE(fs::exists(prefix / file)) << file;
  }
  fs::copy(fs::path(ROOFTUNE_SOURCE_DIR) / "examples" / "consumer", source);
  o = Shell("cmake -S " + source.string() + " -B " + build.string() +
            " -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=" + prefix.string() +
            " && cmake --build " + build.string());
  ASSERT_EQ(o.status, 0) << o.text;
  const std::string consumer = (build / "consumer").string();

  o = Shell("ROOFTUNE_DB=" + (dir_ / "none.db").string() + " " + consumer);
  ASSERT_EQ(o.status, 0) << o.text;
  std::map<std::string, std::string> lines = ExplainLines(o.text);
  ASSERT_EQ(lines.size(), 3u) << o.text;
  for (const auto& [kernel, line] : lines) {
    EXPECT_NE(line.find(": initial ("), std::string::npos) << line;
  }
  EXPECT_EQ(std::count(o.text.begin(), o.text.end(), '\n'), 7) << o.text;  // banner, 3 x 2

  // Rows for exactly those workloads, each with a parameter moved off the initial config.
  const std::string db = (dir_ / "tuned.db").string();
  const std::map<std::string, std::pair<std::string, std::string>> moved = {
      {"gemm_f32", {"KC=64", "KC=128"}},
      {"gemm_s8", {"PAR=rows", "PAR=columns"}},
      {"gemv_f32", {"PACKW=grouped", "PACKW=copied"}}};
  std::map<std::string, std::string> seeded;
  for (const auto& [kernel, choices] : moved) {
    const std::string& line = lines[kernel];
    const std::string item = HasItem(ConfigOf(line), choices.first) ? choices.second : choices.first;
    const std::string workload = WorkloadOf(line);
    std::stringstream tokens(workload);  // "gemm 67x45x31 f32 bias_relu"
    std::string op, shape, dtype;
    tokens >> op >> shape >> dtype;
    SeedRow(db, kernel, workload, dtype, 1, item);
    seeded[kernel] = item;
  }
  o = Shell("ROOFTUNE_DB=" + db + " " + consumer + " --threads 1");
  ASSERT_EQ(o.status, 0) << o.text;
  EXPECT_NE(o.text.find(", 3 tuned rows,"), std::string::npos) << o.text;
  lines = ExplainLines(o.text);
  ASSERT_EQ(lines.size(), 3u) << o.text;
  for (const auto& [kernel, item] : seeded) {
    EXPECT_NE(lines[kernel].find(": tuned ("), std::string::npos) << lines[kernel];
    EXPECT_TRUE(HasItem(ConfigOf(lines[kernel]), item)) << item << " in " << lines[kernel];
  }
  // The same through --db, and a missing --db is an error naming it (exit 2, nothing run).
  o = Shell(consumer + " --db " + db);
  EXPECT_EQ(o.status, 0) << o.text;
  o = Shell(consumer + " --db " + (dir_ / "absent.db").string());
  EXPECT_EQ(o.status, 2) << o.text;
  EXPECT_NE(o.text.find("no tuning database at " + (dir_ / "absent.db").string()),
            std::string::npos)
      << o.text;

  // pkg-config gives the flags a Makefile would use.
  if (Shell("pkg-config --version").status == 0) {
    o = Shell("PKG_CONFIG_PATH=" + (prefix / "lib" / "pkgconfig").string() +
              " sh -c 'c++ -std=c++20 " + (source / "main.cc").string() + " -o " +
              (dir_ / "consumer_pc").string() +
              " $(pkg-config --cflags --libs rooftune) -Wl,-rpath,$(pkg-config "
              "--variable=libdir rooftune)'");
    ASSERT_EQ(o.status, 0) << o.text;
    o = Shell("ROOFTUNE_DB=" + db + " " + (dir_ / "consumer_pc").string());
    EXPECT_EQ(o.status, 0) << o.text;
    EXPECT_NE(o.text.find(", 3 tuned rows,"), std::string::npos) << o.text;
  }
}

#endif

}  // namespace
