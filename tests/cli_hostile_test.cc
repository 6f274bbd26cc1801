// The CLI against hostile kernels and plugins, and two tunes at once.
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
#include "framework/int8_speedup.h"
#include "framework/tuning_db.h"
#include "nlohmann/json.hpp"
#include "probes/counters.h"
#include "probes/system_facts.h"
#include "tests/cli_fixture.h"
#include "tests/round_machine.h"

namespace rooftune::cli_testing {
namespace {

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
       {"rejected MODE=wrong: WRONG",
        "rejected MODE=segfault: crashed: the worker killed by signal 11",
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
    std::system(("ROOFTUNE_TRIAL_DEADLINE_SECONDS=2 " + std::string(ROOFTUNE_BINARY) +
                 " tune --db " + db.string() + " --plugin " + HOSTILE_PLUGIN +
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
    const int raw =
        std::system((env + " " + std::string(ROOFTUNE_BINARY) + " " + args + " --plugin " +
                     HOSTILE_PLUGIN + " --db " + Db().string() + " >/dev/null 2>" + err.string())
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
    const Ran r = RunHostile(
        "ROOFTUNE_HOSTILE_LOAD=" + load + " ROOFTUNE_PLUGIN_LOAD_DEADLINE_SECONDS=1", "list");
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
  const Ran wrong =
      RunHostile(env, "verify --kernel hostile_gemv --shape 64x64 --config MODE=wrong");
  EXPECT_EQ(wrong.status, 1) << wrong.err;
}

// The worker's setup (the problem, its reference, the initial config) is not the candidate's
// time: a setup longer than a candidate's deadline (a deep GEMM's reference) must not be called a
// hang of the config sent first.
TEST_F(HostileCli, AWorkersSlowSetupIsNotACandidatesHang) {
  SeedRoundProfile(Db());
  for (const std::string command : {"verify", "bench"}) {
    const Ran r =
        RunHostile("ROOFTUNE_TRIAL_DEADLINE_SECONDS=1 ROOFTUNE_HOSTILE_SETUP_SECONDS=2",
                   command + " --kernel hostile_gemv --shape 64x64 --config MODE=correct");
    EXPECT_EQ(r.status, 0) << command << ": " << r.err;
  }
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

}  // namespace
}  // namespace rooftune::cli_testing
