// The kernel interface and its registry. A kernel says what it computes (op, dtypes, epilogues),
// what can be tuned (a ParamSpace and a starting config), what it costs (operations and a traffic
// model) and how to run. Registering one is a single statement:
//
//   ROOFTUNE_REGISTER_KERNEL(Kernel("gemm_f32")
//                                .Computes(Op::kGemm, {Dtype::kF32}, kAllEpilogues)
//                                .Tunes(GemmF32Space())
//                                .StartsFrom(&GemmF32InitialConfig)
//                                .Moves(&GemmF32Traffic)
//                                .Runs(&RunGemmF32));
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/cache_mode.h"
#include "framework/machine_profile.h"
#include "framework/param_space.h"
#include "framework/problem.h"
#include "framework/traffic.h"
#include "framework/workload.h"

namespace rooftune {

inline const std::vector<Epilogue> kAllEpilogues = {Epilogue::kNone, Epilogue::kBias,
                                                    Epilogue::kBiasRelu};

// How a kernel uses threads. kTbb kernels run inside the harness's pinned task_arena of
// `threads` threads. kSelf kernels run on the calling thread, outside any TBB worker, and start
// what threads they need themselves (OpenMP in oneDNN, std::thread in a plugin): a TBB worker
// that called them would start a second team per worker and oversubscribe the cores.
enum class Threading { kTbb, kSelf };

struct RunContext {
  int threads = 1;
  // What the kernel's prepare step made for this config and problem (packed weights, say), or
  // null when it has none.
  const void* prepared = nullptr;
};

using RunFn = std::function<absl::Status(const Config&, Problem&, const RunContext&)>;
using TrafficFn =
    std::function<Traffic(const Workload&, const Config&, int threads, const MachineProfile&)>;
// The analytic starting config of a call on `threads` threads, timed (or made) in `cache` mode:
// a cold call finds none of its operands in the caches, whatever they could hold.
using InitialConfigFn =
    std::function<Config(const Workload&, int threads, CacheMode cache, const MachineProfile&)>;
// What a prepare step made for one config and problem: the object `run` reads through
// RunContext::prepared (packed weights, say), and where the bytes it streams lie, so that cold
// timing evicts them along with the problem's operands.
struct Prepared {
  std::shared_ptr<const void> object;
  std::vector<ByteSpan> streamed;
  // The call spawns no TBB work (a small product on one thread): the executor runs it on the
  // calling thread without entering its arena, whose entry costs more than such a call.
  bool calling_thread_only = false;
};
// Work done once per (config, problem), outside every timing: packing weights ahead of time, as
// inference does.
using PrepareFn = std::function<absl::StatusOr<Prepared>(const Config&, const Problem&)>;
// A config as a call that brings its own weights runs it (the library API's calls made without
// weights prepared ahead): the config itself, or, where it reads a layout that only the prepare
// step makes (packed, grouped), the config that reads the call's weights where they lie.
using WeightsFromTheCallFn =
    std::function<Config(const Config&, const Workload&, int threads, const MachineProfile&)>;

struct Kernel {
  explicit Kernel(std::string name) : name(std::move(name)) {}

  // Registration reads as a sentence: each call below sets what it names and returns the kernel.
  Kernel& Describe(std::string text) { return Set(description, std::move(text)); }
  Kernel& Computes(Op op_, std::vector<Dtype> dtypes_, std::vector<Epilogue> epilogues_) {
    op = op_, dtypes = std::move(dtypes_), epilogues = std::move(epilogues_);
    return *this;
  }
  Kernel& Tunes(ParamSpace space) { return Set(params, std::move(space)); }
  Kernel& StartsFrom(InitialConfigFn fn) { return Set(initial_config, std::move(fn)); }
  Kernel& Moves(TrafficFn fn) { return Set(traffic, std::move(fn)); }
  Kernel& Runs(RunFn fn) { return Set(run, std::move(fn)); }
  Kernel& Prepares(PrepareFn fn) { return Set(prepare, std::move(fn)); }
  Kernel& ReadsWeightsFromTheCallAs(WeightsFromTheCallFn fn) {
    return Set(weights_from_the_call, std::move(fn));
  }
  Kernel& Threads(Threading t) { return Set(threading, t); }
  // The workloads `rooftune run` tunes (and `run --quick`): each a shape, and optionally an
  // epilogue after a space ("1024x1024x1024 bias_relu"); else the kernel's first epilogue.
  Kernel& ByDefaultOn(std::vector<std::string> shapes, std::vector<std::string> quick_shapes) {
    default_shapes = std::move(shapes), quick_default_shapes = std::move(quick_shapes);
    return *this;
  }
  Kernel& IsReference() { return Set(reference, true); }
  // The version of the kernel's parameters: bumped when a parameter's meaning changes (a value
  // renamed or reinterpreted, a parameter removed), so that rows tuned before are not run with
  // parameters they were not tuned for. Adding a parameter with AsBefore needs no bump.
  Kernel& ConfigSchema(int version) { return Set(config_schema, version); }
  // Whether `row_schema` (a stored row's) is older than this kernel's parameters.
  bool IsStale(int row_schema) const { return row_schema < config_schema; }
  // Relations to other kernels, by name (the registry resolves them when used, so a plugin may
  // name a kernel another plugin registers).
  // This kernel runs `fused`'s main loop with the epilogue as a separate pass over C: the fusion
  // lever compares the two.
  Kernel& SeparatesEpilogueOf(std::string fused) {
    return Set(unfused_variant_of, std::move(fused));
  }
  // The kernel on narrower operands (int8 weights for f32) whose workload the "fewer bytes"
  // lever prices.
  Kernel& NarrowsTo(std::string kernel) { return Set(narrower, std::move(kernel)); }
  // An int8 kernel's f32 kernel of the same op, against which its speedup is measured.
  Kernel& ComparedWithF32(std::string kernel) { return Set(f32_counterpart, std::move(kernel)); }

