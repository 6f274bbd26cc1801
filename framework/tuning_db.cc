#include "framework/tuning_db.h"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "framework/machine_profile.h"
#include "framework/sqlite_statement.h"
#include "nlohmann/json.hpp"

namespace rooftune {
namespace {

// A result is keyed by its machine, kernel, workload, threads and cache mode: the same shape
// timed cold and warm are two results (a --warm tune must not overwrite a cold-tuned row).
constexpr const char* kResultsTable = R"sql(
  fingerprint TEXT NOT NULL, kernel TEXT NOT NULL, workload TEXT NOT NULL, dtype TEXT NOT NULL,
  threads INTEGER NOT NULL, config TEXT NOT NULL, median_seconds REAL, min_seconds REAL, cv REAL,
  ops_per_second REAL, attainment REAL, verdict TEXT, binding TEXT,
  cache TEXT NOT NULL DEFAULT 'warm',
  initial_config TEXT, initial_median_seconds REAL, configs_tried INTEGER,
  profile_attainment REAL, paired_attainment REAL, paired_low REAL, paired_high REAL,
  paired_pairs INTEGER, paired_ceiling TEXT, tolerance REAL,
  provenance TEXT, config_schema INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  PRIMARY KEY (fingerprint, kernel, workload, dtype, threads, cache))sql";

constexpr const char* kOtherTables = R"sql(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS machines (
  fingerprint TEXT PRIMARY KEY,
  profile_json TEXT NOT NULL,
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')));
CREATE TABLE IF NOT EXISTS thread_choices (
  fingerprint TEXT NOT NULL, kernel TEXT NOT NULL, workload TEXT NOT NULL,
  offered INTEGER NOT NULL, threads INTEGER NOT NULL, tolerance REAL NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  PRIMARY KEY (fingerprint, kernel, workload, offered));
CREATE TABLE IF NOT EXISTS failures (
  fingerprint TEXT NOT NULL, kernel TEXT NOT NULL, workload TEXT NOT NULL, dtype TEXT NOT NULL,
  threads INTEGER NOT NULL, config TEXT NOT NULL, reason TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  PRIMARY KEY (fingerprint, kernel, workload, dtype, threads, config));
)sql";

std::string Schema() {
  return absl::StrCat(kOtherTables, "CREATE TABLE IF NOT EXISTS results (", kResultsTable, ");");
}

// The columns version 2 added to version 1's results, as ALTER TABLE adds them.
constexpr const char* kVersion2Columns[] = {
    "profile_attainment REAL", "paired_attainment REAL", "paired_low REAL", "paired_high REAL",
    "paired_pairs INTEGER",    "paired_ceiling TEXT",    "tolerance REAL"};

constexpr const char* kResultColumns =
    "fingerprint, kernel, workload, dtype, threads, config, median_seconds, min_seconds, cv, "
    "ops_per_second, attainment, verdict, binding, cache, initial_config, "
    "initial_median_seconds, configs_tried, created_at, profile_attainment, paired_attainment, "
    "paired_low, paired_high, paired_pairs, paired_ceiling, tolerance, provenance, config_schema";

// The columns version 3 added to version 2's results.
constexpr const char* kVersion3Columns[] = {"provenance TEXT",
                                            "config_schema INTEGER NOT NULL DEFAULT 1"};

// A stored row in its typed form (its enum columns through SetEnumsFromText, as the export file's
// are); a row whose dtype, verdict or cache mode rooftune does not know (a file edited by hand, or
// written by a newer rooftune) is refused, naming the row.
absl::StatusOr<TunedResult> ReadResult(SqliteStatement& s, const std::string& path) {
  TunedResult r;
  r.fingerprint = s.Text(0), r.kernel = s.Text(1), r.workload = s.Text(2);
  r.threads = s.Int(4), r.config = s.Text(5);
  r.median_seconds = s.Double(6), r.min_seconds = s.Double(7), r.cv = s.Double(8);
  r.ops_per_second = s.Double(9), r.attainment = s.Double(10);
  r.binding = s.Text(12);
  r.initial_config = s.Text(14), r.initial_median_seconds = s.Double(15);
  r.configs_tried = s.Int(16), r.created_at = s.Text(17);
  r.profile_attainment = s.Double(18), r.paired_attainment = s.Double(19);
  r.paired_low = s.Double(20), r.paired_high = s.Double(21), r.paired_pairs = s.Int(22);
  r.paired_ceiling = s.Text(23), r.tolerance = s.Double(24);
  r.provenance = s.Text(25), r.config_schema = s.Int(26);
  if (absl::Status enums = SetEnumsFromText(s.Text(3), s.Text(11), s.Text(13), r); !enums.ok()) {
    return absl::DataLossError(absl::StrCat("tuning database ", path, ": the row of ", r.kernel,
                                            " on '", r.workload, "': ", enums.message()));
  }
  return r;
}

