// The CLI's databases: export, import and merge across a fleet, read-only commands that never
// write, another application's file left untouched, db check, and a tune whose write fails.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/common.h"
#include "framework/int8_speedup.h"
#include "framework/tuning_db.h"
#include "nlohmann/json.hpp"
#include "probes/counters.h"
#include "probes/system_facts.h"
#include "tests/cli_fixture.h"
#include "tests/round_machine.h"

namespace rooftune::cli_testing {
namespace {

// The fleet commands, between this machine and a second machine type.
class CliFleet : public Cli {
 protected:
  // Into database `c`: the rows of `exported` (this machine's, as db export wrote them) under a
  // second machine type (the CPU renamed, its identity recomputed), and two rows for this machine
  // (`here`): one faster than the export's (1 thread), one slower but newer (2 threads). Returns
  // the second machine's identity.
  static std::string SeedSecondMachine(const fs::path& exported, const fs::path& c,
                                       const std::string& here) {
    nlohmann::json other = nlohmann::json::parse(Slurp(exported));
    other["machines"][0]["profile"]["cpu_model"] = "Another CPU (fleet test)";
    const std::string there =
        rooftune::MachineProfile::FromJson(other["machines"][0]["profile"])->Fingerprint();
    other["machines"][0]["fingerprint"] = there;
    for (auto& row : other["results"]) row["fingerprint"] = there;
    const fs::path other_file = dir_ / "other.json";
    std::ofstream(other_file) << other.dump();
    EXPECT_EQ(Run("db import " + other_file.string(), c.string()).status, 0);
    {
      auto db = rooftune::TuningDb::Open(c.string());
      EXPECT_TRUE(db.ok());
      if (!db.ok()) return there;
      auto rows = (*db)->All(there);
      EXPECT_TRUE(rows.ok() && rows->size() == 2);
      if (!rows.ok()) return there;
      for (rooftune::TunedResult r : *rows) {
        r.fingerprint = here;
        r.config = r.threads == 1 ? "KC=128" : "KC=256";
        r.median_seconds = r.threads == 1 ? 0.001 : 0.003;
        r.created_at = "2026-12-02T10:00:00Z";
        EXPECT_TRUE((*db)->Put(r).ok());
      }
    }
    return there;
  }

