// The CLI contract, end to end: exit status 0 / 1 / 2 and one clear line on stderr for each kind
// of bad input, and the happy paths a user relies on (help, list, verify, tune, bench, report).
#include <gtest/gtest.h>
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
#include "framework/executor.h"
#include "framework/int8_speedup.h"
#include "framework/kernel.h"
#include "framework/reader.h"
#include "framework/tuner.h"
#include "framework/tuning_db.h"
#include "nlohmann/json.hpp"
#include "probes/counters.h"
#include "probes/system_facts.h"
#include "tests/cli_fixture.h"
#include "tests/round_machine.h"

namespace rooftune::cli_testing {
namespace {

// run's progress: which tune of how many, and at most how long the rest takes (each tune's
// budget at each thread count), in seconds while short and minutes after.
TEST(RunProgress, SaysWhichTuneAndAtMostHowLongIsLeft) {
  // 14 tunes left at 2 thread counts and 4 s (run --quick here): 112 s.
  EXPECT_EQ(rooftune::cli::RunProgress(2, 16, "gemm_f32 gemm 256x256x256 f32 none", 2, 4),
            "run: [3/16] gemm_f32 gemm 256x256x256 f32 none; at most 112 s left");
  // 16 at 2 and 4 s: 128 s, rounded up to 3 min.
  EXPECT_EQ(rooftune::cli::RunProgress(0, 16, "a", 2, 4), "run: [1/16] a; at most 3 min left");
  // 14 tunes left at 7 thread counts (a 64-CPU server) and 30 s: 49 minutes.
  EXPECT_EQ(rooftune::cli::RunProgress(2, 16, "gemv_f32 gemv 8192x8192 f32 none", 7, 30),
            "run: [3/16] gemv_f32 gemv 8192x8192 f32 none; at most 49 min left");
  EXPECT_EQ(rooftune::cli::RunProgress(15, 16, "x", 1, 30), "run: [16/16] x; at most 30 s left");
}

TEST_F(Cli, HelpExplainsTheCommandsAndExitStatuses) {
  const Outcome o = Run("--help");
  EXPECT_EQ(o.status, 0);
  for (const char* word : {"list", "verify", "bench", "tune", "probe", "report", "run", "MxNxK",
                           "exit", "crashes or hangs while loading", "exhausts"}) {
    EXPECT_NE(o.out.find(word), std::string::npos) << word;
  }
  EXPECT_EQ(Run("").status, 2);
}

TEST_F(Cli, EachCommandExplainsItsOwnFlags) {
  Outcome o = Run("tune --help");
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(absl::StartsWith(o.out, "usage: rooftune tune --kernel K")) << o.out;
  // Every flag tune reads, each with its help; none it does not read.
  for (const char* flag : {"--kernel K", "--shape S", "--threads T", "--budget-seconds B",
                           "--strategy NAME", "--cold", "--warm", "--json", "--db FILE"}) {
    EXPECT_NE(o.out.find(flag), std::string::npos) << flag;
  }
  EXPECT_NE(o.out.find("default 60"), std::string::npos);
  EXPECT_EQ(o.out.find("--format"), std::string::npos);
  EXPECT_EQ(o.out.find("--config"), std::string::npos);
  // `help COMMAND` says the same; lines stay within 100 columns.
  EXPECT_EQ(Run("help tune").out, o.out);
  for (absl::string_view line : absl::StrSplit(o.out, '\n')) EXPECT_LE(line.size(), 100u) << line;

  o = Run("report --help");
  EXPECT_NE(o.out.find("--format F"), std::string::npos);
  EXPECT_EQ(o.out.find("--kernel"), std::string::npos);
  ExpectUsageError("frobnicate --help", "unknown command 'frobnicate'");
  ExpectUsageError("simulate-once --help", "unknown command 'simulate-once'");
}

TEST_F(Cli, AFlagTheCommandDoesNotTakeIsRefused) {
  ExpectUsageError("list --shape 8x8",
                   "--shape does not apply to 'list' (see rooftune list --help)");
  ExpectUsageError("report --json", "--json does not apply to 'report'");
  ExpectUsageError("bench --kernel gemm_f32 --shape 8x8x8 --budget-seconds 3",
                   "--budget-seconds does not apply to 'bench'");
  ExpectUsageError("simulate --kernel gemm_f32 --shape 8x8x8 --threads 2",
                   "--threads does not apply to 'simulate'");
  ExpectUsageError("run --kernel gemm_f32", "--kernel does not apply to 'run'");
  // A negated boolean is the flag itself; --db and --plugin go with every command.
  const Outcome o = Run("list --nojson --db " + (dir_ / "any.db").string());
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("gemm_f32"), std::string::npos);
}

TEST_F(Cli, BadInputGetsOneLineAndStatusTwo) {
  ExpectUsageError("frobnicate", "unknown command 'frobnicate'");
  ExpectUsageError("verify --kernel nope --shape 4x4x4", "unknown kernel 'nope'");
  ExpectUsageError("verify --kernel gemm_f32 --shape 0x4x4", "at least 1");
  ExpectUsageError("verify --kernel gemm_f32 --shape 4x-4x4", "at least 1");
  ExpectUsageError("verify --kernel gemm_f32 --shape 4xfourx4", "not an integer");
  ExpectUsageError("verify --kernel gemm_f32 --shape 4x4", "MxNxK");
  ExpectUsageError("verify --kernel gemm_f32", "--shape is required");
  ExpectUsageError("verify --kernel gemm_f32 --shape 200000x200000x200000", "more than the");
  ExpectUsageError("verify --kernel gemm_f32 --shape 8x8x8 --config MR=5", "outside its domain");
  ExpectUsageError("verify --kernel gemm_f32 --shape 8x8x8 --config ZZ=1",
                   "unknown parameter 'ZZ'");
  ExpectUsageError("verify --kernel gemm_f32 --shape 8x8x8 --config MC=", "expected name=value");
  ExpectUsageError("verify --kernel gemm_f32 --shape 8x8x8 --threads 0", "at least 1");
  ExpectUsageError("verify --kernel gemm_f32 --shape 8x8x8 --threads 4096", "at most");
  ExpectUsageError("verify --kernel gemm_f32 --shape 8x8x8 --dtype f16", "unknown dtype");
  ExpectUsageError("verify --kernel gemm_f32 --shape 8x8x8 --bogus", "unknown flag '--bogus'");
  ExpectUsageError("tune --kernel gemm_f32 --shape 8x8x8 --budget-seconds abc", "--budget_seconds");
  ExpectUsageError("tune --kernel gemm_f32 --shape 8x8x8 --strategy annealing",
                   "unknown --strategy");
  ExpectUsageError("bench --kernel gemm_f32 --shape 8x8x8 --cold --warm", "exclude each other");
  ExpectUsageError("bench --kernel gemm_f32 --shape 8x8x8 --versus nope", "unknown kernel 'nope'");
  ExpectUsageError("bench --kernel gemm_f32 --shape 8x8x8 --versus gemv_f32",
                   "--versus: kernel gemv_f32 does not compute gemm 8x8x8");
  ExpectUsageError("bench --kernel gemm_f32 --shape 8x8x8 --versus reference_gemm,",
                   "--versus: an empty kernel name");
  ExpectUsageError("tune --kernel gemm_f32 --shape 8x8x8 --cold --warm", "exclude each other");
  ExpectUsageError("report --format pdf", "--format must be md, html, json or text");
  // Before valgrind starts, not from inside it.
  ExpectUsageError("simulate --kernel gemm_f32 --shape 8x8x8 --config KC=-1", "outside its domain");
  ExpectUsageError("simulate --kernel gemm_f32 --shape 8x8x8 --config ZZ=1",
                   "unknown parameter 'ZZ'");
  ExpectUsageError("list extra", "unexpected argument 'extra'");
}

// Each command checks its flags at entry: a bad config, budget or strategy fails with one line
// before a probe could start, and leaves no database behind (the probe would have created one).
TEST_F(Cli, BadFlagsFailBeforeAnyProbeOrDatabase) {
  const fs::path db = dir_ / "never_created.db";
  for (const std::string args : {
           "bench --kernel gemm_f32 --shape 64x64x64 --config ZZ=1",
           "bench --kernel gemm_f32 --shape 64x64x64 --config MR=5",
           "bench --kernel gemm_s8 --shape 64x64x64 --config MR",
           "bench --kernel gemm_f32 --shape 64x64x64 --versus gemm_s8",
           "tune --kernel gemm_f32 --shape 64x64x64 --budget-seconds inf",
           "tune --kernel gemm_f32 --shape 64x64x64 --budget-seconds 1e309",
           "tune --kernel gemm_f32 --shape 64x64x64 --budget-seconds 0",
           "run --budget-seconds -3",
           "run --strategy annealing",
       }) {
    const Outcome o = Run(args, db.string());
    EXPECT_EQ(o.status, 2) << args << "\n" << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << args << ": " << o.err;
    EXPECT_FALSE(fs::exists(db)) << args << " created the database";
  }
}

TEST_F(Cli, CorruptDatabaseAndBadPluginAreRuntimeFailures) {
  const fs::path corrupt = dir_ / "corrupt.db";
  std::ofstream(corrupt) << std::string(4096, 'x');
  Outcome o = Run("verify --kernel gemm_f32 --shape 8x8x8", corrupt.string());
  EXPECT_EQ(o.status, 1) << o.err;
  EXPECT_NE(o.err.find("unreadable or corrupt"), std::string::npos) << o.err;
  EXPECT_EQ(Slurp(corrupt), std::string(4096, 'x')) << "a refused database must not be touched";

  const fs::path text = dir_ / "plugin.so";
  std::ofstream(text) << "not a library";
  o = Run("list --plugin " + text.string());
  EXPECT_EQ(o.status, 1) << o.err;
  EXPECT_NE(o.err.find("cannot load plugin"), std::string::npos) << o.err;
  o = Run(std::string("list --plugin ") + WRONG_ABI_PLUGIN);
  EXPECT_EQ(o.status, 1);
  EXPECT_NE(o.err.find("ABI version"), std::string::npos) << o.err;
}

TEST_F(Cli, ListShowsKernelsAndPluginKernels) {
  Outcome o = Run("list --json");
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["schema_version"], 1);
  bool found = false;
  for (const auto& k : j["kernels"]) {
    if (k["name"] == "gemm_f32") {
      found = true;
      EXPECT_EQ(k["params"].size(),
                12u);  // PATH SPLIT MR NR KC MC NC PAR PACKA PACKB INNER PREFETCHB
      EXPECT_GT(k["valid_configs"].get<int>(), 0);
    }
  }
  EXPECT_TRUE(found);
  o = Run(std::string("list --plugin ") + EXAMPLE_PLUGIN);
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("example_gemv_f32"), std::string::npos);
  o = Run(std::string("verify --plugin ") + EXAMPLE_PLUGIN +
          " --kernel example_gemv_f32 --shape 300x77 --threads 2");
  EXPECT_EQ(o.status, 0) << o.out << o.err;
}

