// The CLI's models of the machine: predict, napkin, sweep batch and primer, on seeded profiles.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/common.h"
#include "framework/int8_speedup.h"
#include "framework/roofline.h"
#include "framework/stats.h"
#include "framework/tuning_db.h"
#include "nlohmann/json.hpp"
#include "probes/counters.h"
#include "probes/peak_compute.h"
#include "probes/system_facts.h"
#include "tests/cli_fixture.h"
#include "tests/round_machine.h"

namespace rooftune::cli_testing {
namespace {

// predict on a machine whose profile is the round machine's ceilings under this machine's
// identity: the prediction as JSON, then measured, and its input checks. The compute ceilings
// carry this CPU's loop names, as a probe would store them, so that a layer bound by compute (where
// this machine's caches hold the pass) is paired with its loop too.
TEST_F(Cli, PredictPricesAnMlpBeforeRunningItAndMeasuresWhenAsked) {
  const fs::path db = dir_ / "predict.db";
  SeedRoundProfile(db, [](MachineProfile& p) {
    for (Ceiling& c : p.ceilings) {
      const probes::PeakProbeInfo loop = probes::PeakPathFor(c.dtype);
      if (c.kind == Ceiling::Kind::kCompute && loop.supported) c.source = loop.path;
    }
  });
  Outcome o = Run("predict --mlp 64,128,32 --batch 1,4 --json", db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["schema_version"], 1);
  ASSERT_EQ(j["batches"].size(), 2u);
  const auto& decode = j["batches"][0];
  EXPECT_EQ(decode["batch"], 1);
  ASSERT_EQ(decode["layers"].size(), 2u);
  EXPECT_EQ(decode["layers"][0]["workload"], "gemv 128x64 f32 bias_relu");
  EXPECT_EQ(decode["layers"][0]["kernel"], "gemv_f32");
  EXPECT_EQ(decode["layers"][1]["workload"], "gemv 32x128 f32 bias");
  EXPECT_EQ(j["batches"][1]["layers"][0]["workload"], "gemm 4x128x64 f32 bias_relu");
  for (const auto& batch : j["batches"]) {
    double sum = 0;
    for (const auto& layer : batch["layers"]) {
      EXPECT_GT(layer["bound_seconds"].get<double>(), 0) << layer.dump();
      EXPECT_TRUE(layer["bound_only"].get<bool>());  // no tuned rows in this database
      EXPECT_EQ(layer["predicted_seconds"], layer["bound_seconds"]);
      EXPECT_FALSE(layer.contains("measured_seconds"));
      sum += layer["predicted_seconds"].get<double>();
    }
    EXPECT_NEAR(batch["total"]["predicted_seconds"].get<double>(), sum, 1e-15);
  }

  o = Run("predict --mlp 64,128,32 --batch 2 --measure --repeat 3 --dtype u8s8", db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  const size_t prediction = o.out.find("predicted"), measured = o.out.find("measured in");
  ASSERT_NE(prediction, std::string::npos) << o.out;
  ASSERT_NE(measured, std::string::npos) << o.out;
  EXPECT_LT(prediction, measured);
  EXPECT_NE(o.out.find("gemm 2x128x64 u8s8 bias_relu"), std::string::npos) << o.out;
  o = Run("predict --mlp 64,32 --batch 1 --measure --repeat 2 --json", db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  j = nlohmann::json::parse(o.out);
  EXPECT_GT(j["batches"][0]["layers"][0]["measured_seconds"].get<double>(), 0);
  EXPECT_TRUE(j["batches"][0]["total"].contains("error"));
  // The passes ran in rounds, each followed by every layer's ceiling timed beside it (the round
  // machine's ceilings are not this machine's); a round's error priced at the rate measured then
  // is its error over that ratio, and the layer reports the rounds' medians.
  const auto& total = j["batches"][0]["total"];
  const int rounds = total["rounds"].get<int>();
  EXPECT_GT(rounds, 1);
  for (const auto& layer : j["batches"][0]["layers"]) {
    ASSERT_TRUE(layer.contains("ceiling_now_of_profile")) << layer.dump();
    ASSERT_EQ(layer["rounds"].size(), size_t(rounds)) << layer.dump();
    std::vector<double> measured, now, error_now;
    for (const auto& round : layer["rounds"]) {
      measured.push_back(round["measured_seconds"].get<double>());
      now.push_back(round["ceiling_now_of_profile"].get<double>());
      error_now.push_back(round["error_at_ceiling_now"].get<double>());
      EXPECT_GT(now.back(), 0) << layer.dump();
      EXPECT_NEAR(1 + error_now.back(),
                  layer["predicted_seconds"].get<double>() / now.back() / measured.back(), 1e-9)
          << layer.dump();
    }
    EXPECT_EQ(layer["measured_seconds"].get<double>(), QuartilesOf(measured).median);
    EXPECT_EQ(layer["ceiling_now_of_profile"].get<double>(), QuartilesOf(now).median);
    EXPECT_EQ(layer["error_at_ceiling_now"].get<double>(), QuartilesOf(error_now).median);
    // Judged by the pairs' noise, never less than the floor.
    EXPECT_TRUE(layer["above_bound"].is_boolean()) << layer.dump();
    EXPECT_GE(layer["tolerance"].get<double>(), kNoiseFloor) << layer.dump();
  }
  EXPECT_GE(j["batches"][0]["total"]["tolerance"].get<double>(), kNoiseFloor);
  ASSERT_TRUE(total.contains("error_at_ceiling_now"));
  const auto& quartiles = total["error_at_ceiling_now_quartiles"];
  EXPECT_LE(quartiles[0].get<double>(), total["error_at_ceiling_now"].get<double>());
  EXPECT_GE(quartiles[1].get<double>(), total["error_at_ceiling_now"].get<double>());

  // Sweeps: batch 1 to 1024, and the hidden width grown; both draw predict.svg.
  o = Run("predict --mlp 64,4096,32 --sweep batch --json --out " + (dir_ / "sweep").string(),
          db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  j = nlohmann::json::parse(o.out);
  ASSERT_EQ(j["sweep"]["points"].size(), 11u);
  EXPECT_EQ(j["sweep"]["points"][10]["batch"], 1024);
  EXPECT_DOUBLE_EQ(j["sweep"]["ridge_ops_per_byte"].get<double>(), 10);  // 100 GFLOP/s / 10 GB/s
  ASSERT_EQ(j["sweep"]["crossover_batch"].size(), 2u);
  // 4096 x 64 in f32 at batch B does 2B FLOPs per 4-byte weight: past the ridge of 10 from B = 32
  // (below it the activations are too few to matter).
  EXPECT_EQ(j["sweep"]["crossover_batch"][0], 32);
  const std::string svg = Slurp(dir_ / "sweep" / "predict.svg");
  EXPECT_NE(svg.find("Time per token against batch"), std::string::npos);
  o = Run("predict --mlp 64,128,32 --sweep width --json", db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  j = nlohmann::json::parse(o.out);
  const auto& points = j["sweep"]["points"];
  ASSERT_GE(points.size(), 2u);
  EXPECT_EQ(points[0]["hidden"], 64);
  EXPECT_EQ(points[1]["hidden"], 128);
  for (size_t i = 1; i < points.size(); ++i) {
    EXPECT_GT(points[i]["footprint_bytes"].get<double>(),
              points[i - 1]["footprint_bytes"].get<double>());
  }
  ExpectUsageErrorWithDb("predict --mlp 64,32 --sweep batch --batch 4", "drop --batch", db);
  ExpectUsageErrorWithDb("predict --mlp 64,32 --sweep width", "--mlp needs one", db);
  ExpectUsageErrorWithDb("predict --mlp 64,32 --sweep depth", "--sweep is batch or width", db);

  ExpectUsageErrorWithDb("predict", "predict needs --mlp", db);
  ExpectUsageErrorWithDb("predict --mlp 64", "at least two widths", db);
  ExpectUsageErrorWithDb("predict --mlp 64,x", "--mlp takes positive integers", db);
  ExpectUsageErrorWithDb("predict --mlp 64,32 --batch 0", "--batch takes positive integers", db);
  ExpectUsageErrorWithDb("predict --mlp 64,32 --dtype s8f32", "f32 or u8s8", db);
  ExpectUsageErrorWithDb("predict --mlp 64,32 --repeat 0", "--repeat must be between", db);
  ExpectUsageErrorWithDb("predict --mlp 64,32 --threads 1,2", "one thread count", db);
  ExpectUsageErrorWithDb("predict --mlp 16777216,16777216", "do not fit in available memory", db);

  // A tuned row above 1 (at the bound within its noise) would predict faster than the bound: the
  // layer is priced at the bound, and the basis says why.
  {
    auto handle = TuningDb::Open(db.string());
    ASSERT_TRUE(handle.ok()) << handle.status();
    TunedResult row;
    row.fingerprint = probes::ReadSystemFacts().Fingerprint();
    row.kernel = "gemv_f32";
    row.workload = Workload{Op::kGemv, 1, 32, 64, Dtype::kF32, Epilogue::kBias}.Key();
    row.config = "PACKW=in_place,PF=0,ROWS=16,SPREAD=spread,TOGETHER=4";
    row.median_seconds = row.min_seconds = 1e-6;
    row.attainment = row.profile_attainment = 1.02;
    ASSERT_TRUE((*handle)->Put(row).ok());
  }
  o = Run("predict --mlp 64,32 --batch 1", db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("bound only (tuned row at 1.02, above the bound)"), std::string::npos)
      << o.out;
}

TEST_F(Cli, NapkinFormulasOnPublishedHardwareAndOnThisMachine) {
  Outcome o = Run("napkin roofline --flops 1e12 --bytes 1e11 --hardware H100 --json");
  ASSERT_EQ(o.status, 0) << o.err;
  nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["formula"], "roofline");
  EXPECT_EQ(j["bound_by"], "memory");  // 10 FLOP/byte against a ridge of 295
  EXPECT_NEAR(j["result"].get<double>(), 1e12 / (10 * 3.35e12), 1e-12);
  EXPECT_EQ(j["result"], j["seconds"]);
  EXPECT_NE(j["hardware"]["source"].get<std::string>().find("datasheet"), std::string::npos);
  o = Run("napkin kv-cache --layers 32 --kv-heads 8 --head-dim 128 --seq 4096 --batch 2 --json");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(nlohmann::json::parse(o.out)["result"].get<double>(), 1073741824.0);
  o = Run("napkin tile-efficiency --dim 200");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("efficiency             0.78125"), std::string::npos) << o.out;

  // This machine: the round machine's ceilings stored under its identity (100 GFLOP/s, 10 GB/s).
  const fs::path db = dir_ / "napkin.db";
  SeedRoundProfile(db);
  o = Run("napkin ridge --json", db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  j = nlohmann::json::parse(o.out);
  EXPECT_DOUBLE_EQ(j["result"].get<double>(), 10);
  EXPECT_EQ(j["hardware"]["name"], "this");

  ExpectUsageError("napkin", "napkin takes one formula");
  ExpectUsageError("napkin frobnicate", "unknown napkin formula 'frobnicate'");
  ExpectUsageError("napkin intensity --flops 1", "napkin intensity needs --bytes");
  ExpectUsageError("napkin intensity --flops 1 --bytes 2 --tokens 3",
                   "--tokens does not apply to napkin intensity");
  ExpectUsageError("napkin intensity --flops x --bytes 1", "--flops must be a number");
  ExpectUsageError("napkin intensity --flops 0 --bytes 1", "--flops must be a positive number");
  ExpectUsageError("napkin tile-efficiency --dim 200 --hardware H100", "takes no --hardware");
  ExpectUsageError("napkin ridge --hardware B200", "unknown hardware 'B200'");
  ExpectUsageError(
      "napkin gqa --layers 32 --query-heads 32 --kv-heads 6 --head-dim 128 --seq 1 "
      "--batch 1",
      "--kv-heads (6) must divide --query-heads (32)");
  ExpectUsageError("napkin prefill --tokens 1 --params 1 --mfu 2 --hardware H100",
                   "--mfu must lie in (0, 1]");
}

TEST_F(Cli, SweepBatchTimesGemvsAgainstOneGemmAndFindsTheCrossover) {
  const fs::path db = dir_ / "sweep.db";
  SeedRoundProfile(db, [](rooftune::MachineProfile& p) { p.memory_latency_ns = 100; });
  Outcome o = Run("sweep batch --shape 256x128 --batch 1,8,64 --json", db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["schema_version"], 1);
  ASSERT_EQ(j["points"].size(), 3u);
  for (const auto& p : j["points"]) {
    EXPECT_GT(p["gemm_seconds"].get<double>(), 0);
    EXPECT_GT(p["gemm_bound_seconds"].get<double>(), 0);
    EXPECT_NEAR(p["gemv_calls_seconds"].get<double>(),
                p["batch"].get<double>() * j["gemv_seconds"].get<double>(), 1e-12);
  }
  // The round machine: 100 GFLOP/s, 10 GB/s: 256 x 128 f32 weights (128 KiB) take 13 us to
  // stream; at batch 64, 4.2 MFLOP take 42 us: the bound doubles before then.
  EXPECT_EQ(j["crossover_batch_predicted"], 64);
  // Little's law at 10 GB/s and 100 ns: 1000 bytes, 15.6 lines.
  EXPECT_NEAR(j["littles_law"]["lines_in_flight_needed"].get<double>(), 10e9 * 100e-9 / 64, 1e-9);
  o = Run("sweep batch --shape 256x128 --batch 1,2 --dtype u8s8", db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("crossover"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("Little's law"), std::string::npos) << o.out;
  ExpectUsageErrorWithDb("sweep", "sweep takes one kind: batch", db);
  ExpectUsageErrorWithDb("sweep width --shape 8x8", "sweep takes one kind: batch", db);
  ExpectUsageErrorWithDb("sweep batch", "needs --shape NxK", db);
  ExpectUsageErrorWithDb("sweep batch --shape 8x8x8", "--shape: ", db);
  ExpectUsageErrorWithDb("sweep batch --shape 8x8 --batch 0", "--batch takes positive integers",
                         db);
  ExpectUsageErrorWithDb("sweep batch --shape 8x8 --dtype s8f32", "f32 or u8s8", db);
}

TEST_F(Cli, PrimerTablesFromTheBitsAndTheMeasuredMachine) {
  const fs::path db = dir_ / "primer.db";
  SeedRoundProfile(db, [](rooftune::MachineProfile& p) {
    p.memory_latency_ns = 90;
    p.clock_ghz = 2;
    // Measured levels (not identity): a 32 KiB L1 and a 256 KiB L2 for the simulated caches.
    p.measured_levels = {{32 << 10, 32 << 10, 32 << 10, 1.2, rooftune::LevelKind::kCache},
                         {256 << 10, 256 << 10, 256 << 10, 4, rooftune::LevelKind::kCache}};
  });
  Outcome o = Run("primer --json --dim 128", db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  ASSERT_EQ(j["number_formats"].size(), 9u);
  EXPECT_EQ(j["number_formats"][5]["name"], "fp8 e4m3");
  EXPECT_EQ(j["number_formats"][5]["largest"], 448);
  const auto& dram = j["memory_hierarchy"].back();
  EXPECT_EQ(dram["level"], "DRAM");
  EXPECT_EQ(dram["latency_cycles"], 180);
  EXPECT_EQ(dram["bandwidth_one_thread"], 10e9);
  // T = 8 to 128 at n = 128: the model, and the cache simulator running the textbook kernel.
  const nlohmann::json& tiled = j["tiled_matmul"];
  ASSERT_EQ(tiled.size(), 5u);
  for (size_t i = 0; i < tiled.size(); ++i) {
    const double t = 8 << i;
    EXPECT_EQ(tiled[i]["tile"], t);
    EXPECT_EQ(tiled[i]["model_bytes"], 2.0 * 128 * 128 * 128 / t * 4);
  }
  if (std::system("valgrind --version >/dev/null 2>&1") == 0) {
    for (const auto& row : tiled)
      ASSERT_TRUE(row.contains("simulated_l1_fill_bytes")) << row.dump();
    // Small tiles follow the law: A and B filled into the L1 about 2 n^3 / T bytes (C's fills
    // and the tiles' reuse across neighbours within a factor of two).
    const double small =
        tiled[0]["simulated_l1_fill_bytes"].get<double>() / tiled[0]["model_bytes"].get<double>();
    EXPECT_GT(small, 0.5) << tiled[0].dump();
    EXPECT_LT(small, 2.0) << tiled[0].dump();
    // 128 x 128 tiles (192 KiB for three) outgrow the L1: its fills leave the law far behind,
    // while the 256 KiB L2 still holds the whole problem (A, B and C once: 192 KiB).
    EXPECT_GT(tiled[4]["simulated_l1_fill_bytes"].get<double>(),
              4 * tiled[4]["model_bytes"].get<double>())
        << tiled[4].dump();
    EXPECT_LT(tiled[4]["simulated_l2_fill_bytes"].get<double>(), 2.0 * 3 * 128 * 128 * 4)
        << tiled[4].dump();
  }
  o = Run("primer --dim 16", db.string());
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("fp8 e5m2"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("L1 fills"), std::string::npos) << o.out;
  ExpectUsageErrorWithDb("primer --dim 4", "--dim takes the tiled matmul's n, 8 to 4096", db);
  ExpectUsageErrorWithDb("primer --shape 8x8", "--shape does not apply to 'primer'", db);
}

}  // namespace
}  // namespace rooftune::cli_testing
