// Predicting a workload before it runs: an MLP's forward pass, layer by layer, priced on the
// measured roofline with the traffic model of the kernel that would run, at the config it would
// run with (the dispatch rule, framework/dispatch.h), then divided by the attainment that kernel
// reached on the nearest tuned workload. A pass repeated R times keeps in cache what fits: weights
// whose whole pass fits a measured level are charged to that level after the first pass, not to
// DRAM.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/dispatch.h"
#include "framework/kernel.h"
#include "framework/machine_profile.h"
#include "framework/roofline.h"
#include "framework/traffic.h"
#include "framework/tuning_db.h"
#include "framework/workload.h"

namespace rooftune {

// y = act(x W + b) per layer: widths {input, hidden..., output}; bias+ReLU on every layer but the
// last (bias only). At batch 1 a layer is the GEMV decode shape; above it a GEMM with M = batch.
struct MlpSpec {
  std::vector<int64_t> widths;
  Dtype dtype = Dtype::kF32;  // kF32 or kU8S8
  int threads = 1;
  int repeat = 1;  // passes in a row: what stays cached between them is charged to its level
};

// The MLP the report's "what if" section predicts: a transformer block's feed-forward layers at
// a 7B-class width, whose f32 weights (512 MiB) outgrow the caches of most servers.
inline const std::vector<int64_t> kWhatIfMlp = {4096, 16384, 4096};

// The layers of `spec` at `batch`, in order.
std::vector<Workload> MlpLayers(const MlpSpec& spec, int64_t batch);
// The registered kernel that runs a layer: gemv_f32 / gemv_u8s8 at batch 1, gemm_f32 / gemm_s8
// above (the kernels the library API runs).
const char* KernelForLayer(const Workload& layer);

struct LayerPrediction {
  Workload workload;
  const Kernel* kernel = nullptr;
  int threads = 1;  // the spec's, or fewer where tune --threads auto chose them (ChooseThreads)
  dispatch::Choice choice;
  Traffic traffic;  // bytes per pass, averaged over the R passes
  RooflineBound bound;
  // predicted = bound / attainment of the tuned row the config came from; without a usable one
  // (the initial config, or a row whose attainment is not in (0, 1]) the bound alone.
  double predicted_seconds = 0;
  bool bound_only = true;
};

struct PassPrediction {
  int64_t batch = 1;
  std::vector<LayerPrediction> layers;
  double operations = 0;
  double footprint_bytes = 0;         // every layer's operands: what a repeated pass keeps warm
  std::optional<int> resident_level;  // the nearest cache level that holds it, if any
  std::array<double, kNumMemoryLevels> bytes{};  // per pass, summed over the layers
  double bound_seconds = 0;
  double predicted_seconds = 0;
  bool bound_only = true;  // no layer had a tuned row to predict from
};

// Fails on an MLP of fewer than two widths, a width below 1, a batch below 1, a dtype other than
// f32 or u8s8, or a kernel that is not registered.
absl::StatusOr<PassPrediction> PredictMlp(
    const MlpSpec& spec, int64_t batch, const MachineProfile& profile,
    const std::vector<TunedResult>& rows,
    const std::vector<TuningDb::ThreadChoice>& thread_choices = {});

// The traffic of one of R passes, on average: the first pass moves `cold`; the later ones move
// nothing across the levels beyond cache level `resident_level` (1-based), which holds the pass.
Traffic TrafficPerPass(const Traffic& cold, std::optional<int> resident_level, int repeat);

}  // namespace rooftune
