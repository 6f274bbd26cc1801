// ceiling_check: the compute ceilings a probe stores, against independent loops of the same
// instructions timed in the same process. The probe's loops are Highway code; these are inline
// assembly (12 independent accumulators, 16 for vpdpbusd; nothing else in the loop), so a probe
// that measured low (a loop the compiler spilled, a target that ran narrower vectors, a disturbed
// repetition kept) shows as a ratio under 1. Ceilings are bounds approached from below, so both
// sides take the best of interleaved rounds.
//
//   ceiling_check [--quick] [--rounds=N]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "framework/executor.h"
#include "probes/ceiling_loops.h"
#include "probes/machine_probe.h"
#include "reports/report.h"

namespace rooftune::bench {
namespace {

#define RT_FOR_12(op, a, b)                                                                       \
  op " %%" a "12, %%" a "13, %%" a "0\n\t" op " %%" a "12, %%" a "13, %%" a "1\n\t" op " %%" a    \
     "12, %%" a "13, %%" a "2\n\t" op " %%" a "12, %%" a "13, %%" a "3\n\t" op " %%" a "12, %%" a \
     "13, %%" a "4\n\t" op " %%" a "12, %%" a "13, %%" a "5\n\t" op " %%" a "12, %%" a "13, %%" a \
     "6\n\t" op " %%" a "12, %%" a "13, %%" a "7\n\t" op " %%" a "12, %%" a "13, %%" a "8\n\t" op \
     " %%" a "12, %%" a "13, %%" a "9\n\t" op " %%" a "12, %%" a "13, %%" a "10\n\t" op " %%" a   \
     "12, %%" a "13, %%" a "11\n\t"

// `iterations` rounds of one instruction on 12 independent accumulators; returns operations.
#define RT_LOOP(name, isa, reg, op, ops_per_instruction)                                           \
  __attribute__((target(isa))) double name(uint64_t iterations) {                                  \
    uint64_t n = iterations;                                                                       \
    asm volatile(                                                                                  \
        "vpxor %%xmm12, %%xmm12, %%xmm12\n\tvpxor %%xmm13, %%xmm13, %%xmm13\n\t"                   \
        "1:\n\t" RT_FOR_12(op, reg, reg) "dec %0\n\tjnz 1b"                                        \
        : "+r"(n)                                                                                  \
        :                                                                                          \
        : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", \
          "xmm11", "xmm12", "xmm13", "cc");                                                        \
    return double(iterations) * 12 * (ops_per_instruction);                                        \
  }

RT_LOOP(Vfmadd231psZmm, "avx512f", "zmm", "vfmadd231ps", 16 * 2)
RT_LOOP(Vfmadd231pdZmm, "avx512f", "zmm", "vfmadd231pd", 8 * 2)
RT_LOOP(Vfmadd231psYmm, "avx2,fma", "ymm", "vfmadd231ps", 8 * 2)
RT_LOOP(Vfmadd231pdYmm, "avx2,fma", "ymm", "vfmadd231pd", 4 * 2)

// vpdpbusd on 16 accumulators (zmm0-15, sources in zmm16-17), as many as the probe's loop keeps:
// at two a cycle its latency needs more than 12 in flight on some cores, and a check that cannot
// reach the instruction's rate would call a sound probe high.
__attribute__((target("avx512f,avx512vnni"))) double VpdpbusdZmm(uint64_t iterations) {
  uint64_t n = iterations;
#define RT_VPDPBUSD(acc) "vpdpbusd %%zmm17, %%zmm16, %%zmm" acc "\n\t"
  asm volatile(
      "vpxord %%zmm16, %%zmm16, %%zmm16\n\tvpxord %%zmm17, %%zmm17, %%zmm17\n\t"
      "1:\n\t" RT_VPDPBUSD("0") RT_VPDPBUSD("1") RT_VPDPBUSD("2") RT_VPDPBUSD("3") RT_VPDPBUSD("4")
          RT_VPDPBUSD("5") RT_VPDPBUSD("6") RT_VPDPBUSD("7") RT_VPDPBUSD("8") RT_VPDPBUSD("9")
              RT_VPDPBUSD("10") RT_VPDPBUSD("11") RT_VPDPBUSD("12") RT_VPDPBUSD("13")
                  RT_VPDPBUSD("14") RT_VPDPBUSD("15") "dec %0\n\tjnz 1b"
      : "+r"(n)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "cc");
#undef RT_VPDPBUSD
  return double(iterations) * 16 * 64 * 2;
}

// vpmaddubsw + vpmaddwd + vpaddd on six chains, each with its own temporary: the AVX2 int8 path.
__attribute__((target("avx2"))) double VpmaddubswYmm(uint64_t iterations) {
  uint64_t n = iterations;
#define RT_STEP(t, acc)                                                              \
  "vpmaddubsw %%ymm13, %%ymm12, %%ymm" t "\n\tvpmaddwd %%ymm14, %%ymm" t ", %%ymm" t \
  "\n\tvpaddd %%ymm" t ", %%ymm" acc ", %%ymm" acc "\n\t"
  asm volatile(
      "vpxor %%xmm12, %%xmm12, %%xmm12\n\tvpxor %%xmm13, %%xmm13, %%xmm13\n\t"
      "vpxor %%xmm14, %%xmm14, %%xmm14\n\t"
      "1:\n\t" RT_STEP("6", "0") RT_STEP("7", "1") RT_STEP("8", "2") RT_STEP("9", "3")
          RT_STEP("10", "4") RT_STEP("11", "5") "dec %0\n\tjnz 1b"
      : "+r"(n)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "cc");
#undef RT_STEP
  return double(iterations) * 6 * 32 * 2;
}

struct Independent {
  const char* instruction;
  std::function<double(uint64_t)> run;
};

// The independent loop of the instruction the probe's ceiling `c` runs, or none.
std::optional<Independent> IndependentOf(const Ceiling& c) {
  const bool wide = absl::StartsWith(c.source, "AVX3");
  const bool avx2 = absl::StartsWith(c.source, "AVX2");
  if (!wide && !avx2) return std::nullopt;
  if (absl::StrContains(c.source, "vpdpbusd")) {
    if (!__builtin_cpu_supports("avx512vnni")) return std::nullopt;
    return Independent{"vpdpbusd zmm", &VpdpbusdZmm};
  }
  if (absl::StrContains(c.source, "vpmaddubsw")) {
    if (wide) return std::nullopt;  // the AVX3 maddubs path has no independent loop here
    return Independent{"vpmaddubsw+vpmaddwd+vpaddd ymm", &VpmaddubswYmm};
  }
  if (!absl::StrContains(c.source, "fma")) return std::nullopt;
  if (c.dtype == Dtype::kF64) {
    return wide ? Independent{"vfmadd231pd zmm", &Vfmadd231pdZmm}
                : Independent{"vfmadd231pd ymm", &Vfmadd231pdYmm};
  }
  return wide ? Independent{"vfmadd231ps zmm", &Vfmadd231psZmm}
              : Independent{"vfmadd231ps ymm", &Vfmadd231psYmm};
}

int Main(int argc, char** argv) {
  bool quick = false;
  int rounds = 7;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strncmp(argv[i], "--rounds=", 9) == 0 && std::atoi(argv[i] + 9) > 0) {
      rounds = std::atoi(argv[i] + 9);
    } else {
      std::fprintf(stderr,
                   "usage: ceiling_check [--quick] [--rounds=N]\n"
                   "  a full (or quick) probe, then its compute ceilings against independent\n"
                   "  inline-assembly loops of the same instructions, best of N interleaved\n"
                   "  rounds (default 7) at every thread count the probe measured\n");
      return 2;
    }
  }
  probes::ProbeOptions options;
  options.quick = quick;
  options.progress = [](const std::string& line) { std::fprintf(stderr, "  %s\n", line.c_str()); };
  absl::StatusOr<MachineProfile> profile = probes::ProbeMachine(options);
  if (!profile.ok()) {
    std::fprintf(stderr, "ceiling_check: %s\n", std::string(profile.status().message()).c_str());
    return 1;
  }
  struct Row {
    const Ceiling* ceiling;
    Independent loop;
    uint64_t iterations = 0;
    double best = 0;
  };
  std::vector<Row> rows;
  for (const Ceiling& c : profile->ceilings) {
    if (c.kind != Ceiling::Kind::kCompute) continue;
    if (std::optional<Independent> loop = IndependentOf(c)) rows.push_back({&c, *loop});
  }
  for (Row& row : rows) {  // ~50 ms a repetition on one thread
    uint64_t n = 1 << 12;
    for (;;) {
      const auto start = std::chrono::steady_clock::now();
      row.loop.run(n);
      const double t =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (t > 0.0125) {
        row.iterations = uint64_t(double(n) * 0.05 / t);
        break;
      }
      n *= 4;
    }
  }
  std::fprintf(stderr, "  independent loops: %d rounds, each row once a round\n", rounds);
  for (int round = 0; round < rounds; ++round) {
    for (Row& row : rows) {
      Executor executor(row.ceiling->threads);
      std::vector<double> ops(executor.threads());
      const double seconds =
          probes::TimeOnAllThreads(executor, [&](int t) { ops[t] = row.loop.run(row.iterations); });
      double total = 0;
      for (double o : ops) total += o;
      row.best = std::max(row.best, total / seconds);
    }
  }
  std::printf(
      "| dtype | threads | probe path | probe ceiling | independent loop | its best | "
      "probe / independent | within 3%% |\n|---|---|---|---|---|---|---|---|\n");
  int outside = 0;
  for (const Row& row : rows) {
    const Ceiling& c = *row.ceiling;
    const double ratio = c.per_second / row.best;
    const bool within = std::abs(ratio - 1) <= 0.03;
    outside += !within;
    std::printf("| %s | %d | %s | %s | %s | %s | %.3f | %s |\n",
                std::string(ToString(c.dtype)).c_str(), c.threads, c.source.c_str(),
                c.RateText(c.per_second).c_str(), row.loop.instruction,
                c.RateText(row.best).c_str(), ratio, within ? "yes" : "NO");
  }
  std::printf("\nhost: %s, %d CPUs; clock %.2f GHz; probe %s\n", profile->cpu_model.c_str(),
              profile->logical_cpus, profile->clock_ghz, quick ? "quick" : "full");
  return outside == 0 ? 0 : 1;
}

}  // namespace
}  // namespace rooftune::bench

int main(int argc, char** argv) { return rooftune::bench::Main(argc, argv); }
