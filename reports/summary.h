// The report's first screen: the machine in a few lines (cores, vectors, clock, each cache level
// measured against what the OS reports, peaks per dtype, DRAM bandwidth at one and all threads,
// and the ridge points they imply), then the findings in the order they pay.
#pragma once

#include <string>
#include <vector>

#include "reports/document.h"
#include "reports/placed_result.h"
#include "reports/report.h"

namespace rooftune::reports {

struct Finding {
  enum class Kind {
    kLever,         // a lever other than the inner loop pays: the model says where time goes
    kFarFromBound,  // the bound is right and the kernel is far below it: the inner loop
    kImpossible,    // above the roofline: the model is broken, with the diagnosis; one finding
                    // for every result impossible against the same roof
  };
  Kind kind = Kind::kLever;
  int number = 0;            // the PlacedResult's (the first of `numbers`)
  std::vector<int> numbers;  // every result the finding is about
  double gain = 1;   // the first lever that pays (the inner loop's for kFarFromBound); 1 if none
  std::string text;  // Markdown, linking to the result's detail
};

// Results whose attainment is below this are "far from their bound" (the inner loop would more
// than double their speed).
inline constexpr double kFarFromBound = 0.5;

// Every finding: levers (largest gain first), then results far from their bound whose first
// lever is the inner loop (largest gain first), then impossible verdicts, those against one roof
// (the same memory level, or compute) together, in report order.
std::vector<Finding> Findings(const ReportInput& in, const std::vector<PlacedResult>& placed);

// The machine in one list: one line per fact, Markdown.
std::vector<std::string> MachineFacts(const MachineProfile& profile);

// The ridge points: operations per byte where each level's roof meets each dtype's compute roof,
// at the most threads the profile measured (rows dtype, columns level); empty without ceilings.
struct RidgeTable {
  int threads = 0;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};
RidgeTable RidgePoints(const MachineProfile& profile);

// The summary section: facts, ridge points, a count of verdicts and the first `shown` findings.
void AddSummary(const ReportInput& in, const std::vector<PlacedResult>& placed, size_t shown,
                Document& doc);

// The anchor of a result's detail, and a Markdown link to it: "[#3 gemm_f32 ... 1T](#result-3)".
std::string ResultAnchor(int number);
std::string LinkTo(const PlacedResult& result);

}  // namespace rooftune::reports
