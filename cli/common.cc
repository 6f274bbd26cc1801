#include "cli/common.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "reports/svg.h"

namespace rooftune::cli {

std::string RunProgress(int done, int total, const std::string& what, int thread_counts,
                        double budget_seconds) {
  const double left = double(total - done) * thread_counts * budget_seconds;
  const std::string duration = left < 120 ? absl::StrFormat("%.0f s", left)
                                          : absl::StrFormat("%.0f min", std::ceil(left / 60));
  return absl::StrFormat("run: [%d/%d] %s; at most %s left", done + 1, total, what, duration);
}

void Progress(const std::string& line) { std::cerr << line << "\n"; }

absl::StatusOr<ReadyToRun> MakeReady(Session& session, const Selection& selection, CacheMode cache,
                                     const std::string& config_text,
                                     const MachineProfile& profile) {
  absl::StatusOr<Session::ResolvedConfig> config = session.ResolveConfig(
      *selection.kernel, selection.workload, selection.threads, cache, config_text, profile);
  if (!config.ok()) return config.status();
  absl::StatusOr<Problem> problem = Problem::Create(selection.workload);
  if (!problem.ok()) return problem.status();
  ReferenceOutput reference = ComputeReference(*problem);
  return ReadyToRun{*std::move(config), *std::move(problem), std::move(reference)};
}

absl::StatusOr<std::vector<int64_t>> PositiveIntegers(const std::string& flag,
                                                      const std::string& text, int64_t max) {
  std::vector<int64_t> values;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(item, &v) || v < 1 || v > max) {
      return UsageError(absl::StrCat("--", flag, " takes positive integers up to ", max,
                                     ", comma-separated (got '", item, "')"));
    }
    values.push_back(v);
  }
  return values;
}

int TerminalWidth() {
  int columns = 0;
  if (const char* env = std::getenv("COLUMNS");
      env != nullptr && absl::SimpleAtoi(env, &columns) && columns > 0) {
    return columns;
  }
  winsize size{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    return size.ws_col;
  }
  return 100;
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary);
    file << text;
    if (!file) return absl::PermissionDeniedError(absl::StrCat("cannot write ", temporary));
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec)
    return absl::PermissionDeniedError(absl::StrCat("cannot write ", path, ": ", ec.message()));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> WritePictures(const std::string& out,
                                                       const reports::ReportInput& input) {
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  std::vector<std::string> files;
  for (const reports::Picture& picture : reports::ReportPictures(input)) {
    if (absl::Status s = WriteFile(absl::StrCat(out, "/", picture.file), picture.svg); !s.ok()) {
      return s;
    }
    files.push_back(picture.file);
  }
  return files;
}

}  // namespace rooftune::cli
