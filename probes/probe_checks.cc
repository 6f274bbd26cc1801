#include "probes/probe_checks.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace rooftune::probes {

double RepetitionSpread(std::vector<double> rates) {
  if (rates.size() < 2) return 0;
  std::sort(rates.begin(), rates.end());
  const double best = rates.back();
  const double median = rates[(rates.size() - 1) / 2];  // the lower one of an even count
  return best > 0 ? 1 - median / best : 0;
}

std::string ComputeContradiction(double rate, int threads, int physical_cores,
                                 double one_thread_rate, double ops_per_cycle, double clock_ghz) {
  if (threads > 1 && threads <= physical_cores && one_thread_rate > 0 &&
      rate < kComputeScaling * threads * one_thread_rate) {
    return absl::StrFormat("%.2f x the one-thread rate on %d threads with a core each, under %.2f",
                           rate / one_thread_rate, threads, kComputeScaling * threads);
  }
  if (ops_per_cycle > 0 && clock_ghz > 0) {
    // SMT siblings share their core's units: the rate is per core the threads occupy.
    const int cores = std::max(1, std::min(threads, physical_cores));
    const double per_cycle = rate / cores / (clock_ghz * 1e9);
    if (per_cycle > kFastestShare * ops_per_cycle) {
      return absl::StrFormat(
          "%.0f ops per cycle per core at %.2f GHz, above the instruction's %.0f", per_cycle,
          clock_ghz, ops_per_cycle);
    }
    if (per_cycle < kSlowestShare * ops_per_cycle) {
      return absl::StrFormat(
          "%.0f ops per cycle per core at %.2f GHz, under half the instruction's %.0f", per_cycle,
          clock_ghz, ops_per_cycle);
    }
  }
  return "";
}

double ScalingFloor(int threads, int physical_cores, double one_thread_rate) {
  if (threads < 2 || threads > physical_cores) return 0;
  return threads * one_thread_rate;
}

std::vector<MemoryLevel> OutOfOrderReads(const std::vector<Ceiling>& ceilings, int threads) {
  double rate[kNumMemoryLevels] = {};
  for (const Ceiling& c : ceilings) {
    if (c.kind == Ceiling::Kind::kBandwidth && c.threads == threads && c.source == "read") {
      rate[int(c.level)] = c.per_second;
    }
  }
  bool involved[kNumMemoryLevels] = {};
  for (int near = 0; near < kNumMemoryLevels; ++near) {
    for (int far = near + 1; far < kNumMemoryLevels; ++far) {
      if (rate[near] > 0 && rate[far] > 0 && rate[near] < (1 - kReadOrderSlack) * rate[far]) {
        involved[near] = involved[far] = true;
      }
    }
  }
  std::vector<MemoryLevel> levels;
  for (int i = 0; i < kNumMemoryLevels; ++i) {
    if (involved[i]) levels.push_back(MemoryLevel(i));
  }
  return levels;
}

std::string UnstableNote(const Ceiling& ceiling, const std::string& why, double lowest,
                         double highest) {
  return absl::StrCat(Ceiling::kUnstableNote, " (", why, "; repetitions ", ceiling.RateText(lowest),
                      " to ", ceiling.RateText(highest), ")");
}

CpuTimes ReadCpuTimes() {
  std::ifstream stat("/proc/stat");
  std::string line;
  CpuTimes times;
  if (!std::getline(stat, line) || line.rfind("cpu ", 0) != 0) return times;
  std::istringstream fields(line.substr(4));
  // user nice system idle iowait irq softirq steal (guest and guest_nice are inside user, nice)
  unsigned long long value = 0;
  for (int i = 0; i < 8 && fields >> value; ++i) {
    times.total += value;
    if (i == 7) times.steal = value;
  }
  return times;
}

double StealShare(const CpuTimes& before, const CpuTimes& after) {
  if (after.total <= before.total) return 0;
  return double(after.steal - before.steal) / double(after.total - before.total);
}

}  // namespace rooftune::probes
