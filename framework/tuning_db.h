// The tuning database: one SQLite file holding the best config found for each (machine
// fingerprint, kernel, workload, dtype, thread count), and the machine profiles themselves.
// Every write is a transaction, so a process killed mid-write leaves the earlier results intact.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/cache_mode.h"
#include "framework/roofline.h"
#include "framework/workload.h"

struct sqlite3;

namespace rooftune {

class SqliteStatement;

// 3: each result's provenance and its kernel's config schema, rows keyed by machine identity.
// 2: each result's profile and paired attainments and its tolerance. Older files are upgraded in
// place when opened for writing: version 1's rows get no paired figures (pairs 0), version 2's
// are re-keyed from the fingerprint that included provenance to the machine identity computed
// from their stored profile.
inline constexpr int kTuningDbSchemaVersion = 4;

struct TunedResult {
  std::string fingerprint;
  std::string kernel;
  std::string workload;  // Workload::Key()
  Dtype dtype = Dtype::kF32;
  int threads = 1;
  std::string config;  // Config::ToString()
  double median_seconds = 0;
  double min_seconds = 0;
  double cv = 0;
  double ops_per_second = 0;
  double attainment = 0;          // the one the verdict used: paired where measured, else profile
  double profile_attainment = 0;  // against the stored profile's ceilings
  // Measured beside the binding ceiling's own loop (probes/paired_ceiling.h); pairs 0 when not.
  double paired_attainment = 0, paired_low = 0, paired_high = 0;
  int paired_pairs = 0;
  std::string paired_ceiling;
  double tolerance = 0;                   // attainment above 1 + this is impossible
  std::optional<Verdict::Class> verdict;  // none: stored without one (judged when read)
  std::string binding;
  CacheMode cache = CacheMode::kWarm;
  std::string initial_config;
  double initial_median_seconds = 0;  // the analytic starting point, timed in the same run
  int configs_tried = 0;
  std::string created_at;  // filled by the database (UTC, ISO 8601) unless given (imports)
  // Where the row came from, as JSON: the rooftune version, OS release, THP setting and CPU count
  // of the process that tuned it, and `origin` ("tuned", "imported from F", "merged from F").
  std::string provenance;
  int config_schema = 1;  // the kernel's Kernel::config_schema when the row was tuned
};

// A row's enum columns as the database and the export file store them: the verdict is "" when
// the row has none.
absl::string_view VerdictText(const std::optional<Verdict::Class>& verdict);
// The inverse, for all three: sets `row`'s dtype, verdict and cache mode from their text, or says
// which one names no value rooftune knows (InvalidArgument), leaving `row` as it was.
absl::Status SetEnumsFromText(absl::string_view dtype, absl::string_view verdict,
                              absl::string_view cache, TunedResult& row);

class TuningDb {
 public:
  // Opens or creates the database at `path` (creating its folder). A file that is not a SQLite
  // database, fails its integrity check, or has another schema version is refused.
  static absl::StatusOr<std::unique_ptr<TuningDb>> Open(const std::string& path);
  // Opens an existing database for reading only: nothing is created, upgraded or locked for
  // writing. A missing file is NotFound; a file that is not a rooftune database (another
  // application's SQLite file included) or has another schema version is refused, naming it.
  static absl::StatusOr<std::unique_ptr<TuningDb>> OpenReadOnly(const std::string& path);
  ~TuningDb();

  const std::string& path() const { return path_; }

  absl::Status Put(const TunedResult& result);
  // The result of this key, timed in `cache` mode. A row whose dtype, verdict or cache mode
  // rooftune does not know is DataLoss, naming it (here and in All).
  absl::StatusOr<std::optional<TunedResult>> Get(const std::string& fingerprint,
                                                 const std::string& kernel,
                                                 const std::string& workload, Dtype dtype,
                                                 int threads, CacheMode cache);
  // All results for a fingerprint (all machines when empty), ordered by kernel, workload, threads
  // and cache mode. A row that does not read (an unknown dtype, verdict or cache mode) fails the
  // call, unless `unreadable` is given: then it is left out and said there, one line each.
  absl::StatusOr<std::vector<TunedResult>> All(const std::string& fingerprint = "",
                                               std::vector<std::string>* unreadable = nullptr);

  absl::Status PutProfile(const std::string& fingerprint, const std::string& profile_json);
  absl::StatusOr<std::optional<std::string>> GetProfile(const std::string& fingerprint);

  // A config that crashed, aborted or hung a worker (cli/isolated_trials.h): later tunes skip it
  // unless asked to retry.
  struct Failure {
    std::string fingerprint, kernel, workload, dtype;
    int threads = 1;
    std::string config, reason, created_at;
  };
  absl::Status PutFailure(const Failure& failure);
  absl::StatusOr<std::vector<Failure>> Failures(const std::string& fingerprint,
                                                const std::string& kernel,
                                                const std::string& workload, int threads);
  absl::Status ClearFailures(const std::string& fingerprint, const std::string& kernel,
                             const std::string& workload, int threads);

  // `tune --threads auto`'s answer for a workload: of the thread counts it tried, up to
  // `offered`, the fewest as fast as the fastest within `tolerance`. The library API runs a
  // context of `offered` threads on that many for the workload.
  struct ThreadChoice {
    std::string fingerprint, kernel, workload;
    int offered = 1, threads = 1;
    double tolerance = 0;
    std::string created_at;
  };
  absl::Status PutThreadChoice(const ThreadChoice& choice);
  // This machine's choices (every machine's for ""); none in a database written before choices
  // were stored.
  absl::StatusOr<std::vector<ThreadChoice>> ThreadChoices(const std::string& fingerprint);

  struct Machine {
    std::string fingerprint, profile_json, updated_at;
  };
  absl::StatusOr<std::vector<Machine>> Machines();
  // SQLite's full integrity check: "ok", or the problems it found, one per line.
  absl::StatusOr<std::vector<std::string>> IntegrityCheck();
  // Writes machines and rows in one transaction (all or nothing), keeping each row's created_at
  // when it has one: for imports and merges.
  absl::Status PutAll(const std::vector<Machine>& machines, const std::vector<TunedResult>& rows);

 private:
  TuningDb(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  absl::Status Exec(const char* sql);
  // SQLite's last error on this connection, as the status every failed statement returns.
  absl::Status LastError() const;
  // Runs a write statement to completion: Busy when another writer holds the database.
  absl::Status StepWrite(SqliteStatement& statement);
  absl::Status UpgradeFromVersion1();              // inside Open's transaction
  absl::Status UpgradeFromVersion2();              // inside Open's transaction
  absl::Status UpgradeFromVersion3();              // inside Open's transaction
  absl::Status InsertRow(const TunedResult& row);  // inside a transaction
  std::string path_;
  sqlite3* db_;
};

// $ROOFTUNE_DB, else $XDG_CACHE_HOME/rooftune/tuning.db, else ~/.cache/rooftune/tuning.db.
std::string DefaultTuningDbPath();

}  // namespace rooftune
