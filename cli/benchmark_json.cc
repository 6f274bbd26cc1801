#include "cli/benchmark_json.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "cli/common.h"
#include "framework/workload.h"

namespace rooftune::cli {
namespace {

// kernel/shape/dtype/epilogue/threads:T, as Google Benchmark names a registered benchmark's
// arguments.
std::string TrialName(const Trial& t) {
  return absl::StrCat(t.kernel, "/", t.workload.ShapeString(), "/", ToString(t.workload.dtype), "/",
                      ToString(t.workload.epilogue), "/threads:", t.threads);
}

// One aggregate row as Google Benchmark writes it: `unit` "time" (ns) or "percentage" (a
// fraction, which is how it writes the CV).
nlohmann::json AggregateRow(const Trial& t, const char* aggregate, const char* unit,
                            double real_time, double cpu_time) {
  return {{"name", absl::StrCat(TrialName(t), "_", aggregate)},
          {"run_name", TrialName(t)},
          {"run_type", "aggregate"},
          {"repetitions", 1},
          {"threads", t.threads},
          {"aggregate_name", aggregate},
          {"aggregate_unit", unit},
          {"iterations", t.seconds.count},
          {"real_time", real_time},
          {"cpu_time", cpu_time},
          {"time_unit", "ns"}};
}

}  // namespace

nlohmann::json PairedJson(const Verdict& v) {
  if (!v.paired) return nullptr;
  return {{"median", v.paired->median},   {"low", v.paired->low},
          {"high", v.paired->high},       {"pairs", v.paired->pairs},
          {"ceiling", v.paired->ceiling}, {"ceiling_now_of_profile", v.paired->ceiling_now}};
}

nlohmann::json TrialJson(const Trial& t, const Verdict& v, const ParamSpace& params) {
  return {{"name", TrialName(t)},
          {"kernel", t.kernel},
          {"workload", t.workload.Key()},
          {"threads", t.threads},
          {"config", params.Format(t.config)},
          {"config_source", t.config_source},
          {"cache", ToString(t.cache)},
          {"correct", t.validation.ok},
          {"run_name", TrialName(t)},
          {"run_type", "iteration"},
          {"repetitions", 1},
          {"repetition_index", 0},
          {"iterations", t.seconds.count},
          {"real_time", t.seconds.median * 1e9},
          {"cpu_time", t.cpu_seconds.median * 1e9},
          {"min_time", t.seconds.min * 1e9},
          {"time_unit", "ns"},
          {"cv", t.seconds.cv},
          {"noisy", t.noisy},
          {"ops_per_second", t.OpsPerSecond()},
          {"ops_unit", CountsIntegerOps(t.workload.dtype) ? "OP/s" : "FLOP/s"},
          {"bound_seconds", v.bound_seconds},
          {"attainment", v.attainment},
          {"attainment_basis", v.Basis()},
          {"profile_attainment", v.profile_attainment},
          {"paired_attainment", PairedJson(v)},
          {"impossible_above", 1 + v.tolerance},
          {"binding_ceiling", v.binding},
          {"verdict", ToString(v.verdict)},
          {"diagnosis", v.diagnosis}};
}

std::vector<nlohmann::json> AggregateRowsJson(const Trial& t) {
  if (t.seconds.count == 0) return {};
  const SampleStats& wall = t.seconds;
  const SampleStats& cpu = t.cpu_seconds;
  return {AggregateRow(t, "mean", "time", wall.mean * 1e9, cpu.mean * 1e9),
          AggregateRow(t, "median", "time", wall.median * 1e9, cpu.median * 1e9),
          AggregateRow(t, "stddev", "time", wall.cv * wall.mean * 1e9, cpu.cv * cpu.mean * 1e9),
          AggregateRow(t, "cv", "percentage", wall.cv, cpu.cv)};
}

}  // namespace rooftune::cli
