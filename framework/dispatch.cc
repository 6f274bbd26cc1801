#include "framework/dispatch.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/harness.h"
#include "framework/roofline.h"

namespace rooftune::dispatch {

std::optional<bool> MemoryBound(const Workload& w, int threads, const MachineProfile& profile) {
  const Ceiling* compute = profile.FindCompute(w.dtype, threads);
  const Ceiling* dram = profile.FillBandwidth(MemoryLevel::kDram, threads);
  if (compute == nullptr || dram == nullptr || dram->per_second <= 0) return std::nullopt;
  const double ridge = compute->per_second / dram->per_second;  // operations per byte
  return w.Operations() / w.CompulsoryBytes() < ridge;
}

double LogShapeDistance(const Workload& a, const Workload& b) {
  auto term = [](int64_t x, int64_t y) { return std::log(double(x) / double(y)); };
  const double dm = term(a.m, b.m), dn = term(a.n, b.n), dk = term(a.k, b.k);
  return std::sqrt(dm * dm + dn * dn + dk * dk);
}

namespace {

std::string Threads(int threads) {
  return absl::StrCat(threads, threads == 1 ? " thread" : " threads");
}

}  // namespace

int ChooseThreads(const Kernel& kernel, const Workload& w, int threads,
                  const std::vector<TuningDb::ThreadChoice>& choices, std::string* why) {
  const std::string key = w.Key();
  for (const TuningDb::ThreadChoice& c : choices) {
    if (c.kernel != kernel.name || c.workload != key || c.offered != threads) continue;
    if (c.threads < 1 || c.threads >= threads) return threads;
    if (why != nullptr) {
      *why = absl::StrFormat(
          "on %s of the %d offered: tune --threads auto found it within %.0f%% of the fastest "
          "count",
          Threads(c.threads), threads, c.tolerance * 100);
    }
    return c.threads;
  }
  return threads;
}

Choice ChooseConfig(const Kernel& kernel, const Workload& w, int threads,
                    const MachineProfile& profile, const std::vector<TunedResult>& rows) {
  const CacheMode natural_cache = NaturalCacheMode(profile, w, threads);
  const Config initial = kernel.InitialConfig(w, threads, natural_cache, profile);
  const std::optional<bool> memory_bound = MemoryBound(w, threads, profile);
  Choice nearest;
  nearest.distance = std::numeric_limits<double>::infinity();
  int same_kernel = 0, unreadable = 0, other_side = 0;
  std::optional<Choice> other_mode;  // the exact workload, tuned in the other cache mode
  for (const TunedResult& row : rows) {
    if (row.kernel != kernel.name || row.threads != threads) continue;
    absl::StatusOr<Workload> tuned = ParseWorkloadKey(row.workload);
    if (!tuned.ok() || tuned->op != w.op || tuned->dtype != w.dtype ||
        tuned->epilogue != w.epilogue) {
      continue;
    }
    ++same_kernel;
    bool completed = false;
    absl::StatusOr<Config> config = kernel.params.ParseStored(row.config, initial, &completed);
    if (kernel.IsStale(row.config_schema) || !config.ok()) {
      ++unreadable;
      continue;
    }
    if (*tuned == w) {
      // Tuned cold and warm: the row of the mode this workload runs in (cold when it streams
      // from DRAM), else the other.
      Choice exact{*config,        Source::kTuned,
                   row.workload,   0,
                   row.attainment, absl::StrCat("tuned for this workload at ", Threads(threads))};
      if (row.cache == natural_cache) return exact;
      if (!other_mode.has_value()) other_mode = exact;
      continue;
    }
    const std::optional<bool> tuned_memory_bound = MemoryBound(*tuned, threads, profile);
    if (!memory_bound.has_value() || tuned_memory_bound != memory_bound) {
      ++other_side;
      continue;
    }
    const double distance = LogShapeDistance(w, *tuned);
    if (distance < nearest.distance) {
      nearest = {
          *config,
          Source::kNearestTuned,
          row.workload,
          distance,
          row.attainment,
          absl::StrCat("nearest tuned workload of ", kernel.name, " at ", Threads(threads), ", ",
                       *memory_bound ? "memory-bound" : "compute-bound", " like this one")};
    }
  }
  if (other_mode.has_value()) return *other_mode;
  if (nearest.source == Source::kNearestTuned) return nearest;
  Choice choice{initial, Source::kInitial, "", 0, 0, ""};
  if (same_kernel == 0) {
    choice.reason = absl::StrCat("no tuned row of ", kernel.name, " for ", ToString(w.dtype), " ",
                                 ToString(w.epilogue), " at ", Threads(threads));
  } else if (!memory_bound.has_value()) {
    choice.reason =
        "no measured ceilings to tell whether a tuned row is on the same side of the "
        "ridge";
  } else {
    choice.reason = absl::StrCat(same_kernel, " tuned row(s) of ", kernel.name, ", none usable (",
                                 other_side, " on the other side of the ridge, ", unreadable,
                                 " stale or with a config this build cannot run)");
  }
  return choice;
}

}  // namespace rooftune::dispatch