TEST_F(Cli, VerifyPassesOnAwkwardShapes) {
  for (const char* shape : {"1x1x1", "7x13x29", "33x65x1"}) {
    const Outcome o = Run(std::string("verify --kernel gemm_f32 --shape ") + shape);
    EXPECT_EQ(o.status, 0) << o.out << o.err;
    EXPECT_NE(o.out.find("PASS"), std::string::npos);
    EXPECT_NE(o.out.find("initial (analytic)"), std::string::npos) << o.out;
  }
  const Outcome given = Run("verify --kernel gemm_f32 --shape 30x30x30 --config KC=64 --json");
  ASSERT_EQ(given.status, 0) << given.err;
  const nlohmann::json j = nlohmann::json::parse(given.out);
  EXPECT_EQ(j["config_source"], "given");
  EXPECT_EQ(j["correct"], true);
}

// verify checks the initial config bench and tune would run: the one planned on the stored
// profile's measured caches, not on the OS's report (here the probe found an L1 of 16 KiB and an
// L2 of 256 KiB, smaller than any server's, so the two plans differ in their blocks).
TEST_F(Cli, VerifyChecksTheInitialConfigOfTheStoredProfile) {
  const fs::path db = dir_ / "profiled.db";
  auto small_caches = [](rooftune::MachineProfile& p) {
    p.measured_levels = {{16 << 10, 14 << 10, 18 << 10, 1.2},
                         {256 << 10, 224 << 10, 288 << 10, 4.0},
                         {4 << 20, 3.5 * (1 << 20), 4.5 * (1 << 20), 15.0}};
  };
  SeedRoundProfile(db, small_caches);
  const rooftune::Kernel* kernel = rooftune::KernelRegistry::Global().Find("gemm_f32");
  ASSERT_NE(kernel, nullptr);
  const rooftune::Workload w{rooftune::Op::kGemm,      1024, 1024, 1024, rooftune::Dtype::kF32,
                             rooftune::Epilogue::kNone};
  rooftune::MachineProfile stored = rooftune::probes::ReadSystemFacts();
  small_caches(stored);
  const std::string planned =
      kernel->params.Format(kernel->InitialConfig(w, 1, CacheMode::kWarm, stored));
  ASSERT_NE(planned, kernel->params.Format(kernel->InitialConfig(
                         w, 1, CacheMode::kWarm, rooftune::probes::ReadSystemFacts())));
  const Outcome o = Run("verify --kernel gemm_f32 --shape 1024x1024x1024 --json", db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["config"], planned);
  EXPECT_EQ(j["correct"], true);
}