  static void ExpectDbUsageErrors(const fs::path& a, const fs::path& c, const std::string& here) {
    ExpectUsageErrorWithDb("db", "db needs an action", a);
    ExpectUsageErrorWithDb("db frobnicate", "unknown db action 'frobnicate'", a);
    ExpectUsageErrorWithDb("db import", "db import takes one file", a);
    ExpectUsageErrorWithDb("db export", "db export needs --out FILE.json", a);
    ExpectUsageErrorWithDb("db merge " + a.string(), "into itself", a);
    ExpectUsageErrorWithDb("db merge " + (dir_ / "absent.db").string(), "no tuning database at", a);
    ExpectUsageErrorWithDb("db merge " + c.string() + " --prefer slower", "--prefer must be", a);
    ExpectUsageErrorWithDb("db list --machine " + here, "--machine applies to db export only", a);
    ExpectUsageErrorWithDb("list extra", "unexpected argument 'extra'", a);
  }
};

// export -> import -> export gives the same file; a bad import writes nothing; a second machine
// identity (an export with its CPU renamed) merges in beside this one, and the merge keeps the
// faster row per key unless --prefer newer; report renders the other machine.
TEST_F(CliFleet, FleetDatabasesExportImportAndMerge) {
  const fs::path a = dir_ / "fleet_a.db", b = dir_ / "fleet_b.db", c = dir_ / "fleet_c.db";
  const fs::path exported = dir_ / "fleet.json", again = dir_ / "fleet_again.json";
  const std::string here = SeedFleetDb(a, 0.002, "2026-12-01T10:00:00Z");
  Outcome o = Run("db export --out " + exported.string(), a.string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("exported 1 machine(s), 2 row(s) and 0 thread choice(s)"), std::string::npos)
      << o.err;
  o = Run("db import " + exported.string(), b.string());
  ASSERT_EQ(o.status, 0) << o.err;
  o = Run("db export --out " + again.string(), b.string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(Slurp(again), Slurp(exported));

  // Malformed files: exit 2, one line, nothing written.
  nlohmann::json bad = nlohmann::json::parse(Slurp(exported));
  bad["results"][0]["median_seconds"] = "fast";
  bad["results"][1]["config"] = "KC=128";  // would change a row if anything were written
  const fs::path bad_file = dir_ / "bad.json";
  std::ofstream(bad_file) << bad.dump();
  o = Run("db import " + bad_file.string(), b.string());
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("results[0]: \"median_seconds\" is string"), std::string::npos) << o.err;
  std::ofstream(bad_file) << "{not json";
  EXPECT_EQ(Run("db import " + bad_file.string(), b.string()).status, 2);
  EXPECT_EQ(Run("db export --out " + again.string(), b.string()).status, 0);
  EXPECT_EQ(Slurp(again), Slurp(exported));

  const std::string there = SeedSecondMachine(exported, c, here);
  ASSERT_NE(there, here);
  {  // A --threads auto choice made there travels with its rows.
    auto other = rooftune::TuningDb::Open(c.string());
    ASSERT_TRUE(other.ok());
    ASSERT_TRUE(
        (*other)->PutThreadChoice({there, "gemv_f32", "gemv 64x64 f32 none", 2, 1, 0.05}).ok());
  }
  o = Run("db merge " + c.string(), a.string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("2 row(s) added, 1 replaced (faster), 1 kept"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("and 1 thread choice(s) taken"), std::string::npos) << o.err;
  {
    auto merged = rooftune::TuningDb::OpenReadOnly(a.string());
    ASSERT_TRUE(merged.ok());
    auto choices = (*merged)->ThreadChoices(there);
    ASSERT_TRUE(choices.ok() && choices->size() == 1u);
    EXPECT_EQ((*choices)[0].threads, 1);
  }
  o = Run("db list --json", a.string());
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json list = nlohmann::json::parse(o.out);
  ASSERT_EQ(list["machines"].size(), 2u) << o.out;
  std::map<std::string, std::string> configs;  // "machine/threads" -> config
  for (const auto& m : list["machines"]) {
    EXPECT_EQ(m["this_machine"].get<bool>(), m["machine"] == here);
    for (const auto& r : m["rows"]) {
      configs[m["machine"].get<std::string>() + "/" + std::to_string(r["threads"].get<int>())] =
          r["config"];
      if (m["machine"] == there) EXPECT_EQ(r["provenance"]["merged_from"], c.string());
    }
  }
  EXPECT_EQ(configs[here + "/1"], "KC=128");  // faster: taken
  EXPECT_EQ(configs[here + "/2"], "KC=64");   // slower: kept
  EXPECT_EQ(configs[there + "/1"], "KC=64");
  o = Run("db merge " + c.string() + " --prefer newer", a.string());
  ASSERT_EQ(o.status, 0) << o.err;
  // Only this machine's 2-thread row is newer there than here (the rest are the same rows).
  EXPECT_NE(o.err.find("0 row(s) added, 1 replaced (newer), 3 kept"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("and 0 thread choice(s) taken"), std::string::npos) << o.err;  // the same
  o = Run("db list --json", a.string());
  for (const auto& m : nlohmann::json::parse(o.out)["machines"]) {
    for (const auto& r : m["rows"]) {
      if (m["machine"] == here && r["threads"] == 2) EXPECT_EQ(r["config"], "KC=256");
    }
  }
  o = Run("db list", a.string());
  EXPECT_NE(o.out.find("machine " + there + "  Another CPU (fleet test)"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("threads auto: gemv_f32 gemv 64x64 f32 none on 1 of 2 threads (within 5% "
                       "of the fastest)"),
            std::string::npos)
      << o.out;
  const Outcome listed = Run("db list --json", a.string());
  for (const auto& m : nlohmann::json::parse(listed.out)["machines"]) {
    ASSERT_EQ(m["thread_choices"].size(), m["machine"] == there ? 1u : 0u) << m.dump();
  }
  EXPECT_NE(o.out.find("(this machine)"), std::string::npos) << o.out;

  // The other machine's report, from its stored profile; every machine's, one folder each.
  o = Run("report --format json --machine " + there, a.string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("Another CPU (fleet test)"), std::string::npos);
  ExpectUsageErrorWithDb("report --machine all", "give --out DIR", a);
  ExpectUsageErrorWithDb("report --machine 0123456789abcdef", "no machine 0123456789abcdef", a);
  o = Run("report --machine all --out " + (dir_ / "fleet_reports").string(), a.string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(fs::exists(dir_ / "fleet_reports" / here / "report.md"));
  EXPECT_TRUE(fs::exists(dir_ / "fleet_reports" / there / "report.md"));

  ExpectDbUsageErrors(a, c, here);
}

// The fleet scripts: merge.sh merges node databases of two machine types into one; slurm_submit.sh
// (against a stand-in sbatch that records its calls) submits one array per machine type and a
// merge that waits for all of them.
TEST_F(Cli, FleetScriptsMergeNodeDatabasesAndSubmitSlurmArrays) {
  const fs::path scripts = fs::path(ROOFTUNE_SOURCE_DIR) / "scripts" / "fleet";
  const fs::path node_a = dir_ / "node_a.db", node_b = dir_ / "node_b.db";
  const fs::path fleet = dir_ / "fleet_script.db";
  const std::string here = SeedFleetDb(node_a, 0.002, "2026-12-01T10:00:00Z");
  // node_b: another machine type (its export with the CPU renamed, imported).
  ASSERT_EQ(Run("db export --out " + (dir_ / "node_a.json").string(), node_a.string()).status, 0);
  nlohmann::json other = nlohmann::json::parse(Slurp(dir_ / "node_a.json"));
  other["machines"][0]["profile"]["cpu_model"] = "Node B CPU";
  const std::string there =
      rooftune::MachineProfile::FromJson(other["machines"][0]["profile"])->Fingerprint();
  other["machines"][0]["fingerprint"] = there;
  for (auto& row : other["results"]) row["fingerprint"] = there;
  std::ofstream(dir_ / "node_b.json") << other.dump();
  ASSERT_EQ(Run("db import " + (dir_ / "node_b.json").string(), node_b.string()).status, 0);

  const std::string merge = "ROOFTUNE=" + std::string(ROOFTUNE_BINARY) + " " +
                            (scripts / "merge.sh").string() + " " + fleet.string() + " " +
                            node_a.string() + " " + node_b.string();
  ASSERT_EQ(std::system((merge + " >" + (dir_ / "merge.out").string() + " 2>&1").c_str()), 0)
      << Slurp(dir_ / "merge.out");
  const std::string listed = Slurp(dir_ / "merge.out");
  EXPECT_NE(listed.find("machine " + here), std::string::npos) << listed;
  EXPECT_NE(listed.find("machine " + there + "  Node B CPU"), std::string::npos) << listed;
  EXPECT_NE(std::system((merge + " " + (dir_ / "absent.db").string() + " >/dev/null 2>&1").c_str()),
            0);

  // A stand-in sbatch: records its arguments, prints a job id.
  const fs::path bin = dir_ / "fake_bin";
  fs::create_directories(bin);
  std::ofstream(bin / "sbatch") << "#!/bin/sh\necho \"$@\" >>" << (dir_ / "sbatch.log").string()
                                << "\necho $(( $(wc -l <" << (dir_ / "sbatch.log").string()
                                << ") + 100 ))\n";
  fs::permissions(bin / "sbatch", fs::perms::owner_all);
  const std::string submit = "PATH=" + bin.string() + ":$PATH " +
                             (scripts / "slurm_submit.sh").string() + " " +
                             (dir_ / "slurm_out").string() + " epyc:2 xeon -- --quick";
  ASSERT_EQ(std::system((submit + " >/dev/null 2>&1").c_str()), 0);
  const std::string calls = Slurp(dir_ / "sbatch.log");
  EXPECT_NE(calls.find("--partition=epyc --array=0-1"), std::string::npos) << calls;
  EXPECT_NE(calls.find("--partition=xeon --array=0-0"), std::string::npos) << calls;
  EXPECT_NE(calls.find("RUN_FLAGS=--quick"), std::string::npos) << calls;
  EXPECT_NE(calls.find("--dependency=afterok:101:102"), std::string::npos) << calls;
  EXPECT_NE(calls.find("merge.sh"), std::string::npos) << calls;
  EXPECT_NE(std::system(((scripts / "slurm_submit.sh").string() + " >/dev/null 2>&1").c_str()), 0);
}

// Pointed at another application's SQLite file, a command writes nothing to it: one line, exit 1.
TEST_F(Cli, AnotherApplicationsDatabaseIsLeftUntouched) {
  const fs::path foreign = dir_ / "foreign.db";
  ASSERT_EQ(std::system(("python3 -c \"import sqlite3; c = sqlite3.connect('" + foreign.string() +
                         "'); c.execute('create table notes (x)'); c.commit()\"")
                            .c_str()),
            0);
  const std::string before = Slurp(foreign);
  const fs::path ours = dir_ / "ours_to_merge.db";
  ASSERT_TRUE(rooftune::TuningDb::Open(ours.string()).ok());
  for (const std::string& args :
       {std::string("report"), "db merge " + ours.string(), std::string("db list"),
        std::string("verify --kernel gemm_f32 --shape 8x8x8")}) {
    const Outcome o = Run(args, foreign.string());
    EXPECT_NE(o.status, 0) << args;
    EXPECT_NE(o.err.find("not a rooftune tuning database"), std::string::npos)
        << args << ": " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_EQ(Slurp(foreign), before) << args;
  }
}

// report only reads: a missing database is not created (one line, exit 1), an existing one's
// bytes stay as they were, and a machine without a stored profile is told to probe, not probed.
TEST_F(Cli, ReportOnlyReadsTheDatabase) {
  const fs::path missing = dir_ / "never" / "created.db";
  Outcome o = Run("report", missing.string());
  EXPECT_EQ(o.status, 1) << o.err;
  EXPECT_NE(o.err.find("no tuning database at " + missing.string() +
                       " (rooftune probe or rooftune run creates it)"),
            std::string::npos)
      << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  EXPECT_FALSE(fs::exists(missing.parent_path()));

  const fs::path seeded = dir_ / "read_only.db";
  SeedFleetDb(seeded, 0.002, "2026-12-01T10:00:00Z");
  const std::string before = Slurp(seeded);
  const auto listing = [&] {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) names.push_back(entry.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  };
  const std::vector<std::string> files = listing();
  o = Run("report --format json", seeded.string());
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(Slurp(seeded), before);
  std::vector<std::string> after = listing();
  after.erase(std::remove_if(after.begin(), after.end(),
                             [](const std::string& n) { return n == "stdout" || n == "stderr"; }),
              after.end());
  std::vector<std::string> expected = files;
  expected.erase(
      std::remove_if(expected.begin(), expected.end(),
                     [](const std::string& n) { return n == "stdout" || n == "stderr"; }),
      expected.end());
  EXPECT_EQ(after, expected) << "report left a file beside the database";

  const fs::path empty = dir_ / "no_profile.db";
  ASSERT_TRUE(rooftune::TuningDb::Open(empty.string()).ok());
  const std::string empty_before = Slurp(empty);
  o = Run("report", empty.string());
  EXPECT_EQ(o.status, 1) << o.err;
  EXPECT_NE(o.err.find("no readable profile of this machine"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("rooftune probe measures it"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("measuring this machine"), std::string::npos) << o.err;
  EXPECT_EQ(Slurp(empty), empty_before);

  // verify reads a stored config where there is a database, and creates none where there is not.
  o = Run("verify --kernel gemm_f32 --shape 16x16x16 --json", missing.string());
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(nlohmann::json::parse(o.out)["config_source"], "initial (analytic)") << o.out;
  EXPECT_FALSE(fs::exists(missing.parent_path()));
  o = Run("verify --kernel gemm_f32 --shape 16x16x16", empty.string());
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(Slurp(empty), empty_before);
}

// db check reports each damaged or hostile row and profile, one line each, and exits 1; a sound
// database passes.
TEST_F(Cli, DbCheckReportsDamagedRowsAndProfiles) {
  const fs::path path = dir_ / "check.db";
  const std::string here = SeedFleetDb(path, 0.002, "2026-12-01T10:00:00Z");
  using Choice = rooftune::TuningDb::ThreadChoice;
  const Choice sound{here, "gemv_f32", "gemv 64x64 f32 none", 1, 1, 0.05};
  {
    auto db = rooftune::TuningDb::Open(path.string());
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->PutThreadChoice(sound).ok());
  }
  Outcome o = Run("db check", path.string());
  EXPECT_EQ(o.status, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("1 machine(s), 2 row(s), 1 thread choice(s): ok"), std::string::npos)
      << o.out;
  {
    auto db = rooftune::TuningDb::Open(path.string());
    ASSERT_TRUE(db.ok());
    auto choose = [&](const std::string& workload, auto change) {
      Choice bad = sound;
      bad.workload = workload;
      change(bad);
      ASSERT_TRUE((*db)->PutThreadChoice(bad).ok());
    };
    choose("gemv 11x11 f32 none", [](Choice& c) { c.threads = 2; });
    choose("gemv 12x12 f32 none", [](Choice& c) { c.offered = c.threads = 999; });
    choose("gemv 13x13 f32 none", [](Choice& c) { c.tolerance = 0; });
    choose("gemv 14x14 f32 none", [](Choice& c) { c.kernel = "no_such_kernel"; });
    choose("gemv 15x15 f32 none", [](Choice& c) { c.fingerprint = "0000000000000000"; });
    choose("not a workload", [](Choice&) {});
    rooftune::TunedResult r = (*db->get()->All(here))[0];
    auto put = [&](const std::string& workload, auto change) {
      rooftune::TunedResult bad = r;
      bad.workload = workload;
      change(bad);
      ASSERT_TRUE((*db)->Put(bad).ok());
    };
    put("gemm 1x1x1 f32 none", [](auto& b) { b.threads = 999; });
    put("gemm 2x2x2 f32 none", [](auto& b) { b.median_seconds = -1; });
    put("gemm 3x3x3 f32 none", [](auto& b) { b.kernel = "no_such_kernel"; });
    put("gemm 4x4x4 f32 none", [](auto& b) { b.config_schema = 0; });
    put("gemm 5x5x5 f32 none", [](auto& b) { b.config = "MR=5,NR=7"; });
    put("gemm 6x6x6 f32 none", [](auto& b) { b.fingerprint = "0000000000000000"; });
    ASSERT_TRUE((*db)->PutProfile("1111111111111111", "[1, 2]").ok());
    put("gemm 7x7x7 f32 none", [](auto&) {});
  }
  {
    // A cache mode no rooftune writes, as a hand edit would leave it.
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(
                  raw, "UPDATE results SET cache = 'tepid' WHERE workload = 'gemm 7x7x7 f32 none'",
                  nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(raw);
  }
  o = Run("db check", path.string());
  EXPECT_EQ(o.status, 1) << o.out << o.err;
  for (const std::string& says : std::vector<std::string>{
           "gemm 1x1x1 f32 none threads=999: threads 999 outside 1..",
           "gemm 2x2x2 f32 none threads=1: times not finite and positive",
           "gemm 3x3x3 f32 none threads=1: unknown kernel",
           "gemm 4x4x4 f32 none threads=1: stale: tuned with parameters version 0",
           "gemm 5x5x5 f32 none threads=1: config: ",
           "gemm 6x6x6 f32 none threads=1: its machine has no readable profile",
           "machine 1111111111111111: profile unreadable",
           "unreadable: tuning database " + path.string() +
               ": the row of gemm_f32 on 'gemm 7x7x7 f32 none': cache mode 'tepid' is neither warm "
               "nor cold",
           "gemv 11x11 f32 none offered=1: threads chosen 2 outside 1..1 (those offered)",
           "gemv 12x12 f32 none offered=999: threads offered 999 outside 1..",
           "gemv 13x13 f32 none offered=1: tolerance 0 outside (0, 1)",
           "gemv 14x14 f32 none offered=1: unknown kernel",
           "gemv 15x15 f32 none offered=1: its machine has no readable profile",
           "not a workload offered=1: workload: ", "14 problem(s)"}) {
    EXPECT_NE(o.out.find(says), std::string::npos) << says << "\n" << o.out;
  }
  o = Run("db check --json", path.string());
  EXPECT_EQ(o.status, 1);
  EXPECT_EQ(nlohmann::json::parse(o.out)["problems"].size(), 14u) << o.out;
  EXPECT_EQ(nlohmann::json::parse(o.out)["thread_choices"], 7) << o.out;
  // The report still renders, leaving out what it cannot price and saying which row it cannot read.
  o = Run("report --format json --machine " + here, path.string());
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("warning: left out: tuning database"), std::string::npos) << o.err;
  EXPECT_EQ(o.out.find("gemm 7x7x7"), std::string::npos);
}

// When the database refuses a tune's write, the result is saved beside it, named in the error,
// and imports from there.
TEST_F(Cli, ATuneWhoseWriteFailsSavesItsResultBesideTheDatabase) {
  const fs::path db = dir_ / "unsaved.db";
  SeedRoundProfile(db);
  const fs::path err = dir_ / "unsaved.err";
  const int raw = std::system(
      ("ROOFTUNE_TEST_FAIL_STORE=1 " + std::string(ROOFTUNE_BINARY) + " tune --db " + db.string() +
       " --kernel gemm_f32 --shape 16x16x16 --budget-seconds 1 >/dev/null 2>" + err.string())
          .c_str());
  ASSERT_TRUE(WIFEXITED(raw));
  EXPECT_EQ(WEXITSTATUS(raw), 1);
  const std::string text = Slurp(err);
  EXPECT_NE(text.find("best "), std::string::npos) << text;  // the result was still printed
  const size_t at = text.find("the result is saved in ");
  ASSERT_NE(at, std::string::npos) << text;
  const std::string file = text.substr(at + 23, text.find(' ', at + 23) - (at + 23));
  ASSERT_TRUE(fs::exists(file)) << file;
  EXPECT_EQ(Run("db list --json", db.string()).out.find("gemm 16x16x16"), std::string::npos);
  const Outcome o = Run("db import " + file, db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(Run("db list --json", db.string()).out.find("gemm 16x16x16 f32 none"),
            std::string::npos);
}

}  // namespace
}  // namespace rooftune::cli_testing
