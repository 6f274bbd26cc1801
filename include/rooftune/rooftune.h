// rooftune's library API: run the kernels `rooftune tune` tuned for this machine from your own
// program.
//
//   std::unique_ptr<rooftune::Context> context;
//   rooftune::Status status = rooftune::Context::Open({.threads = 4}, &context);
//   if (!status.ok()) { fprintf(stderr, "%s\n", status.message().c_str()); return 1; }
//   rooftune::GemmF32Call call{.m = m, .n = n, .k = k, .a = a, .b = b, .c = c};
//   status = context->Gemm(call);
//
// A context reads the tuning database once, when opened: this machine's profile and tuned rows.
// Each call then picks its config from memory by the rule Explain documents (a tuned row for this
// workload, else the nearest tuned one on the same side of the roofline's ridge, else the analytic
// initial config); a call never probes, tunes or writes the database. Tuning stays an explicit
// step (`rooftune tune`, `rooftune run`).
//
// Matrices are row-major. A leading dimension of 0 means the row's width (tightly packed). Every
// call checks its arguments before any work and returns an error as a Status; nothing aborts or
// exits. A context is safe to use from many threads at once; its calls run on its own pool of
// `threads` threads.
//
// Only standard C++ types cross this interface, so a program may use any Abseil, Highway or TBB
// of its own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#define ROOFTUNE_VERSION_MAJOR 0
#define ROOFTUNE_VERSION_MINOR 3
#define ROOFTUNE_VERSION_PATCH 0

namespace rooftune {

// "0.3.0": the version of the library linked, which may differ from the header compiled against.
const char* LibraryVersion();

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // a bad shape, pointer, leading dimension or option
  kNotFound,            // a database path that does not exist
  kFailedPrecondition,  // a database of another schema version, or a kernel this CPU cannot run
  kResourceExhausted,   // no memory for prepared weights
  kInternal,            // anything else (an unreadable database, a kernel's own error)
};

// An error as a value: a code and a one-line message that names what was wrong.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// fp32 GEMM weights, B, prepared once (Context::PrepareWeightsF32) for the config chosen for
// their call's shape: a config may read B packed ahead of the calls (PACKB=prepared: each
// KC-deep slice as NR-column panels in the order the tiles read them, one stream from memory),
// which a call that brings its own B each time cannot run; any other config reads a copy. A
// copy of the caller's B; immutable; share it between threads and calls.
class WeightsF32 {
 public:
  ~WeightsF32();
  int64_t k() const;  // rows of B (the depth of the product)
  int64_t n() const;  // columns of B (and of C)

  struct Impl;
  explicit WeightsF32(std::unique_ptr<Impl> impl);
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// C[m x n] = alpha * A[m x k] * B[k x n] + beta * C, then + bias[j] and max(0, .) when asked.
// beta = 0 never reads C (it may hold NaN). B is the caller's, or `weights` prepared from a call
// like this one (then b and ldb are not read, and n and k are 0 or the weights' own).
struct GemmF32Call {
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;
  int64_t lda = 0;
  const float* b = nullptr;
  int64_t ldb = 0;
  float* c = nullptr;
  int64_t ldc = 0;
  float alpha = 1, beta = 0;
  const float* bias = nullptr;  // n values, or null
  bool relu = false;
  const WeightsF32* weights = nullptr;
};

// Int8 weights prepared once (Context::PrepareWeightsS8): s8 values with one f32 scale per output
// column, their column sums and the layouts the int8 kernels read, packed on first use of each.
// Immutable once made; share it between threads and calls freely.
class WeightsS8 {
 public:
  ~WeightsS8();
  int64_t k() const;  // rows (the depth of the product)
  int64_t n() const;  // columns (outputs)

  struct Impl;
  explicit WeightsS8(std::unique_ptr<Impl> impl);
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Y[m x n] = scale_a * scales[j] * (A * W - zero_point_a * colsum[j]) + bias[j], then ReLU when
// asked: u8 activations (quantised with scale_a and zero_point_a) times prepared s8 weights,
// accumulated exactly in s32 and dequantised once per output into f32.
struct GemmU8S8Call {
  int64_t m = 0;
  const uint8_t* a = nullptr;  // m x weights->k()
  int64_t lda = 0;
  float scale_a = 1;
  int32_t zero_point_a = 0;
  const WeightsS8* weights = nullptr;
  float* y = nullptr;  // m x weights->n()
  int64_t ldy = 0;
  const float* bias = nullptr;  // n values, or null
  bool relu = false;
};

// GEMV weights prepared once (Context::PrepareGemvWeights) in the layout of the config chosen for
// their shape: a tuned GEMV config may group the rows it reads together into one stream
// (PACKW=grouped) or copy W onto huge pages (PACKW=copied), and only weights prepared ahead run
// it as it was tuned. A copy of the caller's weights; immutable; share it between threads.
class GemvWeights {
 public:
  ~GemvWeights();
  int64_t n() const;  // rows (outputs)
  int64_t k() const;  // columns (the depth of each dot product)
  bool s8() const;    // s8 with row scales (prepared from a GemvS8Call), else f32

