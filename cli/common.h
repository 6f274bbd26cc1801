// What several commands share: a selection made ready to run, progress lines, and writing files
// into the output folder. The flags are read in options.cc only.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/options.h"
#include "cli/session.h"
#include "framework/harness.h"
#include "framework/problem.h"
#include "framework/roofline.h"
#include "framework/tuning_db.h"
#include "framework/validation.h"
#include "nlohmann/json.hpp"
#include "reports/report.h"

namespace rooftune::cli {

// Every JSON document a command prints carries it; raised when a field changes meaning.
constexpr int kJsonSchemaVersion = 1;

// One line of progress on stderr, so stdout stays the result.
void Progress(const std::string& line);

// `run`'s line before the (done + 1)-th of its `total` tunes: what it tunes now, and at most how
// long the rest takes (each tune's budget at each of its thread counts; a kernel without
// parameters finishes sooner). "run: [3/16] gemm_f32 gemm 512x512x512 f32 none; at most 24 min
// left".
std::string RunProgress(int done, int total, const std::string& what, int thread_counts,
                        double budget_seconds);

// A selection made ready to run: its config resolved (`config_text`, as --config gives it, else
// the stored one, else the kernel's initial config for `profile`), its operands allocated and
// the reference computed.
struct ReadyToRun {
  Session::ResolvedConfig config;
  Problem problem;
  ReferenceOutput reference;
};
absl::StatusOr<ReadyToRun> MakeReady(Session& session, const Selection& selection, CacheMode cache,
                                     const std::string& config_text, const MachineProfile& profile);

// The order of a command that measures: its flags read and checked first (a usage error costs
// nothing), then the machine (which may take minutes to probe), then `work` on both. The machine
// is the quick-probed or stored profile, or that with this machine's tuned rows.
template <typename Options>
absl::StatusOr<int> WithProfile(Session& session, absl::StatusOr<Options> options,
                                absl::StatusOr<int> (*work)(Session&, const Options&,
                                                            const MachineProfile&)) {
  if (!options.ok()) return options.status();
  absl::StatusOr<MachineProfile> profile = session.MeasuredProfile(/*quick=*/true, false);
  return profile.ok() ? work(session, *options, *profile) : profile.status();
}
template <typename Options>
absl::StatusOr<int> WithProfileAndRows(Session& session, absl::StatusOr<Options> options,
                                       absl::StatusOr<int> (*work)(const Options&,
                                                                   const Session::Machine&)) {
  if (!options.ok()) return options.status();
  absl::StatusOr<Session::Machine> machine = session.ProfileWithRows();
  return machine.ok() ? work(*options, *machine) : machine.status();
}

// "4096,16384,4096": integers from 1 to `max`, comma-separated, for flag --`flag`; a usage error
// naming the first item that is not one.
absl::StatusOr<std::vector<int64_t>> PositiveIntegers(const std::string& flag,
                                                      const std::string& text, int64_t max);

// The columns text output may use: $COLUMNS when it is a positive number, else the terminal's
// width when stdout is one, else 100.
int TerminalWidth();

// Writes beside `path`, then renames: a reader never sees half a file.
absl::Status WriteFile(const std::string& path, const std::string& text);
// The report's pictures (reports::ReportPictures: latency.svg and the roofline, one per kernel
// family when the results are many) into `out`; returns their file names.
absl::StatusOr<std::vector<std::string>> WritePictures(const std::string& out,
                                                       const reports::ReportInput& input);

}  // namespace rooftune::cli
