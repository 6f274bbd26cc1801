// The machine as text: its facts, caches and ceilings as aligned tables (the report's machine
// section and `rooftune probe`), and what its measured cache levels say against the OS's.
#pragma once

#include <string>
#include <vector>

#include "framework/machine_profile.h"

namespace rooftune::reports {

// The machine: facts, caches and ceilings, as aligned text tables (also used by `rooftune probe`).
std::string RenderProfileText(const MachineProfile& profile);
// What the measured levels say against sysfs, the TLB steps, the streaming view of the last level,
// and the best explanation of any disagreement: one finding per line.
std::vector<std::string> CacheFindings(const MachineProfile& profile);
// The cache levels as the latency curves of this machine planned them together (LevelConsensus):
// one line each, found by how many curves, over what range, unstable where it spans a quarter
// octave.
std::vector<std::string> ConsensusLines(const MachineProfile& p);

}  // namespace rooftune::reports
