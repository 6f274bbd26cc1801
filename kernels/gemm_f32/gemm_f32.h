// fp32 GEMM in the BLIS style: five loops (jc over NC columns, pc over KC depth, ic over MC rows,
// jr over NR columns, ir over MR rows) around an MR x NR register-blocked micro-kernel written once
// with Highway and compiled for every x86 target, chosen at run time.
//
//   C = alpha * A * B + beta * C, then + bias[j] (and ReLU) when an epilogue is asked for.
//
// All matrices are row-major with leading dimensions, so strided sub-matrices work. beta == 0
// never reads C. The epilogue is applied once per element, in the micro-kernel's store after the
// last KC block (fused), or by a separate pass when `fuse_epilogue` is false.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/even_blocks.h"

namespace rooftune::kernels {

enum class GemmEpilogue { kNone, kBias, kBiasRelu };

struct GemmF32Args {
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f;
  const float* a = nullptr;
  int64_t lda = 0;
  const float* b = nullptr;  // with BPacking::kPrepared: PackPreparedB's output (ldb unread)
  int64_t ldb = 0;
  float beta = 0.0f;
  float* c = nullptr;
  int64_t ldc = 0;
  const float* bias = nullptr;
  GemmEpilogue epilogue = GemmEpilogue::kNone;
};

// Which loop the threads split: ic (rows of C, B panel shared) or jc (columns, all private).
enum class ParallelLoop { kIc = 0, kJc = 1 };

// How the micro-kernel gets B. Packing ahead copies each KC x NC block into NR-column panels
// before any tile uses it: one more pass over B, which costs most when B streams from memory and
// few row panels share the copy. Packing on first use lets the first tile of each micro-panel read
// B in place and store what it loaded into the packed panel, so the copy rides on a pass the
// GEMM makes anyway; the tiles after it read the packed panel. Only with the jc loop split (or one
// thread): threads sharing a B block would race to pack it. Reading B in place is fast only when
// its rows start on cache lines (B 64-byte aligned, ldb a multiple of 16): otherwise every vector
// load spans two lines, and a config tuned on aligned operands, as the harness's are, should be
// re-tuned. Prepared B was packed once, ahead of every call (PackPreparedB), as inference packs
// its weights: each KC slice of B as consecutive NR-column panels, so the micro-kernel reads every
// block packed without a packing pass, and a shape with few rows streams B from memory as one
// sequence instead of KC rows ldb apart.
enum class BPacking { kInPlace = 0, kAhead = 1, kOnFirstUse = 2, kPrepared = 3 };

// The five loops around a micro-kernel, or the small-matrix path (kernels/gemm_f32/small.h):
// one register block over C with A and B read in place, on the calling thread, for operands so
// small that packing and cache blocks cost more than they save.
enum class GemmF32Path { kBlocked = 0, kSmall = 1 };

struct GemmF32Blocking {
  int mr = 6, nr = 16;  // register block: an MR x NR tile of C in registers
  int kc = 256, mc = 96,
      nc = 3072;  // cache blocks: KC x NR of B in L1, MC x KC of A in L2, KC x NC of B in L3
  ParallelLoop parallel = ParallelLoop::kIc;
  bool fuse_epilogue = true;
  // Packing copies a block into the panel layout the micro-kernel streams best; it pays when the
  // block is reused often. Without it the micro-kernel reads the operand in place.
  bool pack_a = true;
  BPacking pack_b = BPacking::kAhead;
  // The macro-kernel's innermost loop: ir (BLIS's order: a KC x NR micro-panel of B stays in L1)
  // or jr (an MR x KC micro-panel of A stays in L1 and B's micro-panels stream from L2).
  bool jr_innermost = false;
  // With B read in place: fetch the next micro-panel's rows into L1 while this one is multiplied.
  // Pays when B streams from memory in a small KC (few rows, as in decode shapes); with a deep
  // KC the fetched lines evict the micro-panel in use. With B prepared: fetch its one stream a
  // fixed distance ahead of the reads.
  bool prefetch_b = false;
  // The prefetch fetches as far as L2 (prefetcht1) instead of L1. A line fetched from DRAM into
  // L1 holds one of L1's few miss buffers until it arrives; into L2, one of L2's many: where the
  // probe's fastest reader fetched into L2, the decode shape's prepared B did too, 0.66-0.72 of
  // the paired stream read against 0.52-0.60 into L1 (`git show 4f43634:bench/RESULTS.md`).
  bool prefetch_b_into_l2 = false;
  GemmF32Path path = GemmF32Path::kBlocked;  // kSmall reads only mr, nr, fuse_epilogue and:
  bool split_small = false;  // the small path's tiles split over the threads along `parallel`
};

// Prepared B (BPacking::kPrepared) for a K x N B under `blocking`'s KC and NR: PreparedBFloats
// floats, KC slice after KC slice, each slice's NR-column panels in order (columns past N zero),
// panel by panel as PackBBlock lays a block out. Every NC and thread split reads the same layout.
size_t PreparedBFloats(int64_t k, int64_t n, const GemmF32Blocking& blocking);
absl::Status PackPreparedB(const float* b, int64_t k, int64_t n, int64_t ldb,
                           const GemmF32Blocking& blocking, float* out);

// B packed once ahead of the calls that read it (PACKB=prepared), on huge pages where the system
// grants them: it is streamed, and a DRAM stream on 4 KiB pages is slower. Shared by the
// plugin's prepare step and the library API's prepared weights.
struct PreparedB {
  std::shared_ptr<void> floats;  // PreparedBFloats floats, 64-byte aligned
  size_t bytes = 0;
};
absl::StatusOr<PreparedB> PrepareB(const float* b, int64_t k, int64_t n, int64_t ldb,
                                   const GemmF32Blocking& blocking);

// Runs inside the caller's tbb::task_arena; its threads are the arena's. The blocking must name a
// micro-kernel that exists for the CPU's best target (see GemmF32MicroKernels).
absl::Status GemmF32(const GemmF32Args& args, const GemmF32Blocking& blocking);

// Separate bias (+ReLU) pass over C: the unfused form, kept to show what fusion saves.
void BiasReluF32(int64_t m, int64_t n, const float* bias, bool relu, float* c, int64_t ldc);

struct MicroKernelShape {
  int mr, nr;
};
// The register blocks compiled for the best Highway target this CPU supports, given its vector
// width and register count.
std::vector<MicroKernelShape> GemmF32MicroKernels();
int GemmF32VectorLanes();      // f32 lanes of one vector on the best target
int GemmF32VectorRegisters();  // architectural vector registers on the best target
const char* GemmF32TargetName();

}  // namespace rooftune::kernels
