// Both ends of the isolation protocol: the supervisor (IsolatedTrials) and the worker command.
// One request per line, {"config": "<text form>", "timing": {...}}; one answer per line, the
// trial's figures or the error RunTrial returned.
#include "cli/isolated_trials.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <new>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "cli/common.h"
#include "cli/flags.h"
#include "cli/options.h"
#include "cli/subcommands.h"
#include "framework/validation.h"
#include "nlohmann/json.hpp"

namespace rooftune::cli {
namespace {

// The worker's descriptor for its answers.
constexpr int kAnswerFd = 3;

nlohmann::json TimingJson(const TimingOptions& t) {
  return {{"min_seconds", t.min_seconds},         {"min_repetitions", t.min_repetitions},
          {"max_repetitions", t.max_repetitions}, {"max_seconds", t.max_seconds},
          {"warmup_runs", t.warmup_runs},         {"noisy_cv", t.noisy_cv},
          {"cold", t.cache == CacheMode::kCold}};
}

TimingOptions TimingOf(const nlohmann::json& j) {
  TimingOptions t;
  t.min_seconds = j.value("min_seconds", t.min_seconds);
  t.min_repetitions = j.value("min_repetitions", t.min_repetitions);
  t.max_repetitions = j.value("max_repetitions", t.max_repetitions);
  t.max_seconds = j.value("max_seconds", t.max_seconds);
  t.warmup_runs = j.value("warmup_runs", t.warmup_runs);
  t.noisy_cv = j.value("noisy_cv", t.noisy_cv);
  t.cache = j.value("cold", false) ? CacheMode::kCold : CacheMode::kWarm;
  return t;
}

nlohmann::json StatsJson(const SampleStats& s) {
  return {{"count", s.count}, {"median", s.median}, {"min", s.min},
          {"max", s.max},     {"mean", s.mean},     {"cv", s.cv}};
}

SampleStats StatsOf(const nlohmann::json& j) {
  SampleStats s;
  s.count = j.value("count", 0);
  s.median = j.value("median", 0.0), s.min = j.value("min", 0.0), s.max = j.value("max", 0.0);
  s.mean = j.value("mean", 0.0), s.cv = j.value("cv", 0.0);
  return s;
}

nlohmann::json AnswerJson(const absl::StatusOr<Trial>& trial) {
  if (!trial.ok()) {
    return {{"error", int(trial.status().code())}, {"message", trial.status().message()}};
  }
  const Validation& v = trial->validation;
  return {{"validation",
           {{"ok", v.ok},
            {"mismatches", v.mismatches},
            {"max_abs_error", v.max_abs_error},
            {"max_error_over_tolerance", v.max_error_over_tolerance},
            {"first_mismatch", v.first_mismatch}}},
          {"seconds", StatsJson(trial->seconds)},
          {"cpu_seconds", StatsJson(trial->cpu_seconds)},
          {"noisy", trial->noisy},
          {"cold", trial->cache == CacheMode::kCold}};
}

// The worker's exit status when an allocation fails under its address-space cap (CapAddressSpace):
// said as running out of memory, not as an abort.
constexpr int kOutOfMemoryExit = 86;

std::string HowItEnded(int status) {
  if (WIFEXITED(status) && WEXITSTATUS(status) == kOutOfMemoryExit) {
    return "ran out of memory (an allocation failed under its cap, a little under the memory "
           "available)";
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return absl::StrFormat("killed by signal %d (%s)%s", sig, strsignal(sig),
                           sig == SIGABRT ? ": an abort or an uncaught exception" : "");
  }
  if (WIFEXITED(status)) return absl::StrCat("exited with status ", WEXITSTATUS(status));
  return "ended";
}

// The worker's address space is capped a little under the memory available, so that a kernel
// exhausting memory fails its own allocation (and the worker with it) instead of waking the
// OOM killer, which might pick the supervisor.
void CapAddressSpace() {
  long pages = 0;
  FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm != nullptr) {
    if (std::fscanf(statm, "%ld", &pages) != 1) pages = 0;
    std::fclose(statm);
  }
  const double now = double(pages) * double(sysconf(_SC_PAGESIZE));
  const rlim_t cap = rlim_t(now + 0.9 * double(AvailableMemoryBytes()));
  rlimit limit{cap, cap};
  setrlimit(RLIMIT_AS, &limit);
}

}  // namespace

double TrialDeadlineSeconds(const TimingOptions& timing) {
  if (const char* text = std::getenv("ROOFTUNE_TRIAL_DEADLINE_SECONDS")) {
    double seconds = 0;
    if (absl::SimpleAtod(text, &seconds) && seconds > 0) return seconds;
  }
  return std::max(5.0, 3 * timing.max_seconds + 5);
}

double SetupDeadlineSeconds(const Workload& workload) {
  constexpr double kSlowestReferenceOpsPerSecond = 1e8;
  return std::max(60.0, double(workload.Operations()) / kSlowestReferenceOpsPerSecond);
}

