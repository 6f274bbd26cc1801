// One function per rooftune command, each in its own file (cli/<name>_command.cc). Each returns
// the process exit status, or an error that main() prints as one line. The command table in
// commands.cc names them, their flags and their help.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cli/session.h"

namespace rooftune::cli {

absl::StatusOr<int> ListCommand(Session& session);
absl::StatusOr<int> VerifyCommand(Session& session);
absl::StatusOr<int> BenchCommand(Session& session);
absl::StatusOr<int> TuneCommand(Session& session);
absl::StatusOr<int> ProbeCommand(Session& session);
absl::StatusOr<int> ReportCommand(Session& session);
absl::StatusOr<int> RunAllCommand(Session& session);
absl::StatusOr<int> SimulateCommand(Session& session);
absl::StatusOr<int> PredictCommand(Session& session);
absl::StatusOr<int> PrimerCommand(Session& session);
// `rooftune db list|export|import FILE|merge FILE`: `operands` are the words after `db`.
absl::StatusOr<int> DbCommand(Session& session, const std::vector<std::string>& operands);
// `rooftune sweep batch`.
absl::StatusOr<int> SweepCommand(Session& session, const std::vector<std::string>& operands);
// `rooftune napkin CALC`: `operands` holds CALC.
absl::StatusOr<int> NapkinCommand(Session& session, const std::vector<std::string>& operands);
// The flags napkin reads: its inputs (napkin_inputs.def), then --batch, --hardware, --dtype,
// --threads and --json.
std::vector<absl::string_view> NapkinFlags();
// Internal: tune's worker process (cli/isolated_trials.h).
absl::StatusOr<int> TuneWorkerCommand(Session& session);
// Internal: what `simulate` runs under valgrind.
absl::StatusOr<int> SimulateOnceCommand(Session& session);

}  // namespace rooftune::cli
