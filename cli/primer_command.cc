// rooftune primer: the tables a roofline primer opens with, from this machine where they can be:
// the number formats (computed from their bits), the memory hierarchy as the probes measured it,
// and the traffic of a tiled matrix product against the tile size.
#include <cmath>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/common.h"
#include "cli/options.h"
#include "cli/subcommands.h"
#include "framework/number_formats.h"
#include "nlohmann/json.hpp"
#include "reports/report.h"

namespace rooftune::cli {
namespace {

std::string Size(double bytes) {
  if (bytes >= double(1 << 30)) return absl::StrFormat("%.1f GiB", bytes / double(1 << 30));
  if (bytes >= double(1 << 20)) return absl::StrFormat("%.1f MiB", bytes / double(1 << 20));
  return absl::StrFormat("%.0f KiB", bytes / 1024);
}

struct Level {
  std::string name;
  double bytes = 0;  // 0 for memory
  double latency_ns = 0;
  double bandwidth_one = 0, bandwidth_all = 0;  // bytes/s
};

// The measured levels (the consensus of the probes), then memory.
std::vector<Level> Hierarchy(const MachineProfile& p) {
  std::vector<Level> levels;
  const std::vector<const LevelConsensus*> consensus = p.ConsensusLevels();
  for (size_t i = 0; i < consensus.size() && i < 3; ++i) {
    const MemoryLevel level = MemoryLevel(i);
    Level l{absl::StrCat("L", i + 1), consensus[i]->Bytes(), consensus[i]->LatencyNs()};
    if (const Ceiling* c = p.FillBandwidth(level, 1)) l.bandwidth_one = c->per_second;
    if (const Ceiling* c = p.FillBandwidth(level, p.logical_cpus)) l.bandwidth_all = c->per_second;
    levels.push_back(l);
  }
  Level dram{"DRAM", 0, p.memory_latency_ns};
  if (const Ceiling* c = p.FillBandwidth(MemoryLevel::kDram, 1)) dram.bandwidth_one = c->per_second;
  if (const Ceiling* c = p.FillBandwidth(MemoryLevel::kDram, p.logical_cpus)) {
    dram.bandwidth_all = c->per_second;
  }
  levels.push_back(dram);
  return levels;
}

}  // namespace

absl::StatusOr<int> PrimerCommand(Session& session) {
  const bool json = JsonFlag();
  absl::StatusOr<MachineProfile> profile = session.MeasuredProfile(true, false);
  if (!profile.ok()) return profile.status();
  nlohmann::json out = {{"schema_version", 1}};

  out["number_formats"] = nlohmann::json::array();
  if (!json) {
    std::cout << "Number formats (computed from their bits)\n"
              << absl::StrFormat("  %-9s %4s %4s %4s %14s %14s %12s %14s\n", "format", "bits",
                                 "exp", "mant", "largest", "smallest norm", "step at 1",
                                 "GB per 1e9 p");
  }
  for (const NumberFormat& f : NumberFormats()) {
    out["number_formats"].push_back({{"name", f.name},
                                     {"bits", f.bits},
                                     {"exponent_bits", f.exponent_bits},
                                     {"mantissa_bits", f.mantissa_bits},
                                     {"largest", f.Largest()},
                                     {"smallest_normal", f.SmallestNormal()},
                                     {"step_near_one", f.StepNearOne()},
                                     {"bytes_per_billion_params", f.BytesPerBillionParams()}});
    if (!json) {
      std::cout << absl::StrFormat("  %-9s %4d %4d %4d %14.6g %14.6g %12.6g %14.1f\n", f.name,
                                   f.bits, f.exponent_bits, f.mantissa_bits, f.Largest(),
                                   f.SmallestNormal(), f.StepNearOne(),
                                   f.BytesPerBillionParams() / 1e9);
    }
  }

  const std::vector<Level> levels = Hierarchy(*profile);
  const double clock = profile->clock_ghz;
  out["memory_hierarchy"] = nlohmann::json::array();
  if (!json) {
    std::cout << absl::StrFormat(
        "\nThis machine's memory hierarchy (measured; clock %.2f GHz, %d CPUs)\n"
        "  %-5s %10s %9s %8s %14s %14s  %s\n",
        clock, profile->logical_cpus, "level", "size", "latency", "cycles", "GB/s, 1 thread",
        absl::StrFormat("GB/s, %d", profile->logical_cpus), "slower than L1 (latency, bandwidth)");
  }
  const Level* l1 = levels.empty() ? nullptr : &levels.front();
  for (const Level& l : levels) {
    const double latency_ratio = l1 && l1->latency_ns > 0 ? l.latency_ns / l1->latency_ns : 0;
    const double bandwidth_ratio =
        l1 && l.bandwidth_one > 0 ? l1->bandwidth_one / l.bandwidth_one : 0;
    out["memory_hierarchy"].push_back({{"level", l.name},
                                       {"bytes", l.bytes},
                                       {"latency_ns", l.latency_ns},
                                       {"latency_cycles", l.latency_ns * clock},
                                       {"bandwidth_one_thread", l.bandwidth_one},
                                       {"bandwidth_all_threads", l.bandwidth_all},
                                       {"latency_vs_l1", latency_ratio},
                                       {"bandwidth_vs_l1", bandwidth_ratio}});
    if (!json) {
      std::cout << absl::StrFormat("  %-5s %10s %6.1f ns %8.0f %14.1f %14.1f %8.1fx, %.1fx\n",
                                   l.name, l.bytes > 0 ? Size(l.bytes) : "-", l.latency_ns,
                                   l.latency_ns * clock, l.bandwidth_one / 1e9,
                                   l.bandwidth_all / 1e9, latency_ratio, bandwidth_ratio);
    }
  }

  // A tiled product of n x n matrices with T x T tiles reads each operand n / T times: 2 n^3 / T
  // elements of A and B, 4 bytes each, as long as three tiles fit the level that serves them.
  constexpr double n = 512;
  out["tiled_matmul"] = nlohmann::json::array();
  if (!json) {
    std::cout << absl::StrFormat("\nTiled matmul traffic, n = %.0f, f32 (model: 2 n^3 / T elements "
                                 "of A and B; three T x T tiles must fit the level serving them)\n"
                                 "  %5s %14s %12s  %s\n",
                                 n, "T", "model bytes", "three tiles", "fit in");
  }
  for (double t = 8; t <= 256; t *= 2) {
    const double model = 2 * n * n * n / t * 4, tiles = 3 * t * t * 4;
    std::string fits = "none of the measured caches: the 1/T law breaks";
    for (const Level& l : levels) {
      if (l.bytes > 0 && tiles <= l.bytes) {
        fits = l.name;
        break;
      }
    }
    out["tiled_matmul"].push_back({{"n", n}, {"tile", t}, {"model_bytes", model},
                                   {"three_tiles_bytes", tiles}, {"fit_in", fits}});
    if (!json) {
      std::cout << absl::StrFormat("  %5.0f %14s %12s  %s\n", t, Size(model), Size(tiles), fits);
    }
  }
  if (json) std::cout << out.dump(2) << "\n";
  return 0;
}

}  // namespace rooftune::cli
