#include "framework/tuning_db.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace rooftune {
namespace {

std::string TempPath(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("rooftune_db_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir / name);
  return (dir / name).string();
}

TunedResult Result(const std::string& workload, int threads, const std::string& config) {
  TunedResult r;
  r.fingerprint = "f00d";
  r.kernel = "gemm_f32";
  r.workload = workload;
  r.dtype = "f32";
  r.threads = threads;
  r.config = config;
  r.median_seconds = 0.001;
  r.ops_per_second = 1e11;
  r.attainment = 0.8;
  r.verdict = "at-bound";
  return r;
}

TEST(TuningDb, RoundTripReplacesTheRowForTheSameKey) {
  const std::string path = TempPath("round_trip.db");
  absl::StatusOr<std::unique_ptr<TuningDb>> db = TuningDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Put(Result("gemm 8x8x8 f32 none", 1, "MR=4")).ok());
  ASSERT_TRUE((*db)->Put(Result("gemm 8x8x8 f32 none", 2, "MR=6")).ok());
  ASSERT_TRUE((*db)->Put(Result("gemm 8x8x8 f32 none", 1, "MR=8")).ok());
  auto got = (*db)->Get("f00d", "gemm_f32", "gemm 8x8x8 f32 none", "f32", 1);
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->config, "MR=8");
  EXPECT_DOUBLE_EQ((*got)->attainment, 0.8);
  EXPECT_FALSE((*got)->created_at.empty());
  auto other_machine = (*db)->Get("beef", "gemm_f32", "gemm 8x8x8 f32 none", "f32", 1);
  ASSERT_TRUE(other_machine.ok());
  EXPECT_FALSE(other_machine->has_value());
  auto all = (*db)->All("f00d");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 2u);

  ASSERT_TRUE((*db)->PutProfile("f00d", R"({"x": 1})").ok());
  auto profile = (*db)->GetProfile("f00d");
  ASSERT_TRUE(profile.ok() && profile->has_value());
  EXPECT_EQ(**profile, R"({"x": 1})");
}

TEST(TuningDb, RefusesAFileThatIsNotADatabase) {
  const std::string path = TempPath("corrupt.db");
  std::ofstream(path) << "this is not an SQLite database, just some text that is long enough "
                         "to fill the header page of one............................................";
  absl::StatusOr<std::unique_ptr<TuningDb>> db = TuningDb::Open(path);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("unreadable or corrupt"), std::string::npos) << db.status();
}

TEST(TuningDb, RefusesAnotherSchemaVersion) {
  const std::string path = TempPath("future.db");
  {
    auto db = TuningDb::Open(path);
    ASSERT_TRUE(db.ok());
  }
  // Pretend a newer rooftune wrote it.
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "UPDATE meta SET value = '99' WHERE key = 'schema_version'", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  auto db = TuningDb::Open(path);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("schema version 99"), std::string::npos) << db.status();
}

TEST(TuningDb, AProcessKilledMidWriteLeavesEarlierResultsIntact) {
  const std::string path = TempPath("killed.db");
  {
    auto db = TuningDb::Open(path);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Put(Result("gemm 1x1x1 f32 none", 1, "MR=4,KEEP=1")).ok());
  }
  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    // Write as fast as possible until killed, so the kill lands inside a transaction.
    auto db = TuningDb::Open(path);
    if (!db.ok()) _exit(3);
    for (int i = 0;; ++i) {
      (*db)->Put(Result("gemm " + std::to_string(i) + "x2x2 f32 none", 1, "MR=6")).IgnoreError();
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the writer exited on its own with " << status;

  auto db = TuningDb::Open(path);  // runs the integrity check and rolls back the hot journal
  ASSERT_TRUE(db.ok()) << db.status();
  auto kept = (*db)->Get("f00d", "gemm_f32", "gemm 1x1x1 f32 none", "f32", 1);
  ASSERT_TRUE(kept.ok());
  ASSERT_TRUE(kept->has_value());
  EXPECT_EQ((*kept)->config, "MR=4,KEEP=1");
  auto all = (*db)->All();
  ASSERT_TRUE(all.ok());
  EXPECT_GT(all->size(), 1u);  // the child did commit some rows before it died
}

TEST(TuningDb, DefaultPathFollowsTheEnvironment) {
  setenv("ROOFTUNE_DB", "/tmp/explicit.db", 1);
  EXPECT_EQ(DefaultTuningDbPath(), "/tmp/explicit.db");
  unsetenv("ROOFTUNE_DB");
  setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(DefaultTuningDbPath(), "/tmp/xdg/rooftune/tuning.db");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(DefaultTuningDbPath(), "/home/someone/.cache/rooftune/tuning.db");
}

}  // namespace
}  // namespace rooftune
