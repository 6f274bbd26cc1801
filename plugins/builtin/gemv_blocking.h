// How the GEMV kernels' configs (ROWS, TOGETHER, PF) map to the kernel's blocking: for callers
// that run kernels::Gemv* directly with a tuned config, such as the batch sweep.
#pragma once

#include "framework/param_space.h"
#include "kernels/gemv/gemv.h"

namespace rooftune {

kernels::GemvBlocking GemvBlockingOf(const Config& config);

}  // namespace rooftune
