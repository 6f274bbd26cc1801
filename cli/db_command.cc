// rooftune db: the tuning database across machines. `list` shows each machine's rows with their
// provenance; `export` writes machines and rows to a JSON file; `import` reads one back; `merge`
// takes another database's rows, keeping per key the faster (or the newer); `check` verifies
// the file and every stored row.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/common.h"
#include "cli/flags.h"
#include "cli/options.h"
#include "cli/subcommands.h"
#include "framework/tuning_db_export.h"
#include "nlohmann/json.hpp"

namespace rooftune::cli {
namespace {

std::string CpuModelOf(const std::string& profile_json) {
  nlohmann::json j = nlohmann::json::parse(profile_json, nullptr, false);
  return j.is_object() ? j.value("cpu_model", std::string("?")) : "?";
}

// A row's provenance as JSON (an empty object when it has none that reads), and one field of it
// as text ("" when absent).
nlohmann::json ProvenanceOf(const TunedResult& row) {
  nlohmann::json j = nlohmann::json::parse(row.provenance, nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

std::string Field(const nlohmann::json& provenance, const char* field) {
  if (!provenance.contains(field)) return "";
  return provenance[field].is_string() ? provenance[field].get<std::string>()
                                       : provenance[field].dump();
}

absl::StatusOr<int> List(TuningDb& db, const std::string& this_machine, bool json) {
  absl::StatusOr<std::vector<TuningDb::Machine>> machines = db.Machines();
  if (!machines.ok()) return machines.status();
  absl::StatusOr<std::vector<TunedResult>> rows = db.All();
  if (!rows.ok()) return rows.status();
  std::map<std::string, std::vector<const TunedResult*>> by_machine;
  for (const TunedResult& r : *rows) by_machine[r.fingerprint].push_back(&r);
  nlohmann::json out = {{"schema_version", 1}, {"machines", nlohmann::json::array()}};
  for (const TuningDb::Machine& m : *machines) {
    const std::vector<const TunedResult*>& mine = by_machine[m.fingerprint];
    if (!json) {
      std::cout << absl::StrFormat("machine %s  %s  profile of %s  %d row(s)%s\n", m.fingerprint,
                                   CpuModelOf(m.profile_json), m.updated_at, mine.size(),
                                   m.fingerprint == this_machine ? "  (this machine)" : "");
      if (!mine.empty()) {
        std::cout << absl::StrFormat("  %-18s %-34s %7s %12s %-10s %-20s %-8s %s\n", "kernel",
                                     "workload", "threads", "median", "verdict", "tuned at",
                                     "version", "origin");
      }
    }
    nlohmann::json machine = {{"machine", m.fingerprint},
                              {"cpu_model", CpuModelOf(m.profile_json)},
                              {"this_machine", m.fingerprint == this_machine},
                              {"updated_at", m.updated_at},
                              {"rows", nlohmann::json::array()}};
    for (const TunedResult* r : mine) {
      const nlohmann::json provenance = ProvenanceOf(*r);
      std::string origin = Field(provenance, "origin");
      if (const std::string merged = Field(provenance, "merged_from"); !merged.empty()) {
        absl::StrAppend(&origin, ", merged from ", merged);
      }
      if (json) {
        machine["rows"].push_back({{"kernel", r->kernel},
                                   {"workload", r->workload},
                                   {"threads", r->threads},
                                   {"config", r->config},
                                   {"median_seconds", r->median_seconds},
                                   {"verdict", VerdictText(r->verdict)},
                                   {"created_at", r->created_at},
                                   {"config_schema", r->config_schema},
                                   {"provenance", provenance}});
      } else {
        std::cout << absl::StrFormat(
            "  %-18s %-34s %7d %9.3f ms %-10s %-20s %-8s %s\n", r->kernel, r->workload, r->threads,
            r->median_seconds * 1e3, VerdictText(r->verdict), r->created_at,
            Field(provenance, "rooftune_version"), origin.empty() ? "?" : origin);
      }
    }
    // tune --threads auto's stored choices: the threads the library API runs each workload on.
    absl::StatusOr<std::vector<TuningDb::ThreadChoice>> choices = db.ThreadChoices(m.fingerprint);
    if (!choices.ok()) return choices.status();
    machine["thread_choices"] = nlohmann::json::array();
    for (const TuningDb::ThreadChoice& c : *choices) {
      machine["thread_choices"].push_back(ThreadChoiceJson(c));
      if (!json) {
        std::cout << absl::StrFormat(
            "  threads auto: %s %s on %d of %d threads (within %.0f%% of the fastest), %s\n",
            c.kernel, c.workload, c.threads, c.offered, c.tolerance * 100, c.created_at);
      }
    }
    out["machines"].push_back(std::move(machine));
  }
  if (json) std::cout << out.dump(2) << "\n";
  if (!json && machines->empty()) std::cout << "no machines in " << db.path() << "\n";
  return 0;
}

absl::StatusOr<int> Export(TuningDb& db, const std::string& machine, const std::string& out) {
  if (out.empty()) return UsageError("db export needs --out FILE.json");
  absl::StatusOr<std::vector<TuningDb::Machine>> machines = db.Machines();
  if (!machines.ok()) return machines.status();
  DbExport data;
  for (const TuningDb::Machine& m : *machines) {
    if (machine.empty() || m.fingerprint == machine) data.machines.push_back(m);
  }
  if (!machine.empty() && data.machines.empty()) {
    return UsageError(
        absl::StrCat("no machine ", machine, " in ", db.path(), " (rooftune db list shows them)"));
  }
  absl::StatusOr<std::vector<TunedResult>> rows = db.All(machine);
  if (!rows.ok()) return rows.status();
  data.rows = *std::move(rows);
  for (const TuningDb::Machine& m : data.machines) {
    absl::StatusOr<std::vector<TuningDb::ThreadChoice>> choices = db.ThreadChoices(m.fingerprint);
    if (!choices.ok()) return choices.status();
    data.thread_choices.insert(data.thread_choices.end(), choices->begin(), choices->end());
  }
  if (absl::Status s = WriteFile(out, ToJson(data).dump(1) + "\n"); !s.ok()) return s;
  std::cerr << absl::StrFormat("exported %d machine(s), %d row(s) and %d thread choice(s) to %s\n",
                               data.machines.size(), data.rows.size(), data.thread_choices.size(),
                               out);
  return 0;
}

absl::StatusOr<int> Import(Session& session, const std::string& file) {
  std::ifstream in(file);
  if (!in) return UsageError(absl::StrCat("cannot read ", file));
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return UsageError(absl::StrCat(file, " is not JSON"));
  absl::StatusOr<DbExport> data = ParseDbExport(j);
  if (!data.ok()) return UsageError(absl::StrCat(file, ": ", data.status().message()));
  absl::StatusOr<TuningDb*> db = session.Db();
  if (!db.ok()) return db.status();
  if (absl::Status s = (*db)->PutAll(data->machines, data->rows); !s.ok()) return s;
  for (const TuningDb::ThreadChoice& c : data->thread_choices) {
    if (absl::Status s = (*db)->PutThreadChoice(c); !s.ok()) return s;
  }
  std::cerr << absl::StrFormat(
      "imported %d machine(s), %d row(s) and %d thread choice(s) from %s into %s\n",
      data->machines.size(), data->rows.size(), data->thread_choices.size(), file, (*db)->path());
  return 0;
}

// Whether `theirs` replaces `ours` for the same key.
bool Replaces(const TunedResult& theirs, const TunedResult& ours, bool prefer_newer) {
  if (prefer_newer) return theirs.created_at > ours.created_at;
  return theirs.median_seconds > 0 &&
         (ours.median_seconds <= 0 || theirs.median_seconds < ours.median_seconds);
}

absl::StatusOr<int> Merge(Session& session, const std::string& other_path, bool prefer_newer) {
  absl::StatusOr<std::unique_ptr<TuningDb>> other = TuningDb::OpenReadOnly(other_path);
  if (!other.ok()) return UsageError(other.status().message());
  absl::StatusOr<TuningDb*> db = session.Db();
  if (!db.ok()) return db.status();
  std::error_code ec;
  if (std::filesystem::equivalent(other_path, (*db)->path(), ec)) {
    return UsageError(absl::StrCat("cannot merge ", other_path, " into itself"));
  }
  absl::StatusOr<std::vector<TuningDb::Machine>> theirs = (*other)->Machines();
  absl::StatusOr<std::vector<TuningDb::Machine>> ours = (*db)->Machines();
  absl::StatusOr<std::vector<TunedResult>> their_rows = (*other)->All();
  absl::StatusOr<std::vector<TunedResult>> our_rows = (*db)->All();
  for (const absl::Status& s :
       {theirs.status(), ours.status(), their_rows.status(), our_rows.status()}) {
    if (!s.ok()) return s;
  }
  std::map<std::string, std::string> profile_updated;  // ours, by machine
  for (const TuningDb::Machine& m : *ours) profile_updated[m.fingerprint] = m.updated_at;
  std::vector<TuningDb::Machine> machines;
  for (const TuningDb::Machine& m : *theirs) {
    auto it = profile_updated.find(m.fingerprint);
    if (it == profile_updated.end() || m.updated_at > it->second) machines.push_back(m);
  }
  // Keyed as the database keys results: a cold row is never compared with a warm one.
  using Key = std::tuple<std::string, std::string, std::string, Dtype, int, CacheMode>;
  auto key_of = [](const TunedResult& r) {
    return Key{r.fingerprint, r.kernel, r.workload, r.dtype, r.threads, r.cache};
  };
  std::map<Key, const TunedResult*> existing;
  for (const TunedResult& r : *our_rows) existing[key_of(r)] = &r;
  std::vector<TunedResult> taken;
  int added = 0, replaced = 0, kept = 0;
  for (TunedResult r : *their_rows) {
    auto it = existing.find(key_of(r));
    if (it != existing.end() && !Replaces(r, *it->second, prefer_newer)) {
      ++kept;
      continue;
    }
    ++(it == existing.end() ? added : replaced);
    nlohmann::json provenance = ProvenanceOf(r);
    provenance["merged_from"] = other_path;
    r.provenance = provenance.dump();
    taken.push_back(std::move(r));
  }
  if (absl::Status s = (*db)->PutAll(machines, taken); !s.ok()) return s;
  // Thread choices: theirs where ours has none for the key, or an older one.
  int choices_taken = 0;
  for (const TuningDb::Machine& m : *theirs) {
    absl::StatusOr<std::vector<TuningDb::ThreadChoice>> their_choices =
        (*other)->ThreadChoices(m.fingerprint);
    absl::StatusOr<std::vector<TuningDb::ThreadChoice>> our_choices =
        (*db)->ThreadChoices(m.fingerprint);
    if (!their_choices.ok()) return their_choices.status();
    if (!our_choices.ok()) return our_choices.status();
    for (const TuningDb::ThreadChoice& c : *their_choices) {
      const auto same = std::find_if(our_choices->begin(), our_choices->end(), [&](const auto& o) {
        return o.kernel == c.kernel && o.workload == c.workload && o.offered == c.offered;
      });
      if (same != our_choices->end() && same->created_at >= c.created_at) continue;
      if (absl::Status s = (*db)->PutThreadChoice(c); !s.ok()) return s;
      ++choices_taken;
    }
  }
  std::cerr << absl::StrFormat(
      "merged %s into %s: %d row(s) added, %d replaced (%s), %d kept; %d machine profile(s) "
      "and %d thread choice(s) taken\n",
      other_path, (*db)->path(), added, replaced, prefer_newer ? "newer" : "faster", kept,
      machines.size(), choices_taken);
  return 0;
}

// Every problem `db check` finds in one stored row, given its machine's profile (null when the
// machine has none that reads).
std::vector<std::string> RowProblems(const TunedResult& r, const MachineProfile* profile) {
  std::vector<std::string> problems;
  if (profile == nullptr) problems.push_back("its machine has no readable profile");
  if (profile != nullptr && (r.threads < 1 || r.threads > profile->logical_cpus)) {
    problems.push_back(absl::StrCat("threads ", r.threads, " outside 1..", profile->logical_cpus,
                                    " (the machine's CPUs)"));
  }
  if (!(r.median_seconds > 0) || !std::isfinite(r.median_seconds) || !(r.min_seconds >= 0) ||
      !std::isfinite(r.min_seconds)) {
    problems.push_back(absl::StrCat("times not finite and positive (median ", r.median_seconds,
                                    " s, min ", r.min_seconds, " s)"));
  }
  absl::StatusOr<Workload> w = ParseWorkloadKey(r.workload);
  if (!w.ok()) problems.push_back(absl::StrCat("workload: ", w.status().message()));
  const Kernel* kernel = KernelRegistry::Global().Find(r.kernel);
  if (kernel == nullptr) {
    problems.push_back("unknown kernel (a plugin not loaded with --plugin?)");
  } else if (kernel->IsStale(r.config_schema)) {
    problems.push_back(absl::StrCat("stale: tuned with parameters version ", r.config_schema,
                                    ", the kernel's are version ", kernel->config_schema));
  } else if (w.ok() && profile != nullptr) {
    bool completed = false;
    absl::StatusOr<Config> config = kernel->params.ParseStored(
        r.config, kernel->InitialConfig(*w, std::max(1, r.threads), r.cache, *profile), &completed);
    if (!config.ok()) problems.push_back(absl::StrCat("config: ", config.status().message()));
  }
  return problems;
}

// Every problem `db check` finds in one stored thread choice (`tune --threads auto`), given its
// machine's profile (null when the machine has none that reads).
std::vector<std::string> ChoiceProblems(const TuningDb::ThreadChoice& c,
                                        const MachineProfile* profile) {
  std::vector<std::string> problems;
  if (profile == nullptr) problems.push_back("its machine has no readable profile");
  if (profile != nullptr && (c.offered < 1 || c.offered > profile->logical_cpus)) {
    problems.push_back(absl::StrCat("threads offered ", c.offered, " outside 1..",
                                    profile->logical_cpus, " (the machine's CPUs)"));
  }
  if (c.threads < 1 || c.threads > c.offered) {
    problems.push_back(
        absl::StrCat("threads chosen ", c.threads, " outside 1..", c.offered, " (those offered)"));
  }
  if (!(c.tolerance > 0 && c.tolerance < 1)) {
    problems.push_back(absl::StrCat("tolerance ", c.tolerance, " outside (0, 1)"));
  }
  if (absl::StatusOr<Workload> w = ParseWorkloadKey(c.workload); !w.ok()) {
    problems.push_back(absl::StrCat("workload: ", w.status().message()));
  }
  if (KernelRegistry::Global().Find(c.kernel) == nullptr) {
    problems.push_back("unknown kernel (a plugin not loaded with --plugin?)");
  }
  return problems;
}

// SQLite's integrity check, then each machine's profile and each row's and thread choice's sanity.
// Exit 1 when anything is wrong, as fsck does.
absl::StatusOr<int> Check(TuningDb& db, bool json) {
  absl::StatusOr<std::vector<std::string>> integrity = db.IntegrityCheck();
  if (!integrity.ok()) return integrity.status();
  std::vector<std::string> problems;
  if (!(integrity->size() == 1 && integrity->front() == "ok")) {
    for (const std::string& line : *integrity) problems.push_back("integrity: " + line);
  }
  absl::StatusOr<std::vector<TuningDb::Machine>> machines = db.Machines();
  if (!machines.ok()) return machines.status();
  std::map<std::string, MachineProfile> profiles;
  for (const TuningDb::Machine& m : *machines) {
    nlohmann::json j = nlohmann::json::parse(m.profile_json, nullptr, false);
    absl::StatusOr<MachineProfile> p =
        j.is_object() ? MachineProfile::FromJson(j)
                      : absl::StatusOr<MachineProfile>(absl::DataLossError("not a JSON object"));
    if (!p.ok()) {
      problems.push_back(absl::StrCat("machine ", m.fingerprint, ": profile unreadable (",
                                      p.status().message(), ")"));
    } else if (p->Fingerprint() != m.fingerprint) {
      problems.push_back(absl::StrCat("machine ", m.fingerprint, ": its profile's identity is ",
                                      p->Fingerprint()));
    } else {
      profiles.emplace(m.fingerprint, *std::move(p));
    }
  }
  std::vector<std::string> unreadable;
  absl::StatusOr<std::vector<TunedResult>> rows = db.All("", &unreadable);
  if (!rows.ok()) return rows.status();
  for (const std::string& why : unreadable) problems.push_back(absl::StrCat("unreadable: ", why));
  for (const TunedResult& r : *rows) {
    auto it = profiles.find(r.fingerprint);
    for (const std::string& problem :
         RowProblems(r, it == profiles.end() ? nullptr : &it->second)) {
      problems.push_back(absl::StrFormat("row %s %s %s threads=%d: %s", r.fingerprint, r.kernel,
                                         r.workload, r.threads, problem));
    }
  }
  absl::StatusOr<std::vector<TuningDb::ThreadChoice>> choices = db.ThreadChoices("");
  if (!choices.ok()) return choices.status();
  for (const TuningDb::ThreadChoice& c : *choices) {
    auto it = profiles.find(c.fingerprint);
    for (const std::string& problem :
         ChoiceProblems(c, it == profiles.end() ? nullptr : &it->second)) {
      problems.push_back(absl::StrFormat("thread choice %s %s %s offered=%d: %s", c.fingerprint,
                                         c.kernel, c.workload, c.offered, problem));
    }
  }
  if (json) {
    std::cout << nlohmann::json({{"schema_version", 1},
                                 {"machines", machines->size()},
                                 {"rows", rows->size()},
                                 {"thread_choices", choices->size()},
                                 {"ok", problems.empty()},
                                 {"problems", problems}})
                     .dump(2)
              << "\n";
  } else {
    for (const std::string& p : problems) std::cout << p << "\n";
    std::cout << absl::StrFormat(
        "%s: %d machine(s), %d row(s), %d thread choice(s): %s\n", db.path(), machines->size(),
        rows->size(), choices->size(),
        problems.empty() ? "ok" : absl::StrCat(problems.size(), " problem(s)"));
  }
  return problems.empty() ? 0 : 1;
}

}  // namespace

absl::StatusOr<int> DbCommand(Session& session, const std::vector<std::string>& operands) {
  const std::string action = operands.empty() ? "" : operands[0];
  const size_t wanted = action == "import" || action == "merge" ? 2 : 1;
  if (action != "list" && action != "export" && action != "import" && action != "merge" &&
      action != "check") {
    return UsageError(action.empty()
                          ? "db needs an action: list, export, import, merge or check (see "
                            "rooftune db --help)"
                          : absl::StrCat("unknown db action '", action,
                                         "': list, export, import, merge or check"));
  }
  if (operands.size() != wanted) {
    return UsageError(wanted == 2
                          ? absl::StrCat("db ", action, " takes one file")
                          : absl::StrCat("db ", action, " takes no file (--out for export)"));
  }
  const std::string machine = absl::GetFlag(FLAGS_machine);
  const std::string prefer = absl::GetFlag(FLAGS_prefer);
  if (prefer != "faster" && prefer != "newer") {
    return UsageError("--prefer must be faster or newer");
  }
  if (!machine.empty() && action != "export") {
    return UsageError("--machine applies to db export only");
  }
  if (action == "import") return Import(session, operands[1]);
  if (action == "merge") return Merge(session, operands[1], prefer == "newer");
  // Reading only: nothing is created or upgraded.
  absl::StatusOr<std::unique_ptr<TuningDb>> db = TuningDb::OpenReadOnly(session.db_path());
  if (!db.ok()) return db.status();
  if (action == "list") return List(**db, session.Facts().Fingerprint(), JsonFlag());
  if (action == "check") return Check(**db, JsonFlag());
  return Export(**db, machine, absl::GetFlag(FLAGS_out));
}

}  // namespace rooftune::cli
