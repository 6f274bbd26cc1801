// Opening a context (the database read once, read-only) and the per-workload plans its calls run.
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "api/context_impl.h"
#include "plugins/builtin/gemm_f32_config.h"
#include "plugins/builtin/gemv_blocking.h"
#include "probes/system_facts.h"

namespace rooftune {

const char* LibraryVersion() { return ROOFTUNE_VERSION; }

const char* ToString(Explanation::Source source) {
  switch (source) {
    case Explanation::Source::kTuned: return "tuned";
    case Explanation::Source::kNearestTuned: return "nearest tuned";
    case Explanation::Source::kInitial: return "initial";
  }
  return "?";
}

std::string Explanation::ToString() const {
  std::string line =
      absl::StrCat(kernel, " ", workload, ", ", threads,
                   threads == 1 ? " thread: " : " threads: ", rooftune::ToString(source));
  if (source == Source::kNearestTuned) absl::StrAppend(&line, " from ", tuned_workload);
  absl::StrAppend(&line, " (", reason, "): ", config);
  return line;
}

Status ToApiStatus(const absl::Status& status) {
  StatusCode code = StatusCode::kInternal;
  switch (status.code()) {
    case absl::StatusCode::kOk: return {};
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange: code = StatusCode::kInvalidArgument; break;
    case absl::StatusCode::kNotFound: code = StatusCode::kNotFound; break;
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kUnimplemented: code = StatusCode::kFailedPrecondition; break;
    case absl::StatusCode::kResourceExhausted: code = StatusCode::kResourceExhausted; break;
    default: break;
  }
  return {code, std::string(status.message())};
}

size_t PlanKeyHash::operator()(const PlanKey& key) const {
  size_t h = (size_t(key.op) * 31 + size_t(key.dtype) * 7 + size_t(key.epilogue)) * 2 +
             size_t(key.weights);
  for (int64_t d : {key.m, key.n, key.k}) h = h * 0x9e3779b97f4a7c15ull + size_t(d);
  return h;
}

namespace {

// "PACKB prepared->in_place, KC 64->256": the parameters `to` sets otherwise than `from`.
std::string ChangedParams(const ParamSpace& space, const Config& from, const Config& to) {
  std::string changed;
  for (const Param& param : space.params()) {
    const int64_t before = from.Get(param.name), after = to.Get(param.name);
    if (before == after) continue;
    absl::StrAppend(&changed, changed.empty() ? "" : ", ", param.name, " ", param.ValueText(before),
                    "->", param.ValueText(after));
  }
  return changed;
}

// The API call that prepares a workload's weights ahead of its calls.
const char* PrepareCallFor(const Workload& w) {
  return w.op == Op::kGemv ? "PrepareGemvWeights" : "PrepareWeightsF32";
}

}  // namespace

absl::StatusOr<const Plan*> Context::Impl::PlanFor(const char* kernel_name, const Workload& w,
                                                   WeightsRead weights) const {
  const PlanKey key{w.op, w.dtype, w.epilogue, w.m, w.n, w.k, weights};
  {
    std::shared_lock lock(mutex_);
    if (auto it = plans_.find(key); it != plans_.end()) return it->second.get();
  }
  const Kernel* kernel = KernelRegistry::Global().Find(kernel_name);
  if (kernel == nullptr) {
    return absl::InternalError(absl::StrCat("kernel ", kernel_name, " is not registered"));
  }
  auto plan = std::make_unique<Plan>();
  plan->kernel = kernel;
  std::string fewer_threads;
  plan->threads = dispatch::ChooseThreads(*kernel, w, threads, thread_choices, &fewer_threads);
  dispatch::Choice choice = dispatch::ChooseConfig(*kernel, w, plan->threads, profile, rows);
  if (!fewer_threads.empty()) absl::StrAppend(&choice.reason, "; ", fewer_threads);
  if (weights == WeightsRead::kInPlace) {
    const Config from_call =
        kernel->WithWeightsFromTheCall(choice.config, w, plan->threads, profile);
    if (!(from_call == choice.config)) {
      absl::StrAppend(&choice.reason, "; weights as each call brings them (",
                      ChangedParams(kernel->params, choice.config, from_call),
                      "): the chosen config needs them prepared ahead (", PrepareCallFor(w), ")");
      choice.config = from_call;
    }
  }
  plan->config = choice.config;
  Explanation& e = plan->explanation;
  e.kernel = kernel->name;
  e.workload = w.Key();
  e.threads = plan->threads;
  e.config = ConfigText(kernel->params, choice.config);
  e.source = choice.source == dispatch::Source::kTuned          ? Explanation::Source::kTuned
             : choice.source == dispatch::Source::kNearestTuned ? Explanation::Source::kNearestTuned
                                                                : Explanation::Source::kInitial;
  e.tuned_workload = choice.tuned_workload;
  e.reason = choice.reason;
  if (kernel->name == "gemm_f32") {
    absl::StatusOr<kernels::GemmF32Plan> gemm =
        kernels::GemmF32Plan::Make(BlockingOf(choice.config, /*fused=*/true), w.m, w.n);
    if (!gemm.ok()) return gemm.status();
    plan->gemm_f32 = *std::move(gemm);
  }
  if (kernel->name == "gemm_s8") plan->gemm_s8 = GemmS8ChoiceOf(choice.config);
  if (kernel->op == Op::kGemv) plan->gemv = GemvBlockingOf(choice.config);
  std::unique_lock lock(mutex_);
  auto [it, inserted] = plans_.emplace(key, std::move(plan));
  return it->second.get();
}

absl::Status Context::Impl::Run(int threads, const std::function<absl::Status()>& fn) const {
  tbb::task_arena* on = arena.get();
  if (threads < this->threads) {
    {
      std::shared_lock lock(mutex_);
      if (auto it = fewer_threads_.find(threads); it != fewer_threads_.end()) on = it->second.get();
    }
    if (on == arena.get()) {
      std::unique_lock lock(mutex_);
      std::unique_ptr<tbb::task_arena>& fewer = fewer_threads_[threads];
      if (fewer == nullptr) fewer = std::make_unique<tbb::task_arena>(threads);
      on = fewer.get();
    }
  }
  absl::Status status;
  on->execute([&] { status = fn(); });
  return status;
}

Context::Context(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Context::~Context() = default;
int Context::threads() const { return impl_->threads; }
const std::string& Context::database() const { return impl_->database; }
std::string Context::machine() const { return impl_->profile.Fingerprint(); }
int Context::tuned_rows() const { return int(impl_->rows.size()); }

namespace {

// Reads this machine's stored profile (when the database has one) and its tuned rows.
absl::Status ReadDatabase(const std::string& path, Context::Impl& impl) {
  absl::StatusOr<std::unique_ptr<TuningDb>> db = TuningDb::OpenReadOnly(path);
  if (!db.ok()) return db.status();
  const std::string machine = impl.profile.Fingerprint();
  absl::StatusOr<std::optional<std::string>> stored = (*db)->GetProfile(machine);
  if (!stored.ok()) return stored.status();
  if (stored->has_value()) {
    nlohmann::json j = nlohmann::json::parse(**stored, nullptr, /*allow_exceptions=*/false);
    absl::StatusOr<MachineProfile> profile =
        j.is_object() ? MachineProfile::FromJson(j)
                      : absl::StatusOr<MachineProfile>(absl::DataLossError("not JSON"));
    if (!profile.ok()) {
      return absl::DataLossError(absl::StrCat("tuning database ", path, ": the profile of machine ",
                                              machine, " is unreadable (",
                                              profile.status().message(), ")"));
    }
    impl.profile = *std::move(profile);
  }
  absl::StatusOr<std::vector<TunedResult>> rows = (*db)->All(machine);
  if (!rows.ok()) return rows.status();
  impl.rows = *std::move(rows);
  absl::StatusOr<std::vector<TuningDb::ThreadChoice>> choices = (*db)->ThreadChoices(machine);
  if (!choices.ok()) return choices.status();
  impl.thread_choices = *std::move(choices);
  impl.database = path;
  return absl::OkStatus();
}

}  // namespace

Status Context::Open(const ContextOptions& options, std::unique_ptr<Context>* context) {
  if (context == nullptr) return {StatusCode::kInvalidArgument, "open: no context to fill"};
  auto impl = std::make_unique<Impl>();
  impl->profile = probes::ReadSystemFacts();
  const int cpus = impl->profile.logical_cpus;
  if (options.threads < 0 || options.threads > cpus) {
    return {StatusCode::kInvalidArgument,
            absl::StrCat("open: threads must be between 1 and the ", cpus,
                         " CPUs this process may use, or 0 for all (got ", options.threads, ")")};
  }
  impl->threads = options.threads == 0 ? cpus : options.threads;
  std::string path = options.database;
  if (path.empty()) {
    path = DefaultTuningDbPath();
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) path.clear();  // initial configs only
  }
  if (!path.empty()) {
    if (absl::Status s = ReadDatabase(path, *impl); !s.ok()) return ToApiStatus(s);
  }
  impl->arena = std::make_unique<tbb::task_arena>(impl->threads);
  context->reset(new Context(std::move(impl)));
  return {};
}

}  // namespace rooftune