// Marks a file as rooftune's tuning database (PRAGMA application_id): "RFTU".
constexpr int64_t kApplicationId = 0x52465455;
constexpr int64_t kBusyTimeoutMs = 5000;

// Test hook: with ROOFTUNE_TEST_PAUSE_IN_WRITE=FILE, a write creates FILE once its rows are
// written and before it commits, then waits there for ever, so that a test can kill the process
// provably inside the transaction.
void PauseInsideTheWriteForTests() {
  const char* signal_file = std::getenv("ROOFTUNE_TEST_PAUSE_IN_WRITE");
  if (signal_file == nullptr || *signal_file == '\0') return;
  if (FILE* f = std::fopen(signal_file, "w")) std::fclose(f);
  for (;;) pause();
}

// A connection to `path` opened with `flags`, waiting out another process's lock for a while.
absl::StatusOr<sqlite3*> Connect(const std::string& path, int flags) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return absl::PermissionDeniedError(
        absl::StrCat("cannot open tuning database ", path, ": ", message));
  }
  sqlite3_busy_timeout(db, int(kBusyTimeoutMs));
  return db;
}

absl::Status Busy(const std::string& path) {
  return absl::UnavailableError(
      absl::StrCat("tuning database ", path, " is busy: another process holds its lock (waited ",
                   kBusyTimeoutMs / 1000, " s); try again when it has finished"));
}

// SQLite's quick check: a file that is not a database, or a damaged one, is said to be so (a
// runtime failure, never mistaken for another application's file).
absl::Status CheckReadable(sqlite3* db, const std::string& path) {
  SqliteStatement check(db, "PRAGMA quick_check");
  const int rc = check.status().ok() ? check.Step() : sqlite3_errcode(db);
  if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) return Busy(path);
  if (rc != SQLITE_ROW || check.Text(0) != "ok") {
    return absl::DataLossError(absl::StrCat("tuning database ", path, " is unreadable or corrupt (",
                                            sqlite3_errmsg(db),
                                            "); move it away or pass another with --db"));
  }
  return absl::OkStatus();
}

// A file is rooftune's when it is empty (a new database), carries rooftune's application id, or
// was written by a rooftune from before the id (its meta table holds a schema version).
absl::Status CheckOwnership(sqlite3* db, const std::string& path) {
  SqliteStatement id(db, "PRAGMA application_id");
  if (!id.status().ok() || id.Step() != SQLITE_ROW) return id.status();
  if (id.Int(0) == kApplicationId) return absl::OkStatus();
  SqliteStatement tables(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  if (!tables.status().ok()) return tables.status();
  std::vector<std::string> names;
  while (tables.Step() == SQLITE_ROW) names.push_back(tables.Text(0));
  if (names.empty()) return absl::OkStatus();
  if (id.Int(0) == 0 && std::find(names.begin(), names.end(), "meta") != names.end()) {
    SqliteStatement version(db, "SELECT value FROM meta WHERE key = 'schema_version'");
    if (version.status().ok() && version.Step() == SQLITE_ROW) return absl::OkStatus();
  }
  std::string listed;
  for (size_t i = 0; i < names.size() && i < 3; ++i) {
    absl::StrAppend(&listed, i == 0 ? "" : ", ", names[i]);
  }
  if (names.size() > 3) absl::StrAppend(&listed, ", ...");
  return absl::FailedPreconditionError(absl::StrCat(
      path, " is not a rooftune tuning database (another application's SQLite file, tables ",
      listed, "); left untouched: pass another with --db"));
}

}  // namespace

absl::string_view VerdictText(const std::optional<Verdict::Class>& verdict) {
  return verdict ? ToString(*verdict) : "";
}

