// The CLI contract, end to end: exit status 0 / 1 / 2 and one clear line on stderr for each kind
// of bad input, and the happy paths a user relies on.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
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
#include "tests/round_machine.h"

namespace {

namespace fs = std::filesystem;

struct Outcome {
  int status = -1;
  std::string out, err;
};

class Cli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("rooftune_cli_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static std::string Slurp(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // Runs rooftune with `args` against the suite's own database.
  static Outcome Run(const std::string& args, const std::string& db = "") {
    const fs::path out = dir_ / "stdout", err = dir_ / "stderr";
    const std::string command = "cd " + dir_.string() + " && ROOFTUNE_DB=" +
                                (db.empty() ? (dir_ / "tuning.db").string() : db) + " " +
                                ROOFTUNE_BINARY + " " + args + " >" + out.string() + " 2>" +
                                err.string();
    const int raw = std::system(command.c_str());
    Outcome o;
    o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
    o.out = Slurp(out);
    o.err = Slurp(err);
    return o;
  }

  static void ExpectUsageError(const std::string& args, const std::string& message) {
    const Outcome o = Run(args);
    EXPECT_EQ(o.status, 2) << args << "\n" << o.err;
    EXPECT_NE(o.err.find(message), std::string::npos) << args << "\nstderr: " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "one line: " << o.err;
  }

  static void ExpectUsageErrorWithDb(const std::string& args, const std::string& message,
                                     const fs::path& db) {
    const Outcome o = Run(args, db.string());
    EXPECT_EQ(o.status, 2) << args << "\n" << o.err;
    EXPECT_NE(o.err.find(message), std::string::npos) << args << "\nstderr: " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "one line: " << o.err;
  }

  static fs::path dir_;
};
fs::path Cli::dir_;

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
  for (const char* word : {"list", "verify", "bench", "tune", "probe", "report", "run", "MxNxK", "exit",
                           "crashes or hangs while loading", "exhausts"}) {
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
  ExpectUsageError("list --shape 8x8", "--shape does not apply to 'list' (see rooftune list --help)");
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
  ExpectUsageError("verify --kernel gemm_f32 --shape 8x8x8 --config ZZ=1", "unknown parameter 'ZZ'");
  ExpectUsageError("verify --kernel gemm_f32 --shape 8x8x8 --config MC=", "expected name=value");
  ExpectUsageError("verify --kernel gemm_f32 --shape 8x8x8 --threads 0", "at least 1");
  ExpectUsageError("verify --kernel gemm_f32 --shape 8x8x8 --threads 4096", "at most");
  ExpectUsageError("verify --kernel gemm_f32 --shape 8x8x8 --dtype f16", "unknown dtype");
  ExpectUsageError("verify --kernel gemm_f32 --shape 8x8x8 --bogus", "unknown flag '--bogus'");
  ExpectUsageError("tune --kernel gemm_f32 --shape 8x8x8 --budget-seconds abc", "--budget_seconds");
  ExpectUsageError("tune --kernel gemm_f32 --shape 8x8x8 --strategy annealing", "unknown --strategy");
  ExpectUsageError("bench --kernel gemm_f32 --shape 8x8x8 --cold --warm", "exclude each other");
  ExpectUsageError("tune --kernel gemm_f32 --shape 8x8x8 --cold --warm", "exclude each other");
  ExpectUsageError("report --format pdf", "--format must be md, html, json or text");
  // Before valgrind starts, not from inside it.
  ExpectUsageError("simulate --kernel gemm_f32 --shape 8x8x8 --config KC=-1", "outside its domain");
  ExpectUsageError("simulate --kernel gemm_f32 --shape 8x8x8 --config ZZ=1", "unknown parameter 'ZZ'");
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
      EXPECT_EQ(k["params"].size(), 12u);  // PATH SPLIT MR NR KC MC NC PAR PACKA PACKB INNER PREFETCHB
      EXPECT_GT(k["valid_configs"].get<int>(), 0);
    }
  }
  EXPECT_TRUE(found);
  o = Run(std::string("list --plugin ") + EXAMPLE_PLUGIN);
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("example_gemv_f32"), std::string::npos);
  o = Run(std::string("verify --plugin ") + EXAMPLE_PLUGIN + " --kernel example_gemv_f32 --shape 300x77 --threads 2");
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
    rooftune::TunedResult cold = all->front().cache == rooftune::CacheMode::kCold ? all->front() : all->back();
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
  Outcome o = Run("tune --kernel gemv_u8s8 --dtype u8s8 --shape 40x70 --threads 1 --budget-seconds 1", db_path);
  ASSERT_EQ(o.status, 0) << o.err;
  {
    absl::StatusOr<std::unique_ptr<rooftune::TuningDb>> db = rooftune::TuningDb::Open(db_path);
    ASSERT_TRUE(db.ok()) << db.status();
    absl::StatusOr<std::vector<rooftune::TunedResult>> all = (*db)->All();
    ASSERT_TRUE(all.ok() && all->size() == 1u);
    rooftune::TunedResult older = all->front();
    std::vector<std::string> kept;  // every parameter but SPREAD, as before it existed
    for (absl::string_view p : absl::StrSplit(older.config, ',')) {
      if (!absl::StartsWith(p, "SPREAD=")) kept.emplace_back(p);
    }
    ASSERT_EQ(kept.size() + 1, size_t(std::count(older.config.begin(), older.config.end(), '='))) << older.config;
    older.config = absl::StrJoin(kept, ",");
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
      if (c["kind"] == "bandwidth" && c["level"] == "DRAM" && c["threads"] == threads && c["source"] == "read") {
        return c;
      }
    }
    ADD_FAILURE() << "no DRAM read ceiling at " << threads << " threads";
    return nlohmann::json();
  };
  const double measured_one = dram_read(1)["per_second"].get<double>();
  const double measured_two = dram_read(2)["per_second"].get<double>();
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
  EXPECT_GT(dram_read(1)["per_second"].get<double>(), 0.5 * measured_one);  // not the cut tenth

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