  bool Supports(const Workload& w) const;
  // One of the ByDefaultOn entries as the workload it names, of the kernel's first dtype. Fails
  // on a malformed shape or epilogue, and on an epilogue the kernel does not compute.
  absl::StatusOr<Workload> DefaultWorkload(absl::string_view entry,
                                           uint64_t memory_limit_bytes) const;
  // The analytic starting point, or the first valid config when the kernel declares none.
  Config InitialConfig(const Workload& w, int threads, CacheMode cache,
                       const MachineProfile& profile) const;
  // The kernel's traffic model, or compulsory traffic at every level when it declares none (a
  // legal lower bound, so a verdict can still say "impossible").
  Traffic TrafficFor(const Workload& w, const Config& c, int threads,
                     const MachineProfile& profile) const;
  // `c` for a call that brings its own weights (see WeightsFromTheCallFn); `c` itself when the
  // kernel declares no such rule.
  Config WithWeightsFromTheCall(const Config& c, const Workload& w, int threads,
                                const MachineProfile& profile) const;

  std::string name;
  std::string description;
  Op op = Op::kGemm;
  std::vector<Dtype> dtypes;
  std::vector<Epilogue> epilogues;
  ParamSpace params;
  InitialConfigFn initial_config;
  TrafficFn traffic;
  RunFn run;
  PrepareFn prepare;
  WeightsFromTheCallFn weights_from_the_call;
  Threading threading = Threading::kTbb;
  std::vector<std::string> default_shapes, quick_default_shapes;
  bool reference = false;
  int config_schema = 1;
  std::string unfused_variant_of, narrower, f32_counterpart;  // "" when not declared
  std::string origin = "builtin";  // or the path of the plugin that registered it

 private:
  template <typename Field, typename Value>
  Kernel& Set(Field& field, Value value) {
    field = std::move(value);
    return *this;
  }
};

class KernelRegistry {
 public:
  static KernelRegistry& Global();

  absl::Status Add(Kernel kernel);
  const Kernel* Find(absl::string_view name) const;
  std::vector<const Kernel*> All() const;  // sorted by name
  // The kernel declared as `fused`'s separate-pass variant (SeparatesEpilogueOf), or null.
  const Kernel* UnfusedVariantOf(absl::string_view fused) const;

  // Loads kernels from a shared library built against plugin.h. Refuses a file that cannot be
  // loaded, that is not a rooftune plugin, or whose ABI version differs from this build's.
  absl::Status LoadPlugin(const std::string& path);

 private:
  std::vector<std::unique_ptr<Kernel>> kernels_;
};

namespace internal {
bool RegisterAtStartup(Kernel kernel);
}  // namespace internal

#define ROOFTUNE_CONCAT_INNER(a, b) a##b
#define ROOFTUNE_CONCAT(a, b) ROOFTUNE_CONCAT_INNER(a, b)
#define ROOFTUNE_REGISTER_KERNEL(kernel)                                           \
  [[maybe_unused]] static const bool ROOFTUNE_CONCAT(rooftune_kernel_, __LINE__) = \
      ::rooftune::internal::RegisterAtStartup(kernel)

}  // namespace rooftune
