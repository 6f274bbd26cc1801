// Renders what rooftune measured: the machine's ceilings and the tuned results with their
// verdicts, as terminal text, Markdown and JSON. Every figure names the kernel and config that
// produced it and the ceiling it was judged against.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/machine_profile.h"
#include "framework/prediction.h"
#include "framework/roofline.h"
#include "framework/tuning_db.h"
#include "nlohmann/json.hpp"

namespace rooftune::reports {

inline constexpr int kReportSchemaVersion = 1;

// The bound time of a workload by the best kernel that computes it, from that kernel's own
// traffic model at its analytic config (the CLI asks the registry).
struct ModelBound {
  double seconds = 0;
  std::string kernel;
};
using ModelBoundFn = std::function<std::optional<ModelBound>(const Workload&, int threads)>;

struct ReportInput {
  MachineProfile profile;
  std::vector<TunedResult> results;
  std::string generated_at;  // UTC, ISO 8601
  // results[i] judged against `profile`, for its levers (reports/levers.h); a row without one
  // (its kernel not loaded) is shown without levers.
  std::vector<Verdict> verdicts;
  // Prices a workload the database holds no row for (the narrower operands of "fewer bytes").
  // Unset, or without a kernel for it, this row's traffic scaled to the narrower operands stands
  // in.
  ModelBoundFn model_bound;
  // "What if": an MLP's forward pass predicted on this machine (framework/prediction.h), at
  // a few batches and thread counts; empty when none was asked for.
  struct WhatIf {
    MlpSpec mlp;
    PassPrediction pass;
  };
  std::vector<WhatIf> what_if;
  // The thread counts `tune --threads auto` chose for this machine's workloads: the library API
  // runs each on that many of the threads offered.
  std::vector<TuningDb::ThreadChoice> thread_choices;
};

// The report opens with its summary (the machine, the ridge points, the findings in the order
// they pay), then the ceilings as a matrix, the roofline pictures with their keys, the caches,
// the tables and each result in detail.
std::string RenderMarkdown(const ReportInput& input);
// The same report as one self-contained HTML page: its pictures and styles inside it.
std::string RenderHtml(const ReportInput& input);
// The same report for a terminal `width` columns wide (pictures left out, their keys kept).
std::string RenderText(const ReportInput& input, int width);

// How many findings the summary lists before pointing to the tables.
inline constexpr size_t kFindingsShown = 6;
// Up to this many results share one roofline picture; more get one picture per kernel family.
inline constexpr size_t kResultsInOnePicture = 12;
inline constexpr std::string_view kLatencyPicture = "latency.svg";

// A picture of the report: the file the Markdown links, its SVG, and the results it places
// (their numbers).
struct Picture {
  std::string file;
  std::string description;
  std::string svg;
  std::vector<int> numbers;
};
// The latency curve first, then the roofline: one picture, or one per kernel family when the
// results are many.
std::vector<Picture> ReportPictures(const ReportInput& input);
nlohmann::json RenderJson(const ReportInput& input);

// "1.23 GFLOP/s"-style helpers shared with the CLI.
// "212.4 GFLOP/s", or OP/s for a dtype whose work is counted in integer operations.
std::string FormatRate(double per_second, Dtype dtype);
std::string FormatSeconds(double seconds);
std::string FormatBytes(double bytes);
// Two decimals, rounded down: 0.8996 reads 0.89 beside its verdict (headroom, under 0.9), not 0.90.
std::string FormatAttainment(double attainment);
// What stands behind a verdict's attainment: "paired 0.91-0.95 over 15 pairs with the f32
// compute, 2 threads (AVX3 fma); 1.27 against the profile; impossible above 1.05", or
// "against the profile (not paired); impossible above 1.05".
std::string AttainmentBasis(const std::optional<PairedAttainment>& paired,
                            double profile_attainment, double tolerance);
// A result's attainment cell: "0.93 paired (0.91-0.95); profile 1.27", or "0.93 profile".
std::string AttainmentCell(const TunedResult& r);
std::string NowUtc();

}  // namespace rooftune::reports
