// The installed package as a user's out-of-tree program sees it: CMake's find_package and
// pkg-config, and the tuned configs it runs.
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

#include "nlohmann/json.hpp"
#include "tests/api_fixture.h"

namespace rooftune::api_testing {
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
  Output o =
      Shell("cmake --install " + std::string(ROOFTUNE_BUILD_DIR) + " --prefix " + prefix.string());
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

  // Rows for exactly those workloads, each with a parameter moved off the initial config and
  // tuned with the kernel's present parameters (an older version's row would be stale).
  o = Shell((prefix / "bin" / "rooftune").string() + " list --json");
  ASSERT_EQ(o.status, 0) << o.text;
  std::map<std::string, int> schema;
  const nlohmann::json listed = nlohmann::json::parse(o.text, nullptr, false);
  ASSERT_TRUE(listed.contains("kernels")) << o.text.substr(0, 200);
  for (const nlohmann::json& k : listed["kernels"]) {
    schema[k.value("name", "")] = k.value("config_schema", 0);
  }
  const std::string db = (dir_ / "tuned.db").string();
  const std::map<std::string, std::pair<std::string, std::string>> moved = {
      {"gemm_f32", {"KC=64", "KC=128"}},
      {"gemm_s8", {"PAR=rows", "PAR=columns"}},
      {"gemv_f32", {"PACKW=grouped", "PACKW=copied"}}};
  std::map<std::string, std::string> seeded;
  for (const auto& [kernel, choices] : moved) {
    const std::string& line = lines[kernel];
    const std::string item =
        HasItem(ConfigOf(line), choices.first) ? choices.second : choices.first;
    const std::string workload = WorkloadOf(line);
    std::stringstream tokens(workload);  // "gemm 67x45x31 f32 bias_relu"
    std::string op, shape, dtype;
    tokens >> op >> shape >> dtype;
    ASSERT_GT(schema[kernel], 0) << kernel << " in rooftune list --json";
    SeedRow(db, kernel, workload, dtype, 1, item, schema[kernel]);
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
}  // namespace rooftune::api_testing
