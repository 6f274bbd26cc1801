// rooftune primer: the tables a roofline primer opens with, from this machine where they can be:
// the number formats (computed from their bits), the memory hierarchy as the probes measured it,
// and the traffic of a tiled matrix product against the tile size.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/common.h"
#include "cli/options.h"
#include "cli/subcommands.h"
#include "framework/number_formats.h"
#include "nlohmann/json.hpp"
#include "probes/simulated_counters.h"
#include "reports/report.h"

ABSL_DECLARE_FLAG(std::string, dim);  // napkin's, which primer reads as its tiled matmul's n

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

// The n of the tiled matmul table: --dim, else 512.
absl::StatusOr<int64_t> TiledMatmulSize() {
  const std::string text = absl::GetFlag(FLAGS_dim);
  if (text.empty()) return 512;
  int64_t n = 0;
  if (!absl::SimpleAtoi(text, &n) || n < 8 || n > 4096) {
    return UsageError(
        absl::StrCat("--dim takes the tiled matmul's n, 8 to 4096 (got '", text, "')"));
  }
  return n;
}

// The caches the simulator models for the tiled table: this machine's L1 and L2 as measured, with
// the associativity the OS reports (8 and 16 where it reports none).
probes::SimulatedGeometry PrimerGeometry(const MachineProfile& p) {
  probes::SimulatedGeometry g;
  const std::optional<CacheLevel> l1 = p.DataCache(1), l2 = p.DataCache(2);
  g.l1_bytes = p.EffectiveCacheBytes(1).value_or(32 << 10);
  g.l1_ways = l1 && l1->ways > 0 ? l1->ways : 8;
  g.last_level_bytes = p.EffectiveCacheBytes(2).value_or(1 << 20);
  g.last_level_ways = l2 && l2->ways > 0 ? l2->ways : 16;
  return g;
}

// Each number format's range and precision, computed from its bits.
void AddNumberFormats(bool json, nlohmann::json& out) {
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
}

