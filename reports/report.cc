#include "reports/report.h"

#include <ctime>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace rooftune::reports {
namespace {

bool IsIntegerDtype(const std::string& dtype) { return dtype == "u8s8"; }

}  // namespace

std::string FormatRate(double per_second, bool integer_ops) {
  return absl::StrFormat("%.1f %s", per_second / 1e9, integer_ops ? "GOP/s" : "GFLOP/s");
}

std::string FormatSeconds(double s) {
  if (s >= 1) return absl::StrFormat("%.3f s", s);
  if (s >= 1e-3) return absl::StrFormat("%.3f ms", s * 1e3);
  return absl::StrFormat("%.1f us", s * 1e6);
}

std::string FormatBytes(double bytes) {
  if (bytes >= double(uint64_t{1} << 30)) return absl::StrFormat("%.1f GiB", bytes / (uint64_t{1} << 30));
  if (bytes >= (1 << 20)) return absl::StrFormat("%.1f MiB", bytes / (1 << 20));
  return absl::StrFormat("%.0f KiB", bytes / 1024);
}

std::string NowUtc() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string RenderProfileText(const MachineProfile& p) {
  std::string out;
  absl::StrAppend(&out, "machine  ", p.cpu_model, " (", p.vendor, "), ", p.logical_cpus,
                  " CPUs, ", p.physical_cores, " cores\n");
  absl::StrAppend(&out, "isa      ", absl::StrJoin(p.isa, " "), "\n");
  absl::StrAppend(&out, "highway  ", absl::StrJoin(p.hwy_targets, " "), "\n");
  absl::StrAppend(&out, "os       ", p.os_kernel, ", THP ", p.transparent_hugepages, "\n");
  absl::StrAppend(&out, "print    ", p.Fingerprint(), "\n\n");
  absl::StrAppend(&out, "caches (sysfs)\n");
  absl::StrAppend(&out, absl::StrFormat("  %-6s %-8s %10s %5s %5s %7s\n", "level", "type", "size",
                                        "ways", "line", "shared"));
  for (const CacheLevel& c : p.caches) {
    absl::StrAppend(&out, absl::StrFormat("  L%-5d %-8s %10s %5d %5d %7d\n", c.level, c.type,
                                          FormatBytes(double(c.size_bytes)), c.ways, c.line_bytes,
                                          c.shared_by_cpus));
  }
  absl::StrAppend(&out, "\nceilings\n");
  absl::StrAppend(&out, absl::StrFormat("  %-26s %8s %16s  %s\n", "ceiling", "threads", "rate", "probe"));
  for (const Ceiling& c : p.ceilings) {
    const std::string what = c.kind == Ceiling::Kind::kCompute
                                 ? absl::StrCat(ToString(c.dtype), " compute")
                                 : absl::StrCat(ToString(c.level), " bandwidth (", c.source, ")");
    const std::string rate =
        c.kind == Ceiling::Kind::kCompute
            ? FormatRate(c.per_second, c.dtype == Dtype::kU8S8)
            : absl::StrFormat("%.1f GB/s", c.per_second / 1e9);
    absl::StrAppend(&out, absl::StrFormat("  %-26s %8d %16s  %s\n", what, c.threads, rate,
                                          c.kind == Ceiling::Kind::kCompute ? c.source : ""));
  }
  return out;
}

std::string RenderMarkdown(const ReportInput& in) {
  const MachineProfile& p = in.profile;
  std::string md = "# rooftune report\n\n";
  absl::StrAppend(&md, "Generated ", in.generated_at, " on **", p.cpu_model, "** (", p.logical_cpus,
                  " CPUs; fingerprint `", p.Fingerprint(), "`). Every figure below was measured "
                  "on this machine in warm-cache mode unless its row says cold.\n\n");
  absl::StrAppend(&md, "## Ceilings\n\n| ceiling | threads | rate | measured by |\n|---|---|---|---|\n");
  for (const Ceiling& c : p.ceilings) {
    const std::string rate = c.kind == Ceiling::Kind::kCompute
                                 ? FormatRate(c.per_second, c.dtype == Dtype::kU8S8)
                                 : absl::StrFormat("%.1f GB/s", c.per_second / 1e9);
    const std::string what = c.kind == Ceiling::Kind::kCompute
                                 ? absl::StrCat(ToString(c.dtype), " compute")
                                 : absl::StrCat(ToString(c.level), " bandwidth");
    absl::StrAppend(&md, "| ", what, " | ", c.threads, " | ", rate, " | ", c.source, " |\n");
  }
  absl::StrAppend(&md, "\n## Tuned kernels\n\n");
  if (in.results.empty()) {
    absl::StrAppend(&md, "No tuned results for this machine yet: run `rooftune tune` or `rooftune run`.\n");
    return md;
  }
  absl::StrAppend(&md,
                  "| kernel | workload | threads | config | median | rate | attainment | bound by "
                  "| verdict | tuned / initial |\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (const TunedResult& r : in.results) {
    const double speedup =
        r.initial_median_seconds > 0 ? r.initial_median_seconds / r.median_seconds : 0;
    absl::StrAppend(
        &md, "| ", r.kernel, " | ", r.workload, " | ", r.threads, " | `", r.config, "` | ",
        FormatSeconds(r.median_seconds), absl::StrFormat(" (CV %.1f%%)", 100 * r.cv), " | ",
        FormatRate(r.ops_per_second, IsIntegerDtype(r.dtype)), " | ",
        absl::StrFormat("%.2f", r.attainment), " | ", r.binding, " | ", r.verdict, " | ",
        absl::StrFormat("%.2fx", speedup), " |\n");
  }
  absl::StrAppend(&md, "\n*Attainment* is the roofline bound time over the measured median: the "
                       "bound is the largest of the operations at the compute ceiling of the "
                       "workload's own data type and the bytes of each memory level at that "
                       "level's bandwidth, at the same thread count. A value above 1 is never "
                       "speed: it is reported as `impossible` with the model error named. "
                       "*tuned / initial* compares the tuned config with the analytic starting "
                       "config, timed back to back.\n");
  bool any_impossible = false;
  for (const TunedResult& r : in.results) any_impossible |= r.verdict == "impossible";
  if (any_impossible) {
    absl::StrAppend(&md, "\n**Some results are above their roofline: the model (ceiling or byte "
                         "count) is broken for them, not the kernel fast.**\n");
  }
  return md;
}

nlohmann::json RenderJson(const ReportInput& in) {
  nlohmann::json j;
  j["schema_version"] = kReportSchemaVersion;
  j["generated_at"] = in.generated_at;
  j["machine"] = in.profile.ToJson();
  j["results"] = nlohmann::json::array();
  for (const TunedResult& r : in.results) {
    j["results"].push_back({{"kernel", r.kernel},
                            {"workload", r.workload},
                            {"dtype", r.dtype},
                            {"threads", r.threads},
                            {"config", r.config},
                            {"median_seconds", r.median_seconds},
                            {"min_seconds", r.min_seconds},
                            {"cv", r.cv},
                            {"ops_per_second", r.ops_per_second},
                            {"attainment", r.attainment},
                            {"verdict", r.verdict},
                            {"binding_ceiling", r.binding},
                            {"cache", r.cache},
                            {"initial_config", r.initial_config},
                            {"initial_median_seconds", r.initial_median_seconds},
                            {"configs_tried", r.configs_tried},
                            {"measured_at", r.created_at}});
  }
  return j;
}

}  // namespace rooftune::reports
