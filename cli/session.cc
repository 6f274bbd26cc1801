#include "cli/session.h"

#include <unistd.h>

#include <fstream>
#include <iostream>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/common.h"
#include "framework/judged_trial.h"
#include "probes/machine_probe.h"
#include "probes/system_facts.h"

namespace rooftune::cli {

absl::Status UsageError(absl::string_view message) { return absl::InvalidArgumentError(message); }

uint64_t AvailableMemoryBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
}

absl::StatusOr<TuningDb*> Session::Db() {
  if (db_ == nullptr) {
    absl::StatusOr<std::unique_ptr<TuningDb>> db =
        read_only_ ? TuningDb::OpenReadOnly(db_path_) : TuningDb::Open(db_path_);
    if (read_only_ && absl::IsNotFound(db.status())) {
      return absl::NotFoundError(
          absl::StrCat(db.status().message(), " (rooftune probe or rooftune run creates it)"));
    }
    if (!db.ok()) return db.status();
    db_ = *std::move(db);
  }
  return db_.get();
}

const MachineProfile& Session::Facts() {
  if (facts_ == nullptr) facts_ = std::make_unique<MachineProfile>(probes::ReadSystemFacts());
  return *facts_;
}

absl::StatusOr<MachineProfile> Session::MeasuredProfile(bool quick, bool force, bool fresh) {
  absl::StatusOr<TuningDb*> db = Db();
  if (!db.ok()) return db.status();
  const std::string fingerprint = Facts().Fingerprint();
  absl::StatusOr<std::optional<std::string>> cached = (*db)->GetProfile(fingerprint);
  if (!cached.ok()) return cached.status();
  std::optional<MachineProfile> previous;  // the profile a new probe replaces, if readable
  if (cached->has_value()) {
    nlohmann::json j = nlohmann::json::parse(**cached, nullptr, /*allow_exceptions=*/false);
    if (j.is_object()) {
      absl::StatusOr<MachineProfile> profile = MachineProfile::FromJson(j);
      if (profile.ok() && profile->Fingerprint() == fingerprint) {
        const bool cached_quick = j.value("probe_quick", true);
        if (read_only_ || (!force && (quick || !cached_quick))) {
          // The identity matched; what is not identity is this process's (rows record it).
          const MachineProfile& facts = Facts();
          profile->rooftune_version = facts.rooftune_version;
          profile->os_kernel = facts.os_kernel;
          profile->transparent_hugepages = facts.transparent_hugepages;
          profile->logical_cpus = facts.logical_cpus;
          profile->cpu_nodes = facts.cpu_nodes;
          return profile;
        }
        previous = *std::move(profile);
      }
    }
  }
  if (read_only_) {
    return absl::FailedPreconditionError(absl::StrCat("no readable profile of this machine (",
                                                      fingerprint, ") in ", db_path_,
                                                      ": rooftune probe measures it"));
  }
  std::cerr << "rooftune: measuring this machine (" << (quick ? "quick" : "full")
            << " probe; cached afterwards under fingerprint " << fingerprint << ")\n";
  probes::ProbeOptions options;
  options.quick = quick;
  options.progress = [](const std::string& line) { std::cerr << "  " << line << "\n"; };
  // The cache levels are planned over every probe of the machine, unless --fresh starts over.
  if (previous && !fresh) options.earlier = &*previous;
  absl::StatusOr<MachineProfile> profile = probes::ProbeMachine(options);
  if (!profile.ok()) return profile.status();
  if (previous) {
    const std::vector<std::string> moved = CeilingChanges(*previous, *profile, 0.02);
    if (!moved.empty()) {
      std::cerr << "rooftune: " << moved.size()
                << " ceilings moved by 2% or more from the stored profile (a shared machine "
                   "drifts between probes):\n";
      for (const std::string& line : moved) std::cerr << "  " << line << "\n";
    }
    if (!fresh) {
      const int kept = KeepHigherCeilings(*previous, *profile);
      if (kept > 0) {
        std::cerr << "rooftune: " << kept
                  << " compute or DRAM ceilings measured lower than stored keep their stored "
                     "rate: such a ceiling is the best any probe of this machine measured "
                     "(--fresh takes this probe's as they are)\n";
      }
    }
  }
  nlohmann::json j = profile->ToJson();
  j["probe_quick"] = quick;
  if (absl::Status s = (*db)->PutProfile(fingerprint, j.dump()); !s.ok()) return s;
  return profile;
}

absl::StatusOr<const Kernel*> Session::FindKernel(const std::string& name) {
  if (name.empty()) return UsageError("--kernel is required (rooftune list shows the kernels)");
  const Kernel* kernel = KernelRegistry::Global().Find(name);
  if (kernel == nullptr) {
    std::vector<std::string> names;
    for (const Kernel* k : KernelRegistry::Global().All()) names.push_back(k->name);
    return UsageError(
        absl::StrCat("unknown kernel '", name, "' (known: ", absl::StrJoin(names, ", "), ")"));
  }
  return kernel;
}

