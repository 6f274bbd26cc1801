// Intel AMX (Advanced Matrix Extensions): eight 1 KiB tile registers and a tile multiply unit.
// It is not a Highway target (no vector ISA of its own), so code using it is gated at run time
// by AmxInt8Available(), which checks the CPU, the OS, and asks Linux for the tile state.
#pragma once

#include <cstdint>

namespace rooftune::kernels {

// AMX-TILE and AMX-INT8 in CPUID, XTILECFG/XTILEDATA enabled in XCR0, and the process granted
// the tile data state (arch_prctl(ARCH_REQ_XCOMP_PERM)). Cached after the first call.
bool AmxInt8Available();

// The tile configuration every rooftune AMX loop uses: palette 1, tiles 0-7 all 16 rows x 64
// bytes. Each thread loads it before its first tile instruction (LDTILECFG is per thread).
struct alignas(64) AmxTileConfig {
  uint8_t palette_id = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};

}  // namespace rooftune::kernels
