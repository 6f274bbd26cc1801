// What every command shares: the tuning database, this machine's profile (measured once and
// cached in the database under its fingerprint), and turning flags into workloads, thread counts
// and configs with errors a user can act on.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/harness.h"
#include "framework/kernel.h"
#include "framework/machine_profile.h"
#include "framework/tuning_db.h"

namespace rooftune::cli {

// Usage errors (exit status 2) are InvalidArgument; everything else is a runtime failure (1).
absl::Status UsageError(absl::string_view message);

class Session {
 public:
  explicit Session(std::string db_path) : db_path_(std::move(db_path)) {}

  absl::StatusOr<TuningDb*> Db();
  const std::string& db_path() const { return db_path_; }
  // From now on the database is opened read-only: nothing is created, upgraded or locked for
  // writing, a missing file is an error, and MeasuredProfile returns the stored profile instead
  // of probing (for commands that only read: report).
  void ReadOnly() { read_only_ = true; }
  // This machine's facts, fingerprinted; cheap.
  const MachineProfile& Facts();
  // Facts plus measured ceilings: the cached profile when its fingerprint matches (a full probe is
  // never replaced by a quick one), else a fresh probe, stored in the database. A probe that
  // replaces a stored profile keeps each stored ceiling it measured lower (KeepHigherCeilings)
  // unless `fresh`. Read-only, the stored profile (whatever probe made it), or an error saying
  // to probe.
  absl::StatusOr<MachineProfile> MeasuredProfile(bool quick, bool force, bool fresh = false);

  // Every row the database holds for `profile`'s machine; a row that does not read is left out
  // with a warning on stderr.
  absl::StatusOr<std::vector<TunedResult>> TunedRows(const MachineProfile& profile);
  // The quick-probed (or stored) profile with this machine's rows: what predictions start from.
  struct Machine {
    MachineProfile profile;
    std::vector<TunedResult> rows;
    std::vector<TuningDb::ThreadChoice> thread_choices;  // tune --threads auto's, stored
  };
  absl::StatusOr<Machine> ProfileWithRows();

  absl::StatusOr<const Kernel*> FindKernel(const std::string& name);
  // The workload for `kernel`: --shape parsed for its op; dtype and epilogue from the flags or
  // the kernel's defaults; refused when the operands would not fit in memory.
  absl::StatusOr<Workload> ParseWorkloadFor(const Kernel& kernel, const std::string& shape,
                                            const std::string& dtype, const std::string& epilogue);
  // "1" or "1,2": each between 1 and the CPUs this process may use.
  absl::StatusOr<std::vector<int>> ParseThreads(const std::string& text);

  struct ResolvedConfig {
    Config config;
    std::string source;  // "given", "tuned (database)", "initial (analytic)"
  };
  // --config when given (unnamed parameters from the stored or initial config), else the best
  // stored for this machine, kernel, workload and thread count, else the kernel's initial config.
  // A stored config is the one tuned in `cache` mode, else the other mode's (said in `source`).
  absl::StatusOr<ResolvedConfig> ResolveConfig(const Kernel& kernel, const Workload& workload,
                                               int threads, CacheMode cache,
                                               const std::string& config_text,
                                               const MachineProfile& profile);

 private:
  std::string db_path_;
  bool read_only_ = false;
  std::unique_ptr<TuningDb> db_;
  std::unique_ptr<MachineProfile> facts_;
};

// Bytes of memory the operands may use: MemAvailable, or physical memory when it is unknown.
uint64_t AvailableMemoryBytes();

}  // namespace rooftune::cli
