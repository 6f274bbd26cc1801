// One result in detail: where its time goes (a bar per memory level for the time its bytes take
// at that level's bandwidth, against the compute time and the measured time), its levers with
// the gain the roofline gives each and the measured ratio where there is one, and its config
// with how it was chosen.
#pragma once

#include <string>

#include "reports/document.h"
#include "reports/placed_result.h"
#include "reports/report.h"

namespace rooftune::reports {

// The bars as a small SVG: compute, each level, a separate pass, and the measured time, on one
// linear scale, the binding one marked.
std::string TimeBarsSvg(const PlacedResult& result);

void AddResultDetail(const ReportInput& in, const PlacedResult& result, Document& doc);

}  // namespace rooftune::reports
