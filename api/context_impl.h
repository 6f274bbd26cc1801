// What a Context and a WeightsS8 hold behind the public header: the machine profile and tuned rows
// read at Open, the thread pool calls run on, and each workload's decoded config (a plan), made
// on the workload's first call and looked up from memory afterwards.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "framework/dispatch.h"
#include "framework/kernel.h"
#include "framework/machine_profile.h"
#include "framework/tuning_db.h"
#include "kernels/gemm_f32/plan.h"
#include "kernels/gemm_s8/gemm_s8.h"
#include "kernels/gemv/gemv.h"
#include "plugins/builtin/gemm_s8_config.h"
#include "rooftune/rooftune.h"
#include "tbb/task_arena.h"

namespace rooftune {

// A workload's config, decoded once for the kernel that runs it.
struct Plan {
  const Kernel* kernel = nullptr;
  int threads = 1;  // a call's: the context's, or fewer (dispatch::ChooseThreads)
  Config config;
  Explanation explanation;
  std::optional<kernels::GemmF32Plan> gemm_f32;
  GemmS8Choice gemm_s8;
  kernels::GemvBlocking gemv;
};

// How a call reads its weights: where the caller keeps them, or as prepared ahead (GEMV and
// fp32 GEMM, whose configs may lay them out anew).
enum class WeightsRead { kInPlace, kPrepared };

struct PlanKey {
  Op op;
  Dtype dtype;
  Epilogue epilogue;
  int64_t m, n, k;
  WeightsRead weights;
  friend bool operator==(const PlanKey&, const PlanKey&) = default;
};

struct PlanKeyHash {
  size_t operator()(const PlanKey& key) const;
};

struct Context::Impl {
  int threads = 1;
  std::string database;
  MachineProfile profile;
  std::vector<TunedResult> rows;
  std::vector<TuningDb::ThreadChoice> thread_choices;
  std::unique_ptr<tbb::task_arena> arena;

  // The plan for `w` run by the registered kernel `kernel_name`; made under the lock on the
  // workload's first call, read under a shared lock after.
  absl::StatusOr<const Plan*> PlanFor(const char* kernel_name, const Workload& w,
                                      WeightsRead weights = WeightsRead::kInPlace) const;
  // Runs `fn` on `threads` of the context's threads: all of them in its arena, fewer in an arena
  // of that many, made on first use.
  absl::Status Run(int threads, const std::function<absl::Status()>& fn) const;

 private:
  mutable std::shared_mutex mutex_;
  mutable std::unordered_map<PlanKey, std::unique_ptr<const Plan>, PlanKeyHash> plans_;
  mutable std::map<int, std::unique_ptr<tbb::task_arena>> fewer_threads_;
};

struct WeightsS8::Impl {
  int64_t k = 0, n = 0;
  std::vector<int8_t> w;  // k x n, row-major
  std::vector<float> scales;
  std::vector<float> zeros;  // the bias of a call that gives none
  int max_abs_weight = 0;    // bounds the s32 accumulator: k x 255 x this must fit it

  // The weights packed for `path`, on its first use.
  absl::StatusOr<const kernels::PackedWeightsS8*> PackedFor(kernels::S8Path path) const;

 private:
  mutable std::array<std::once_flag, 3> once_;
  mutable std::array<std::optional<kernels::PackedWeightsS8>, 3> packed_;
  mutable std::array<absl::Status, 3> status_;
};

struct WeightsF32::Impl {
  int64_t k = 0, n = 0;
  std::shared_ptr<void>
      data;   // B packed as the plan reads it (Packed()); else a copy, rows n apart
  Plan plan;  // chosen at preparation
  bool Packed() const {
    const kernels::GemmF32Blocking& b = plan.gemm_f32->blocking();
    return b.path == kernels::GemmF32Path::kBlocked && b.pack_b == kernels::BPacking::kPrepared;
  }
};

struct GemvWeights::Impl {
  int64_t n = 0, k = 0;
  int64_t ldw = 0;  // of the copy, when rows lie as in the source (not grouped)
  bool s8 = false;
  std::shared_ptr<void> data;  // in the layout plan.config's PACKW reads
  std::vector<float> row_scales;
  Plan plan;  // chosen at preparation
};

// An internal status as the API's.
Status ToApiStatus(const absl::Status& status);

}  // namespace rooftune
