#include "framework/tuning_db.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "framework/machine_profile.h"
#include "framework/tuning_db_export.h"
#include "nlohmann/json.hpp"
#include "tests/temp_dir.h"

namespace rooftune {
namespace {

std::string TempPath(const std::string& name) {
  const std::filesystem::path path = fixtures::TestTempDir() / name;
  std::filesystem::remove(path);
  return path.string();
}

TunedResult Result(const std::string& workload, int threads, const std::string& config) {
  TunedResult r;
  r.fingerprint = "f00d";
  r.kernel = "gemm_f32";
  r.workload = workload;
  r.dtype = Dtype::kF32;
  r.threads = threads;
  r.config = config;
  r.median_seconds = 0.001;
  r.ops_per_second = 1e11;
  r.attainment = 0.8;
  r.verdict = Verdict::Class::kAtBound;
  r.cache = CacheMode::kWarm;
  return r;
}

TEST(TuningDb, RoundTripReplacesTheRowForTheSameKey) {
  const std::string path = TempPath("round_trip.db");
  absl::StatusOr<std::unique_ptr<TuningDb>> db = TuningDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Put(Result("gemm 8x8x8 f32 none", 1, "MR=4")).ok());
  ASSERT_TRUE((*db)->Put(Result("gemm 8x8x8 f32 none", 2, "MR=6")).ok());
  ASSERT_TRUE((*db)->Put(Result("gemm 8x8x8 f32 none", 1, "MR=8")).ok());
  auto got =
      (*db)->Get("f00d", "gemm_f32", "gemm 8x8x8 f32 none", Dtype::kF32, 1, CacheMode::kWarm);
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->config, "MR=8");
  EXPECT_DOUBLE_EQ((*got)->attainment, 0.8);
  EXPECT_FALSE((*got)->created_at.empty());
  auto other_machine =
      (*db)->Get("beef", "gemm_f32", "gemm 8x8x8 f32 none", Dtype::kF32, 1, CacheMode::kWarm);
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

// tune --threads auto's answers: one per machine, kernel, workload and threads offered, the later
// replacing the earlier; a database written before they were stored, opened read-only, has none.
TEST(TuningDb, ThreadChoicesAreStoredPerWorkloadAndThreadsOffered) {
  const std::string path = TempPath("thread_choices.db");
  {
    absl::StatusOr<std::unique_ptr<TuningDb>> db = TuningDb::Open(path);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE(
        (*db)->PutThreadChoice({"f00d", "gemv_f32", "gemv 64x64 f32 none", 2, 2, 0.05}).ok());
    ASSERT_TRUE(
        (*db)->PutThreadChoice({"f00d", "gemv_f32", "gemv 64x64 f32 none", 2, 1, 0.04}).ok());
    ASSERT_TRUE(
        (*db)->PutThreadChoice({"f00d", "gemv_f32", "gemv 64x64 f32 none", 4, 2, 0.05}).ok());
    ASSERT_TRUE(
        (*db)->PutThreadChoice({"beef", "gemv_f32", "gemv 64x64 f32 none", 2, 1, 0.05}).ok());
  }
  absl::StatusOr<std::unique_ptr<TuningDb>> reader = TuningDb::OpenReadOnly(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  absl::StatusOr<std::vector<TuningDb::ThreadChoice>> choices = (*reader)->ThreadChoices("f00d");
  ASSERT_TRUE(choices.ok()) << choices.status();
  ASSERT_EQ(choices->size(), 2u);
  EXPECT_EQ((*choices)[0].offered, 2);
  EXPECT_EQ((*choices)[0].threads, 1);
  EXPECT_DOUBLE_EQ((*choices)[0].tolerance, 0.04);
  EXPECT_FALSE((*choices)[0].created_at.empty());
  EXPECT_EQ((*choices)[1].offered, 4);

  const std::string old = TempPath("before_thread_choices.db");
  { ASSERT_TRUE(TuningDb::Open(old).ok()); }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(old.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "DROP TABLE thread_choices", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  absl::StatusOr<std::unique_ptr<TuningDb>> old_reader = TuningDb::OpenReadOnly(old);
  ASSERT_TRUE(old_reader.ok()) << old_reader.status();
  choices = (*old_reader)->ThreadChoices("f00d");
  ASSERT_TRUE(choices.ok()) << choices.status();
  EXPECT_TRUE(choices->empty());
}

TEST(TuningDb, RefusesAFileThatIsNotADatabase) {
  const std::string path = TempPath("corrupt.db");
  std::ofstream(path)
      << "this is not an SQLite database, just some text that is long enough "
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

// The row's dtype, verdict and cache mode are enums once read: text that names none of their
// values (a file edited by hand) is refused where it is read, naming the row and the value.
TEST(TuningDb, ARowWhoseEnumTextIsUnknownIsRefusedNamingIt) {
  const struct {
    const char* column;
    const char* value;
    const char* said;
  } cases[] = {{"dtype", "f16", "unknown dtype 'f16'"},
               {"verdict", "great", "verdict 'great' is none of"},
               {"cache", "tepid", "cache mode 'tepid' is neither warm nor cold"}};
  for (const auto& c : cases) {
    const std::string path = TempPath(absl::StrCat("enum_", c.column, ".db"));
    {
      auto db = TuningDb::Open(path);
      ASSERT_TRUE(db.ok()) << db.status();
      ASSERT_TRUE((*db)->Put(Result("gemm 8x8x8 f32 none", 1, "MR=4")).ok());
    }
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
    const std::string edit = absl::StrCat("UPDATE results SET ", c.column, " = '", c.value, "'");
    ASSERT_EQ(sqlite3_exec(raw, edit.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
    auto db = TuningDb::Open(path);
    ASSERT_TRUE(db.ok()) << db.status();
    auto all = (*db)->All("f00d");
    ASSERT_FALSE(all.ok()) << c.column;
    EXPECT_THAT(std::string(all.status().message()),
                testing::AllOf(testing::HasSubstr("the row of gemm_f32 on 'gemm 8x8x8 f32 none'"),
                               testing::HasSubstr(c.said)));
    // Asked to, the reader leaves the row out and says so, keeping the rows that read.
    ASSERT_TRUE((*db)->Put(Result("gemm 9x9x9 f32 none", 1, "MR=4")).ok());
    std::vector<std::string> unreadable;
    auto readable = (*db)->All("f00d", &unreadable);
    ASSERT_TRUE(readable.ok()) << readable.status();
    ASSERT_EQ(readable->size(), 1u);
    EXPECT_EQ(readable->front().workload, "gemm 9x9x9 f32 none");
    ASSERT_EQ(unreadable.size(), 1u);
    EXPECT_THAT(unreadable[0], testing::HasSubstr(c.said));
  }
}

// The cache mode is part of the key: a --warm tune of a shape tuned cold adds a row beside it.
TEST(TuningDb, AColdAndAWarmResultOfOneShapeAreTwoRows) {
  const std::string path = TempPath("cache_key.db");
  auto db = TuningDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status();
  TunedResult cold = Result("gemv 1x4096x4096 f32 none", 1, "ROWS=4");
  cold.cache = CacheMode::kCold;
  TunedResult warm = Result("gemv 1x4096x4096 f32 none", 1, "ROWS=8");
  warm.cache = CacheMode::kWarm;
  ASSERT_TRUE((*db)->Put(cold).ok());
  ASSERT_TRUE((*db)->Put(warm).ok());
  for (const TunedResult* r : {&cold, &warm}) {
    auto got = (*db)->Get("f00d", "gemm_f32", r->workload, Dtype::kF32, 1, r->cache);
    ASSERT_TRUE(got.ok() && got->has_value()) << ToString(r->cache);
    EXPECT_EQ((*got)->config, r->config);
    EXPECT_EQ((*got)->cache, r->cache);
  }
  auto all = (*db)->All("f00d");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 2u);
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
  auto got = (*db)->Get("f00d", "gemm_f32", r.workload, Dtype::kF32, 2, CacheMode::kWarm);
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
  auto kept =
      (*db)->Get("f00d", "gemm_f32", "gemm 1x1x1 f32 none", Dtype::kF32, 1, CacheMode::kWarm);
  ASSERT_TRUE(kept.ok());
  ASSERT_TRUE(kept->has_value());
  EXPECT_EQ((*kept)->config, "MR=4,KEEP=1");
  auto all = (*db)->All();
  ASSERT_TRUE(all.ok());
  EXPECT_GT(all->size(), 1u);  // the child did commit some rows before it died
}

// Killed while provably inside a write transaction (the hook pauses it after its rows, before
// its commit): the file passes the integrity check, holds every row committed before, and not
// the one in flight.
TEST(TuningDb, AKillInsideTheTransactionLosesOnlyThatWrite) {
  const std::string path = TempPath("killed_inside.db");
  const std::string signal_file = TempPath("inside_the_write");
  {
    auto db = TuningDb::Open(path);
    ASSERT_TRUE(db.ok());
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(
          (*db)->Put(Result("gemm " + std::to_string(i + 1) + "x1x1 f32 none", 1, "MR=4")).ok());
    }
  }
  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    setenv("ROOFTUNE_TEST_PAUSE_IN_WRITE", signal_file.c_str(), 1);
    auto db = TuningDb::Open(path);
    if (!db.ok()) _exit(3);
    (*db)->Put(Result("gemm 9x9x9 f32 none", 1, "MR=6")).IgnoreError();
    _exit(4);  // never reached: the hook waits inside the transaction
  }
  while (!std::filesystem::exists(signal_file)) {
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, WNOHANG), 0) << "the writer ended before its commit";
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  auto db = TuningDb::Open(path);  // the integrity check, and the hot journal rolled back
  ASSERT_TRUE(db.ok()) << db.status();
  auto integrity = (*db)->IntegrityCheck();
  ASSERT_TRUE(integrity.ok());
  EXPECT_EQ(*integrity, std::vector<std::string>{"ok"});
  auto all = (*db)->All();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  for (const TunedResult& r : *all) EXPECT_EQ(r.config, "MR=4");
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

namespace rooftune {
namespace {

// A profile as a probe stores it, of a machine with round numbers.
MachineProfile Machine(const std::string& cpu_model) {
  MachineProfile p;
  p.cpu_model = cpu_model;
  p.vendor = "GenuineTest";
  p.isa = {"avx2", "fma"};
  p.physical_cores = 4;
  p.logical_cpus = 4;
  p.os_kernel = "6.1.0-test";
  p.transparent_hugepages = "madvise";
  p.rooftune_version = "0.1.0";
  p.caches = {{1, "Data", 32 << 10, 8, 64, 1}, {2, "Unified", 1 << 20, 16, 64, 1}};
  return p;
}

// A version-2 file (fingerprints that hashed provenance in) is re-keyed by machine identity,
// computed from each machine's stored profile, and its rows take that profile's provenance.
TEST(TuningDb, UpgradesAVersionTwoDatabaseRekeyingRowsByMachineIdentity) {
  const std::string path = TempPath("v2.db");
  const MachineProfile profile = Machine("Test CPU");
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  const std::string v2 = R"sql(
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO meta VALUES ('schema_version', '2');
    CREATE TABLE machines (fingerprint TEXT PRIMARY KEY, profile_json TEXT NOT NULL,
      updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')));
    CREATE TABLE results (
      fingerprint TEXT NOT NULL, kernel TEXT NOT NULL, workload TEXT NOT NULL, dtype TEXT NOT NULL,
      threads INTEGER NOT NULL, config TEXT NOT NULL, median_seconds REAL, min_seconds REAL, cv REAL,
      ops_per_second REAL, attainment REAL, verdict TEXT, binding TEXT, cache TEXT,
      initial_config TEXT, initial_median_seconds REAL, configs_tried INTEGER,
      profile_attainment REAL, paired_attainment REAL, paired_low REAL, paired_high REAL,
      paired_pairs INTEGER, paired_ceiling TEXT, tolerance REAL,
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
      PRIMARY KEY (fingerprint, kernel, workload, dtype, threads));
    INSERT INTO results (fingerprint, kernel, workload, dtype, threads, config, median_seconds)
      VALUES ('0ldf1ngerpr1nt00', 'gemm_f32', 'gemm 8x8x8 f32 none', 'f32', 1, 'KC=8', 0.001);
  )sql";
  ASSERT_EQ(sqlite3_exec(raw, v2.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(raw);
  sqlite3_stmt* insert = nullptr;
  sqlite3_prepare_v2(raw, "INSERT INTO machines (fingerprint, profile_json) VALUES (?, ?)", -1,
                     &insert, nullptr);
  const std::string json = profile.ToJson().dump();
  sqlite3_bind_text(insert, 1, "0ldf1ngerpr1nt00", -1, SQLITE_STATIC);
  sqlite3_bind_text(insert, 2, json.c_str(), -1, SQLITE_STATIC);
  ASSERT_EQ(sqlite3_step(insert), SQLITE_DONE);
  sqlite3_finalize(insert);
  sqlite3_close(raw);

  // Read-only (the library API), it is refused with the way to upgrade it, and left as it was.
  auto read_only = TuningDb::OpenReadOnly(path);
  ASSERT_FALSE(read_only.ok());
  EXPECT_EQ(read_only.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(read_only.status().message().find("schema version 2; this rooftune reads version 4 "
                                              "(a rooftune command that writes to it"),
            std::string::npos)
      << read_only.status();
  auto db = TuningDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status();
  auto rows = (*db)->All(profile.Fingerprint());
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  const TunedResult& row = (*rows)[0];
  EXPECT_EQ(row.config, "KC=8");
  EXPECT_EQ(row.config_schema, 1);
  const nlohmann::json provenance = nlohmann::json::parse(row.provenance);
  EXPECT_EQ(provenance["rooftune_version"], "0.1.0");
  EXPECT_EQ(provenance["os_kernel"], "6.1.0-test");
  EXPECT_EQ(provenance["origin"], "tuned");
  auto stored = (*db)->GetProfile(profile.Fingerprint());
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_TRUE((*(*db)->All("0ldf1ngerpr1nt00")).empty());
}

// A version-3 file (results keyed without the cache mode) is rebuilt keyed with it: its rows kept,
// one that said no mode read as warm, and a warm tune of a cold-tuned shape then adds a row.
TEST(TuningDb, UpgradesAVersionThreeDatabaseKeyingResultsByCacheMode) {
  const std::string path = TempPath("v3.db");
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  const std::string v3 = R"sql(
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO meta VALUES ('schema_version', '3');
    PRAGMA application_id = 1380340821;
    CREATE TABLE machines (fingerprint TEXT PRIMARY KEY, profile_json TEXT NOT NULL,
      updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')));
    CREATE TABLE results (
      fingerprint TEXT NOT NULL, kernel TEXT NOT NULL, workload TEXT NOT NULL, dtype TEXT NOT NULL,
      threads INTEGER NOT NULL, config TEXT NOT NULL, median_seconds REAL, min_seconds REAL, cv REAL,
      ops_per_second REAL, attainment REAL, verdict TEXT, binding TEXT, cache TEXT,
      initial_config TEXT, initial_median_seconds REAL, configs_tried INTEGER,
      profile_attainment REAL, paired_attainment REAL, paired_low REAL, paired_high REAL,
      paired_pairs INTEGER, paired_ceiling TEXT, tolerance REAL,
      provenance TEXT, config_schema INTEGER NOT NULL DEFAULT 1,
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
      PRIMARY KEY (fingerprint, kernel, workload, dtype, threads));
    CREATE TABLE failures (
      fingerprint TEXT NOT NULL, kernel TEXT NOT NULL, workload TEXT NOT NULL, dtype TEXT NOT NULL,
      threads INTEGER NOT NULL, config TEXT NOT NULL, reason TEXT NOT NULL,
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
      PRIMARY KEY (fingerprint, kernel, workload, dtype, threads, config));
    INSERT INTO results (fingerprint, kernel, workload, dtype, threads, config, cache)
      VALUES ('f00d', 'gemv_f32', 'gemv 1x4096x4096 f32 none', 'f32', 1, 'ROWS=4', 'cold');
    INSERT INTO results (fingerprint, kernel, workload, dtype, threads, config, cache)
      VALUES ('f00d', 'gemm_f32', 'gemm 8x8x8 f32 none', 'f32', 1, 'MR=4', NULL);
  )sql";
  ASSERT_EQ(sqlite3_exec(raw, v3.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(raw);
  sqlite3_close(raw);

  auto db = TuningDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status();
  auto cold =
      (*db)->Get("f00d", "gemv_f32", "gemv 1x4096x4096 f32 none", Dtype::kF32, 1, CacheMode::kCold);
  ASSERT_TRUE(cold.ok() && cold->has_value());
  EXPECT_EQ((*cold)->config, "ROWS=4");
  auto unsaid =
      (*db)->Get("f00d", "gemm_f32", "gemm 8x8x8 f32 none", Dtype::kF32, 1, CacheMode::kWarm);
  ASSERT_TRUE(unsaid.ok() && unsaid->has_value());
  EXPECT_EQ((*unsaid)->config, "MR=4");
  TunedResult warm = Result("gemv 1x4096x4096 f32 none", 1, "ROWS=8");
  warm.kernel = "gemv_f32", warm.cache = CacheMode::kWarm;
  ASSERT_TRUE((*db)->Put(warm).ok());
  auto all = (*db)->All("f00d");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 3u);
  auto integrity = (*db)->IntegrityCheck();
  ASSERT_TRUE(integrity.ok());
  EXPECT_EQ(*integrity, std::vector<std::string>{"ok"});
}

DbExport TwoMachines() {
  DbExport data;
  for (const char* cpu : {"Test CPU", "Other CPU"}) {
    const MachineProfile p = Machine(cpu);
    data.machines.push_back({p.Fingerprint(), p.ToJson().dump(), "2026-12-01T10:00:00Z"});
    for (int threads : {1, 2}) {
      TunedResult r = Result("gemm 64x64x64 f32 none", threads, "KC=64,MR=6");
      r.fingerprint = p.Fingerprint();
      r.median_seconds = 1.0 / 3 / threads;  // not a short decimal: doubles must round-trip
      r.cv = 0.0123456789012345;
      r.created_at = "2026-12-01T10:0" + std::to_string(threads) + ":00Z";
      r.provenance = R"({"origin":"tuned","rooftune_version":"0.2.0"})";
      data.rows.push_back(r);
    }
    data.thread_choices.push_back({p.Fingerprint(), "gemv_f32", "gemv 4096x4096 f32 none", 2, 1,
                                   0.05, "2026-12-01T10:05:00Z"});
  }
  return data;
}

// A database's contents as an export holds them.
DbExport Contents(TuningDb& db) {
  DbExport data{*db.Machines(), *db.All()};
  for (const TuningDb::Machine& m : data.machines) {
    const std::vector<TuningDb::ThreadChoice> choices = *db.ThreadChoices(m.fingerprint);
    data.thread_choices.insert(data.thread_choices.end(), choices.begin(), choices.end());
  }
  return data;
}

// Export, import into an empty database, export again: the same bytes.
TEST(DbExport, ImportedIntoAnEmptyDatabaseExportsByteForByte) {
  auto first = TuningDb::Open(TempPath("export_a.db"));
  ASSERT_TRUE(first.ok());
  const DbExport data = TwoMachines();
  ASSERT_TRUE((*first)->PutAll(data.machines, data.rows).ok());
  for (const TuningDb::ThreadChoice& c : data.thread_choices) {
    ASSERT_TRUE((*first)->PutThreadChoice(c).ok());
  }
  DbExport out = Contents(**first);
  const std::string text = ToJson(out).dump(1);
  absl::StatusOr<DbExport> parsed = ParseDbExport(nlohmann::json::parse(text));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  auto second = TuningDb::Open(TempPath("export_b.db"));
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE((*second)->PutAll(parsed->machines, parsed->rows).ok());
  for (const TuningDb::ThreadChoice& c : parsed->thread_choices) {
    ASSERT_TRUE((*second)->PutThreadChoice(c).ok());
  }
  DbExport again = Contents(**second);
  EXPECT_EQ(ToJson(again).dump(1), text);
  EXPECT_EQ(again.rows.size(), 4u);
  ASSERT_EQ(again.thread_choices.size(), 2u);
  EXPECT_EQ(again.thread_choices[0].created_at, "2026-12-01T10:05:00Z");
  // An export written before thread choices were stored reads as one without them.
  nlohmann::json older = nlohmann::json::parse(text);
  older.erase("thread_choices");
  parsed = ParseDbExport(older);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->thread_choices.empty());
  EXPECT_EQ(again.rows[0].created_at, out.rows[0].created_at);
}

TEST(DbExport, AMalformedOrForeignDocumentIsRefusedNamingTheProblem) {
  const nlohmann::json good = ToJson(TwoMachines());
  ASSERT_TRUE(ParseDbExport(good).ok());
  auto refused = [&](nlohmann::json j, const std::string& says) {
    absl::StatusOr<DbExport> parsed = ParseDbExport(j);
    ASSERT_FALSE(parsed.ok()) << says;
    EXPECT_NE(parsed.status().message().find(says), std::string::npos) << parsed.status();
  };
  refused(nlohmann::json::array(), "not a rooftune database export");
  refused(nlohmann::json::parse(R"({"format": 97})"), "not a rooftune database export");  // fuzzed
  nlohmann::json j = good;
  j["schema_version"] = 2;
  refused(j, "an export of schema version 2; this rooftune reads versions 3 to 4");
  j = good;
  j["results"][1]["threads"] = "two";
  refused(j, "results[1]: \"threads\" is string, not a number");
  j = good;
  j["results"][1]["threads"] = int64_t{1} << 40;  // an int would wrap it to a plausible count
  refused(j, "results[1]: \"threads\" is 1099511627776, out of range");
  j = good;
  j["results"][1]["cache"] = "lukewarm";
  refused(j, "results[1]: cache mode 'lukewarm' is neither warm nor cold");
  j = good;
  j["results"][0].erase("config");
  refused(j, "results[0]: no \"config\"");
  j = good;
  j["results"][2]["workload"] = "gemm 0x1 f32";
  refused(j, "results[2]: ");
  j = good;
  j["machines"][0]["profile"]["cpu_model"] = "Renamed CPU";  // identity no longer its profile's
  refused(j, "machines[0]: identity ");
  j = good;
  j["machines"].erase(1);
  refused(j, "is not among the export's machines");
  j = good;
  j["machines"][0]["profile"] = "text";
  refused(j, "machines[0]: no \"profile\" object");
  j = good;
  j["thread_choices"][1]["threads"] = 3;
  refused(j, "thread_choices[1]: 3 of 2 threads");
  j = good;
  j["thread_choices"][0]["fingerprint"] = "0123456789abcdef";
  refused(j, "thread_choices[0]: machine 0123456789abcdef is not among the export's machines");
  j = good;
  j["thread_choices"][0].erase("tolerance");
  refused(j, "thread_choices[0]: no \"tolerance\"");
}

}  // namespace
}  // namespace rooftune

namespace rooftune {
namespace {

std::string Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Another application's SQLite file is refused by both opens, its bytes untouched; rooftune's own
// files carry its application id, and one written before the id is still its own.
TEST(TuningDb, RefusesAnotherApplicationsFileAndLeavesItUntouched) {
  const std::string path = TempPath("foreign.db");
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(raw, "CREATE TABLE invoices (id INTEGER); INSERT INTO invoices VALUES (7);",
                   nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(raw);
  const std::string before = Bytes(path);
  auto db = TuningDb::Open(path);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(db.status().message().find("not a rooftune tuning database"), std::string::npos);
  EXPECT_NE(db.status().message().find("tables invoices"), std::string::npos) << db.status();
  EXPECT_FALSE(TuningDb::OpenReadOnly(path).ok());
  EXPECT_EQ(Bytes(path), before);

  const std::string ours = TempPath("ours.db");
  ASSERT_TRUE(TuningDb::Open(ours).ok());
  ASSERT_EQ(sqlite3_open(ours.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(raw, "PRAGMA application_id", -1, &stmt, nullptr);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(stmt, 0), 0x52465455);
  sqlite3_finalize(stmt);
  // A file from before the id (id 0, rooftune's meta table) is still ours, and gets the id.
  ASSERT_EQ(sqlite3_exec(raw, "PRAGMA application_id = 0", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  EXPECT_TRUE(TuningDb::OpenReadOnly(ours).ok());
  EXPECT_TRUE(TuningDb::Open(ours).ok());
}

// A database another process holds locked is reported as busy, never as corrupt.
TEST(TuningDb, ALockedDatabaseIsBusyNotCorrupt) {
  const std::string path = TempPath("locked.db");
  ASSERT_TRUE(TuningDb::Open(path).ok());
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  auto db = TuningDb::Open(path);  // waits out the busy timeout
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), absl::StatusCode::kUnavailable) << db.status();
  EXPECT_NE(db.status().message().find("is busy: another process holds its lock"),
            std::string::npos)
      << db.status();
  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
  EXPECT_TRUE(TuningDb::Open(path).ok());
}

}  // namespace
}  // namespace rooftune