absl::Status SetEnumsFromText(absl::string_view dtype, absl::string_view verdict,
                              absl::string_view cache, TunedResult& row) {
  absl::StatusOr<Dtype> d = ParseDtype(dtype);
  absl::StatusOr<CacheMode> c = ParseCacheMode(cache);
  absl::StatusOr<Verdict::Class> v =
      verdict.empty() ? Verdict::Class::kNoModel : ParseVerdictClass(verdict);
  for (const absl::Status& s : {d.status(), c.status(), v.status()}) {
    if (!s.ok()) return s;
  }
  row.dtype = *d, row.cache = *c;
  row.verdict = verdict.empty() ? std::nullopt : std::optional<Verdict::Class>(*v);
  return absl::OkStatus();
}

std::string DefaultTuningDbPath() {
  if (const char* env = std::getenv("ROOFTUNE_DB"); env != nullptr && *env != '\0') return env;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return absl::StrCat(xdg, "/rooftune/tuning.db");
  }
  const char* home = std::getenv("HOME");
  return absl::StrCat(home != nullptr ? home : ".", "/.cache/rooftune/tuning.db");
}

absl::StatusOr<std::unique_ptr<TuningDb>> TuningDb::Open(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create the folder for tuning database ", path, ": ", ec.message()));
  }
  absl::StatusOr<sqlite3*> connection = Connect(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (!connection.ok()) return connection.status();
  sqlite3* db = *connection;
  std::unique_ptr<TuningDb> tdb(new TuningDb(path, db));
  if (absl::Status s = CheckReadable(db, path); !s.ok()) return s;
  // Nothing is written to a file that holds another application's tables.
  if (absl::Status s = CheckOwnership(db, path); !s.ok()) return s;
  if (const int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
      rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
    return Busy(path);
  } else if (rc != SQLITE_OK) {
    return absl::DataLossError(absl::StrCat("tuning database ", path, ": ", sqlite3_errmsg(db)));
  }
  if (absl::Status s = tdb->Exec(absl::StrCat("PRAGMA application_id = ", kApplicationId,
                                              "; PRAGMA user_version = ", kTuningDbSchemaVersion)
                                     .c_str());
      !s.ok()) {
    tdb->Exec("ROLLBACK").IgnoreError();
    return s;
  }
  if (absl::Status s = tdb->Exec(Schema().c_str()); !s.ok()) {
    tdb->Exec("ROLLBACK").IgnoreError();
    return s;
  }
  // Read and let go before any upgrade: a statement still open would lock the tables it rebuilds.
  std::optional<std::string> stored_version;
  {
    SqliteStatement version(db, "SELECT value FROM meta WHERE key = 'schema_version'");
    if (!version.status().ok()) return version.status();
    if (version.Step() == SQLITE_ROW) stored_version = version.Text(0);
  }
  if (stored_version.has_value()) {
    const std::string& found = *stored_version;
    if (found == "1" || found == "2" || found == "3") {
      absl::Status s = found == "1" ? tdb->UpgradeFromVersion1() : absl::OkStatus();
      if (s.ok() && found != "3") s = tdb->UpgradeFromVersion2();
      if (s.ok()) s = tdb->UpgradeFromVersion3();
      if (s.ok()) {
        s = tdb->Exec(absl::StrCat("UPDATE meta SET value = '", kTuningDbSchemaVersion,
                                   "' WHERE key = 'schema_version'")
                          .c_str());
      }
      if (!s.ok()) {
        tdb->Exec("ROLLBACK").IgnoreError();
        return s;
      }
    } else if (found != std::to_string(kTuningDbSchemaVersion)) {
      tdb->Exec("ROLLBACK").IgnoreError();
      return absl::FailedPreconditionError(absl::StrCat(
          "tuning database ", path, " has schema version ", found, "; this rooftune reads version ",
          kTuningDbSchemaVersion, ". Move it away or pass another with --db"));
    }
  } else {
    SqliteStatement insert(db, "INSERT INTO meta (key, value) VALUES ('schema_version', ?)");
    insert.Bind(1, std::to_string(kTuningDbSchemaVersion));
    if (insert.Step() != SQLITE_DONE) {
      tdb->Exec("ROLLBACK").IgnoreError();
      return absl::DataLossError(absl::StrCat("tuning database ", path, ": ", sqlite3_errmsg(db)));
    }
  }
  if (absl::Status s = tdb->Exec("COMMIT"); !s.ok()) return s;
  return tdb;
}

