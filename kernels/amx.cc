#include "kernels/amx.h"

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace rooftune::kernels {
namespace {

constexpr long kArchReqXcompPerm = 0x1023;  // arch_prctl code (asm/prctl.h)
constexpr long kXfeatureXtiledata = 18;

bool CpuAndOsHaveAmxInt8() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const bool tile = edx & (1u << 24), int8 = edx & (1u << 25);
  if (!tile || !int8) return false;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27))) return false;  // OSXSAVE
  uint32_t xcr0_low, xcr0_high;
  __asm__ volatile("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  return (xcr0_low & (3u << 17)) == (3u << 17);  // XTILECFG and XTILEDATA
}

}  // namespace

bool AmxInt8Available() {
  static const bool available = [] {
    if (!CpuAndOsHaveAmxInt8()) return false;
    // Linux hands the 8 KiB tile state only to processes that ask for it (since 5.16).
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return available;
}

}  // namespace rooftune::kernels