// --threads auto tunes every count of AutoThreadCounts, stores a row for each, and names the
// fewest threads as fast as the fastest, with each count's re-timed median.
TEST_F(Cli, TuneThreadsAutoTunesEveryCountAndChoosesOne) {
  const std::string db_path = (dir_ / "auto.db").string();
  const Outcome o =
      Run("tune --kernel gemv_f32 --shape 96x80 --threads auto --budget-seconds 1 --json", db_path);
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  const std::vector<int> counts = rooftune::AutoThreadCounts(int(rooftune::AllowedCpus().size()));
  ASSERT_EQ(j["benchmarks"].size(), counts.size());
  const nlohmann::json& chosen = j["threads_auto"];
  ASSERT_EQ(chosen["counts"].size(), counts.size()) << chosen.dump();
  for (size_t i = 0; i < counts.size(); ++i) {
    EXPECT_EQ(chosen["counts"][i]["threads"], counts[i]);
    EXPECT_EQ(chosen["counts"][i]["config"], j["benchmarks"][i]["config"]);
    EXPECT_GT(chosen["counts"][i]["real_time"].get<double>(), 0);
  }
  EXPECT_NE(std::find(counts.begin(), counts.end(), chosen["chosen"].get<int>()), counts.end());
  EXPECT_NE(o.err.find("chosen: "), std::string::npos) << o.err;
  EXPECT_EQ(chosen["offered"], counts.back());
  // The choice is stored for the library API, keyed by the most threads tried.
  {
    auto db = rooftune::TuningDb::OpenReadOnly(db_path);
    ASSERT_TRUE(db.ok()) << db.status();
    auto stored = (*db)->ThreadChoices(rooftune::probes::ReadSystemFacts().Fingerprint());
    ASSERT_TRUE(stored.ok()) << stored.status();
    ASSERT_EQ(stored->size(), 1u);
    EXPECT_EQ((*stored)[0].kernel, "gemv_f32");
    EXPECT_EQ((*stored)[0].workload, "gemv 96x80 f32 none");
    EXPECT_EQ((*stored)[0].offered, counts.back());
    EXPECT_EQ((*stored)[0].threads, chosen["chosen"].get<int>());
  }
  // "auto" is tune's alone: a bench runs one count.
  EXPECT_EQ(Run("bench --kernel gemv_f32 --shape 96x80 --threads auto", db_path).status, 2);
}