absl::StatusOr<std::unique_ptr<TuningDb>> TuningDb::OpenReadOnly(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::NotFoundError(absl::StrCat("no tuning database at ", path));
  }
  absl::StatusOr<sqlite3*> connection = Connect(path, SQLITE_OPEN_READONLY);
  if (!connection.ok()) return connection.status();
  sqlite3* db = *connection;
  std::unique_ptr<TuningDb> tdb(new TuningDb(path, db));
  if (absl::Status s = CheckReadable(db, path); !s.ok()) return s;
  if (absl::Status s = CheckOwnership(db, path); !s.ok()) {
    if (absl::IsFailedPrecondition(s)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, " is not a rooftune tuning database (another application's file)"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is not a rooftune tuning database (", sqlite3_errmsg(db), ")"));
  }
  SqliteStatement version(db, "SELECT value FROM meta WHERE key = 'schema_version'");
  if (!version.status().ok() || version.Step() != SQLITE_ROW) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is not a rooftune tuning database (no schema version)"));
  }
  const std::string found = version.Text(0);
  if (found != std::to_string(kTuningDbSchemaVersion)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "tuning database ", path, " has schema version ", found, "; this rooftune reads version ",
        kTuningDbSchemaVersion,
        found < std::to_string(kTuningDbSchemaVersion) && found.size() == 1
            ? " (a rooftune command that writes to it, such as probe or tune, upgrades it in place)"
            : ""));
  }
  return tdb;
}

TuningDb::~TuningDb() { sqlite3_close(db_); }

