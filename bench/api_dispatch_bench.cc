// What the library API's dispatch costs per call: each call through librooftune.so (argument
// checks, the workload's plan looked up from memory, the context's thread pool entered) against
// the same kernel with the same config called directly in a task arena of its own, warm, in
// back-to-back pairs. The smallest shapes (1x1x1, 1x1) show the cost alone; it is then priced
// against a 256^3 fp32 GEMM and a 4096 x 4096 f32 GEMV timed in the same run.
#include <iostream>

#include "absl/strings/str_format.h"
#include "bench/bench_main.h"
#include "benchmark/benchmark.h"
#include "kernels/gemm_f32/gemm_f32.h"
#include "kernels/gemv/gemv.h"
#include "plugins/builtin/gemm_f32_config.h"
#include "plugins/builtin/gemv_blocking.h"
#include "rooftune/rooftune.h"
#include "tbb/task_arena.h"

namespace rooftune::bench {
namespace {

// The config the API would run for `call`, parsed for the registered kernel.
template <typename Call>
absl::StatusOr<Config> ApiConfig(const rooftune::Context& api, const Kernel& kernel,
                                 const Call& call, const Workload& w, int threads,
                                 const MachineProfile& profile) {
  rooftune::Explanation e;
  if (rooftune::Status s = api.Explain(call, &e); !s.ok()) {
    return absl::InternalError(s.message());
  }
  return kernel.params.Parse(
      e.config, kernel.InitialConfig(w, threads, NaturalCacheMode(profile, w, threads), profile));
}

struct Operands {
  std::vector<float> a, b, c;
};

struct Case {
  std::string name;  // "gemm_f32/256x256x256/threads:1"
  int threads;
  bool small;
};

// Each call through the API and directly, at one thread count: the API's context and the
// direct calls' arena, with the operands every benchmark reads, kept alive for them.
class Calls {
 public:
  Calls(const MachineProfile& profile, int threads) : profile_(profile), threads_(threads) {}

  absl::Status Open() {
    if (rooftune::Status s = rooftune::Context::Open({"", threads_}, &api_); !s.ok()) {
      return absl::InternalError(s.message());
    }
    arena_ = std::make_unique<tbb::task_arena>(threads_);
    return absl::OkStatus();
  }

  absl::Status RegisterGemm(int64_t size, std::vector<Case>& cases) {
    Operands* ops = NewOperands();
    ops->a.assign(size_t(size * size), 0.5f), ops->b = ops->a, ops->c = ops->a;
    const rooftune::GemmF32Call call{.m = size,
                                     .n = size,
                                     .k = size,
                                     .a = ops->a.data(),
                                     .b = ops->b.data(),
                                     .c = ops->c.data()};
    const Workload w{Op::kGemm, size, size, size, Dtype::kF32, Epilogue::kNone};
    absl::StatusOr<Config> config = ApiConfig(*api_, gemm_, call, w, threads_, profile_);
    if (!config.ok()) return config.status();
    kernels::GemmF32Args args;
    args.m = args.n = args.k = size;
    args.a = call.a, args.lda = size, args.b = call.b, args.ldb = size;
    args.c = call.c, args.ldc = size;
    const kernels::GemmF32Blocking blocking = BlockingOf(*config, true);
    const std::string name = absl::StrFormat("gemm_f32/%s/threads:%d", w.ShapeString(), threads_);
    const rooftune::Context* through = api_.get();
    tbb::task_arena* direct = arena_.get();
    Register(name + "/api", [=] { (void)through->Gemm(call); });
    Register(name + "/direct",
             [=] { direct->execute([&] { kernels::GemmF32(args, blocking).IgnoreError(); }); });
    cases.push_back({name, threads_, size == 1});
    return absl::OkStatus();
  }

