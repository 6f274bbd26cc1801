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

TEST(TuningDb, KeepsBothAttainmentsAndThePairsQuartiles) {
  const std::string path = TempPath("paired.db");
  auto db = TuningDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status();
  TunedResult r = Result("gemm 64x64x64 f32 none", 2, "KC=64");
  r.attainment = 0.93, r.profile_attainment = 1.27;
  r.paired_attainment = 0.93, r.paired_low = 0.91, r.paired_high = 0.95, r.paired_pairs = 33;
  r.paired_ceiling = "f32 compute, 2 threads (AVX3 fma)", r.tolerance = 0.05;
  ASSERT_TRUE((*db)->Put(r).ok());
  auto got = (*db)->Get("f00d", "gemm_f32", r.workload, "f32", 2);
  ASSERT_TRUE(got.ok() && got->has_value());
  const TunedResult& g = **got;
  EXPECT_EQ(g.profile_attainment, 1.27);
  EXPECT_EQ(g.paired_attainment, 0.93);
  EXPECT_EQ(g.paired_low, 0.91);
  EXPECT_EQ(g.paired_high, 0.95);
  EXPECT_EQ(g.paired_pairs, 33);
  EXPECT_EQ(g.paired_ceiling, "f32 compute, 2 threads (AVX3 fma)");
  EXPECT_EQ(g.tolerance, 0.05);
}

// A database written before results carried paired attainments is upgraded in place when opened:
// its rows kept, unpaired, and its version raised so that it is not upgraded twice.
TEST(TuningDb, UpgradesAVersionOneDatabaseInPlace) {
  const std::string path = TempPath("v1.db");
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  const char* v1 = R"sql(
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO meta VALUES ('schema_version', '1');
    CREATE TABLE machines (fingerprint TEXT PRIMARY KEY, profile_json TEXT NOT NULL,
      updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')));
    CREATE TABLE results (
      fingerprint TEXT NOT NULL, kernel TEXT NOT NULL, workload TEXT NOT NULL, dtype TEXT NOT NULL,
      threads INTEGER NOT NULL, config TEXT NOT NULL, median_seconds REAL, min_seconds REAL, cv REAL,
      ops_per_second REAL, attainment REAL, verdict TEXT, binding TEXT, cache TEXT,
      initial_config TEXT, initial_median_seconds REAL, configs_tried INTEGER,
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
      PRIMARY KEY (fingerprint, kernel, workload, dtype, threads));
    INSERT INTO results (fingerprint, kernel, workload, dtype, threads, config, median_seconds,
      attainment, verdict) VALUES ('f00d', 'gemm_f32', 'gemm 8x8x8 f32 none', 'f32', 1, 'KC=8',
      0.001, 0.7, 'headroom');
  )sql";
  ASSERT_EQ(sqlite3_exec(raw, v1, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(raw);
  sqlite3_close(raw);
  for (int open = 0; open < 2; ++open) {
    auto db = TuningDb::Open(path);
    ASSERT_TRUE(db.ok()) << db.status();
    auto all = (*db)->All();
    ASSERT_TRUE(all.ok()) << all.status();
    ASSERT_EQ(all->size(), 1u);
    EXPECT_EQ((*all)[0].config, "KC=8");
    EXPECT_EQ((*all)[0].attainment, 0.7);
    EXPECT_EQ((*all)[0].paired_pairs, 0);
  }
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(raw, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &stmt,
                     nullptr);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))),
            std::to_string(kTuningDbSchemaVersion));
  sqlite3_finalize(stmt);
  sqlite3_close(raw);
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
