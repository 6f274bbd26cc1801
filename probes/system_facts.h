// Facts the OS and the CPU state about themselves: model, ISA flags, cores, cache geometry from
// sysfs, kernel and THP setting. They identify the machine (the fingerprint); they are not
// trusted for sizes the probes can measure.
#pragma once

#include "absl/strings/string_view.h"
#include <string>

#include "framework/machine_profile.h"

namespace rooftune::probes {

// Fills the fact fields of a profile. `sysfs_root` lets tests point at a fake tree; a machine
// without sysfs cache files gets an empty cache list, not an error.
MachineProfile ReadSystemFacts(const std::string& sysfs_root = "/sys",
                               const std::string& cpuinfo_path = "/proc/cpuinfo");

// Parses sysfs cache sizes such as "48K", "2048K", "300M".
uint64_t ParseCacheSize(absl::string_view text);

}  // namespace rooftune::probes