IsolatedTrials::IsolatedTrials(const Kernel& kernel, const Workload& workload, int threads,
                               std::vector<std::string> plugins, double deadline_seconds,
                               std::string log_path)
    : kernel_(kernel),
      workload_(workload),
      threads_(threads),
      plugins_(std::move(plugins)),
      deadline_seconds_(deadline_seconds),
      log_path_(std::move(log_path)) {
  // A write to a worker that just died must fail with EPIPE, not end the supervisor.
  signal(SIGPIPE, SIG_IGN);
}

IsolatedTrials::~IsolatedTrials() {
  if (pid_ > 0) Reap(/*kill_first=*/true);
}

void IsolatedTrials::ClosePipes() {
  if (to_worker_ >= 0) close(to_worker_);
  if (from_worker_ >= 0) close(from_worker_);
  to_worker_ = from_worker_ = -1;
  pending_.clear();
}

std::string IsolatedTrials::Reap(bool kill_first) {
  if (kill_first) kill(pid_, SIGKILL);
  ClosePipes();
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return HowItEnded(status);
}

std::string IsolatedTrials::Start() {
  int requests[2], answers[2];
  if (pipe(requests) != 0 || pipe(answers) != 0) {
    return absl::StrCat("cannot make the worker's pipes: ", strerror(errno));
  }
  std::vector<std::string> args = {"rooftune",   "tune-worker",
                                   "--kernel",   kernel_.name,
                                   "--shape",    workload_.ShapeString(),
                                   "--dtype",    std::string(ToString(workload_.dtype)),
                                   "--epilogue", std::string(ToString(workload_.epilogue)),
                                   "--threads",  absl::StrCat(threads_)};
  for (const std::string& plugin : plugins_) args.insert(args.end(), {"--plugin", plugin});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return absl::StrCat("cannot start a worker: ", strerror(errno));
  if (pid == 0) {
    // The child: only async-signal-safe calls until exec. Answers go to descriptor 3, so that
    // whatever a kernel prints (to stdout, sent to stderr here) cannot garble them.
    dup2(requests[0], STDIN_FILENO);
    dup2(answers[1], kAnswerFd);
    if (!log_path_.empty()) {
      const int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      if (log >= 0) dup2(log, STDERR_FILENO), close(log);
    }
    dup2(STDERR_FILENO, STDOUT_FILENO);
    // A pipe end may itself be descriptor 3 (few files open): dup2 replaced it, keep it.
    for (int fd : {requests[0], requests[1], answers[0], answers[1]}) {
      if (fd != STDIN_FILENO && fd != kAnswerFd) close(fd);
    }
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  close(requests[0]);
  close(answers[1]);
  pid_ = pid;
  to_worker_ = requests[1];
  from_worker_ = answers[0];
  const double setup_seconds = SetupDeadlineSeconds(workload_);
  std::string failure;
  const std::string ready = NextLine(setup_seconds, &failure);
  if (!failure.empty()) {
    return absl::StrCat(failure, " while building the problem and its reference (allowed ",
                        absl::StrFormat("%.0f s", setup_seconds), ")");
  }
  const nlohmann::json said = nlohmann::json::parse(ready, nullptr, false);
  if (!said.is_object() || !said.value("ready", false)) {
    return absl::StrCat("the worker's first line is not its ready line (", Reap(true), ")");
  }
  return "";
}

std::string IsolatedTrials::NextLine(double seconds, std::string* failure) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (pending_.find('\n') == std::string::npos) {
    const double left =
        std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    pollfd fd{from_worker_, POLLIN, 0};
    if (left <= 0 || poll(&fd, 1, int(std::max(1.0, left * 1000))) == 0) {
      Reap(/*kill_first=*/true);
      *failure = absl::StrFormat("hung: no answer in %.0f s, the worker was killed", seconds);
      return "";
    }
    char buffer[4096];
    const ssize_t n = read(from_worker_, buffer, sizeof buffer);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      *failure = absl::StrCat("crashed: the worker ", Reap(false));
      return "";
    }
    pending_.append(buffer, size_t(n));
  }
  const size_t end = pending_.find('\n');
  std::string line = pending_.substr(0, end);
  pending_.erase(0, end + 1);
  return line;
}