  absl::Status RegisterGemv(int64_t size, std::vector<Case>& cases) {
    Operands* ops = NewOperands();
    ops->a.assign(size_t(size), 0.5f), ops->b.assign(size_t(size * size), 0.25f);
    ops->c.assign(size_t(size), 0.0f);
    const rooftune::GemvF32Call call{
        .n = size, .k = size, .w = ops->b.data(), .x = ops->a.data(), .y = ops->c.data()};
    const Workload w{Op::kGemv, 1, size, size, Dtype::kF32, Epilogue::kNone};
    absl::StatusOr<Config> config = ApiConfig(*api_, gemv_, call, w, threads_, profile_);
    if (!config.ok()) return config.status();
    kernels::GemvArgs args;
    args.n = args.k = args.ldw = size;
    args.w = call.w, args.x = call.x, args.y = call.y;
    const kernels::GemvBlocking blocking = GemvBlockingOf(*config);
    const std::string name = absl::StrFormat("gemv_f32/%s/threads:%d", w.ShapeString(), threads_);
    const rooftune::Context* through = api_.get();
    tbb::task_arena* direct = arena_.get();
    Register(name + "/api", [=] { (void)through->Gemv(call); });
    Register(name + "/direct",
             [=] { direct->execute([&] { kernels::GemvF32(args, blocking).IgnoreError(); }); });
    cases.push_back({name, threads_, size == 1});
    return absl::OkStatus();
  }

 private:
  Operands* NewOperands() {
    operands_.push_back(std::make_unique<Operands>());
    return operands_.back().get();
  }

  const MachineProfile& profile_;
  const int threads_;
  const Kernel& gemm_ = *KernelRegistry::Global().Find("gemm_f32");
  const Kernel& gemv_ = *KernelRegistry::Global().Find("gemv_f32");
  std::unique_ptr<rooftune::Context> api_;
  std::unique_ptr<tbb::task_arena> arena_;
  std::vector<std::unique_ptr<Operands>> operands_;
};

void PrintCosts(const std::vector<Case>& cases) {
  std::cout << "\n## Per-call cost of the library API (warm; paired: direct time / API time per "
               "back-to-back pair, median and quartiles)\n\n"
               "| call | threads | API (median) | direct (median) | API cost | paired direct / API "
               "| cost as a share of the larger call |\n|---|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const double api = MedianSeconds(c.name + "/api"), direct = MedianSeconds(c.name + "/direct");
    if (api == 0 || direct == 0) continue;
    const PairedSpeedup paired = MeasurePaired(c.name + "/api", c.name + "/direct");
    std::string share = "";
    if (c.small && i + 1 < cases.size()) {
      // The cost of the smallest call, priced against the larger call of the same kernel.
      const double larger = MedianSeconds(cases[i + 1].name + "/api");
      if (larger > 0)
        share = absl::StrFormat("%.3f%% of %s", 100 * (api - direct) / larger, cases[i + 1].name);
    }
    std::cout << absl::StrFormat(
        "| %s | %d | %.3f us | %.3f us | %+.3f us | %.3f (%.3f-%.3f, %d) | %s |\n", c.name,
        c.threads, api * 1e6, direct * 1e6, (api - direct) * 1e6, paired.median, paired.low,
        paired.high, paired.pairs, share);
  }
}

int Main(int argc, char** argv) {
  Options options;
  const Usage usage{
      .name = "api_dispatch_bench",
      .summary =
          "The library API's per-call cost: fp32 GEMM and f32 GEMV called through\n"
          "librooftune.so against the same kernel and config called directly, warm, in\n"
          "back-to-back pairs; the cost on 1x1x1 and 1x1, as a share of a 256^3 GEMM and\n"
          "of a 4096 x 4096 GEMV.",
      .op = Op::kGemm,
      .default_shapes = "1x1x1,256x256x256 (fixed)"};
  std::unique_ptr<Context> context = StartBenchmark(&argc, argv, usage, &options);
  if (context == nullptr) return 1;
  if (!options.shapes.empty()) {
    std::cerr << "api_dispatch_bench: the shapes are fixed (1x1x1 and 256^3 GEMM, 1x1 and 4096 x "
                 "4096 GEMV); --shapes is not taken\n";
    return 1;
  }
  std::vector<Case> cases;
  std::vector<std::unique_ptr<Calls>> calls;
  absl::Status status;
  for (int t : options.threads) {
    calls.push_back(std::make_unique<Calls>(context->profile(), t));
    Calls& c = *calls.back();
    if (status.ok()) status = c.Open();
    for (int64_t size : {int64_t(1), int64_t(256)}) {
      if (status.ok()) status = c.RegisterGemm(size, cases);
    }
    for (int64_t size : {int64_t(1), int64_t(4096)}) {
      if (status.ok()) status = c.RegisterGemv(size, cases);
    }
  }
  if (!RunRegistered(status, usage.name)) return 1;
  PrintCosts(cases);
  return 0;
}

}  // namespace
}  // namespace rooftune::bench

int main(int argc, char** argv) { return rooftune::bench::Main(argc, argv); }
