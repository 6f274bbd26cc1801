#include "framework/harness.h"

#include <chrono>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"

namespace rooftune {
namespace {

using Clock = std::chrono::steady_clock;

void KeepOutput(Problem& problem) {
  // The output is the kernel's only observable effect: make it escape so no run can be deleted.
  benchmark::DoNotOptimize(problem.c.data());
  benchmark::DoNotOptimize(problem.c_s32.data());
  benchmark::ClobberMemory();
}

}  // namespace

absl::string_view ToString(CacheMode mode) { return mode == CacheMode::kWarm ? "warm" : "cold"; }

uint64_t ColdFlushBytes(const MachineProfile& profile) {
  uint64_t last = 0;
  for (const CacheLevel& c : profile.caches) last = std::max(last, c.size_bytes);
  return std::max<uint64_t>(4 * last, uint64_t{64} << 20);
}

void FlushCaches(uint64_t bytes) {
  // Two buffers, each written once when it is made (never-written pages would all map the one
  // zero page, and reading them would evict nothing).
  static std::vector<uint8_t>* written = nullptr;
  static std::vector<uint8_t>* read = nullptr;
  if (written == nullptr || written->size() < bytes) {
    delete written;
    delete read;
    written = new std::vector<uint8_t>(bytes, 1);
    read = new std::vector<uint8_t>(bytes, 1);
  }
  // Read-modify-write every line, so that the dirty lines of the kernel's operands are evicted
  // (written back now, not during the timed call)...
  uint8_t* data = written->data();
  for (uint64_t i = 0; i < bytes; i += 64) data[i] = uint8_t(data[i] + 1);
  // ...then read as much again, so that the caches hold clean lines: left dirty, they would be
  // written back while the kernel streams its operands in, and a memory-bound kernel (GEMV)
  // would share DRAM bandwidth with the flush's own write-backs.
  const uint8_t* clean = read->data();
  uint8_t sum = 0;
  for (uint64_t i = 0; i < bytes; i += 64) sum = uint8_t(sum + clean[i]);
  benchmark::DoNotOptimize(sum);
  benchmark::DoNotOptimize(data);
  benchmark::ClobberMemory();
}

absl::StatusOr<std::shared_ptr<const void>> Prepare(const Kernel& kernel, const Config& config,
                                                    const Problem& problem) {
  if (!kernel.prepare) return std::shared_ptr<const void>();
  return kernel.prepare(config, problem);
}

namespace {
absl::StatusOr<Validation> Validate(const Kernel& kernel, const Config& config, Problem& problem,
                                    const ReferenceOutput& reference, Executor& executor,
                                    const void* prepared) {
  if (absl::Status s = kernel.params.Validate(config); !s.ok()) return s;
  if (!kernel.Supports(problem.workload)) {
    return absl::InvalidArgumentError(absl::StrCat("kernel ", kernel.name, " does not compute ",
                                                   problem.workload.Key()));
  }
  RestoreOutput(problem, reference);
  if (absl::Status s = executor.Run(kernel, config, problem, prepared); !s.ok()) return s;
  return CompareWithReference(problem, reference);
}
}  // namespace

absl::StatusOr<Validation> ValidateConfig(const Kernel& kernel, const Config& config,
                                          Problem& problem, const ReferenceOutput& reference,
                                          Executor& executor) {
  absl::StatusOr<std::shared_ptr<const void>> prepared = Prepare(kernel, config, problem);
  if (!prepared.ok()) return prepared.status();
  return Validate(kernel, config, problem, reference, executor, prepared->get());
}

absl::StatusOr<std::vector<double>> TimeSamples(const Kernel& kernel, const Config& config,
                                                Problem& problem, Executor& executor,
                                                const void* prepared, const TimingOptions& options) {
  for (int i = 0; i < options.warmup_runs; ++i) {
    if (absl::Status s = executor.Run(kernel, config, problem, prepared); !s.ok()) return s;
    KeepOutput(problem);
  }
  std::vector<double> samples;
  double total = 0;
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(options.max_seconds));
  while (int(samples.size()) < options.max_repetitions) {
    if (options.cache == CacheMode::kCold) FlushCaches(options.flush_bytes);
    const Clock::time_point start = Clock::now();
    absl::Status status = executor.Run(kernel, config, problem, prepared);
    KeepOutput(problem);
    const Clock::time_point end = Clock::now();
    if (!status.ok()) return status;
    const double seconds = std::chrono::duration<double>(end - start).count();
    samples.push_back(seconds);
    total += seconds;
    if (total >= options.min_seconds && int(samples.size()) >= options.min_repetitions) break;
    if (end >= deadline && samples.size() >= 2) break;
  }
  return samples;
}

absl::StatusOr<Trial> RunTrial(const Kernel& kernel, const Config& config, Problem& problem,
                               const ReferenceOutput& reference, Executor& executor,
                               const TimingOptions& options) {
  Trial trial;
  trial.kernel = kernel.name;
  trial.workload = problem.workload;
  trial.config = config;
  trial.threads = executor.threads();
  trial.cache = options.cache;
  absl::StatusOr<std::shared_ptr<const void>> prepared = Prepare(kernel, config, problem);
  if (!prepared.ok()) return prepared.status();
  absl::StatusOr<Validation> validation =
      Validate(kernel, config, problem, reference, executor, prepared->get());
  if (!validation.ok()) return validation.status();
  trial.validation = *validation;
  if (!trial.validation.ok) return trial;

  absl::StatusOr<std::vector<double>> samples =
      TimeSamples(kernel, config, problem, executor, prepared->get(), options);
  if (!samples.ok()) return samples.status();
  trial.seconds = Summarize(*std::move(samples));
  trial.noisy = trial.seconds.cv > options.noisy_cv;
  return trial;
}

}  // namespace rooftune
