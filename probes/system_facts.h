// Facts the OS and the CPU state about themselves: model, ISA flags, cores, cache geometry from
// sysfs, kernel and THP setting. They identify the machine (the fingerprint); they are not
// trusted for sizes the probes can measure.
#pragma once

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "framework/machine_profile.h"

namespace rooftune::probes {

// Fills the fact fields of a profile. `sysfs_root` lets tests point at a fake tree; a machine
// without sysfs cache files gets an empty cache list, not an error.
MachineProfile ReadSystemFacts(const std::string& sysfs_root = "/sys",
                               const std::string& cpuinfo_path = "/proc/cpuinfo");

// Parses sysfs cache sizes such as "48K", "2048K", "300M".
uint64_t ParseCacheSize(absl::string_view text);

// A warning when other work on this machine keeps its CPUs busy: `proc_loadavg` is the text of
// /proc/loadavg, whose 1-minute load average at or above three quarters of `cpus` means ceilings
// measured now come out low (and kernels then look impossible against them). Nullopt when quiet
// or unreadable.
std::optional<std::string> BusyMachineWarning(absl::string_view proc_loadavg, int cpus);
// The same for this machine now (/proc/loadavg, the CPUs this process may use).
std::optional<std::string> BusyMachineWarning();

}  // namespace rooftune::probes