// The cache mode is part of a result's key: a --warm tune of a shape tuned --cold adds a row and
// leaves the cold one; each mode's bench runs its own mode's config.
TEST_F(Cli, AWarmTuneLeavesTheColdTunedRowOfTheSameShape) {
  const std::string db_path = (dir_ / "modes.db").string();
  const std::string tune = "tune --kernel gemv_f32 --shape 96x80 --threads 1 --budget-seconds 1";
  Outcome o = Run(tune + " --cold", db_path);
  ASSERT_EQ(o.status, 0) << o.err;
  o = Run(tune + " --warm", db_path);
  ASSERT_EQ(o.status, 0) << o.err;
  std::map<std::string, std::string> configs;  // cache mode -> config
  {
    absl::StatusOr<std::unique_ptr<rooftune::TuningDb>> db = rooftune::TuningDb::Open(db_path);
    ASSERT_TRUE(db.ok()) << db.status();
    absl::StatusOr<std::vector<rooftune::TunedResult>> all = (*db)->All();
    ASSERT_TRUE(all.ok());
    for (const rooftune::TunedResult& r : *all) configs[std::string(ToString(r.cache))] = r.config;
    ASSERT_EQ(all->size(), 2u);
    ASSERT_EQ(configs.size(), 2u);
    // The two configs made to differ in ROWS, so that which one a bench runs shows.
    rooftune::TunedResult cold =
        all->front().cache == rooftune::CacheMode::kCold ? all->front() : all->back();
    const bool warm_has_4 = absl::StrContains(configs["warm"], "ROWS=4,");
    std::vector<std::string> items = absl::StrSplit(cold.config, ',');
    for (std::string& item : items) {
      if (absl::StartsWith(item, "ROWS=")) item = warm_has_4 ? "ROWS=16" : "ROWS=4";
    }
    cold.config = absl::StrJoin(items, ",");
    ASSERT_NE(cold.config, configs["warm"]);
    ASSERT_TRUE((*db)->Put(cold).ok());
    configs["cold"] = cold.config;
  }
  for (const char* mode : {"cold", "warm"}) {
    o = Run(absl::StrCat("bench --kernel gemv_f32 --shape 96x80 --threads 1 --json --", mode),
            db_path);
    ASSERT_EQ(o.status, 0) << o.err;
    const nlohmann::json b = nlohmann::json::parse(o.out)["benchmarks"][0];
    EXPECT_EQ(b["cache"], mode);
    EXPECT_EQ(b["config_source"], "tuned (database)") << mode;
    EXPECT_EQ(b["config"], configs[mode]) << mode;
  }
}

// A config stored before the kernel gained a parameter is still used, that parameter taking the
// value that runs the kernel as it ran then, and the output says so.
TEST_F(Cli, AStoredConfigLackingANewParameterRunsAsItWasStored) {
  const std::string db_path = (dir_ / "older.db").string();
  Outcome o = Run(
      "tune --kernel gemv_u8s8 --dtype u8s8 --shape 40x70 --threads 1 --budget-seconds 1", db_path);
  ASSERT_EQ(o.status, 0) << o.err;
  {
    absl::StatusOr<std::unique_ptr<rooftune::TuningDb>> db = rooftune::TuningDb::Open(db_path);
    ASSERT_TRUE(db.ok()) << db.status();
    absl::StatusOr<std::vector<rooftune::TunedResult>> all = (*db)->All();
    ASSERT_TRUE(all.ok() && all->size() == 1u);
    // Every parameter but SPREAD, as before it existed, in a layout SPREAD applies to (the tune
    // may have stored one it does not: grouped rows, where the config has no SPREAD at all).
    rooftune::TunedResult older = all->front();
    older.config = "DOT=fastest,PACKW=copied,PF=0,ROWS=64,TOGETHER=4";
    ASSERT_TRUE((*db)->Put(older).ok());
  }
  o = Run("verify --kernel gemv_u8s8 --dtype u8s8 --shape 40x70 --threads 1", db_path);
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("tuned (database; parameters added since filled in)"), std::string::npos)
      << o.out;
  // As the config ran when it was stored (the initial config spreads its groups).
  EXPECT_NE(o.out.find("SPREAD=neighbours"), std::string::npos) << o.out;
}

