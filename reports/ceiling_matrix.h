// The measured ceilings as one matrix: memory levels and dtypes down, thread counts and access
// kinds across, each figure marked where the probe's self-checks or another thread count had a
// say (raised, measured again, unstable, kept from an earlier probe), with the legend under it.
#pragma once

#include "framework/machine_profile.h"
#include "reports/document.h"

namespace rooftune::reports {

void AddCeilingMatrix(const MachineProfile& profile, Document& doc);

}  // namespace rooftune::reports
