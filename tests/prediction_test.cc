// Predicting an MLP's pass on a constructed machine (tests/round_machine.h): layers and kernels,
// bounds worked out by hand, residency of a repeated pass, and the tuned attainment that turns a
// bound into a predicted time.
#include "framework/prediction.h"

#include <gtest/gtest.h>

#include "tests/round_machine.h"

namespace rooftune {
namespace {

TEST(Prediction, LayersAreGemvAtBatchOneAndGemmAbove) {
  const MlpSpec spec{{64, 256, 32}, Dtype::kF32, 1, 1};
  std::vector<Workload> layers = MlpLayers(spec, 1);
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[0].Key(), "gemv 256x64 f32 bias_relu");
  EXPECT_EQ(layers[1].Key(), "gemv 32x256 f32 bias");
  EXPECT_STREQ(KernelForLayer(layers[0]), "gemv_f32");
  layers = MlpLayers(spec, 8);
  EXPECT_EQ(layers[0].Key(), "gemm 8x256x64 f32 bias_relu");
  EXPECT_STREQ(KernelForLayer(layers[0]), "gemm_f32");
  layers = MlpLayers({{64, 32}, Dtype::kU8S8, 1, 1}, 1);
  EXPECT_STREQ(KernelForLayer(layers[0]), "gemv_u8s8");
  EXPECT_EQ(layers[0].epilogue, Epilogue::kBias);
  EXPECT_STREQ(KernelForLayer(MlpLayers({{64, 32}, Dtype::kU8S8, 1, 1}, 2)[0]), "gemm_s8");
}

TEST(Prediction, BadSpecsAreRefused) {
  const MachineProfile p = fixtures::RoundMachine();
  EXPECT_FALSE(PredictMlp({{64}, Dtype::kF32, 1, 1}, 1, p, {}).ok());
  EXPECT_FALSE(PredictMlp({{64, 0}, Dtype::kF32, 1, 1}, 1, p, {}).ok());
  EXPECT_FALSE(PredictMlp({{64, 32}, Dtype::kF32, 1, 1}, 0, p, {}).ok());
  EXPECT_FALSE(PredictMlp({{64, 32}, Dtype::kS8F32, 1, 1}, 1, p, {}).ok());
}

// A decode pass whose weights (three 4096 x 4096 layers, 192 MiB) outgrow every cache of the round
// machine (32 MiB L3): DRAM-bound at 10 GB/s, every pass.
TEST(Prediction, ADecodePassBeyondTheCachesStreamsFromDramEveryPass) {
  const MachineProfile p = fixtures::RoundMachine();
  const MlpSpec spec{{4096, 4096, 4096, 4096}, Dtype::kF32, 1, 10};
  absl::StatusOr<PassPrediction> pass = PredictMlp(spec, 1, p, {});
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_FALSE(pass->resident_level.has_value());
  ASSERT_EQ(pass->layers.size(), 3u);
  for (const LayerPrediction& layer : pass->layers) {
    // W (64 MiB) and the small vectors cross DRAM once: 64 MiB / 10 GB/s = 6.7 ms.
    EXPECT_NEAR(layer.traffic[MemoryLevel::kDram], 4096.0 * 4096 * 4 + 3 * 4096 * 4, 1);
    EXPECT_NEAR(layer.bound.seconds, (4096.0 * 4096 * 4 + 3 * 4096 * 4) / 10e9, 1e-9);
    EXPECT_NE(layer.bound.binding.find("DRAM"), std::string::npos) << layer.bound.binding;
    EXPECT_TRUE(layer.bound_only);
    EXPECT_EQ(layer.predicted_seconds, layer.bound.seconds);
  }
  EXPECT_NEAR(pass->bound_seconds, 3 * (4096.0 * 4096 * 4 + 3 * 4096 * 4) / 10e9, 1e-9);
  EXPECT_TRUE(pass->bound_only);
}

// A layer that tune --threads auto ran fastest on fewer threads is predicted there, as the
// library API runs it: its bound at that count's ceilings, the other layers at the spec's.
TEST(Prediction, ALayerOnFewerThreadsIsPricedAtThatCountsCeilings) {
  MachineProfile p = fixtures::RoundMachine();
  p.ceilings.push_back(
      {Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kDram, 2, 16e9, "read"});
  const MlpSpec spec{{4096, 4096, 4096}, Dtype::kF32, 2, 10};
  const std::vector<Workload> layers = MlpLayers(spec, 1);
  const std::vector<TuningDb::ThreadChoice> choices = {
      {"", "gemv_f32", layers[0].Key(), 2, 1, 0.05}};
  absl::StatusOr<PassPrediction> pass = PredictMlp(spec, 1, p, {}, choices);
  ASSERT_TRUE(pass.ok()) << pass.status();
  ASSERT_EQ(pass->layers.size(), 2u);
  const double weights = 4096.0 * 4096 * 4 + 3 * 4096 * 4;
  EXPECT_EQ(pass->layers[0].threads, 1);
  EXPECT_EQ(pass->layers[0].bound.binding, "DRAM bandwidth, 1 thread");
  EXPECT_NEAR(pass->layers[0].bound.seconds, weights / 10e9, 1e-9);
  EXPECT_EQ(pass->layers[1].threads, 2);
  EXPECT_EQ(pass->layers[1].bound.binding, "DRAM bandwidth, 2 threads");
  EXPECT_NEAR(pass->layers[1].bound.seconds, weights / 16e9, 1e-9);
}

// A pass that fits L3 (two 1024 x 1024 layers, 8 MiB): after the first of 10 passes its weights
// come from L3, so DRAM is charged a tenth of them and the bound drops with it.
TEST(Prediction, APassThatFitsACacheIsChargedToItAfterTheFirstPass) {
  const MachineProfile p = fixtures::RoundMachine();
  const MlpSpec once{{1024, 1024, 1024}, Dtype::kF32, 1, 1};
  MlpSpec repeated = once;
  repeated.repeat = 10;
  absl::StatusOr<PassPrediction> cold = PredictMlp(once, 1, p, {});
  absl::StatusOr<PassPrediction> warm = PredictMlp(repeated, 1, p, {});
  ASSERT_TRUE(cold.ok() && warm.ok());
  ASSERT_EQ(warm->resident_level, 3);
  for (size_t i = 0; i < 2; ++i) {
    const double dram = cold->layers[i].traffic[MemoryLevel::kDram];
    EXPECT_NEAR(warm->layers[i].traffic[MemoryLevel::kDram], dram / 10, 1e-6);
    // L3 still feeds L2 every pass (no L3 ceiling on this machine prices it, so the bound is
    // the DRAM share, or the compute).
    EXPECT_EQ(warm->layers[i].traffic[MemoryLevel::kL3], cold->layers[i].traffic[MemoryLevel::kL3]);
    EXPECT_LT(warm->layers[i].bound.seconds, cold->layers[i].bound.seconds / 5);
  }
  // TrafficPerPass on its own: a pass held in L2 moves nothing beyond it after the first pass.
  Traffic t;
  t.bytes = {4, 3, 2, 1};
  const Traffic per = TrafficPerPass(t, 2, 4);
  EXPECT_EQ(per.bytes[0], 4);
  EXPECT_EQ(per.bytes[1], 3);
  EXPECT_EQ(per.bytes[2], 0.5);
  EXPECT_EQ(per.bytes[3], 0.25);
  EXPECT_EQ(TrafficPerPass(t, std::nullopt, 4).bytes[3], 1);
}

// With a tuned row, the predicted time is the bound over that row's attainment; an attainment
// above 1 (a broken verdict) is not used.
TEST(Prediction, ATunedRowsAttainmentTurnsTheBoundIntoATime) {
  const MachineProfile p = fixtures::RoundMachine();
  const MlpSpec spec{{4096, 4096, 4096}, Dtype::kF32, 1, 1};
  const std::vector<Workload> layers = MlpLayers(spec, 1);
  const Kernel* gemv = KernelRegistry::Global().Find("gemv_f32");
  ASSERT_NE(gemv, nullptr);
  TunedResult row;
  row.kernel = "gemv_f32";
  row.workload = layers[0].Key();
  row.dtype = Dtype::kF32;
  row.threads = 1;
  row.config = gemv->params.Format(gemv->InitialConfig(layers[0], 1, CacheMode::kWarm, p));
  row.attainment = 0.8;
  absl::StatusOr<PassPrediction> pass = PredictMlp(spec, 1, p, {row});
  ASSERT_TRUE(pass.ok());
  const LayerPrediction& first = pass->layers[0];
  EXPECT_EQ(first.choice.source, dispatch::Source::kTuned);
  EXPECT_FALSE(first.bound_only);
  EXPECT_NEAR(first.predicted_seconds, first.bound.seconds / 0.8, 1e-12);
  // The second layer (bias, not bias_relu) has no row of its own epilogue: bound only.
  EXPECT_TRUE(pass->layers[1].bound_only);
  EXPECT_FALSE(pass->bound_only);
  EXPECT_NEAR(pass->predicted_seconds, first.predicted_seconds + pass->layers[1].bound.seconds,
              1e-12);
  row.attainment = 1.4;
  pass = PredictMlp(spec, 1, p, {row});
  ASSERT_TRUE(pass.ok());
  EXPECT_TRUE(pass->layers[0].bound_only);
  EXPECT_EQ(pass->layers[0].predicted_seconds, pass->layers[0].bound.seconds);
}

}  // namespace
}  // namespace rooftune