absl::Status TuningDb::UpgradeFromVersion1() {
  for (const char* column : kVersion2Columns) {
    if (absl::Status s = Exec(absl::StrCat("ALTER TABLE results ADD COLUMN ", column).c_str());
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status TuningDb::UpgradeFromVersion3() {
  // SQLite cannot change a primary key in place: the rows move to a table keyed with the cache
  // mode (a row without one was timed warm, the only mode before cold timing).
  return Exec(absl::StrCat("UPDATE results SET cache = 'warm' WHERE cache IS NULL;",
                           "CREATE TABLE results_v4 (", kResultsTable, ");",
                           "INSERT INTO results_v4 (", kResultColumns, ") SELECT ", kResultColumns,
                           " FROM results; DROP TABLE results; ",
                           "ALTER TABLE results_v4 RENAME TO results;")
                  .c_str());
}

absl::Status TuningDb::UpgradeFromVersion2() {
  for (const char* column : kVersion3Columns) {
    if (absl::Status s = Exec(absl::StrCat("ALTER TABLE results ADD COLUMN ", column).c_str());
        !s.ok()) {
      return s;
    }
  }
  // Each stored machine re-keyed by its identity, recomputed from its profile; its rows take the
  // profile's provenance. Oldest first, so that where two fingerprints name one machine (before
  // and after an upgrade, say) the newer rows win.
  absl::StatusOr<std::vector<Machine>> machines = Machines();
  if (!machines.ok()) return machines.status();
  std::sort(machines->begin(), machines->end(),
            [](const Machine& a, const Machine& b) { return a.updated_at < b.updated_at; });
  for (const Machine& m : *machines) {
    nlohmann::json j = nlohmann::json::parse(m.profile_json, nullptr, /*allow_exceptions=*/false);
    absl::StatusOr<MachineProfile> profile =
        j.is_object() ? MachineProfile::FromJson(j)
                      : absl::StatusOr<MachineProfile>(absl::DataLossError("not JSON"));
    if (!profile.ok()) continue;  // left under its old key, where nothing reads it
    nlohmann::json provenance = profile->Provenance();
    provenance["origin"] = "tuned";
    const std::string identity = profile->Fingerprint();
    SqliteStatement rows(
        db_, "UPDATE results SET provenance = ? WHERE fingerprint = ? AND provenance IS NULL");
    rows.Bind(1, provenance.dump()).Bind(2, m.fingerprint);
    if (!rows.status().ok()) return rows.status();
    if (rows.Step() != SQLITE_DONE) {
      return absl::DataLossError(
          absl::StrCat("tuning database ", path_, ": ", sqlite3_errmsg(db_)));
    }
    if (identity == m.fingerprint) continue;
    SqliteStatement rekey(db_,
                          "UPDATE OR REPLACE results SET fingerprint = ? WHERE fingerprint = ?");
    rekey.Bind(1, identity).Bind(2, m.fingerprint);
    SqliteStatement move(db_,
                         "UPDATE OR REPLACE machines SET fingerprint = ? WHERE fingerprint = ?");
    move.Bind(1, identity).Bind(2, m.fingerprint);
    if (!rekey.status().ok() || rekey.Step() != SQLITE_DONE || !move.status().ok() ||
        move.Step() != SQLITE_DONE) {
      return absl::DataLossError(
          absl::StrCat("tuning database ", path_, ": ", sqlite3_errmsg(db_)));
    }
  }
  return absl::OkStatus();
}

absl::Status TuningDb::LastError() const {
  return absl::DataLossError(absl::StrCat("tuning database ", path_, ": ", sqlite3_errmsg(db_)));
}

absl::Status TuningDb::StepWrite(SqliteStatement& statement) {
  const int rc = statement.Step();
  if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) return Busy(path_);
  if (rc != SQLITE_DONE) return LastError();
  return absl::OkStatus();
}

absl::Status TuningDb::Exec(const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error != nullptr ? error : sqlite3_errmsg(db_);
    sqlite3_free(error);
    return absl::DataLossError(absl::StrCat("tuning database ", path_, ": ", message));
  }
  return absl::OkStatus();
}

absl::Status TuningDb::InsertRow(const TunedResult& r) {
  SqliteStatement s(
      db_,
      "INSERT OR REPLACE INTO results (fingerprint, kernel, workload, dtype, threads, "
      "config, median_seconds, min_seconds, cv, ops_per_second, attainment, verdict, "
      "binding, cache, initial_config, initial_median_seconds, configs_tried, "
      "profile_attainment, paired_attainment, paired_low, paired_high, paired_pairs, "
      "paired_ceiling, tolerance, provenance, config_schema, created_at) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
      "COALESCE(NULLIF(?, ''), strftime('%Y-%m-%dT%H:%M:%SZ', 'now')))");
  if (!s.status().ok()) return s.status();
  s.Bind(1, r.fingerprint).Bind(2, r.kernel).Bind(3, r.workload);
  s.Bind(4, std::string(ToString(r.dtype))).Bind(5, r.threads);
  s.Bind(6, r.config).Bind(7, r.median_seconds).Bind(8, r.min_seconds).Bind(9, r.cv);
  s.Bind(10, r.ops_per_second).Bind(11, r.attainment);
  s.Bind(12, std::string(VerdictText(r.verdict))).Bind(13, r.binding);
  s.Bind(14, std::string(ToString(r.cache)));
  s.Bind(15, r.initial_config).Bind(16, r.initial_median_seconds);
  s.Bind(17, r.configs_tried).Bind(18, r.profile_attainment).Bind(19, r.paired_attainment);
  s.Bind(20, r.paired_low).Bind(21, r.paired_high).Bind(22, r.paired_pairs);
  s.Bind(23, r.paired_ceiling).Bind(24, r.tolerance).Bind(25, r.provenance);
  s.Bind(26, r.config_schema).Bind(27, r.created_at);
  return StepWrite(s);
}

absl::Status TuningDb::Put(const TunedResult& r) { return PutAll({}, {r}); }

absl::Status TuningDb::PutAll(const std::vector<Machine>& machines,
                              const std::vector<TunedResult>& rows) {
  if (const int rc = sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
      rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
    return Busy(path_);
  } else if (rc != SQLITE_OK) {
    return LastError();
  }
  auto fail = [&](absl::Status s) {
    Exec("ROLLBACK").IgnoreError();
    return s;
  };
  for (const Machine& m : machines) {
    SqliteStatement s(
        db_,
        "INSERT OR REPLACE INTO machines (fingerprint, profile_json, updated_at) VALUES "
        "(?, ?, COALESCE(NULLIF(?, ''), strftime('%Y-%m-%dT%H:%M:%SZ', 'now')))");
    s.Bind(1, m.fingerprint).Bind(2, m.profile_json).Bind(3, m.updated_at);
    if (!s.status().ok()) return fail(s.status());
    if (s.Step() != SQLITE_DONE) {
      return fail(LastError());
    }
  }
  for (const TunedResult& r : rows) {
    if (absl::Status s = InsertRow(r); !s.ok()) return fail(s);
  }
  PauseInsideTheWriteForTests();
  return Exec("COMMIT");
}

absl::Status TuningDb::PutFailure(const Failure& f) {
  SqliteStatement s(
      db_,
      "INSERT OR REPLACE INTO failures (fingerprint, kernel, workload, dtype, threads, "
      "config, reason) VALUES (?, ?, ?, ?, ?, ?, ?)");
  if (!s.status().ok()) return s.status();
  s.Bind(1, f.fingerprint).Bind(2, f.kernel).Bind(3, f.workload).Bind(4, f.dtype);
  s.Bind(5, f.threads).Bind(6, f.config).Bind(7, f.reason);
  return StepWrite(s);
}

absl::Status TuningDb::PutThreadChoice(const ThreadChoice& c) {
  // An imported choice keeps its time; a new one is stamped now.
  SqliteStatement s(db_,
                    "INSERT OR REPLACE INTO thread_choices (fingerprint, kernel, workload, "
                    "offered, threads, tolerance, created_at) VALUES (?, ?, ?, ?, ?, ?, "
                    "COALESCE(NULLIF(?, ''), strftime('%Y-%m-%dT%H:%M:%SZ', 'now')))");
  if (!s.status().ok()) return s.status();
  s.Bind(1, c.fingerprint).Bind(2, c.kernel).Bind(3, c.workload).Bind(4, c.offered);
  s.Bind(5, c.threads).Bind(6, c.tolerance).Bind(7, c.created_at);
  return StepWrite(s);
}

absl::StatusOr<std::vector<TuningDb::ThreadChoice>> TuningDb::ThreadChoices(
    const std::string& fingerprint) {
  std::vector<ThreadChoice> choices;
  {
    // A database opened read-only is not given the tables a newer rooftune adds.
    SqliteStatement table(
        db_, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'thread_choices'");
    if (!table.status().ok()) return table.status();
    if (table.Step() != SQLITE_ROW) return choices;
  }
  SqliteStatement s(db_,
                    "SELECT fingerprint, kernel, workload, offered, threads, tolerance, "
                    "created_at FROM thread_choices WHERE ? = '' OR fingerprint = ? "
                    "ORDER BY fingerprint, kernel, workload, offered");
  if (!s.status().ok()) return s.status();
  s.Bind(1, fingerprint).Bind(2, fingerprint);
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    choices.push_back(
        {s.Text(0), s.Text(1), s.Text(2), s.Int(3), s.Int(4), s.Double(5), s.Text(6)});
  }
  if (rc != SQLITE_DONE) {
    return LastError();
  }
  return choices;
}

absl::StatusOr<std::vector<TuningDb::Failure>> TuningDb::Failures(const std::string& fingerprint,
                                                                  const std::string& kernel,
                                                                  const std::string& workload,
                                                                  int threads) {
  SqliteStatement s(
      db_,
      "SELECT fingerprint, kernel, workload, dtype, threads, config, reason, created_at "
      "FROM failures WHERE fingerprint = ? AND kernel = ? AND workload = ? AND threads = ? "
      "ORDER BY config");
  if (!s.status().ok()) return s.status();
  s.Bind(1, fingerprint).Bind(2, kernel).Bind(3, workload).Bind(4, threads);
  std::vector<Failure> failures;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    failures.push_back(
        {s.Text(0), s.Text(1), s.Text(2), s.Text(3), s.Int(4), s.Text(5), s.Text(6), s.Text(7)});
  }
  if (rc != SQLITE_DONE) {
    return LastError();
  }
  return failures;
}

