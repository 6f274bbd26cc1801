#include "cli/guarded_plugins.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/kernel.h"

namespace rooftune::cli {
namespace {

double LoadDeadlineSeconds() {
  double seconds = 0;
  if (const char* text = std::getenv("ROOFTUNE_PLUGIN_LOAD_DEADLINE_SECONDS");
      text != nullptr && absl::SimpleAtod(text, &seconds) && seconds > 0) {
    return seconds;
  }
  return 30;
}

// Loads `path` into a scratch registry in a child process. Ok when the child finished (loaded or
// refused: the load here then says why, in its own words); an error when it crashed or hung.
absl::Status LoadsInAChild(const std::string& path, double deadline_seconds) {
  // Called before rooftune starts any thread: the child is a plain copy of this process.
  const pid_t pid = fork();
  if (pid < 0) {
    return absl::InternalError(absl::StrCat("cannot check plugin '", path, "': ", strerror(errno)));
  }
  if (pid == 0) {
    KernelRegistry scratch;
    _exit(scratch.LoadPlugin(path).ok() ? 0 : 3);
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(deadline_seconds);
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      return absl::InternalError(
          absl::StrCat("cannot check plugin '", path, "': ", strerror(errno)));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return absl::FailedPreconditionError(absl::StrFormat(
          "plugin '%s' did not finish loading in %.0f s (it hangs while it registers); not loaded",
          path, deadline_seconds));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return absl::FailedPreconditionError(
        absl::StrFormat("plugin '%s' crashed while loading (signal %d, %s); not loaded", path, sig,
                        strsignal(sig)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status LoadPluginsGuarded(const std::vector<std::string>& paths) {
  const double deadline = LoadDeadlineSeconds();
  for (const std::string& path : paths) {
    if (absl::Status s = LoadsInAChild(path, deadline); !s.ok()) return s;
    if (absl::Status s = KernelRegistry::Global().LoadPlugin(path); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace rooftune::cli
