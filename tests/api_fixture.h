// The library API tests' fixture: a temporary folder and no database for each test, a context
// opened on it, and a database seeded as `rooftune tune` writes it. Shared by the api_*_test.cc
// files.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "framework/tuning_db.h"
#include "probes/system_facts.h"
#include "rooftune/rooftune.h"

namespace rooftune::api_testing {

namespace fs = std::filesystem;

inline std::vector<float> RandomFloats(size_t count, uint64_t seed, float lo = -1, float hi = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(count);
  for (float& x : v) x = u(rng);
  return v;
}

// C = alpha A B + beta C (+ bias, ReLU), in double.
inline std::vector<float> PlainGemm(rooftune::GemmF32Call c, const std::vector<float>& c0) {
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
inline void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, double scale,
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

// Writes this machine's profile (facts only) and one tuned row, as `rooftune tune` stores them.
// A tuned row of `config` for this machine; `config_schema` is the version of the kernel's
// parameters it was tuned with (`rooftune list --json` gives each kernel's).
inline void SeedRow(const std::string& path, const std::string& kernel, const std::string& workload,
                    const std::string& dtype, int threads, const std::string& config,
                    int config_schema = 1) {
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
  row.config_schema = config_schema;
  ASSERT_TRUE((*db)->Put(row).ok());
}

inline bool HasItem(const std::string& config, const std::string& item) {
  std::stringstream items(config);
  std::string each;
  while (std::getline(items, each, ',')) {
    if (each == item) return true;
  }
  return false;
}

}  // namespace rooftune::api_testing
