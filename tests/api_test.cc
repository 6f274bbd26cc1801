// The library API (include/rooftune/rooftune.h) as a program sees it, linked against
// librooftune.so: every call against a plain loop on awkward shapes, the dispatch of tuned rows
// from a database, bad input as error values, and concurrent use. The database is seeded through
// rooftune's own TuningDb, as `rooftune tune` writes it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "framework/tuning_db.h"
#include "probes/system_facts.h"
#include "rooftune/rooftune.h"

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

#include "tests/api_fixture.h"

namespace rooftune::api_testing {
namespace {

struct Shape {
  int64_t m, n, k;
};
// 1, primes, sizes off every register block, K = 1, and one that spans several cache blocks.
const std::vector<Shape> kGemmShapes = {{1, 1, 1},    {1, 17, 5},   {7, 1, 13},    {13, 29, 1},
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
      ASSERT_TRUE(context->PrepareWeightsS8(w.data(), s.k, s.n, 0, scales.data(), &weights).ok());
      ASSERT_EQ(weights->k(), s.k);
      ASSERT_EQ(weights->n(), s.n);
      for (bool relu : {false, true}) {
        std::vector<float> y(size_t(s.m * s.n), NAN);
        rooftune::GemmU8S8Call c{.m = s.m,
                                 .a = a.data(),
                                 .scale_a = 0.02f,
                                 .zero_point_a = 7,
                                 .weights = weights.get(),
                                 .y = y.data(),
                                 .bias = relu ? nullptr : bias.data(),
                                 .relu = relu};
        const rooftune::Status status = context->Gemm(c);
        ASSERT_TRUE(status.ok()) << status.message();
        const std::vector<float> want =
            PlainGemmU8S8(s.m, s.n, s.k, a, w, scales, 0.02f, 7, c.bias, relu);
        ExpectClose(
            y, want, 1e-2 * double(s.k) * 255 * 128 * 0.01 * 0.02 + 1,
            "u8s8 " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k));
      }
    }
  }
}

TEST_F(Api, GemvF32AndS8MatchAPlainLoop) {
  auto context = Open(1);
  for (const Shape& s : std::vector<Shape>{
           {1, 1, 1}, {1, 7, 1}, {1, 1, 9}, {1, 61, 127}, {1, 300, 257}, {1, 1024, 1000}}) {
    const int64_t n = s.n, k = s.k, ldw = k + 5;
    const std::vector<float> wf = RandomFloats(size_t(n * ldw), 11),
                             x = RandomFloats(size_t(k), 12);
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
      rooftune::GemvF32Call f{.n = n,
                              .k = k,
                              .w = wf.data(),
                              .ldw = ldw,
                              .x = x.data(),
                              .y = y.data(),
                              .bias = bias.data(),
                              .relu = relu};
      ASSERT_TRUE(context->Gemv(f).ok());
      ExpectClose(y, want, double(k) + 1,
                  "gemv f32 " + std::to_string(n) + "x" + std::to_string(k));
      rooftune::GemvS8Call q{.n = n,
                             .k = k,
                             .w = ws.data(),
                             .ldw = ldw,
                             .row_scales = scales.data(),
                             .x = x.data(),
                             .y = y.data(),
                             .bias = bias.data(),
                             .relu = relu};
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
  const rooftune::GemmF32Call good{
      .m = 4, .n = 4, .k = 4, .a = a.data(), .b = b.data(), .c = out.data()};
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
    const rooftune::GemmF32Call gemm{
        .m = 64, .n = 64, .k = 64, .a = a.data(), .b = b.data(), .c = out.data(), .relu = true};
    const rooftune::GemmU8S8Call layer{
        .m = 64, .a = a8.data(), .weights = weights.get(), .y = out.data()};
    const rooftune::GemvF32Call gemv{
        .n = 64, .k = 64, .w = a.data(), .x = b.data(), .y = out.data()};
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
}  // namespace rooftune::api_testing