TEST_F(Cli, TuneStoresTheBestAndVerifyBenchAndReportUseIt) {
  Outcome o = Run(
      "tune --kernel gemm_f32 --shape 64x48x40 --threads 1,2 --budget-seconds 1 --strategy "
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

  o = Run("bench --kernel gemm_f32 --shape 64x48x40 --json --cold");
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
  for (const char* name : {"fewer bytes", "more work per byte", "better reuse", "fusion", "threads",
                           "inner loop"}) {
    EXPECT_EQ(levers[i]["lever"], name) << levers.dump();
    EXPECT_FALSE(levers[i++]["how"].get<std::string>().empty()) << levers.dump();
  }

  // An int8 kernel is timed beside rooftune's own f32 kernel of the same shape, with the bound of
  // its speedup: for a GEMV streamed from DRAM (cold), the ratio of the bytes each format moves.
  o = Run("bench --kernel gemv_s8 --shape 96x160 --json --cold");
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
              rooftune::F32Counterpart(w).CompulsoryBytes() / w.CompulsoryBytes(),
              1e-9);
  EXPECT_NEAR(vs["fraction_of_bound"].get<double>(),
              vs["speedup"].get<double>() / vs["bound"].get<double>(), 1e-9);
  o = Run("bench --kernel gemv_s8 --shape 96x160");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("int8/f32    speedup"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("levers      in the order they pay") != std::string::npos,
            o.out.find("(impossible)") == std::string::npos)
      << o.out;


  // bench --counters: every event the group opened is either counted per call or says why not;
  // where perf_event_open works, the calling thread's task clock per call is about the call's
  // time (the kernel ran on that thread, and only the timed calls were counted).
  {
    o = Run("bench --kernel gemm_f32 --shape 64x48x40 --counters --json");
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

  // simulate: the call, a call's fixed cost, the model beside them, and their ratio.
  if (std::system("valgrind --version >/dev/null 2>&1") == 0) {
    o = Run("simulate --kernel gemm_f32 --shape 64x48x40 --config PACKA=1,PACKB=1,PAR=0,PREFETCHB=0");
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_NE(o.out.find("a call's fixed cost (1x1x1)"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("+ first touch of the packing buffers"), std::string::npos) << o.out;
    const size_t at = o.out.find("last level ", o.out.find("over the model: L1"));
    ASSERT_NE(at, std::string::npos) << o.out;
    const double last_level = std::stod(o.out.substr(at + 11));
    EXPECT_GT(last_level, 0.9) << o.out;
    EXPECT_LT(last_level, 1.1) << o.out;
  }

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
  o = Run("report --format json --out " + (dir_ / "out").string());
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json report = nlohmann::json::parse(Slurp(dir_ / "out/report.json"));
  EXPECT_EQ(report["schema_version"], 1);
  EXPECT_GE(report["results"].size(), 2u);
  for (const auto& r : report["results"]) {
    EXPECT_FALSE(r["verdict"].get<std::string>().empty()) << r.dump();
    EXPECT_GT(r["attainment"].get<double>(), 0) << r.dump();
    EXPECT_NE(r["binding_ceiling"].get<std::string>().find("thread"), std::string::npos) << r.dump();
    EXPECT_EQ(r["levers"].size(), r["verdict"] == "impossible" ? 0u : 6u) << r.dump();
  }
  o = Run("report");
  ASSERT_EQ(o.status, 0);
  EXPECT_NE(o.out.find("| gemm_f32 | gemm 64x48x40 f32 none |"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("## Summary"), std::string::npos) << o.out;
  o = Run("report --format html --out " + (dir_ / "out").string());
  ASSERT_EQ(o.status, 0) << o.err;
  const std::string html = Slurp(dir_ / "out/report.html");
  EXPECT_NE(html.find("<td>gemm_f32</td><td>gemm 64x48x40 f32 none</td>"), std::string::npos) << html;
  // The page holds its pictures, the tuned rows placed on the roofline: no file beside it.
  EXPECT_NE(html.find("<title>#1 gemm_f32 64x48x40 1T: "), std::string::npos) << html;
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "out/roofline.svg"));
  // The Markdown links them, written beside it.
  o = Run("report --format md --out " + (dir_ / "out").string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(Slurp(dir_ / "out/report.md").find("](roofline.svg)"), std::string::npos);
  EXPECT_NE(Slurp(dir_ / "out/latency.svg").find("</svg>"), std::string::npos);
  EXPECT_NE(Slurp(dir_ / "out/roofline.svg").find("<title>#1 gemm_f32 64x48x40 1T: "), std::string::npos);
  // For a terminal: as wide as $COLUMNS, the results table a record per row when narrow.
  setenv("COLUMNS", "60", 1);
  o = Run("report --format text");
  unsetenv("COLUMNS");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("Summary\n-------"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("kernel:"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("<svg"), std::string::npos);
}

}  // namespace

namespace {

// A database holding this machine's profile (facts only) and two rows, as tune stores them.
std::string SeedFleetDb(const fs::path& path, double median_seconds,
                        const std::string& created_at) {
  auto db = rooftune::TuningDb::Open(path.string());
  EXPECT_TRUE(db.ok()) << db.status();
  const rooftune::MachineProfile facts = rooftune::probes::ReadSystemFacts();
  EXPECT_TRUE((*db)->PutProfile(facts.Fingerprint(), facts.ToJson().dump()).ok());
  for (int threads : {1, 2}) {
    rooftune::TunedResult r;
    r.fingerprint = facts.Fingerprint();
    r.kernel = "gemm_f32", r.workload = "gemm 64x64x64 f32 none", r.dtype = rooftune::Dtype::kF32;
    r.threads = threads, r.config = "KC=64";
    r.median_seconds = median_seconds, r.verdict = rooftune::Verdict::Class::kHeadroom, r.created_at = created_at;
    r.provenance = R"({"origin":"tuned","rooftune_version":"0.2.0"})";
    EXPECT_TRUE((*db)->Put(r).ok());
  }
  return facts.Fingerprint();
}

// A database holding this machine's facts with the round machine's ceilings (100 GFLOP/s f32,
// 10 GB/s from DRAM: tests/round_machine.h), stored as a quick probe's profile, and `extra` set
// on the profile first (a latency, a clock).
void SeedRoundProfile(const fs::path& path,
                      const std::function<void(rooftune::MachineProfile&)>& extra = {}) {
  auto handle = rooftune::TuningDb::Open(path.string());
  ASSERT_TRUE(handle.ok()) << handle.status();
  rooftune::MachineProfile profile = rooftune::probes::ReadSystemFacts();
  profile.ceilings = rooftune::fixtures::RoundMachine().ceilings;
  if (extra) extra(profile);
  nlohmann::json j = profile.ToJson();
  j["probe_quick"] = true;
  ASSERT_TRUE((*handle)->PutProfile(profile.Fingerprint(), j.dump()).ok());
}

}  // namespace

// export -> import -> export gives the same file; a bad import writes nothing; a second machine
// identity (an export with its CPU renamed) merges in beside this one, and the merge keeps the
// faster row per key unless --prefer newer; report renders the other machine.
TEST_F(Cli, FleetDatabasesExportImportAndMerge) {
  const fs::path a = dir_ / "fleet_a.db", b = dir_ / "fleet_b.db", c = dir_ / "fleet_c.db";
  const fs::path exported = dir_ / "fleet.json", again = dir_ / "fleet_again.json";
  const std::string here = SeedFleetDb(a, 0.002, "2026-12-01T10:00:00Z");
  Outcome o = Run("db export --out " + exported.string(), a.string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("exported 1 machine(s) and 2 row(s)"), std::string::npos) << o.err;
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

  // A second machine type: the same export with its CPU renamed and its identity recomputed.
  nlohmann::json other = nlohmann::json::parse(Slurp(exported));
  other["machines"][0]["profile"]["cpu_model"] = "Another CPU (fleet test)";
  const std::string there =
      rooftune::MachineProfile::FromJson(other["machines"][0]["profile"])->Fingerprint();
  ASSERT_NE(there, here);
  other["machines"][0]["fingerprint"] = there;
  for (auto& row : other["results"]) row["fingerprint"] = there;
  const fs::path other_file = dir_ / "other.json";
  std::ofstream(other_file) << other.dump();
  ASSERT_EQ(Run("db import " + other_file.string(), c.string()).status, 0);
  // ... and rows for this machine: one faster than a's (1 thread), one slower but newer.
  {
    auto db = rooftune::TuningDb::Open(c.string());
    ASSERT_TRUE(db.ok());
    auto rows = (*db)->All(there);
    ASSERT_TRUE(rows.ok() && rows->size() == 2);
    for (rooftune::TunedResult r : *rows) {
      r.fingerprint = here;
      r.config = r.threads == 1 ? "KC=128" : "KC=256";
      r.median_seconds = r.threads == 1 ? 0.001 : 0.003;
      r.created_at = "2026-12-02T10:00:00Z";
      ASSERT_TRUE((*db)->Put(r).ok());
    }
  }
  o = Run("db merge " + c.string(), a.string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("2 row(s) added, 1 replaced (faster), 1 kept"), std::string::npos) << o.err;
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
  o = Run("db list --json", a.string());
  for (const auto& m : nlohmann::json::parse(o.out)["machines"]) {
    for (const auto& r : m["rows"]) {
      if (m["machine"] == here && r["threads"] == 2) EXPECT_EQ(r["config"], "KC=256");
    }
  }
  o = Run("db list", a.string());
  EXPECT_NE(o.out.find("machine " + there + "  Another CPU (fleet test)"), std::string::npos)
      << o.out;
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

  // Usage errors.
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

// predict on a machine whose profile is the round machine's ceilings under this machine's
// identity: the prediction as JSON, then measured, and its input checks.
TEST_F(Cli, PredictPricesAnMlpBeforeRunningItAndMeasuresWhenAsked) {
  const fs::path db = dir_ / "predict.db";
  SeedRoundProfile(db);
  Outcome o = Run("predict --mlp 64,128,32 --batch 1,4 --json", db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["schema_version"], 1);
  ASSERT_EQ(j["batches"].size(), 2u);
  const auto& decode = j["batches"][0];
  EXPECT_EQ(decode["batch"], 1);
  ASSERT_EQ(decode["layers"].size(), 2u);
  EXPECT_EQ(decode["layers"][0]["workload"], "gemv 128x64 f32 bias_relu");
  EXPECT_EQ(decode["layers"][0]["kernel"], "gemv_f32");
  EXPECT_EQ(decode["layers"][1]["workload"], "gemv 32x128 f32 bias");
  EXPECT_EQ(j["batches"][1]["layers"][0]["workload"], "gemm 4x128x64 f32 bias_relu");
  for (const auto& batch : j["batches"]) {
    double sum = 0;
    for (const auto& layer : batch["layers"]) {
      EXPECT_GT(layer["bound_seconds"].get<double>(), 0) << layer.dump();
      EXPECT_TRUE(layer["bound_only"].get<bool>());  // no tuned rows in this database
      EXPECT_EQ(layer["predicted_seconds"], layer["bound_seconds"]);
      EXPECT_FALSE(layer.contains("measured_seconds"));
      sum += layer["predicted_seconds"].get<double>();
    }
    EXPECT_NEAR(batch["total"]["predicted_seconds"].get<double>(), sum, 1e-15);
  }

  o = Run("predict --mlp 64,128,32 --batch 2 --measure --repeat 3 --dtype u8s8", db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  const size_t prediction = o.out.find("predicted"), measured = o.out.find("measured, mean");
  ASSERT_NE(prediction, std::string::npos) << o.out;
  ASSERT_NE(measured, std::string::npos) << o.out;
  EXPECT_LT(prediction, measured);
  EXPECT_NE(o.out.find("gemm 2x128x64 u8s8 bias_relu"), std::string::npos) << o.out;
  o = Run("predict --mlp 64,32 --batch 1 --measure --repeat 2 --json", db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  j = nlohmann::json::parse(o.out);
  EXPECT_GT(j["batches"][0]["layers"][0]["measured_seconds"].get<double>(), 0);
  EXPECT_TRUE(j["batches"][0]["total"].contains("error"));

  // Sweeps: batch 1 to 1024, and the hidden width grown; both draw predict.svg.
  o = Run("predict --mlp 64,4096,32 --sweep batch --json --out " + (dir_ / "sweep").string(),
          db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  j = nlohmann::json::parse(o.out);
  ASSERT_EQ(j["sweep"]["points"].size(), 11u);
  EXPECT_EQ(j["sweep"]["points"][10]["batch"], 1024);
  EXPECT_DOUBLE_EQ(j["sweep"]["ridge_ops_per_byte"].get<double>(), 10);  // 100 GFLOP/s / 10 GB/s
  ASSERT_EQ(j["sweep"]["crossover_batch"].size(), 2u);
  // 4096 x 64 in f32 at batch B does 2B FLOPs per 4-byte weight: past the ridge of 10 from B = 32
  // (below it the activations are too few to matter).
  EXPECT_EQ(j["sweep"]["crossover_batch"][0], 32);
  const std::string svg = Slurp(dir_ / "sweep" / "predict.svg");
  EXPECT_NE(svg.find("Time per token against batch"), std::string::npos);
  o = Run("predict --mlp 64,128,32 --sweep width --json", db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  j = nlohmann::json::parse(o.out);
  const auto& points = j["sweep"]["points"];
  ASSERT_GE(points.size(), 2u);
  EXPECT_EQ(points[0]["hidden"], 64);
  EXPECT_EQ(points[1]["hidden"], 128);
  for (size_t i = 1; i < points.size(); ++i) {
    EXPECT_GT(points[i]["footprint_bytes"].get<double>(), points[i - 1]["footprint_bytes"].get<double>());
  }
  ExpectUsageErrorWithDb("predict --mlp 64,32 --sweep batch --batch 4", "drop --batch", db);
  ExpectUsageErrorWithDb("predict --mlp 64,32 --sweep width", "--mlp needs one", db);
  ExpectUsageErrorWithDb("predict --mlp 64,32 --sweep depth", "--sweep is batch or width", db);

  ExpectUsageErrorWithDb("predict", "predict needs --mlp", db);
  ExpectUsageErrorWithDb("predict --mlp 64", "at least two widths", db);
  ExpectUsageErrorWithDb("predict --mlp 64,x", "--mlp takes positive integers", db);
  ExpectUsageErrorWithDb("predict --mlp 64,32 --batch 0", "--batch takes positive integers", db);
  ExpectUsageErrorWithDb("predict --mlp 64,32 --dtype s8f32", "f32 or u8s8", db);
  ExpectUsageErrorWithDb("predict --mlp 64,32 --repeat 0", "--repeat must be between", db);
  ExpectUsageErrorWithDb("predict --mlp 64,32 --threads 1,2", "one thread count", db);
  ExpectUsageErrorWithDb("predict --mlp 16777216,16777216", "do not fit in available memory", db);
}

TEST_F(Cli, NapkinFormulasOnPublishedHardwareAndOnThisMachine) {
  Outcome o = Run("napkin roofline --flops 1e12 --bytes 1e11 --hardware H100 --json");
  ASSERT_EQ(o.status, 0) << o.err;
  nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["formula"], "roofline");
  EXPECT_EQ(j["bound_by"], "memory");  // 10 FLOP/byte against a ridge of 295
  EXPECT_NEAR(j["result"].get<double>(), 1e12 / (10 * 3.35e12), 1e-12);
  EXPECT_EQ(j["result"], j["seconds"]);
  EXPECT_NE(j["hardware"]["source"].get<std::string>().find("datasheet"), std::string::npos);
  o = Run("napkin kv-cache --layers 32 --kv-heads 8 --head-dim 128 --seq 4096 --batch 2 --json");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(nlohmann::json::parse(o.out)["result"].get<double>(), 1073741824.0);
  o = Run("napkin tile-efficiency --dim 200");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("efficiency             0.78125"), std::string::npos) << o.out;

  // This machine: the round machine's ceilings stored under its identity (100 GFLOP/s, 10 GB/s).
  const fs::path db = dir_ / "napkin.db";
  SeedRoundProfile(db);
  o = Run("napkin ridge --json", db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  j = nlohmann::json::parse(o.out);
  EXPECT_DOUBLE_EQ(j["result"].get<double>(), 10);
  EXPECT_EQ(j["hardware"]["name"], "this");

  ExpectUsageError("napkin", "napkin takes one formula");
  ExpectUsageError("napkin frobnicate", "unknown napkin formula 'frobnicate'");
  ExpectUsageError("napkin intensity --flops 1", "napkin intensity needs --bytes");
  ExpectUsageError("napkin intensity --flops 1 --bytes 2 --tokens 3",
                   "--tokens does not apply to napkin intensity");
  ExpectUsageError("napkin intensity --flops x --bytes 1", "--flops must be a number");
  ExpectUsageError("napkin intensity --flops 0 --bytes 1", "--flops must be a positive number");
  ExpectUsageError("napkin tile-efficiency --dim 200 --hardware H100", "takes no --hardware");
  ExpectUsageError("napkin ridge --hardware B200", "unknown hardware 'B200'");
  ExpectUsageError("napkin gqa --layers 32 --query-heads 32 --kv-heads 6 --head-dim 128 --seq 1 "
                   "--batch 1",
                   "--kv-heads (6) must divide --query-heads (32)");
  ExpectUsageError("napkin prefill --tokens 1 --params 1 --mfu 2 --hardware H100",
                   "--mfu must lie in (0, 1]");
}

TEST_F(Cli, SweepBatchTimesGemvsAgainstOneGemmAndFindsTheCrossover) {
  const fs::path db = dir_ / "sweep.db";
  SeedRoundProfile(db, [](rooftune::MachineProfile& p) { p.memory_latency_ns = 100; });
  Outcome o = Run("sweep batch --shape 256x128 --batch 1,8,64 --json", db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["schema_version"], 1);
  ASSERT_EQ(j["points"].size(), 3u);
  for (const auto& p : j["points"]) {
    EXPECT_GT(p["gemm_seconds"].get<double>(), 0);
    EXPECT_GT(p["gemm_bound_seconds"].get<double>(), 0);
    EXPECT_NEAR(p["gemv_calls_seconds"].get<double>(),
                p["batch"].get<double>() * j["gemv_seconds"].get<double>(), 1e-12);
  }
  // The round machine: 100 GFLOP/s, 10 GB/s: 256 x 128 f32 weights (128 KiB) take 13 us to
  // stream; at batch 64, 4.2 MFLOP take 42 us: the bound doubles before then.
  EXPECT_EQ(j["crossover_batch_predicted"], 64);
  // Little's law at 10 GB/s and 100 ns: 1000 bytes, 15.6 lines.
  EXPECT_NEAR(j["littles_law"]["lines_in_flight_needed"].get<double>(), 10e9 * 100e-9 / 64, 1e-9);
  o = Run("sweep batch --shape 256x128 --batch 1,2 --dtype u8s8", db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("crossover"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("Little's law"), std::string::npos) << o.out;
  ExpectUsageErrorWithDb("sweep", "sweep takes one kind: batch", db);
  ExpectUsageErrorWithDb("sweep width --shape 8x8", "sweep takes one kind: batch", db);
  ExpectUsageErrorWithDb("sweep batch", "needs --shape NxK", db);
  ExpectUsageErrorWithDb("sweep batch --shape 8x8x8", "--shape: ", db);
  ExpectUsageErrorWithDb("sweep batch --shape 8x8 --batch 0", "--batch takes positive integers", db);
  ExpectUsageErrorWithDb("sweep batch --shape 8x8 --dtype s8f32", "f32 or u8s8", db);
}

TEST_F(Cli, PrimerTablesFromTheBitsAndTheMeasuredMachine) {
  const fs::path db = dir_ / "primer.db";
  SeedRoundProfile(db, [](rooftune::MachineProfile& p) {
    p.memory_latency_ns = 90;
    p.clock_ghz = 2;
    // Measured levels (not identity): a 32 KiB L1 and a 256 KiB L2 for the simulated caches.
    p.measured_levels = {{32 << 10, 32 << 10, 32 << 10, 1.2, rooftune::LevelKind::kCache},
                         {256 << 10, 256 << 10, 256 << 10, 4, rooftune::LevelKind::kCache}};
  });
  Outcome o = Run("primer --json --dim 128", db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  ASSERT_EQ(j["number_formats"].size(), 9u);
  EXPECT_EQ(j["number_formats"][5]["name"], "fp8 e4m3");
  EXPECT_EQ(j["number_formats"][5]["largest"], 448);
  const auto& dram = j["memory_hierarchy"].back();
  EXPECT_EQ(dram["level"], "DRAM");
  EXPECT_EQ(dram["latency_cycles"], 180);
  EXPECT_EQ(dram["bandwidth_one_thread"], 10e9);
  // T = 8 to 128 at n = 128: the model, and the cache simulator running the textbook kernel.
  const nlohmann::json& tiled = j["tiled_matmul"];
  ASSERT_EQ(tiled.size(), 5u);
  for (size_t i = 0; i < tiled.size(); ++i) {
    const double t = 8 << i;
    EXPECT_EQ(tiled[i]["tile"], t);
    EXPECT_EQ(tiled[i]["model_bytes"], 2.0 * 128 * 128 * 128 / t * 4);
  }
  if (std::system("valgrind --version >/dev/null 2>&1") == 0) {
    for (const auto& row : tiled) ASSERT_TRUE(row.contains("simulated_l1_fill_bytes")) << row.dump();
    // Small tiles follow the law: A and B filled into the L1 about 2 n^3 / T bytes (C's fills
    // and the tiles' reuse across neighbours within a factor of two).
    const double small = tiled[0]["simulated_l1_fill_bytes"].get<double>() /
                         tiled[0]["model_bytes"].get<double>();
    EXPECT_GT(small, 0.5) << tiled[0].dump();
    EXPECT_LT(small, 2.0) << tiled[0].dump();
    // 128 x 128 tiles (192 KiB for three) outgrow the L1: its fills leave the law far behind,
    // while the 256 KiB L2 still holds the whole problem (A, B and C once: 192 KiB).
    EXPECT_GT(tiled[4]["simulated_l1_fill_bytes"].get<double>(),
              4 * tiled[4]["model_bytes"].get<double>())
        << tiled[4].dump();
    EXPECT_LT(tiled[4]["simulated_l2_fill_bytes"].get<double>(), 2.0 * 3 * 128 * 128 * 4)
        << tiled[4].dump();
  }
  o = Run("primer --dim 16", db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("fp8 e5m2"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("L1 fills"), std::string::npos) << o.out;
  ExpectUsageErrorWithDb("primer --dim 4", "--dim takes the tiled matmul's n, 8 to 4096", db);
  ExpectUsageErrorWithDb("primer --shape 8x8", "--shape does not apply to 'primer'", db);
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
  for (const std::string& args : {std::string("report"), "db merge " + ours.string(),
                                  std::string("db list"),
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
  expected.erase(std::remove_if(expected.begin(), expected.end(),
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
  Outcome o = Run("db check", path.string());
  EXPECT_EQ(o.status, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("1 machine(s), 2 row(s): ok"), std::string::npos) << o.out;
  {
    auto db = rooftune::TuningDb::Open(path.string());
    ASSERT_TRUE(db.ok());
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
  }
  o = Run("db check", path.string());
  EXPECT_EQ(o.status, 1) << o.out << o.err;
  for (const std::string& says :
       {"gemm 1x1x1 f32 none threads=999: threads 999 outside 1..",
        "gemm 2x2x2 f32 none threads=1: times not finite and positive",
        "gemm 3x3x3 f32 none threads=1: unknown kernel",
        "gemm 4x4x4 f32 none threads=1: stale: tuned with parameters version 0",
        "gemm 5x5x5 f32 none threads=1: config: ",
        "gemm 6x6x6 f32 none threads=1: its machine has no readable profile",
        "machine 1111111111111111: profile unreadable", "7 problem(s)"}) {
    EXPECT_NE(o.out.find(says), std::string::npos) << says << "\n" << o.out;
  }
  o = Run("db check --json", path.string());
  EXPECT_EQ(o.status, 1);
  EXPECT_EQ(nlohmann::json::parse(o.out)["problems"].size(), 7u) << o.out;
  // The report still renders, leaving out what it cannot price.
  EXPECT_EQ(Run("report --format json --machine " + here, path.string()).status, 0);
}

// When the database refuses a tune's write, the result is saved beside it, named in the error,
// and imports from there.
TEST_F(Cli, ATuneWhoseWriteFailsSavesItsResultBesideTheDatabase) {
  const fs::path db = dir_ / "unsaved.db";
  SeedRoundProfile(db);
  const fs::path err = dir_ / "unsaved.err";
  const int raw = std::system(("ROOFTUNE_TEST_FAIL_STORE=1 " + std::string(ROOFTUNE_BINARY) +
                               " tune --db " + db.string() +
                               " --kernel gemm_f32 --shape 16x16x16 --budget-seconds 1 >/dev/null 2>" +
                               err.string())
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
  EXPECT_NE(Run("db list --json", db.string()).out.find("gemm 16x16x16 f32 none"), std::string::npos);
}

// A kernel that segfaults, aborts, throws or hangs on some configs costs those configs, not the
// tune: each is rejected with what happened, and the correct config is stored.
TEST_F(Cli, ATuneSurvivesAKernelThatCrashesAbortsThrowsAndHangs) {
  const fs::path db = dir_ / "hostile.db";
  SeedRoundProfile(db);
  const fs::path err = dir_ / "hostile.err", out = dir_ / "hostile.out";
  const int raw = std::system(("ROOFTUNE_TRIAL_DEADLINE_SECONDS=2 " + std::string(ROOFTUNE_BINARY) +
                               " tune --db " + db.string() + " --plugin " + HOSTILE_PLUGIN +
                               " --kernel hostile_gemv --shape 64x64 --budget-seconds 30 >" +
                               out.string() + " 2>" + err.string())
                                  .c_str());
  const std::string text = Slurp(err);
  ASSERT_TRUE(WIFEXITED(raw)) << text;
  EXPECT_EQ(WEXITSTATUS(raw), 0) << text;
  for (const std::string& says :
       {"rejected MODE=wrong: WRONG", "rejected MODE=segfault: crashed: the worker killed by signal 11",
        "rejected MODE=abort: crashed: the worker killed by signal 6",
        "rejected MODE=throw: crashed: the worker killed by signal 6",
        "rejected MODE=hang: hung: no answer in 2 s, the worker was killed",
        "rejected MODE=exhaust_memory: crashed: the worker ran out of memory"}) {
    EXPECT_NE(text.find(says), std::string::npos) << says << "\n" << text;
  }
  EXPECT_NE(Slurp(out).find("MODE=correct"), std::string::npos) << Slurp(out);
  const Outcome listed = Run("db list --json", db.string());
  EXPECT_NE(listed.out.find("\"config\": \"MODE=correct\""), std::string::npos) << listed.out;

  // The failures are stored: the next tune skips them (no new hang), unless --retry-failed.
  auto tune_again = [&](const std::string& extra) {
    std::system(("ROOFTUNE_TRIAL_DEADLINE_SECONDS=2 " + std::string(ROOFTUNE_BINARY) + " tune --db " +
                 db.string() + " --plugin " + HOSTILE_PLUGIN +
                 " --kernel hostile_gemv --shape 64x64 --budget-seconds 30 " + extra +
                 " >/dev/null 2>" + err.string())
                    .c_str());
    return Slurp(err);
  };
  std::string again = tune_again("");
  EXPECT_NE(again.find("rejected MODE=segfault: failed in an earlier tune (crashed: the worker "
                       "killed by signal 11"),
            std::string::npos)
      << again;
  EXPECT_NE(again.find("rejected MODE=hang: failed in an earlier tune (hung"), std::string::npos)
      << again;
  EXPECT_EQ(again.find("rejected MODE=hang: hung:"), std::string::npos) << again;  // not re-run
  EXPECT_NE(again.find("rejected MODE=wrong: WRONG"), std::string::npos) << again;
  again = tune_again("--retry-failed");
  EXPECT_NE(again.find("rejected MODE=hang: hung: no answer in 2 s"), std::string::npos) << again;
}

// rooftune with the hostile plugin (tests/fixtures/hostile_plugin.cc).
class HostileCli : public Cli {
 protected:
  struct Ran {
    int status = -1;
    std::string err;
  };
  // rooftune `args` --plugin hostile under `env`, on a database of its own: exit status, stderr.
  static Ran RunHostile(const std::string& env, const std::string& args) {
    const fs::path err = dir_ / "hostile_run.err";
    const int raw = std::system((env + " " + std::string(ROOFTUNE_BINARY) + " " + args +
                                 " --plugin " + HOSTILE_PLUGIN + " --db " + Db().string() +
                                 " >/dev/null 2>" + err.string())
                                    .c_str());
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, Slurp(err)};
  }
  static fs::path Db() { return dir_ / "hostile_run.db"; }
};

// A plugin that crashes, aborts or hangs while it loads is one line naming it, exit 1; the
// command itself never starts (nothing is created).
TEST_F(HostileCli, APluginThatCrashesOrHangsWhileLoadingIsOneLine) {
  fs::remove(Db());
  for (const auto& [load, says] : std::vector<std::pair<std::string, std::string>>{
           {"segfault", "crashed while loading (signal 11"},
           {"abort", "crashed while loading (signal 6"},
           {"hang", "did not finish loading in 1 s (it hangs while it registers); not loaded"}}) {
    const Ran r =
        RunHostile("ROOFTUNE_HOSTILE_LOAD=" + load + " ROOFTUNE_PLUGIN_LOAD_DEADLINE_SECONDS=1", "list");
    EXPECT_EQ(r.status, 1) << load << ": " << r.err;
    EXPECT_NE(r.err.find(std::string("plugin '") + HOSTILE_PLUGIN + "' " + says), std::string::npos)
        << load << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_FALSE(fs::exists(Db()));
  // Loaded as it should, the same plugin lists its kernel.
  const Ran fine = RunHostile("", "list --json");
  EXPECT_EQ(fine.status, 0) << fine.err;
}

// verify and bench run the config in a worker first: one that crashes, aborts, throws, hangs or
// runs out of memory is one line naming kernel, config and what happened, exit 1; --in-process
// skips that first run (a correct config then runs as before).
TEST_F(HostileCli, VerifyAndBenchOfAConfigThatKillsItsWorkerAreOneLine) {
  SeedRoundProfile(Db());
  const std::string env = "ROOFTUNE_TRIAL_DEADLINE_SECONDS=2";
  for (const auto& [mode, says] : std::vector<std::pair<std::string, std::string>>{
           {"segfault", "crashed: the worker killed by signal 11"},
           {"abort", "crashed: the worker killed by signal 6"},
           {"throw", "crashed: the worker killed by signal 6"},
           {"hang", "hung: no answer in 2 s, the worker was killed"},
           {"exhaust_memory", "crashed: the worker ran out of memory"}}) {
    for (const std::string command : {"verify", "bench"}) {
      const Ran r =
          RunHostile(env, command + " --kernel hostile_gemv --shape 64x64 --config MODE=" + mode);
      EXPECT_EQ(r.status, 1) << command << " " << mode << ": " << r.err;
      EXPECT_NE(r.err.find("hostile_gemv MODE=" + mode + ": " + says), std::string::npos)
          << command << " " << mode << ": " << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
  }
  for (const std::string extra : {"", " --in-process"}) {
    const Ran r =
        RunHostile(env, "verify --kernel hostile_gemv --shape 64x64 --config MODE=correct" + extra);
    EXPECT_EQ(r.status, 0) << extra << ": " << r.err;
  }
  const Ran wrong = RunHostile(env, "verify --kernel hostile_gemv --shape 64x64 --config MODE=wrong");
  EXPECT_EQ(wrong.status, 1) << wrong.err;
}

// Two tunes at once on one database: both finish, both rows are stored, and the one that found
// the other running says that their timings disturb each other.
TEST_F(Cli, TwoConcurrentTunesBothStoreAndWarn) {
  const fs::path db = dir_ / "concurrent.db";
  SeedRoundProfile(db);
  auto tune = [&](const std::string& shape, const fs::path& err) {
    return std::string(ROOFTUNE_BINARY) + " tune --db " + db.string() +
           " --kernel gemm_f32 --shape " + shape + " --budget-seconds 3 >/dev/null 2>" +
           err.string();
  };
  const fs::path a = dir_ / "concurrent_a.err", b = dir_ / "concurrent_b.err";
  const std::string both = "sh -c '" + tune("32x32x32", a) + " & " + tune("48x48x48", b) +
                           "; status=$?; wait $! && exit $status'";
  ASSERT_EQ(std::system(both.c_str()), 0) << Slurp(a) << Slurp(b);
  const std::string listed = Run("db list --json", db.string()).out;
  EXPECT_NE(listed.find("gemm 32x32x32 f32 none"), std::string::npos) << listed;
  EXPECT_NE(listed.find("gemm 48x48x48 f32 none"), std::string::npos) << listed;
  const std::string warning = "another rooftune tune is running on this machine";
  EXPECT_TRUE(Slurp(a).find(warning) != std::string::npos ||
              Slurp(b).find(warning) != std::string::npos)
      << Slurp(a) << Slurp(b);
}
