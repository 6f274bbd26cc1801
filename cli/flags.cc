#include "cli/flags.h"

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, kernel, "", "kernel name (rooftune list shows them)");
ABSL_FLAG(std::string, shape, "",
          "MxNxK for gemm (C[MxN] = A[MxK] B[KxN]), NxK for gemv (y[N] = W[NxK] x[K])");
ABSL_FLAG(std::string, dtype, "",
          "operand types: f32, u8s8 or s8f32 (rooftune list shows each kernel's); default: the "
          "kernel's first");
ABSL_FLAG(std::string, epilogue, "", "none, bias or bias_relu; default: the kernel's first");
ABSL_FLAG(std::string, config, "",
          "tunable values, p=v,... (rooftune list shows the parameters; PACKB may be written "
          "pack_b); unnamed ones come from the stored config, else the analytic initial one");
ABSL_FLAG(std::string, threads, "", "thread count (tune: a list such as 1,2); default 1");
ABSL_FLAG(bool, cold, false,
          "evict the operands from the caches before every timed repetition (the default for "
          "workloads the roofline says stream from DRAM: GEMV, and GEMMs it calls memory-bound)");
ABSL_FLAG(bool, warm, false, "time with warm caches even a workload that streams from DRAM");
ABSL_FLAG(bool, json, false, "print JSON instead of text");
ABSL_FLAG(bool, counters, false,
          "count events over the timed calls (libpfm4 + perf_event_open: the core PMU's cycles, "
          "instructions, FLOPs and lines filled per level, and software events), per call and "
          "beside the traffic model; on one thread the calling thread's, on more each CPU the "
          "threads are pinned to (perf_event_paranoid 0 or root). Events the machine lacks are "
          "listed as unsupported, with the reason");
ABSL_FLAG(std::string, strategy, "exhaustive",
          "tuning strategy: exhaustive (the default: valid configs nearest the initial one first, "
          "until the budget is spent) or descent (from the initial or stored config, to the "
          "fastest neighbour one parameter step away, round after round, until none is faster, "
          "then the configs nearest it: further from the initial config in the same budget)");
ABSL_FLAG(double, budget_seconds, 60,
          "seconds of tuning per kernel, workload and thread count, default 60 (run: at most 30): "
          "the search takes the first 75%, then finals re-time the fastest few and the initial "
          "config round-robin");
ABSL_FLAG(bool, in_process, false,
          "tune: validate and time candidates in this process instead of a supervised worker "
          "process; verify, bench: skip the first run in a worker (for debugging a kernel; a "
          "crash or hang then ends the command)");
ABSL_FLAG(bool, retry_failed, false,
          "tune: try again the configs that crashed, aborted or hung an earlier tune's worker "
          "(stored as failures and skipped otherwise)");
ABSL_FLAG(bool, quick, false, "shorter probes (run: also smaller shapes and shorter tuning)");
ABSL_FLAG(bool, force, false, "re-measure the machine even when a cached profile matches");
ABSL_FLAG(bool, fresh, false,
          "re-measure (as --force) and store this probe's ceilings as measured, instead of "
          "keeping each stored one it measures lower");
ABSL_FLAG(std::string, format, "md", "report format: md (the default), html (one self-contained page), json, or text (for a terminal, as wide as $COLUMNS or the terminal)");
ABSL_FLAG(std::string, out, "",
          "output folder (probe and run: default rooftune-report; report: default stdout); for "
          "db export, the JSON file to write");
ABSL_FLAG(std::string, mlp, "",
          "an MLP's layer widths, input,hidden...,output (4096,16384,4096): each layer y = act(x W "
          "+ b), bias+ReLU but the last (bias only)");
ABSL_FLAG(std::string, batch, "",
          "predict: batch sizes, comma-separated (1: the GEMV decode shape; default 1,64); "
          "napkin: the batch of sequences");
ABSL_FLAG(std::string, sweep, "",
          "predict: batch (batch 1 to 1024 by doubling: time per token, where each layer turns "
          "compute-bound) or width (the hidden widths doubled from 64 until the pass outgrows the "
          "largest measured cache four times: the cache cliff, time per FLOP); with --out, "
          "DIR/predict.svg");
ABSL_FLAG(bool, measure, false,
          "after printing the prediction, run the pass through the same kernels and configs and "
          "print the measured time, attainment and the prediction's error");
ABSL_FLAG(int, repeat, 10,
          "passes in a row (what the pass leaves in cache is charged to that level after the "
          "first)");
ABSL_FLAG(std::string, machine, "",
          "a machine's identity as `rooftune db list` shows it (report: also all, one report per "
          "machine under --out; db export: only that machine's rows)");
ABSL_FLAG(std::string, prefer, "faster",
          "db merge: which row wins where both databases hold one for the same machine, kernel, "
          "workload and threads: faster (the lower median time, the default) or newer");
ABSL_FLAG(std::string, db, "",
          "tuning database file (default $ROOFTUNE_DB, else $XDG_CACHE_HOME/rooftune/tuning.db, "
          "else ~/.cache/rooftune/tuning.db)");
ABSL_FLAG(std::vector<std::string>, plugin, {},
          "shared libraries with more kernels, comma-separated (built against framework/plugin.h; "
          "plugins/example/ is one)");
