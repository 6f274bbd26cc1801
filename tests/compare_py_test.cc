// Google Benchmark's own tools/compare.py (Debian's libbenchmark-tools, which scripts/setup.sh
// installs) must read what `rooftune bench --json` and the bench binaries write: users diff two
// runs with it. Each test writes two outputs and has compare.py compare them.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"

namespace {

namespace fs = std::filesystem;

// Debian's interpreter: compare.py needs its numpy and scipy (python3-scipy).
constexpr char kPython[] = "/usr/bin/python3";
constexpr char kComparePy[] = "/usr/share/benchmark/compare.py";

struct Outcome {
  int status = -1;
  std::string out;
};

class ComparePy : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("rooftune_compare_py_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  // Runs `command` in the suite's folder, against its own tuning database; its stdout goes to
  // `out` (default: the outcome's, with stderr).
  static Outcome Shell(const std::string& command, const fs::path& stdout_file = "") {
    const fs::path out = dir_ / "output";
    const std::string line =
        "cd " + dir_.string() + " && ROOFTUNE_DB=" + (dir_ / "tuning.db").string() + " " + command +
        (stdout_file.empty() ? " >" + out.string() + " 2>&1"
                             : " >" + stdout_file.string() + " 2>" + out.string());
    const int raw = std::system(line.c_str());
    Outcome o;
    o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
    std::ifstream in(out);
    std::stringstream s;
    s << in.rdbuf();
    o.out = s.str();
    return o;
  }

  // compare.py benchmarks A B: succeeds and lists `name`, the first row of A.
  static void ExpectComparePyReads(const fs::path& a, const fs::path& b) {
    ASSERT_TRUE(fs::exists(kComparePy)) << kComparePy << " missing: scripts/setup.sh installs "
                                        << "libbenchmark-tools";
    std::ifstream in(a);
    const nlohmann::json first = nlohmann::json::parse(in);
    ASSERT_FALSE(first["benchmarks"].empty());
    const std::string name = first["benchmarks"][0]["name"];
    const Outcome o = Shell(std::string(kPython) + " " + kComparePy + " benchmarks " + a.string() +
                            " " + b.string());
    EXPECT_EQ(o.status, 0) << o.out;
    EXPECT_NE(o.out.find("Comparing"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find(name), std::string::npos) << name << " not compared:\n" << o.out;
  }

  static fs::path dir_;
};
fs::path ComparePy::dir_;

TEST_F(ComparePy, ReadsRooftuneBenchJson) {
  for (const char* file : {"one.json", "two.json"}) {
    const Outcome o =
        Shell(std::string(ROOFTUNE_BINARY) + " bench --kernel gemm_f32 --shape 37x29x1 --json",
              dir_ / file);
    ASSERT_EQ(o.status, 0) << o.out;
  }
  std::ifstream in(dir_ / "one.json");
  const nlohmann::json run = nlohmann::json::parse(in);
  // The trial's row, then Google Benchmark's four aggregates over its calls.
  ASSERT_EQ(run["benchmarks"].size(), 5u) << run.dump(2);
  const nlohmann::json& row = run["benchmarks"][0];
  EXPECT_EQ(row["run_type"], "iteration");
  EXPECT_GT(row["iterations"].get<int>(), 0);
  EXPECT_GT(row["real_time"].get<double>(), 0);
  EXPECT_GT(row["cpu_time"].get<double>(), 0);
  EXPECT_EQ(row["time_unit"], "ns");
  const std::string name = row["name"];
  std::vector<std::string> aggregates;
  for (size_t i = 1; i < run["benchmarks"].size(); ++i) {
    const nlohmann::json& a = run["benchmarks"][i];
    EXPECT_EQ(a["run_type"], "aggregate");
    EXPECT_EQ(a["run_name"], name);
    EXPECT_EQ(a["name"], name + "_" + a["aggregate_name"].get<std::string>());
    aggregates.push_back(a["aggregate_name"]);
  }
  EXPECT_EQ(aggregates, (std::vector<std::string>{"mean", "median", "stddev", "cv"}));
  EXPECT_EQ(run["benchmarks"][2]["real_time"], row["real_time"]);  // the median is the figure
  ExpectComparePyReads(dir_ / "one.json", dir_ / "two.json");
}

#ifdef ROOFTUNE_BENCH_BINARIES
// Each bench binary on one small shape, two repetitions, twice.
TEST_F(ComparePy, ReadsEveryBenchBinarysJson) {
  const std::pair<const char*, const char*> benches[] = {
      {GEMM_BENCH, "--shapes=48x40x36"},
      {GEMM_S8_BENCH, "--shapes=48x40x36"},
      {GEMV_BENCH, "--shapes=96x80"},
      {BATCH_SWEEP_BENCH, "--shapes=96x80"},
  };
  for (const auto& [binary, shape] : benches) {
    const std::string stem = fs::path(binary).filename().string();
    SCOPED_TRACE(stem);
    for (const char* run : {"1", "2"}) {
      const fs::path out = dir_ / (stem + run + ".json");
      const Outcome o = Shell(std::string(binary) + " --threads=1 " + shape +
                              " --benchmark_repetitions=2 --benchmark_min_time=0.01"
                              " --benchmark_out_format=json --benchmark_out=" +
                              out.string());
      ASSERT_EQ(o.status, 0) << o.out;
    }
    ExpectComparePyReads(dir_ / (stem + "1.json"), dir_ / (stem + "2.json"));
  }
}
#endif

}  // namespace
