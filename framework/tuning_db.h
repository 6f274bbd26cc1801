// The tuning database: one SQLite file holding the best config found for each (machine
// fingerprint, kernel, workload, dtype, thread count), and the machine profiles themselves.
// Every write is a transaction, so a process killed mid-write leaves the earlier results intact.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

struct sqlite3;

namespace rooftune {

inline constexpr int kTuningDbSchemaVersion = 1;

struct TunedResult {
  std::string fingerprint;
  std::string kernel;
  std::string workload;  // Workload::Key()
  std::string dtype;
  int threads = 1;
  std::string config;  // Config::ToString()
  double median_seconds = 0;
  double min_seconds = 0;
  double cv = 0;
  double ops_per_second = 0;
  double attainment = 0;
  std::string verdict;
  std::string binding;
  std::string cache;  // "warm" or "cold"
  std::string initial_config;
  double initial_median_seconds = 0;  // the analytic starting point, timed in the same run
  int configs_tried = 0;
  std::string created_at;  // filled by the database (UTC, ISO 8601)
};

class TuningDb {
 public:
  // Opens or creates the database at `path` (creating its folder). A file that is not a SQLite
  // database, fails its integrity check, or has another schema version is refused.
  static absl::StatusOr<std::unique_ptr<TuningDb>> Open(const std::string& path);
  ~TuningDb();

  const std::string& path() const { return path_; }

  absl::Status Put(const TunedResult& result);
  absl::StatusOr<std::optional<TunedResult>> Get(const std::string& fingerprint,
                                                 const std::string& kernel,
                                                 const std::string& workload,
                                                 const std::string& dtype, int threads);
  // All results for a fingerprint (all machines when empty), ordered by kernel, workload, threads.
  absl::StatusOr<std::vector<TunedResult>> All(const std::string& fingerprint = "");

  absl::Status PutProfile(const std::string& fingerprint, const std::string& profile_json);
  absl::StatusOr<std::optional<std::string>> GetProfile(const std::string& fingerprint);

 private:
  TuningDb(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  absl::Status Exec(const char* sql);
  std::string path_;
  sqlite3* db_;
};

// $ROOFTUNE_DB, else $XDG_CACHE_HOME/rooftune/tuning.db, else ~/.cache/rooftune/tuning.db.
std::string DefaultTuningDbPath();

}  // namespace rooftune
