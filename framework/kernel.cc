#include "framework/kernel.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "framework/plugin.h"

namespace rooftune {

bool Kernel::Supports(const Workload& w) const {
  return w.op == op && std::find(dtypes.begin(), dtypes.end(), w.dtype) != dtypes.end() &&
         std::find(epilogues.begin(), epilogues.end(), w.epilogue) != epilogues.end();
}

absl::StatusOr<Workload> Kernel::DefaultWorkload(absl::string_view entry,
                                                 uint64_t memory_limit_bytes) const {
  const std::vector<absl::string_view> words = absl::StrSplit(entry, ' ', absl::SkipEmpty());
  if (words.empty() || words.size() > 2 || dtypes.empty() || epilogues.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": default workload \"", entry, "\" is not \"SHAPE [EPILOGUE]\""));
  }
  Epilogue epilogue = epilogues.front();
  if (words.size() == 2) {
    absl::StatusOr<Epilogue> named = ParseEpilogue(words[1]);
    if (!named.ok()) return named.status();
    epilogue = *named;
  }
  absl::StatusOr<Workload> w =
      ParseWorkload(op, words[0], dtypes.front(), epilogue, memory_limit_bytes);
  if (w.ok() && !Supports(*w)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " does not compute the ", ToString(epilogue), " epilogue"));
  }
  return w;
}

Config Kernel::InitialConfig(const Workload& w, int threads, CacheMode cache,
                             const MachineProfile& profile) const {
  if (initial_config) return params.WithUnusedAtRest(initial_config(w, threads, cache, profile));
  return params.FirstValid();
}

Config Kernel::WithWeightsFromTheCall(const Config& c, const Workload& w, int threads,
                                      const MachineProfile& profile) const {
  return weights_from_the_call ? weights_from_the_call(c, w, threads, profile) : c;
}

Traffic Kernel::TrafficFor(const Workload& w, const Config& c, int threads,
                           const MachineProfile& profile) const {
  if (traffic) return traffic(w, c, threads, profile);
  Traffic t;
  t.bytes.fill(w.CompulsoryBytes());
  return t;
}

KernelRegistry& KernelRegistry::Global() {
  static KernelRegistry* registry = new KernelRegistry();
  return *registry;
}

absl::Status KernelRegistry::Add(Kernel kernel) {
  if (kernel.name.empty()) return absl::InvalidArgumentError("a kernel needs a name");
  if (Find(kernel.name) != nullptr) {
    return absl::AlreadyExistsError(
        absl::StrCat("kernel '", kernel.name, "' is already registered"));
  }
  if (!kernel.run) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel '", kernel.name, "' has no run function"));
  }
  if (kernel.dtypes.empty() || kernel.epilogues.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel '", kernel.name, "' declares no dtype or no epilogue"));
  }
  if (!kernel.params.DeclarationErrors().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel '", kernel.name, "': ", kernel.params.DeclarationErrors().front()));
  }
  bool any_valid = false;
  kernel.params.ForEachValid([&](const Config&) { return !(any_valid = true); });
  if (!any_valid) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel '", kernel.name, "' has no valid config in its parameter space"));
  }
  kernels_.push_back(std::make_unique<Kernel>(std::move(kernel)));
  return absl::OkStatus();
}

const Kernel* KernelRegistry::Find(absl::string_view name) const {
  for (const auto& k : kernels_) {
    if (k->name == name) return k.get();
  }
  return nullptr;
}

const Kernel* KernelRegistry::UnfusedVariantOf(absl::string_view fused) const {
  for (const auto& k : kernels_) {
    if (!fused.empty() && k->unfused_variant_of == fused) return k.get();
  }
  return nullptr;
}

std::vector<const Kernel*> KernelRegistry::All() const {
  std::vector<const Kernel*> all;
  for (const auto& k : kernels_) all.push_back(k.get());
  std::sort(all.begin(), all.end(),
            [](const Kernel* a, const Kernel* b) { return a->name < b->name; });
  return all;
}

absl::Status KernelRegistry::LoadPlugin(const std::string& path) {
  // RTLD_LOCAL keeps one plugin's symbols from satisfying another's; the registry's own symbols
  // come from the executable, which exports them.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot load plugin '", path, "': ", dlerror()));
  }
  using AbiFn = int (*)();
  using RegisterFn = int (*)(void*, char*, int);
  auto abi = reinterpret_cast<AbiFn>(dlsym(handle, "rooftune_plugin_abi_version"));
  auto reg = reinterpret_cast<RegisterFn>(dlsym(handle, "rooftune_plugin_register"));
  if (abi == nullptr || reg == nullptr) {
    dlclose(handle);
    return absl::FailedPreconditionError(
        absl::StrCat("'", path,
                     "' is not a rooftune plugin: it does not define rooftune_plugin_abi_version "
                     "and rooftune_plugin_register (see framework/plugin.h)"));
  }
  if (abi() != ROOFTUNE_PLUGIN_ABI_VERSION) {
    const int version = abi();
    dlclose(handle);
    return absl::FailedPreconditionError(absl::StrCat(
        "plugin '", path, "' was built for plugin ABI version ", version,
        " but this rooftune speaks version ", ROOFTUNE_PLUGIN_ABI_VERSION, ": rebuild it"));
  }
  const size_t before = kernels_.size();
  char error[512] = {0};
  if (reg(this, error, sizeof(error)) != 0) {
    // The plugin's code stays loaded: kernels it did register before failing point into it.
    return absl::FailedPreconditionError(
        absl::StrCat("plugin '", path, "' failed to register: ", error));
  }
  for (size_t i = before; i < kernels_.size(); ++i) kernels_[i]->origin = path;
  // Never dlclose a plugin that registered kernels: their functions live in it.
  return absl::OkStatus();
}

namespace internal {
bool RegisterAtStartup(Kernel kernel) {
  absl::Status status = KernelRegistry::Global().Add(std::move(kernel));
  if (!status.ok()) {
    // A duplicate built-in name is a programming error found on the first run of any test.
    std::fprintf(stderr, "rooftune: %s\n", std::string(status.message()).c_str());
  }
  return status.ok();
}
}  // namespace internal

}  // namespace rooftune
