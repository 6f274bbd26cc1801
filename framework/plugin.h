// The contract for kernels built as shared libraries and loaded with `--plugin path.so`.
// A plugin includes this header and defines its entry point with ROOFTUNE_PLUGIN:
//
//   ROOFTUNE_PLUGIN(registry) {
//     return registry.Add(rooftune::Kernel("my_gemm").Computes(...).Runs(...));
//   }
//
// The plugin's kernels are C++ objects handed across the library boundary, so the host and the
// plugin must agree on this header's types: the ABI version says they do. Bump it whenever a type
// in kernel.h, param_space.h, problem.h, traffic.h, workload.h or machine_profile.h changes layout.
#pragma once

#include <cstdio>
#include <string>

#include "framework/kernel.h"

#define ROOFTUNE_PLUGIN_ABI_VERSION 4  // 2: Kernel::prepare, RunContext::prepared; 3: Prepared;
                                       // 4: InitialConfigFn takes the cache mode

#define ROOFTUNE_PLUGIN(registry)                                                        \
  extern "C" int rooftune_plugin_abi_version() { return ROOFTUNE_PLUGIN_ABI_VERSION; }   \
  static absl::Status RooftunePluginRegister(::rooftune::KernelRegistry& registry);      \
  extern "C" int rooftune_plugin_register(void* registry, char* error, int error_size) { \
    absl::Status status =                                                                \
        RooftunePluginRegister(*static_cast<::rooftune::KernelRegistry*>(registry));     \
    if (status.ok()) return 0;                                                           \
    std::snprintf(error, error_size, "%s", std::string(status.message()).c_str());       \
    return 1;                                                                            \
  }                                                                                      \
  static absl::Status RooftunePluginRegister(::rooftune::KernelRegistry& registry)
