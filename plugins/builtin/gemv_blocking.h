// How the GEMV kernels' configs (ROWS, TOGETHER, PF, PFL, PACKW, SPREAD, and DOT for u8 x s8)
// map to the kernel's blocking: for callers that run kernels::Gemv* directly with a tuned
// config, such as the batch sweep (which gets the weights a PACKW=1 or 2 config reads from the
// kernel's prepare step).
#pragma once

#include "framework/param_space.h"
#include "kernels/gemv/gemv.h"

namespace rooftune {

kernels::GemvBlocking GemvBlockingOf(const Config& config);

}  // namespace rooftune