// A re-probe says which ceilings moved from the stored profile, and keeps each stored ceiling it
// measures lower; --fresh stores what it measures. The stored one-thread DRAM read is cut to a
// tenth and the two-thread one raised tenfold first, so the new probe must come out far above
// the first and far below the second.
TEST_F(Cli, AReprobeSaysWhichCeilingsMovedAndKeepsTheHigherOnes) {
  Outcome o = Run("probe --quick --json --out " + (dir_ / "probe").string());
  ASSERT_EQ(o.status, 0) << o.err;
  const std::string fingerprint = nlohmann::json::parse(o.out)["fingerprint"];
  const std::string db_path = (dir_ / "tuning.db").string();
  auto dram_read = [&](int threads) {
    auto db = rooftune::TuningDb::Open(db_path);
    EXPECT_TRUE(db.ok()) << db.status();
    auto stored = (*db)->GetProfile(fingerprint);
    EXPECT_TRUE(stored.ok() && stored->has_value());
    const nlohmann::json profile = nlohmann::json::parse(**stored);
    for (const auto& c : profile["ceilings"]) {
      if (c["kind"] == "bandwidth" && c["level"] == "DRAM" && c["threads"] == threads &&
          c["source"] == "read") {
        return c;
      }
    }
    ADD_FAILURE() << "no DRAM read ceiling at " << threads << " threads";
    return nlohmann::json();
  };
  const double measured_one = dram_read(1)["per_second"].get<double>();
  const double measured_two = dram_read(2)["per_second"].get<double>();
  // Each read ceiling records the reader that set it, which its note names.
  for (int threads : {1, 2}) {
    const nlohmann::json c = dram_read(threads);
    ASSERT_TRUE(c.contains("reader")) << c.dump();
    EXPECT_TRUE(Reader::Parse(c["reader"].get<std::string>()).has_value()) << c.dump();
    EXPECT_NE(c["note"].get<std::string>().find("fastest reader " + c["reader"].get<std::string>()),
              std::string::npos)
        << c.dump();
  }
  {
    auto db = rooftune::TuningDb::Open(db_path);
    ASSERT_TRUE(db.ok()) << db.status();
    auto stored = (*db)->GetProfile(fingerprint);
    ASSERT_TRUE(stored.ok() && stored->has_value());
    nlohmann::json profile = nlohmann::json::parse(**stored);
    int changed = 0;
    for (auto& c : profile["ceilings"]) {
      if (c["kind"] == "bandwidth" && c["level"] == "DRAM" && c["source"] == "read") {
        c["per_second"] = c["per_second"].get<double>() * (c["threads"] == 1 ? 0.1 : 10);
        ++changed;
      }
    }
    ASSERT_EQ(changed, 2) << profile.dump();
    ASSERT_TRUE((*db)->PutProfile(fingerprint, profile.dump()).ok());
  }
  o = Run("probe --quick --force --out " + (dir_ / "probe").string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("moved by 2% or more from the stored profile"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("DRAM bandwidth, 1 thread (read): "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("DRAM bandwidth, 2 threads (read): "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("keep their stored rate"), std::string::npos) << o.err;
  const nlohmann::json kept = dram_read(2);
  EXPECT_DOUBLE_EQ(kept["per_second"].get<double>(), 10 * measured_two);
  EXPECT_NE(kept["note"].get<std::string>().find("kept over the latest probe's"), std::string::npos)
      << kept.dump();
  // The cut tenth is lower than anything the new probe measures: the new figure replaced it (two
  // quick probes beside other tests can differ twofold, so no closer figure is asserted).
  const nlohmann::json replaced = dram_read(1);
  EXPECT_GT(replaced["per_second"].get<double>(), 0.1 * measured_one);
  EXPECT_EQ(replaced["note"].get<std::string>().find("kept over the latest probe's"),
            std::string::npos)
      << replaced.dump();

  o = Run("probe --quick --fresh --out " + (dir_ / "probe").string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.err.find("keep their stored rate"), std::string::npos) << o.err;
  EXPECT_LT(dram_read(2)["per_second"].get<double>(), 5 * measured_two);
}

// The mean real time of bench --json's trial, from its "_mean" aggregate row: counters are totals
// over the timed calls divided by their number, so a mean, which a shared machine's slow calls
// pull above the median.
double MeanRealTime(const nlohmann::json& output) {
  for (const auto& row : output["benchmarks"]) {
    if (row.value("aggregate_name", "") == "mean") return row["real_time"].get<double>();
  }
  return output["benchmarks"][0]["real_time"].get<double>();
}

// The commands that use a tuned row, each checked after one tune of 64x48x40 on one and two
// threads.
class CliAfterTune : public Cli {
 protected:
  // bench with --cold: the tuned warm row's config, judged, with its levers.
  static void ExpectBenchUsesTheTunedConfig() {
    Outcome o = Run("bench --kernel gemm_f32 --shape 64x48x40 --json --cold");
    ASSERT_EQ(o.status, 0) << o.err;
    const nlohmann::json bench = nlohmann::json::parse(o.out);
    const auto& b = bench["benchmarks"][0];
    EXPECT_EQ(b["cache"], "cold");
    // Tuned warm (this shape stays in cache), benched cold: the warm row's config, said so.
    EXPECT_EQ(b["config_source"], "tuned (database), timed warm");
    EXPECT_GT(b["attainment"].get<double>(), 0);
    EXPECT_NE(b["binding_ceiling"].get<std::string>().find("thread"), std::string::npos);
    EXPECT_FALSE(b.contains("int8_vs_f32"));  // an f32 kernel has nothing to be compared with
    // Its levers, in the order they pay (a broken model prices none: levers_test). A built-in
    // kernel judged beside its ceiling's loop is never impossible.
    const nlohmann::json& levers = b["levers"];
    ASSERT_NE(b["verdict"], "impossible") << b.dump();
    ASSERT_EQ(levers.size(), 6u) << levers.dump();
    int i = 0;
    for (const char* name :
         {"fewer bytes", "more work per byte", "better reuse", "fusion", "threads", "inner loop"}) {
      EXPECT_EQ(levers[i]["lever"], name) << levers.dump();
      EXPECT_FALSE(levers[i++]["how"].get<std::string>().empty()) << levers.dump();
    }
  }

  // Other kernels on the same workload, each validated and timed in pairs with the tuned config:
  // the speedup over each with its quartiles, in JSON and in text.
  static void ExpectBenchVersusOtherKernels() {
    Outcome o = Run(
        "bench --kernel gemm_f32 --shape 64x48x40 --warm --versus reference_gemm,tiled_gemm_f32 "
        "--json");
    ASSERT_EQ(o.status, 0) << o.err;
    const nlohmann::json bench = nlohmann::json::parse(o.out);
    const nlohmann::json& versus = bench["benchmarks"][0]["versus"];
    ASSERT_EQ(versus.size(), 2u) << versus.dump();
    int i = 0;
    for (const char* name : {"reference_gemm", "tiled_gemm_f32"}) {
      const nlohmann::json& v = versus[i++];
      EXPECT_EQ(v["kernel"], name);
      EXPECT_EQ(v["validation"].get<std::string>().rfind("ok", 0), 0u) << v.dump();
      EXPECT_GE(v["pairs"].get<int>(), 11);
      EXPECT_GT(v["speedup"].get<double>(), 0);
      EXPECT_LE(v["speedup_low"].get<double>(), v["speedup"].get<double>());
      EXPECT_LE(v["speedup"].get<double>(), v["speedup_high"].get<double>());
      EXPECT_GT(v["real_time"].get<double>(), 0);
      EXPECT_GT(v["our_real_time"].get<double>(), 0);
    }
    EXPECT_EQ(versus[1]["config_source"].get<std::string>().find("initial"), 0u)
        << versus[1].dump();
    o = Run("bench --kernel gemm_f32 --shape 64x48x40 --warm --versus reference_gemm");
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_NE(o.out.find("  versus      reference_gemm"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("pairs); median call"), std::string::npos) << o.out;
  }

  // An int8 GEMV benched beside its f32 counterpart, with the bound of its speedup.
  static void ExpectInt8BenchedBesideItsF32Counterpart() {
    // An int8 kernel is timed beside rooftune's own f32 kernel of the same shape, with the bound of
    // its speedup: for a GEMV streamed from DRAM (cold), the ratio of the bytes each format moves.
    Outcome o = Run("bench --kernel gemv_s8 --shape 96x160 --json --cold");
    ASSERT_EQ(o.status, 0) << o.err;
    const nlohmann::json int8 = nlohmann::json::parse(o.out)["benchmarks"][0];
    ASSERT_TRUE(int8.contains("int8_vs_f32")) << int8.dump();
    const nlohmann::json& vs = int8["int8_vs_f32"];
    EXPECT_EQ(vs["f32_kernel"], "gemv_f32");
    EXPECT_NEAR(vs["speedup"].get<double>(),
                vs["f32_real_time"].get<double>() / int8["real_time"].get<double>(), 1e-9);
    using rooftune::Dtype, rooftune::Epilogue, rooftune::Op;
    const rooftune::Workload w{Op::kGemv, 1, 96, 160, Dtype::kS8F32, Epilogue::kNone};
    EXPECT_NEAR(vs["bound"].get<double>(),
                rooftune::F32Counterpart(w).CompulsoryBytes() / w.CompulsoryBytes(), 1e-9);
    EXPECT_NEAR(vs["fraction_of_bound"].get<double>(),
                vs["speedup"].get<double>() / vs["bound"].get<double>(), 1e-9);
    o = Run("bench --kernel gemv_s8 --shape 96x160");
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_NE(o.out.find("int8/f32    speedup"), std::string::npos) << o.out;
    EXPECT_EQ(o.out.find("levers      in the order they pay") != std::string::npos,
              o.out.find("(impossible)") == std::string::npos)
        << o.out;
  }

  // bench --counters on one thread and on two.
  static void ExpectCountersPerCall() {
    // bench --counters: every event the group opened is either counted per call or says why not;
    // where perf_event_open works, the calling thread's task clock per call is about the call's
    // time (the kernel ran on that thread, and only the timed calls were counted).
    Outcome o = Run("bench --kernel gemm_f32 --shape 64x48x40 --counters --json");
    ASSERT_EQ(o.status, 0) << o.err;
    const nlohmann::json output = nlohmann::json::parse(o.out);
    const nlohmann::json b = output["benchmarks"][0];
    const nlohmann::json& counters = b["counters"];
    EXPECT_GE(counters["calls"].get<int>(), 5) << counters.dump();
    ASSERT_GE(counters["events"].size(), 3u);
    bool task_clock_counted = false;
    for (const auto& e : counters["events"]) {
      if (!e["supported"].get<bool>()) {
        EXPECT_FALSE(e["reason"].get<std::string>().empty()) << e.dump();
        continue;
      }
      EXPECT_GE(e["per_call"].get<double>(), 0) << e.dump();
      if (e["metric"] == "task_clock") {
        task_clock_counted = true;
        const double ns_per_call = e["per_call"].get<double>();
        const double median_ns = b["real_time"].get<double>();
        EXPECT_GT(ns_per_call, 0.5 * median_ns) << e.dump();
        EXPECT_LT(ns_per_call, 2.0 * MeanRealTime(output) + 1e6) << e.dump();
      }
    }
    absl::StatusOr<rooftune::probes::CounterGroup> group =
        rooftune::probes::CounterGroup::Open(rooftune::probes::kSoftwareEvents);
    if (group.ok() && group->AnySupported()) EXPECT_TRUE(task_clock_counted) << counters.dump();

    o = Run("bench --kernel gemm_f32 --shape 64x48x40 --counters");
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_NE(o.out.find("  counters    per call, over the "), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("task_clock"), std::string::npos) << o.out;

    // Two threads: one group per CPU the threads are pinned to. Their clocks add up to about
    // twice the call (both CPUs held for it), where whole-CPU counting is permitted.
    o = Run("bench --kernel gemm_f32 --shape 64x48x40 --threads 2 --counters --json");
    ASSERT_EQ(o.status, 0) << o.err;
    const nlohmann::json two_output = nlohmann::json::parse(o.out);
    const nlohmann::json two = two_output["benchmarks"][0];
    EXPECT_EQ(two["counters"]["cpus"], 2) << two.dump();
    for (const auto& e : two["counters"]["events"]) {
      if (e["metric"] != "cpu_clock") continue;
      if (!e["supported"].get<bool>()) {
        EXPECT_NE(e["reason"].get<std::string>().find("unsupported"), std::string::npos);
        continue;
      }
      const double median_ns = two["real_time"].get<double>();
      EXPECT_GT(e["per_call"].get<double>(), 1.0 * median_ns) << e.dump();
      EXPECT_LT(e["per_call"].get<double>(), 2.5 * MeanRealTime(two_output) + 1e6) << e.dump();
    }
  }

  // simulate (where valgrind is installed).
  static void ExpectSimulatedTrafficBesideTheModel() {
    // simulate: the call, a call's fixed cost, the model beside them, and their ratio.
    if (std::system("valgrind --version >/dev/null 2>&1") == 0) {
      const Outcome o = Run(
          "simulate --kernel gemm_f32 --shape 64x48x40 --config PACKA=1,PACKB=1,PAR=0,PREFETCHB=0");
      ASSERT_EQ(o.status, 0) << o.err;
      EXPECT_NE(o.out.find("a call's fixed cost (1x1x1)"), std::string::npos) << o.out;
      EXPECT_NE(o.out.find("+ first touch of the packing buffers"), std::string::npos) << o.out;
      const size_t at = o.out.find("last level ", o.out.find("over the model: L1"));
      ASSERT_NE(at, std::string::npos) << o.out;
      const double last_level = std::stod(o.out.substr(at + 11));
      EXPECT_GT(last_level, 0.9) << o.out;
      EXPECT_LT(last_level, 1.1) << o.out;
    }
  }

  // report in each format, over the tuned rows.
  static void ExpectReportJudgesEveryRow() {
    // The report judges every row again, against the profile it prints: rows stored without a
    // verdict (as the benchmarks' tuning once stored them) get one.
    {
      auto db = rooftune::TuningDb::Open((dir_ / "tuning.db").string());
      ASSERT_TRUE(db.ok()) << db.status();
      absl::StatusOr<std::vector<rooftune::TunedResult>> all = (*db)->All();
      ASSERT_TRUE(all.ok());
      for (rooftune::TunedResult r : *all) {
        r.attainment = 0, r.verdict.reset(), r.binding.clear();
        ASSERT_TRUE((*db)->Put(r).ok());
      }
    }
    Outcome o = Run("report --format json --out " + (dir_ / "out").string());
    ASSERT_EQ(o.status, 0) << o.err;
    const nlohmann::json report = nlohmann::json::parse(Slurp(dir_ / "out/report.json"));
    EXPECT_EQ(report["schema_version"], 1);
    EXPECT_GE(report["results"].size(), 2u);
    for (const auto& r : report["results"]) {
      EXPECT_FALSE(r["verdict"].get<std::string>().empty()) << r.dump();
      EXPECT_GT(r["attainment"].get<double>(), 0) << r.dump();
      EXPECT_NE(r["binding_ceiling"].get<std::string>().find("thread"), std::string::npos)
          << r.dump();
      EXPECT_EQ(r["levers"].size(), r["verdict"] == "impossible" ? 0u : 6u) << r.dump();
    }
    o = Run("report");
    ASSERT_EQ(o.status, 0);
    EXPECT_NE(o.out.find("| gemm_f32 | gemm 64x48x40 f32 none |"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("## Summary"), std::string::npos) << o.out;
    o = Run("report --format html --out " + (dir_ / "out").string());
    ASSERT_EQ(o.status, 0) << o.err;
    const std::string html = Slurp(dir_ / "out/report.html");
    EXPECT_NE(html.find("<td>gemm_f32</td><td>gemm 64x48x40 f32 none</td>"), std::string::npos)
        << html;
    // The page holds its pictures, the tuned rows placed on the roofline: no file beside it.
    EXPECT_NE(html.find("<title>#1 gemm_f32 64x48x40 1T: "), std::string::npos) << html;
    EXPECT_EQ(html.find("src="), std::string::npos);
    EXPECT_FALSE(fs::exists(dir_ / "out/roofline.svg"));
    // The Markdown links them, written beside it.
    o = Run("report --format md --out " + (dir_ / "out").string());
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_NE(Slurp(dir_ / "out/report.md").find("](roofline.svg)"), std::string::npos);
    EXPECT_NE(Slurp(dir_ / "out/latency.svg").find("</svg>"), std::string::npos);
    EXPECT_NE(Slurp(dir_ / "out/roofline.svg").find("<title>#1 gemm_f32 64x48x40 1T: "),
              std::string::npos);
    // For a terminal: as wide as $COLUMNS, the results table a record per row when narrow.
    setenv("COLUMNS", "60", 1);
    o = Run("report --format text");
    unsetenv("COLUMNS");
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_NE(o.out.find("Summary\n-------"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("kernel:"), std::string::npos) << o.out;
    EXPECT_EQ(o.out.find("<svg"), std::string::npos);
  }
};

TEST_F(CliAfterTune, TuneStoresTheBestAndVerifyBenchAndReportUseIt) {
  Outcome o =
      Run("tune --kernel gemm_f32 --shape 64x48x40 --threads 1,2 --budget-seconds 1 --strategy "
          "descent --json");
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json tuned = nlohmann::json::parse(o.out);
  ASSERT_EQ(tuned["benchmarks"].size(), 2u);
  for (const auto& b : tuned["benchmarks"]) {
    EXPECT_EQ(b["correct"], true);
    EXPECT_EQ(b["strategy"], "descent");
    EXPECT_GT(b["configs_tried"].get<int>(), 0);
    EXPECT_GT(b["real_time"].get<double>(), 0);
    EXPECT_FALSE(b["verdict"].get<std::string>().empty());
  }
  o = Run("verify --kernel gemm_f32 --shape 64x48x40 --threads 2");
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("tuned (database)"), std::string::npos) << o.out;
  ExpectBenchUsesTheTunedConfig();
  ExpectBenchVersusOtherKernels();
  ExpectInt8BenchedBesideItsF32Counterpart();
  ExpectCountersPerCall();
  ExpectSimulatedTrafficBesideTheModel();
  ExpectReportJudgesEveryRow();
}

}  // namespace
}  // namespace rooftune::cli_testing
