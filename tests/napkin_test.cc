// The napkin formulas against values worked out by hand, and their input checks.
#include "framework/napkin.h"

#include <gtest/gtest.h>

namespace rooftune::napkin {
namespace {

// 100 TFLOP/s and 1 TB/s: the ridge at 100 FLOP per byte; 80 GB; 500 W.
const Hardware kRound{"round", 100e12, 1e12, 80e9, 500, "test"};

std::string Word(const Answer& a, const std::string& name) {
  for (const auto& [k, v] : a.words) {
    if (k == name) return v;
  }
  return "";
}

TEST(Napkin, IntensityRidgeAndRoofline) {
  EXPECT_DOUBLE_EQ(Intensity(8e9, 2e9)->Get("intensity"), 4);
  EXPECT_DOUBLE_EQ(Ridge(kRound)->Get("ridge"), 100);
  // 1e12 FLOP over 1e11 bytes: intensity 10 < 100, memory-bound at 10 TFLOP/s, 0.1 s.
  absl::StatusOr<Answer> r = Roofline(1e12, 1e11, kRound);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->Get("seconds"), 0.1);
  EXPECT_DOUBLE_EQ(r->Get("rate"), 10e12);
  EXPECT_DOUBLE_EQ(r->Get("fraction_of_peak"), 0.1);
  EXPECT_EQ(Word(*r, "bound_by"), "memory");
  // 1e12 FLOP over 1e9 bytes: intensity 1000, compute-bound at the peak: 0.01 s.
  r = Roofline(1e12, 1e9, kRound);
  EXPECT_DOUBLE_EQ(r->Get("seconds"), 0.01);
  EXPECT_EQ(Word(*r, "bound_by"), "compute");
  EXPECT_EQ(r->figures[0].name, "seconds");  // the headline
}

TEST(Napkin, MfuHfuAndTheirBudget) {
  // 3.6e17 FLOP in 1000 s on 8 devices of 100 TFLOP/s: 3.6e14 / 8e14 = 0.45.
  EXPECT_DOUBLE_EQ(Mfu(3.6e17, 1000, 8, kRound)->Get("mfu"), 0.45);
  EXPECT_DOUBLE_EQ(Hfu(3.6e17, 1000, 8, kRound, 8.0 / 6)->Get("hfu"), 0.6);
  absl::StatusOr<Answer> b = MfuBudget(6, 1, 2, 0.5, 0.5);
  ASSERT_TRUE(b.ok());
  EXPECT_DOUBLE_EQ(b->Get("mfu"), 0.6);
  EXPECT_DOUBLE_EQ(b->Get("memory_fraction"), 0.2);
  EXPECT_EQ(Word(*b, "biggest_lever"), "memory");
}

TEST(Napkin, PrefillDecodeLatencyAndDevices) {
  // 1000 tokens of a 7e9 model: 1.4e13 FLOP at half of 100 TFLOP/s on one device: 0.28 s.
  EXPECT_DOUBLE_EQ(Prefill(1000, 7e9, 1, kRound, 0.5)->Get("seconds"), 0.28);
  // Each token reads 14 GB (bf16) at 0.8 TB/s: 17.5 ms; 100 tokens 1.75 s.
  absl::StatusOr<Answer> d = Decode(100, 7e9, 1, kRound, 2, 0.8, 0);
  EXPECT_DOUBLE_EQ(d->Get("seconds_per_token"), 0.0175);
  EXPECT_DOUBLE_EQ(d->Get("seconds"), 1.75);
  // KV bytes add to every token's read: 14 GB + 2 GB at 0.8 TB/s = 20 ms.
  EXPECT_DOUBLE_EQ(Decode(1, 7e9, 1, kRound, 2, 0.8, 2e9)->Get("seconds"), 0.02);
  absl::StatusOr<Answer> l = Latency(1000, 100, 7e9, 1, kRound, 0.1, 2);
  EXPECT_DOUBLE_EQ(l->Get("seconds"), 0.28 + 1.75 + 0.1);
  // 2 devices: 0.14 + 0.875 + 0.1 = 1.115 s; 4: 0.07 + 0.4375 + 0.1 = 0.6075.
  EXPECT_EQ(DevicesForBudget(1.2, 1000, 100, 7e9, kRound, 0.1, 2)->Get("devices"), 2);
  EXPECT_EQ(DevicesForBudget(0.7, 1000, 100, 7e9, kRound, 0.1, 2)->Get("devices"), 4);
  // The overhead alone exceeds the budget: no count of devices meets it.
  absl::StatusOr<Answer> none = DevicesForBudget(0.05, 1000, 100, 7e9, kRound, 0.1, 2);
  EXPECT_EQ(none->Get("devices"), 0);
  EXPECT_NE(Word(*none, "answer").find("smaller model"), std::string::npos);
}

TEST(Napkin, MemoryTilesAndAttention) {
  // 70e9 bf16 weights: 140 GB, two 80 GB devices.
  EXPECT_EQ(WeightsFit(70e9, 2, kRound)->Get("devices"), 2);
  // 200 in tiles of 128: 256 padded, 0.78125 useful.
  EXPECT_DOUBLE_EQ(TileEfficiency(200, 128)->Get("efficiency"), 0.78125);
  EXPECT_DOUBLE_EQ(TileEfficiency(256, 128)->Get("efficiency"), 1);
  // 32 layers, 8 KV heads of 128, 4096 positions, batch 2, bf16: 2*32*8*128*2 = 131072 bytes a
  // token, 1 GiB in all.
  absl::StatusOr<Answer> kv = KvCache(32, 8, 128, 4096, 2, 2);
  EXPECT_DOUBLE_EQ(kv->Get("bytes_per_token"), 131072);
  EXPECT_DOUBLE_EQ(kv->Get("bytes"), 131072.0 * 4096 * 2);
  absl::StatusOr<Answer> gqa = Gqa(32, 32, 8, 128, 4096, 2, 2);
  EXPECT_DOUBLE_EQ(gqa->Get("saving"), 4);
  EXPECT_DOUBLE_EQ(gqa->Get("mha_bytes"), 4 * kv->Get("bytes"));
  // Decode at batch 1 of 7e9 bf16 params with a small KV cache: about 1 FLOP per byte.
  absl::StatusOr<Answer> di = DecodeIntensity(7e9, 32, 8, 128, 1, 1, 2);
  EXPECT_NEAR(di->Get("intensity"), 2 * 7e9 / (14e9 + 131072), 1e-12);
  // 12 * 4096^2 = 201326592 parameters a layer; 7e9 of them fill 34.8 layers.
  absl::StatusOr<Answer> dw = DepthVsWidth(7e9, 4096, 32);
  EXPECT_DOUBLE_EQ(dw->Get("params_per_layer"), 201326592);
  EXPECT_NEAR(dw->Get("layers_for_params"), 7e9 / 201326592, 1e-9);
  EXPECT_DOUBLE_EQ(dw->Get("aspect_ratio"), 128);
}

TEST(Napkin, InputsAreChecked) {
  auto refused = [](const absl::StatusOr<Answer>& a, const std::string& says) {
    ASSERT_FALSE(a.ok()) << says;
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(a.status().message().find(says), std::string::npos) << a.status();
  };
  refused(Intensity(0, 1), "--flops must be a positive number");
  refused(Intensity(1, -2), "--bytes must be a positive number");
  refused(Roofline(1, 1, Hardware{"none", 0, 1, 1, 0, ""}), "peak");
  refused(Mfu(1, 1, 0, kRound), "--devices must be at least 1");
  refused(Hfu(1, 1, 1, kRound, 0.5), "--recompute-factor is at least 1");
  refused(Prefill(1, 1, 1, kRound, 1.5), "--mfu must lie in (0, 1]");
  refused(Decode(1, 1, 1, kRound, 2, 0, 0), "--bandwidth-efficiency must lie in (0, 1]");
  refused(Gqa(32, 32, 6, 128, 1, 1, 2), "--kv-heads (6) must divide --query-heads (32)");
  refused(KvCache(32, 8, 128, 0, 1, 2), "--seq must be a positive number");
  refused(MfuBudget(0, 1, 1, 1, 1), "--matmul must be a positive number");
  refused(MfuBudget(1, -1, 1, 1, 1), "--vector must be 0 or more seconds");
  refused(FindHardware("B200").status(), "unknown hardware 'B200'");
  EXPECT_TRUE(FindHardware("h100").ok());
  for (const Hardware& hw : KnownHardware()) EXPECT_FALSE(hw.source.empty()) << hw.name;
}

}  // namespace
}  // namespace rooftune::napkin
