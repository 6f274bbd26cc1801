#include "framework/prediction.h"

#include "absl/strings/str_cat.h"

namespace rooftune {

std::vector<Workload> MlpLayers(const MlpSpec& spec, int64_t batch) {
  std::vector<Workload> layers;
  for (size_t i = 0; i + 1 < spec.widths.size(); ++i) {
    const bool last = i + 2 == spec.widths.size();
    Workload w;
    w.op = batch == 1 ? Op::kGemv : Op::kGemm;
    w.m = batch;
    w.n = spec.widths[i + 1];
    w.k = spec.widths[i];
    w.dtype = spec.dtype;
    w.epilogue = last ? Epilogue::kBias : Epilogue::kBiasRelu;
    layers.push_back(w);
  }
  return layers;
}

const char* KernelForLayer(const Workload& layer) {
  const bool int8 = layer.dtype == Dtype::kU8S8;
  if (layer.op == Op::kGemv) return int8 ? "gemv_u8s8" : "gemv_f32";
  return int8 ? "gemm_s8" : "gemm_f32";
}

Traffic TrafficPerPass(const Traffic& cold, std::optional<int> resident_level, int repeat) {
  Traffic t = cold;
  if (!resident_level || repeat <= 1) return t;
  // MemoryLevel k is the traffic into level k from the one beyond: with the pass held in cache
  // level L, the indices L and up move nothing after the first pass.
  for (int i = *resident_level; i < kNumMemoryLevels; ++i) {
    t.bytes[i] = cold.bytes[i] / repeat;
    t.after[i] = cold.after[i] / repeat;
  }
  return t;
}

absl::StatusOr<PassPrediction> PredictMlp(
    const MlpSpec& spec, int64_t batch, const MachineProfile& profile,
    const std::vector<TunedResult>& rows,
    const std::vector<TuningDb::ThreadChoice>& thread_choices) {
  if (spec.widths.size() < 2) {
    return absl::InvalidArgumentError("an MLP needs at least two widths (input and output)");
  }
  for (int64_t width : spec.widths) {
    if (width < 1) return absl::InvalidArgumentError(absl::StrCat("width ", width, " is below 1"));
  }
  if (batch < 1) return absl::InvalidArgumentError(absl::StrCat("batch ", batch, " is below 1"));
  if (spec.dtype != Dtype::kF32 && spec.dtype != Dtype::kU8S8) {
    return absl::InvalidArgumentError("an MLP's dtype is f32 or u8s8");
  }
  PassPrediction pass;
  pass.batch = batch;
  const std::vector<Workload> layers = MlpLayers(spec, batch);
  for (const Workload& w : layers) pass.footprint_bytes += w.CompulsoryBytes();
  pass.resident_level = profile.NearestCacheHolding(pass.footprint_bytes);
  for (const Workload& w : layers) {
    LayerPrediction layer;
    layer.workload = w;
    layer.kernel = KernelRegistry::Global().Find(KernelForLayer(w));
    if (layer.kernel == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("kernel ", KernelForLayer(w), " is not registered"));
    }
    // The library API's rule: the threads first, then the config at that count.
    layer.threads = dispatch::ChooseThreads(*layer.kernel, w, spec.threads, thread_choices);
    layer.choice = dispatch::ChooseConfig(*layer.kernel, w, layer.threads, profile, rows);
    const Traffic cold = layer.kernel->TrafficFor(w, layer.choice.config, layer.threads, profile);
    layer.traffic = TrafficPerPass(cold, pass.resident_level, spec.repeat);
    layer.bound = BoundOf(profile, SelectCeilings(profile, spec.dtype, layer.threads), w,
                          layer.traffic, /*warm=*/false);
    const double attainment = layer.choice.attainment;
    layer.bound_only =
        layer.choice.source == dispatch::Source::kInitial || attainment <= 0 || attainment > 1;
    layer.predicted_seconds =
        layer.bound_only ? layer.bound.seconds : layer.bound.seconds / attainment;
    pass.operations += w.Operations();
    for (int i = 0; i < kNumMemoryLevels; ++i) pass.bytes[i] += layer.traffic.Total(MemoryLevel(i));
    pass.bound_seconds += layer.bound.seconds;
    pass.predicted_seconds += layer.predicted_seconds;
    pass.bound_only = pass.bound_only && layer.bound_only;
    pass.layers.push_back(std::move(layer));
  }
  return pass;
}

}  // namespace rooftune