// The measured levels: size, latency (ns and cycles) and bandwidth, each against L1's.
void AddHierarchy(const MachineProfile& profile, const std::vector<Level>& levels, bool json,
                  nlohmann::json& out) {
  const double clock = profile.clock_ghz;
  out["memory_hierarchy"] = nlohmann::json::array();
  if (!json) {
    std::cout << absl::StrFormat(
        "\nThis machine's memory hierarchy (measured; clock %.2f GHz, %d CPUs)\n"
        "  %-5s %10s %9s %8s %14s %14s  %s\n",
        clock, profile.logical_cpus, "level", "size", "latency", "cycles", "GB/s, 1 thread",
        absl::StrFormat("GB/s, %d", profile.logical_cpus), "slower than L1 (latency, bandwidth)");
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
}

// A tiled product of n x n matrices with T x T tiles reads each operand n / T times: 2 n^3 / T
// elements of A and B, 4 bytes each, as long as three tiles fit the level that serves them.
// The cache simulator runs the textbook kernel (tiled_gemm_f32) for each T, one cold call, on a
// simulated L1 and L2 of this machine's measured sizes: its fills show the law and where it
// breaks.
absl::Status AddTiledMatmul(Session& session, const MachineProfile& profile,
                            const std::vector<Level>& levels, bool json, nlohmann::json& out) {
  absl::StatusOr<int64_t> n = TiledMatmulSize();
  if (!n.ok()) return n.status();
  const probes::SimulatedGeometry g = PrimerGeometry(profile);
  const std::string binary = std::filesystem::read_symlink("/proc/self/exe").string();
  out["tiled_matmul"] = nlohmann::json::array();
  out["tiled_matmul_simulated_caches"] = {
      {"l1_bytes", probes::SimulatorFriendlySize(g.l1_bytes, g.l1_ways, g.line_bytes)},
      {"l2_bytes",
       probes::SimulatorFriendlySize(g.last_level_bytes, g.last_level_ways, g.line_bytes)}};
  if (!json) {
    std::cout << absl::StrFormat(
        "\nTiled matmul traffic, n = %d, f32: the model (2 n^3 / T elements of A and B; three T x "
        "T "
        "tiles must fit the level serving them) against valgrind's cache simulator running "
        "tiled_gemm_f32 (one cold call; L1 %s, L2 %s as measured; fills include C's)\n"
        "  %5s %12s %12s  %-8s %14s %8s %14s %8s\n",
        *n, Size(double(probes::SimulatorFriendlySize(g.l1_bytes, g.l1_ways, g.line_bytes))),
        Size(double(
            probes::SimulatorFriendlySize(g.last_level_bytes, g.last_level_ways, g.line_bytes))),
        "T", "model", "three tiles", "fit in", "L1 fills", "/model", "L2 fills", "/model");
  }
  bool conflicts = false;  // three tiles fit the L1 by size, yet it filled several times the model
  for (int64_t t = 8; t <= 256 && t <= *n; t *= 2) {
    const double nn = double(*n), tile = double(t);
    const double model = 2 * nn * nn * nn / tile * 4, tiles = 3 * tile * tile * 4;
    std::string fits = "none";
    for (const Level& l : levels) {
      if (l.bytes > 0 && tiles <= l.bytes) {
        fits = l.name;
        break;
      }
    }
    Progress(absl::StrFormat("primer: simulating tiled_gemm_f32 %dx%dx%d, TILE=%d", *n, *n, *n, t));
    const absl::StatusOr<probes::SimulatedTraffic> sim = probes::SimulateKernelCall(
        binary,
        absl::StrFormat("--kernel tiled_gemm_f32 --shape %dx%dx%d --config TILE=%d --db %s", *n, *n,
                        *n, t, session.db_path()),
        g);
    nlohmann::json row = {{"n", *n},
                          {"tile", t},
                          {"model_bytes", model},
                          {"three_tiles_bytes", tiles},
                          {"fit_in", fits}};
    if (sim.ok()) {
      row["simulated_l1_fill_bytes"] = sim->l1_miss_bytes;
      row["simulated_l2_fill_bytes"] = sim->last_level_miss_bytes;
      conflicts |= tiles <= double(out["tiled_matmul_simulated_caches"]["l1_bytes"]) &&
                   sim->l1_miss_bytes > 4 * model;
    } else {
      row["simulated"] = std::string(sim.status().message());
    }
    out["tiled_matmul"].push_back(row);
    if (json) continue;
    if (sim.ok()) {
      std::cout << absl::StrFormat("  %5d %12s %12s  %-8s %14s %7.2fx %14s %7.2fx\n", t,
                                   Size(model), Size(tiles), fits, Size(sim->l1_miss_bytes),
                                   sim->l1_miss_bytes / model, Size(sim->last_level_miss_bytes),
                                   sim->last_level_miss_bytes / model);
    } else {
      std::cout << absl::StrFormat("  %5d %12s %12s  %-8s  not simulated: %s\n", t, Size(model),
                                   Size(tiles), fits, sim.status().message());
    }
  }
  if (conflicts && !json) {
    std::cout
        << "  Where three tiles fit the L1 by size and it still filled several times the model, "
           "the rows' power-of-two stride (n x 4 bytes) maps the tiles onto few of its sets: "
           "conflict misses, which the law (a fully associative cache) does not know; a padded "
           "leading dimension avoids them.\n";
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int> PrimerCommand(Session& session) {
  const bool json = JsonFlag();
  absl::StatusOr<MachineProfile> profile = session.MeasuredProfile(true, false);
  if (!profile.ok()) return profile.status();
  nlohmann::json out = {{"schema_version", 1}};
  AddNumberFormats(json, out);
  const std::vector<Level> levels = Hierarchy(*profile);
  AddHierarchy(*profile, levels, json, out);
  if (absl::Status s = AddTiledMatmul(session, *profile, levels, json, out); !s.ok()) return s;
  if (json) std::cout << out.dump(2) << "\n";
  return 0;
}

}  // namespace rooftune::cli
