#include "kernels/avx_vnni.h"

#include <cpuid.h>

#include <cstdint>

namespace rooftune::kernels {
namespace {

bool CpuAndOsHaveAvxVnni() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) || eax < 1) return false;  // subleaves
  if (!__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) || !(eax & (1u << 4))) return false;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27))) return false;  // OSXSAVE
  uint32_t xcr0_low, xcr0_high;
  __asm__ volatile("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  return (xcr0_low & 6u) == 6u;  // SSE and AVX state
}

}  // namespace

bool AvxVnniAvailable() {
  static const bool available = CpuAndOsHaveAvxVnni();
  return available;
}

}  // namespace rooftune::kernels
