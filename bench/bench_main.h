// What the benchmark binaries share: a quiet environment for the libraries' thread pools, this
// machine's profile and tuned configs from the tuning database, per-iteration samples collected
// for the summary, and the summary's ratios and attainments.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/clock.h"
#include "framework/executor.h"
#include "framework/kernel.h"
#include "framework/machine_profile.h"
#include "framework/problem.h"
#include "framework/tuner.h"
#include "framework/tuning_db.h"
#include "framework/workload.h"

namespace rooftune::bench {

// OpenMP (oneDNN, BLIS) and OpenBLAS threads spin for a while after each call and would steal the
// cores from whatever runs next; they read their settings when loaded, so the binary re-executes
// itself once with OMP_WAIT_POLICY=PASSIVE and OPENBLAS_THREAD_TIMEOUT set.
void ReexecWithQuietThreadPools(int argc, char** argv);

// What a benchmark binary measures and accepts: for --help, and to check its arguments.
struct Usage {
  std::string name;
  std::string summary;  // a paragraph: what is measured against what
  Op op = Op::kGemm;    // how --shapes= are read: MxNxK for GEMM, NxK for GEMV
  std::string default_shapes;
  bool takes_full_range = false;
  bool takes_config = false;   // --config=p=v,... (one rooftune kernel per row)
  bool takes_max_isa = false;  // --max-isa=avx2 (rooftune against oneDNN alone)
};

struct Options {
  std::vector<int> threads = {1, 2};
  std::vector<std::string> shapes;  // empty: the binary's defaults
  double tune_budget_seconds = 0;   // > 0: tune configs the database lacks before measuring
  std::string config;               // p=v,... over rooftune's config in every row (takes_config)
  bool full_range = false;          // int8: full-range activations instead of 7-bit ones
  bool max_isa_avx2 = false;        // both libraries held to AVX2 (and AVX-VNNI where present)
  bool help = false;
};
// Takes --threads=1,2 --shapes=AxBxC,... --tune-budget=S --full-range --max-isa=avx2 --help out
// of argv and
// checks them (a thread count that is not a positive integer, a shape the op cannot read, a
// flag the binary does not take: an error); leaves the rest for Google Benchmark.
absl::StatusOr<Options> ParseOptions(int* argc, char** argv, const Usage& usage);

// The --help text of rooftune's own options (Google Benchmark's follow it).
std::string HelpText(const Usage& usage);

class Context {
 public:
  static absl::StatusOr<std::unique_ptr<Context>> Open();
  const MachineProfile& profile() const { return profile_; }

  // The tuned config for this machine, else (after tuning it when a budget is given) the
  // kernel's initial one; `source` says which.
  Config ConfigFor(const Kernel& kernel, const Workload& w, int threads, double tune_budget,
                   std::string* source);

 private:
  MachineProfile profile_;
  std::unique_ptr<TuningDb> db_;
};

// What every benchmark binary does first: re-execute with quiet thread pools, take rooftune's
// options out of argv, initialise Google Benchmark, open the tuning database and the profile.
// Prints the error and returns null when an option is wrong or the database or the profile
// cannot be had; --help prints the usage and exits.
std::unique_ptr<Context> StartBenchmark(int* argc, char** argv, const Usage& usage,
                                        Options* options);

// What every benchmark binary does once it has registered its benchmarks: runs them when
// `registered` is ok and returns true; else prints why (prefixed with `binary`) and returns false.
bool RunRegistered(const absl::Status& registered, const std::string& binary);

// Per-iteration wall times by benchmark name, filled by the benchmark bodies.
std::map<std::string, std::vector<double>>& Samples();
double MedianSeconds(const std::string& name);  // 0 when the benchmark did not run
// `amount` (operations, bytes) per median call, in billions a second; 0 when it did not run.
double BillionsPerSecond(double amount, const std::string& name);

// Registers a benchmark whose every iteration calls `body` and records its wall time. `before`,
// when given, runs before every iteration outside the timing (an eviction, for instance). With
// `arena`, every repetition's loop and every paired call (MeasurePaired) runs inside that
// executor's arena, entered before the clock starts: entering pins the calling thread and leaving
// unpins it, two system calls that cost microseconds in a VM (about 6 us a call on one guest) and
// that rooftune's calls inside the arena, and the library API's, do not pay per call.
void Register(const std::string& name, std::function<void()> body,
              std::function<void()> before = {}, Executor* arena = nullptr);

// A `before` for cold benchmarks: evicts `spans` (the call's operands, and what rooftune
// prepared from them) from every cache level, so that the call streams them from DRAM.
std::function<void()> Evicting(std::vector<ByteSpan> spans);

// The arena a competitor's calls run in (Register's `arena`): rooftune's, on one thread, where
// the executor pins its thread to the first CPU this process may use (a library left to the
// scheduler could run on the other CPU, and on a machine whose CPUs differ in speed, a shared VM,
// the ratio would compare two CPUs instead of two kernels); none on more threads, where each
// library spreads its own team over the CPUs, as the executor does.
Executor* CompetitorArena(Executor* executor);
// The arena a kernel's calls run in: the executor's for a kernel that runs on TBB (as it always
// does), CompetitorArena's for one with threads of its own.
Executor* ArenaFor(const Kernel& kernel, Executor* executor);

// The speedup of registered benchmark `a` over `b` from back-to-back pairs of calls: time(b) /
// time(a) per pair, the order alternating, for `seconds` (at least 11 pairs). Each timed call
// follows its own `before` (an eviction) or, for a warm benchmark, an untimed call of its own, so
// that it runs in the state its repetitions ran in. A phase of this kind of machine lasts seconds
// and a pair milliseconds, so both calls of a pair see the same machine, which resolves
// differences of a few percent that a ratio of two medians taken at different moments cannot.
// Reported as the median and the quartiles of the per-pair ratios.
struct PairedSpeedup {
  double median = 0, low = 0, high = 0;  // low, high: the 25th and 75th percentiles
  int pairs = 0;
};
PairedSpeedup MeasurePaired(const std::string& a, const std::string& b, double seconds = 1.0,
                            const Clock& clock = Clock::Steady());

}  // namespace rooftune::bench