absl::Status TuningDb::ClearFailures(const std::string& fingerprint, const std::string& kernel,
                                     const std::string& workload, int threads) {
  SqliteStatement s(
      db_,
      "DELETE FROM failures WHERE fingerprint = ? AND kernel = ? AND workload = ? AND "
      "threads = ?");
  if (!s.status().ok()) return s.status();
  s.Bind(1, fingerprint).Bind(2, kernel).Bind(3, workload).Bind(4, threads);
  return StepWrite(s);
}

absl::StatusOr<std::vector<std::string>> TuningDb::IntegrityCheck() {
  SqliteStatement s(db_, "PRAGMA integrity_check");
  if (!s.status().ok()) return s.status();
  std::vector<std::string> lines;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) lines.push_back(s.Text(0));
  if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) return Busy(path_);
  if (rc != SQLITE_DONE) {
    return LastError();
  }
  return lines;
}

absl::StatusOr<std::vector<TuningDb::Machine>> TuningDb::Machines() {
  SqliteStatement s(
      db_, "SELECT fingerprint, profile_json, updated_at FROM machines ORDER BY fingerprint");
  if (!s.status().ok()) return s.status();
  std::vector<Machine> machines;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) machines.push_back({s.Text(0), s.Text(1), s.Text(2)});
  if (rc != SQLITE_DONE) {
    return LastError();
  }
  return machines;
}