  struct Impl;
  explicit GemvWeights(std::unique_ptr<Impl> impl);
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// The decode shape, y[n] = W[n x k] x[k] (+ bias, ReLU), f32 weights: the caller's W read in
// place, or `weights` prepared from a call like this one (then w and ldw are not read, and n and
// k are 0 or the weights' own).
struct GemvF32Call {
  int64_t n = 0, k = 0;
  const float* w = nullptr;
  int64_t ldw = 0;
  const GemvWeights* weights = nullptr;
  const float* x = nullptr;
  float* y = nullptr;
  const float* bias = nullptr;  // n values, or null
  bool relu = false;
};

// y[n] = row_scales[i] * (W[n x k] x[k]) (+ bias, ReLU): s8 weights with one f32 scale per row,
// dequantised in registers against f32 x (a quarter of the f32 weights' bytes).
// As GemvF32Call, prepared weights replace w, ldw and row_scales.
struct GemvS8Call {
  int64_t n = 0, k = 0;
  const int8_t* w = nullptr;
  int64_t ldw = 0;
  const float* row_scales = nullptr;
  const GemvWeights* weights = nullptr;
  const float* x = nullptr;
  float* y = nullptr;
  const float* bias = nullptr;
  bool relu = false;
};

// Which config a call runs, and why.
struct Explanation {
  enum class Source {
    kTuned,         // a tuned row for exactly this workload and thread count
    kNearestTuned,  // the nearest tuned workload of the same kernel, dtype, epilogue, threads
                    // and side of the ridge (distance: of the dimensions' logarithms)
    kInitial,       // the kernel's analytic initial config
  };
  std::string kernel;    // "gemm_f32"
  std::string workload;  // "gemm 256x256x256 f32 bias_relu"
  int threads = 1;       // the call's: the context's, or fewer that `tune --threads auto` chose
  std::string config;    // "MR=6,NR=64,KC=256,..."
  Source source = Source::kInitial;
  std::string tuned_workload;  // the row's workload (kTuned, kNearestTuned)
  std::string reason;          // why, in a clause
  // One line: "gemm_f32 gemm 256x256x256 f32 none, 1 thread: tuned (tuned for this workload at 1
  // thread): MR=6,..."
  std::string ToString() const;
};
const char* ToString(Explanation::Source source);  // "tuned", "nearest tuned", "initial"

struct ContextOptions {
  // The tuning database to read (opened read-only; it must exist and be rooftune's). Empty: the
  // CLI's default ($ROOFTUNE_DB, else $XDG_CACHE_HOME/rooftune/tuning.db, else
  // ~/.cache/rooftune/tuning.db), and when that file does not exist the context runs every call
  // with initial configs.
  std::string database;
  // Threads each call uses (its own pool): 1 up to the CPUs this process may run on; 0 = all of
  // them. Tuned rows are matched at this thread count.
  int threads = 1;
};

class Context {
 public:
  static Status Open(const ContextOptions& options, std::unique_ptr<Context>* context);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  int threads() const;
  const std::string& database() const;  // the path read, or "" when none was
  std::string machine() const;          // this machine's identity, as the database keys it
  int tuned_rows() const;               // rows of this machine read from the database

  Status Gemm(const GemmF32Call& call) const;
  Status Gemm(const GemmU8S8Call& call) const;
  Status Gemv(const GemvF32Call& call) const;
  Status Gemv(const GemvS8Call& call) const;

  // Copies the k x n weights (row-major, leading dimension ldw, 0 = n) and their n column
  // scales; the caller's arrays may be freed afterwards. Refused (kInvalidArgument) when
  // k x 255 x max |w| reaches 2^31: an output could then overflow the exact s32 accumulator.
  Status PrepareWeightsS8(const int8_t* w, int64_t k, int64_t n, int64_t ldw,
                          const float* column_scales,
                          std::shared_ptr<const WeightsS8>* weights) const;

  // Prepares B of calls like `call` (its k, n, b and ldb are copied; its m, bias and ReLU, with
  // the shape, choose the config; a and c are not read) as that config reads it. Calls with the
  // weights run that config, whatever their m, where it reads B prepared (PACKB=prepared);
  // otherwise each call runs its own shape's config on the copy.
  Status PrepareWeightsF32(const GemmF32Call& call,
                           std::shared_ptr<const WeightsF32>* weights) const;

  // Prepares the weights of calls like `call` (its n, k, w, ldw and row scales are copied; its
  // bias and ReLU, with the shape, choose the config; x and y are not read) in the layout that
  // config reads, so that calls with them run it as tuned. Calls with other epilogues may use
  // them too, with the config chosen here.
  Status PrepareGemvWeights(const GemvF32Call& call,
                            std::shared_ptr<const GemvWeights>* weights) const;
  Status PrepareGemvWeights(const GemvS8Call& call,
                            std::shared_ptr<const GemvWeights>* weights) const;

  // The config the same call would run, without running it (its pointers are not read).
  Status Explain(const GemmF32Call& call, Explanation* explanation) const;
  Status Explain(const GemmU8S8Call& call, Explanation* explanation) const;
  Status Explain(const GemvF32Call& call, Explanation* explanation) const;
  Status Explain(const GemvS8Call& call, Explanation* explanation) const;

  struct Impl;

 private:
  explicit Context(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rooftune