absl::StatusOr<Workload> Session::ParseWorkloadFor(const Kernel& kernel, const std::string& shape,
                                                   const std::string& dtype_text,
                                                   const std::string& epilogue_text) {
  if (shape.empty()) {
    return UsageError(absl::StrCat(
        "--shape is required: ", kernel.op == Op::kGemm ? "MxNxK" : "NxK", " for ", kernel.name));
  }
  Dtype dtype = kernel.dtypes.front();
  if (!dtype_text.empty()) {
    absl::StatusOr<Dtype> parsed = ParseDtype(dtype_text);
    if (!parsed.ok()) return UsageError(parsed.status().message());
    dtype = *parsed;
  }
  Epilogue epilogue = kernel.epilogues.front();
  if (!epilogue_text.empty()) {
    absl::StatusOr<Epilogue> parsed = ParseEpilogue(epilogue_text);
    if (!parsed.ok()) return UsageError(parsed.status().message());
    epilogue = *parsed;
  }
  absl::StatusOr<Workload> workload =
      ParseWorkload(kernel.op, shape, dtype, epilogue, AvailableMemoryBytes());
  if (!workload.ok()) return UsageError(workload.status().message());
  if (!kernel.Supports(*workload)) {
    return UsageError(absl::StrCat("kernel ", kernel.name, " does not compute ", workload->Key()));
  }
  return workload;
}

absl::StatusOr<std::vector<int>> Session::ParseThreads(const std::string& text) {
  const int cpus = Facts().logical_cpus;
  std::vector<int> threads;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    int t = 0;
    if (!absl::SimpleAtoi(item, &t) || t < 1) {
      return UsageError(
          absl::StrCat("--threads ", text, ": each thread count must be an integer of at least 1"));
    }
    if (t > cpus) {
      return UsageError(absl::StrCat("--threads ", text, ": this process may use ", cpus,
                                     " CPUs, so at most ", cpus, " threads"));
    }
    threads.push_back(t);
  }
  return threads;
}

absl::StatusOr<std::vector<TunedResult>> Session::TunedRows(const MachineProfile& profile) {
  absl::StatusOr<TuningDb*> db = Db();
  if (!db.ok()) return db.status();
  // A row that does not read is left out, said once on stderr: the rest still report and predict
  // (`rooftune db check` lists it as a problem).
  std::vector<std::string> unreadable;
  absl::StatusOr<std::vector<TunedResult>> rows = (*db)->All(profile.Fingerprint(), &unreadable);
  for (const std::string& why : unreadable) Progress(absl::StrCat("warning: left out: ", why));
  return rows;
}

absl::StatusOr<Session::Machine> Session::ProfileWithRows() {
  absl::StatusOr<MachineProfile> profile = MeasuredProfile(true, false);
  if (!profile.ok()) return profile.status();
  absl::StatusOr<std::vector<TunedResult>> rows = TunedRows(*profile);
  if (!rows.ok()) return rows.status();
  absl::StatusOr<TuningDb*> db = Db();
  if (!db.ok()) return db.status();
  absl::StatusOr<std::vector<TuningDb::ThreadChoice>> choices =
      (*db)->ThreadChoices(profile->Fingerprint());
  if (!choices.ok()) return choices.status();
  return Machine{*std::move(profile), *std::move(rows), *std::move(choices)};
}

absl::StatusOr<Session::ResolvedConfig> Session::ResolveConfig(const Kernel& kernel,
                                                               const Workload& workload,
                                                               int threads, CacheMode cache,
                                                               const std::string& config_text,
                                                               const MachineProfile& profile) {
  ResolvedConfig resolved{kernel.InitialConfig(workload, threads, cache, profile),
                          "initial (analytic)"};
  if (kernel.params.params().empty()) {
    resolved.source = "no tunables";
    if (!config_text.empty())
      return UsageError(absl::StrCat("kernel ", kernel.name, " has no tunables"));
    return resolved;
  }
  absl::StatusOr<TuningDb*> db = Db();
  // Read-only without a database: nothing stored, nothing created.
  const bool no_database = read_only_ && absl::IsNotFound(db.status());
  if (!db.ok() && !no_database) return db.status();
  absl::StatusOr<std::optional<StoredConfig>> stored =
      no_database ? std::optional<StoredConfig>()
                  : LoadStoredConfig(**db, profile, kernel, workload, threads, cache);
  if (!stored.ok()) return stored.status();
  if (stored->has_value()) {
    resolved = {(*stored)->config, (*stored)->completed
                                       ? "tuned (database; parameters added since filled in)"
                                       : "tuned (database)"};
    if ((*stored)->cache != cache) {
      absl::StrAppend(&resolved.source, ", timed ", ToString((*stored)->cache));
    }
  }
  if (!config_text.empty()) {
    absl::StatusOr<Config> config = kernel.params.Parse(config_text, resolved.config);
    if (!config.ok()) return UsageError(absl::StrCat("--config: ", config.status().message()));
    resolved = {*config, "given"};
  }
  return resolved;
}

}  // namespace rooftune::cli