absl::StatusOr<Trial> IsolatedTrials::Evaluate(const Config& config, const TimingOptions& timing) {
  auto failed = [&](std::string reason) {
    failures_.emplace_back(config, reason);
    return absl::FailedPreconditionError(std::move(reason));
  };
  if (pid_ < 0) {
    if (std::string failure = Start(); !failure.empty()) return failed(std::move(failure));
  }
  const std::string request =
      nlohmann::json({{"config", kernel_.params.Format(config)}, {"timing", TimingJson(timing)}})
          .dump() +
      "\n";
  if (write(to_worker_, request.data(), request.size()) != ssize_t(request.size())) {
    return failed(absl::StrCat("crashed: the worker ", Reap(true)));
  }
  std::string failure;
  const std::string line = NextLine(deadline_seconds_, &failure);
  if (!failure.empty()) return failed(std::move(failure));
  const nlohmann::json answer = nlohmann::json::parse(line, nullptr, false);
  if (!answer.is_object()) {
    return absl::InternalError(
        absl::StrCat("the worker answered what is not JSON (", Reap(true), ")"));
  }
  if (answer.contains("error")) {
    return absl::Status(absl::StatusCode(answer.value("error", 13)),
                        answer.value("message", std::string("the worker failed")));
  }
  Trial trial;
  trial.kernel = kernel_.name;
  trial.workload = workload_;
  trial.config = config;
  trial.threads = threads_;
  trial.cache = answer.value("cold", false) ? CacheMode::kCold : CacheMode::kWarm;
  const nlohmann::json& v = answer["validation"];
  trial.validation.ok = v.value("ok", false);
  trial.validation.mismatches = v.value("mismatches", int64_t(0));
  trial.validation.max_abs_error = v.value("max_abs_error", 0.0);
  trial.validation.max_error_over_tolerance = v.value("max_error_over_tolerance", 0.0);
  trial.validation.first_mismatch = v.value("first_mismatch", std::string());
  trial.seconds = StatsOf(answer["seconds"]);
  trial.cpu_seconds = StatsOf(answer["cpu_seconds"]);
  trial.noisy = answer.value("noisy", false);
  return trial;
}

namespace {

// The last line of the file at `path` that is not blank, trimmed ("" when none).
std::string LastLineOf(const char* path) {
  std::ifstream in(path);
  std::string last;
  for (std::string line; std::getline(in, line);) {
    const absl::string_view trimmed = absl::StripAsciiWhitespace(line);
    if (!trimmed.empty()) last = std::string(trimmed);
  }
  return last;
}

}  // namespace

absl::Status RunsInAWorker(const Kernel& kernel, const Workload& workload, int threads,
                           const Config& config, CacheMode cache) {
  const TimingOptions timing{.min_seconds = 0.001,
                             .min_repetitions = 1,
                             .max_repetitions = 3,
                             .max_seconds = 1,
                             .cache = cache};
  // What the worker prints (a runtime's "terminate called after ...") is kept apart, and its last
  // line quoted in the one line of a failure.
  char log_path[] = "/tmp/rooftune-worker-XXXXXX";
  const int log = mkstemp(log_path);
  if (log >= 0) close(log);
  absl::StatusOr<Trial> trial;
  std::string failure;
  {
    IsolatedTrials worker(kernel, workload, threads, PluginFlag(), TrialDeadlineSeconds(timing),
                          log >= 0 ? log_path : "");
    trial = worker.Evaluate(config, timing);
    if (!worker.failures().empty()) failure = worker.failures().front().second;
  }
  const std::string said = log >= 0 ? LastLineOf(log_path) : "";
  if (log >= 0) unlink(log_path);
  if (!failure.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(kernel.name, " ", kernel.params.Format(config), ": ", failure,
                     said.empty() ? "" : absl::StrCat(" (it said: ", said.substr(0, 160), ")")));
  }
  return trial.status();
}

// rooftune tune-worker: the problem of --kernel/--shape/... built as the supervisor built it,
// then one trial per request line, until stdin closes.
absl::StatusOr<int> TuneWorkerCommand(Session& session) {
  FILE* answers = fdopen(kAnswerFd, "w");
  if (answers == nullptr) return UsageError("tune-worker is started by rooftune tune, not by hand");
  CapAddressSpace();
  std::set_new_handler([] { _exit(kOutOfMemoryExit); });
  absl::StatusOr<Selection> selection = KernelAndWorkloadFromFlags(session);
  if (!selection.ok()) return selection.status();
  const Kernel& kernel = *selection->kernel;
  const Workload& workload = selection->workload;
  int threads = 1;
  if (!absl::SimpleAtoi(absl::GetFlag(FLAGS_threads), &threads) || threads < 1) {
    return UsageError("tune-worker takes one thread count");
  }
  absl::StatusOr<Problem> problem = Problem::Create(workload);
  if (!problem.ok()) return problem.status();
  const ReferenceOutput reference = ComputeReference(*problem);
  // Requests carry whole configs: the initial one only fills a parameter one leaves out.
  const Config initial = kernel.InitialConfig(workload, threads, CacheMode::kWarm, session.Facts());
  Executor executor(threads);
  // The supervisor's deadline for each candidate starts after this line.
  std::fputs("{\"ready\":true}\n", answers);
  std::fflush(answers);
  std::string line;
  while (std::getline(std::cin, line)) {
    const nlohmann::json request = nlohmann::json::parse(line, nullptr, false);
    absl::StatusOr<Trial> trial = absl::InvalidArgumentError("a request that is not JSON");
    if (request.is_object()) {
      absl::StatusOr<Config> config =
          kernel.params.Parse(request.value("config", std::string()), initial, /*validate=*/false);
      trial = config.ok() ? RunTrial(kernel, *config, *problem, reference, executor,
                                     TimingOf(request.value("timing", nlohmann::json::object())))
                          : absl::StatusOr<Trial>(config.status());
    }
    const std::string answer = AnswerJson(trial).dump() + "\n";
    std::fwrite(answer.data(), 1, answer.size(), answers);
    std::fflush(answers);
  }
  return 0;
}

}  // namespace rooftune::cli