absl::StatusOr<std::optional<TunedResult>> TuningDb::Get(const std::string& fingerprint,
                                                         const std::string& kernel,
                                                         const std::string& workload, Dtype dtype,
                                                         int threads, CacheMode cache) {
  SqliteStatement s(db_, absl::StrCat("SELECT ", kResultColumns,
                                      " FROM results WHERE fingerprint = ? AND kernel = ? AND "
                                      "workload = ? AND dtype = ? AND threads = ? AND cache = ?")
                             .c_str());
  if (!s.status().ok()) return s.status();
  s.Bind(1, fingerprint).Bind(2, kernel).Bind(3, workload);
  s.Bind(4, std::string(ToString(dtype))).Bind(5, threads).Bind(6, std::string(ToString(cache)));
  const int rc = s.Step();
  if (rc == SQLITE_ROW) {
    absl::StatusOr<TunedResult> row = ReadResult(s, path_);
    if (!row.ok()) return row.status();
    return std::optional<TunedResult>(*std::move(row));
  }
  if (rc == SQLITE_DONE) return std::optional<TunedResult>();
  return LastError();
}

absl::StatusOr<std::vector<TunedResult>> TuningDb::All(const std::string& fingerprint,
                                                       std::vector<std::string>* unreadable) {
  SqliteStatement s(db_, absl::StrCat("SELECT ", kResultColumns,
                                      " FROM results WHERE ? = '' OR fingerprint = ? "
                                      "ORDER BY kernel, workload, threads, cache")
                             .c_str());
  if (!s.status().ok()) return s.status();
  s.Bind(1, fingerprint).Bind(2, fingerprint);
  std::vector<TunedResult> all;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    absl::StatusOr<TunedResult> row = ReadResult(s, path_);
    if (row.ok()) {
      all.push_back(*std::move(row));
    } else if (unreadable != nullptr) {
      unreadable->push_back(std::string(row.status().message()));
    } else {
      return row.status();
    }
  }
  if (rc != SQLITE_DONE) {
    return LastError();
  }
  return all;
}

absl::Status TuningDb::PutProfile(const std::string& fingerprint, const std::string& profile_json) {
  if (absl::Status s = Exec("BEGIN IMMEDIATE"); !s.ok()) return s;
  SqliteStatement s(db_,
                    "INSERT OR REPLACE INTO machines (fingerprint, profile_json) VALUES (?, ?)");
  s.Bind(1, fingerprint).Bind(2, profile_json);
  if (!s.status().ok() || s.Step() != SQLITE_DONE) {
    std::string message = sqlite3_errmsg(db_);
    Exec("ROLLBACK").IgnoreError();
    return absl::DataLossError(absl::StrCat("tuning database ", path_, ": ", message));
  }
  return Exec("COMMIT");
}

absl::StatusOr<std::optional<std::string>> TuningDb::GetProfile(const std::string& fingerprint) {
  SqliteStatement s(db_, "SELECT profile_json FROM machines WHERE fingerprint = ?");
  if (!s.status().ok()) return s.status();
  s.Bind(1, fingerprint);
  const int rc = s.Step();
  if (rc == SQLITE_ROW) return std::optional<std::string>(s.Text(0));
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  return LastError();
}

}  // namespace rooftune
