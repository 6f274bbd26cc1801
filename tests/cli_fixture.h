// The CLI tests' fixture: rooftune run as a user runs it, against a database of the suite's own,
// and the databases the tests seed. Shared by the cli_*_test.cc files.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "framework/tuning_db.h"
#include "nlohmann/json.hpp"
#include "probes/system_facts.h"
#include "tests/round_machine.h"

namespace rooftune::cli_testing {

namespace fs = std::filesystem;

struct Outcome {
  int status = -1;
  std::string out, err;
};

class Cli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("rooftune_cli_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static std::string Slurp(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // Runs rooftune with `args` against the suite's own database.
  static Outcome Run(const std::string& args, const std::string& db = "") {
    const fs::path out = dir_ / "stdout", err = dir_ / "stderr";
    const std::string command =
        "cd " + dir_.string() +
        " && ROOFTUNE_DB=" + (db.empty() ? (dir_ / "tuning.db").string() : db) + " " +
        ROOFTUNE_BINARY + " " + args + " >" + out.string() + " 2>" + err.string();
    const int raw = std::system(command.c_str());
    Outcome o;
    o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
    o.out = Slurp(out);
    o.err = Slurp(err);
    return o;
  }

  static void ExpectUsageError(const std::string& args, const std::string& message) {
    const Outcome o = Run(args);
    EXPECT_EQ(o.status, 2) << args << "\n" << o.err;
    EXPECT_NE(o.err.find(message), std::string::npos) << args << "\nstderr: " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "one line: " << o.err;
  }

  static void ExpectUsageErrorWithDb(const std::string& args, const std::string& message,
                                     const fs::path& db) {
    const Outcome o = Run(args, db.string());
    EXPECT_EQ(o.status, 2) << args << "\n" << o.err;
    EXPECT_NE(o.err.find(message), std::string::npos) << args << "\nstderr: " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "one line: " << o.err;
  }

  inline static fs::path dir_;
};

// A database holding this machine's profile (facts only) and two rows, as tune stores them.
inline std::string SeedFleetDb(const fs::path& path, double median_seconds,
                               const std::string& created_at) {
  auto db = rooftune::TuningDb::Open(path.string());
  EXPECT_TRUE(db.ok()) << db.status();
  const rooftune::MachineProfile facts = rooftune::probes::ReadSystemFacts();
  EXPECT_TRUE((*db)->PutProfile(facts.Fingerprint(), facts.ToJson().dump()).ok());
  for (int threads : {1, 2}) {
    rooftune::TunedResult r;
    r.fingerprint = facts.Fingerprint();
    r.kernel = "gemm_f32", r.workload = "gemm 64x64x64 f32 none", r.dtype = rooftune::Dtype::kF32;
    r.threads = threads, r.config = "KC=64";
    r.median_seconds = median_seconds, r.verdict = rooftune::Verdict::Class::kHeadroom,
    r.created_at = created_at;
    r.provenance = R"({"origin":"tuned","rooftune_version":"0.2.0"})";
    EXPECT_TRUE((*db)->Put(r).ok());
  }
  return facts.Fingerprint();
}

// A database holding this machine's facts with the round machine's ceilings (100 GFLOP/s f32,
// 10 GB/s from DRAM: tests/round_machine.h), stored as a quick probe's profile, and `extra` set
// on the profile first (a latency, a clock).
inline void SeedRoundProfile(const fs::path& path,
                             const std::function<void(rooftune::MachineProfile&)>& extra = {}) {
  auto handle = rooftune::TuningDb::Open(path.string());
  ASSERT_TRUE(handle.ok()) << handle.status();
  rooftune::MachineProfile profile = rooftune::probes::ReadSystemFacts();
  profile.ceilings = rooftune::fixtures::RoundMachine().ceilings;
  if (extra) extra(profile);
  nlohmann::json j = profile.ToJson();
  j["probe_quick"] = true;
  ASSERT_TRUE((*handle)->PutProfile(profile.Fingerprint(), j.dump()).ok());
}

}  // namespace rooftune::cli_testing
