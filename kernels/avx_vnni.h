// AVX-VNNI: the VEX-encoded vpdpbusd on ymm registers of client cores (Alder Lake on) and of
// servers that also have AVX-512 VNNI. Highway has no target for it, so the AVX2 target's int8
// kernels check it at run time.
#pragma once

namespace rooftune::kernels {

// AVX-VNNI in CPUID (leaf 7, subleaf 1, EAX bit 4) and the ymm state enabled in XCR0. Cached.
bool AvxVnniAvailable();

}  // namespace rooftune::kernels
