// What the database holds for this machine, ready for a report: used by report, run and bench.
#pragma once

#include "absl/status/statusor.h"
#include "cli/session.h"
#include "reports/report.h"

namespace rooftune::cli {

// Every stored row for this machine, each judged again against the ceilings the report prints,
// with the registry's traffic models to price levers the database has no row for.
absl::StatusOr<reports::ReportInput> GatherReport(Session& session, const MachineProfile& profile);

}  // namespace rooftune::cli
