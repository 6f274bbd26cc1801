// A complete external plugin: a row-parallel f32 GEMV with one tunable (how many rows a task
// takes). Build it against framework/plugin.h and load it with `rooftune --plugin
// example_plugin.so`.
#include <algorithm>
#include <thread>
#include <vector>

#include "framework/plugin.h"

namespace {

absl::Status RunExampleGemv(const rooftune::Config& config, rooftune::Problem& p,
                            const rooftune::RunContext& context) {
  const rooftune::Workload& w = p.workload;
  const int64_t rows_per_task = config.Get("ROWS");
  auto rows = [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j) {
      const float* row = p.b.data() + j * p.ldb;
      float sum = 0;
      for (int64_t q = 0; q < w.k; ++q) sum += row[q] * p.a[q];
      if (w.epilogue != rooftune::Epilogue::kNone) sum += p.bias[j];
      if (w.epilogue == rooftune::Epilogue::kBiasRelu && sum < 0) sum = 0;
      p.c[j] = sum;
    }
  };
  // Plain std::threads keep the plugin free of a TBB dependency: it declares kSelf threading
  // and splits the work itself.
  std::vector<std::thread> workers;
  for (int t = 1; t < context.threads; ++t) {
    workers.emplace_back([&, t] {
      for (int64_t b = t * rows_per_task; b < w.n; b += context.threads * rows_per_task) {
        rows(b, std::min(w.n, b + rows_per_task));
      }
    });
  }
  for (int64_t b = 0; b < w.n; b += context.threads * rows_per_task) {
    rows(b, std::min(w.n, b + rows_per_task));
  }
  for (std::thread& worker : workers) worker.join();
  return absl::OkStatus();
}

}  // namespace

ROOFTUNE_PLUGIN(registry) {
  rooftune::ParamSpace space;
  space.Add("ROWS", {16, 64, 256}, "rows of W per task");
  return registry.Add(
      rooftune::Kernel("example_gemv_f32")
          .Describe("example plugin: row-parallel f32 GEMV, std::thread")
          .Computes(rooftune::Op::kGemv, {rooftune::Dtype::kF32}, rooftune::kAllEpilogues)
          .Tunes(std::move(space))
          .Threads(rooftune::Threading::kSelf)
          .Runs(&RunExampleGemv)
          .ByDefaultOn({"2048x2048"}, {"1024x1024"}));
}
