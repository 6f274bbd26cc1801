#include "cli/commands.h"

#include <algorithm>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "cli/common.h"
#include "cli/flags.h"
#include "cli/guarded_plugins.h"
#include "cli/subcommands.h"
#include "framework/kernel.h"

namespace rooftune::cli {
namespace {

// A command as the user sees it: what it takes, what it does, and the function that does it.
struct Command {
  absl::string_view name;
  absl::string_view synopsis;            // its flags, as `rooftune --help` lists them
  absl::string_view summary;             // one paragraph, for `rooftune --help`
  absl::string_view details;             // more, for `rooftune <command> --help` only; may be empty
  std::vector<absl::string_view> flags;  // the flags it reads, besides the global ones
  absl::StatusOr<int> (*run)(Session&);
  bool hidden = false;  // internal: not listed
  // For a command that takes words after its name (`db merge FILE`): run instead of `run`.
  absl::StatusOr<int> (*run_with_operands)(Session&, const std::vector<std::string>&) = nullptr;
};

constexpr absl::string_view kGlobalFlags[] = {"db", "plugin"};

constexpr absl::string_view kCacheModes =
    "A workload whose operands stream from DRAM (a GEMV, a GEMM the roofline calls memory-bound: "
    "decode shapes) is timed cold, its operands and prepared weights evicted from the caches "
    "before every call (code and threads stay warm, as in a decode loop); the rest warm. --cold "
    "for every workload, --warm for none.";

// Kernels: list them, check one, time one, tune one.
std::vector<Command> KernelCommands() {
  return {
      {"list", "[--json]", "kernels, their parameters and domains", "", {"json"}, ListCommand},
      {"verify",
       "--kernel K --shape S [--config p=v,...] [--threads T] [--json] [--in-process]",
       "run once against the reference; exit 0 when correct, 1 with the max error when not",
       "Without --config the config is the best stored for this machine, kernel, workload and "
       "thread count, else the kernel's analytic initial config; the output says which. The "
       "config runs first in a worker process: one that crashes, aborts, hangs or runs out of "
       "memory there is one line and exit 1 (--in-process skips that, for debugging).",
       {"kernel", "shape", "dtype", "epilogue", "config", "threads", "json", "in_process"},
       VerifyCommand},
      {"bench",
       "--kernel K --shape S [--config ...] [--threads T] [--cold|--warm] [--counters] "
       "[--versus K2,...] [--json] [--in-process]",
       "time statistics (median, min, CV), GFLOP/s (GOP/s for int8), attainment and the binding "
       "ceiling, and the optimisation levers in the order they pay. The attainment is paired: "
       "the binding ceiling's own loop (compute loop or stream read) is timed beside the kernel "
       "in alternating back-to-back pairs, and the verdict uses the pairs' median; the profile's "
       "attainment is printed beside it with the tolerance above which a result is impossible. "
       "The config is validated first in a worker process, as verify does (--in-process skips "
       "that). --versus times other kernels on the same workload in pairs with this one and "
       "prints the speedup over each",
       kCacheModes,
       {"kernel", "shape", "dtype", "epilogue", "config", "threads", "cold", "warm", "counters",
        "versus", "json", "in_process"},
       BenchCommand},
      {"tune",
       "--kernel K --shape S [--threads 1,2|auto] [--strategy model|exhaustive|descent] "
       "[--budget-seconds B] "
       "[--cold|--warm] [--json] [--in-process] [--retry-failed]",
       "search the kernel's parameter space, validate every candidate, store the fastest for "
       "this machine, judged beside its binding ceiling's own loop (paired attainment)",
       "Candidates are validated and timed in a worker process (rooftune tune-worker, started "
       "once and kept): a config whose kernel crashes, aborts, throws or does not answer within "
       "its deadline (3 x the timing's limit + 5 s, at least 5 s) is rejected with the reason and "
       "the worker replaced, and the config is stored as a failure that later tunes skip unless "
       "--retry-failed; the finalists, already validated, are re-timed in this process. "
       "--in-process runs every candidate here, for debugging. A workload whose operands stream "
       "from DRAM (a GEMV, a GEMM the roofline calls memory-bound: decode shapes) is timed cold, "
       "its operands and prepared weights evicted from the caches before every call; the rest "
       "warm. --cold for every workload, --warm for none.",
       {"kernel", "shape", "dtype", "epilogue", "threads", "strategy", "budget_seconds", "cold",
        "warm", "json", "in_process", "retry_failed"},
       TuneCommand},
  };
}

// The machine: its probe and the report of what was measured and tuned.
std::vector<Command> MachineCommands() {
  return {
      {"probe",
       "[--quick] [--force|--fresh] [--json] [--out DIR]",
       "measure the machine: latency curve and the cache levels found on it, bandwidth per level, "
       "peak compute per dtype, what a call split over the threads costs; writes "
       "DIR/profile.json, latency.svg and roofline.svg (DIR "
       "defaults to rooftune-report). A re-probe keeps each stored compute or DRAM ceiling it "
       "measures lower (the best any probe measured); --fresh re-probes and stores what it "
       "measures. Ceilings a self-check contradicts are measured again, then flagged unstable; "
       "cache levels are planned at the median of what every probe of the machine found "
       "(--fresh starts over)",
       "Without --force or --fresh the profile stored for this machine's fingerprint is reused. "
       "The counters this process can open (libpfm4 + perf_event_open) are checked live.",
       {"quick", "force", "fresh", "json", "out"},
       ProbeCommand},
      {"report",
       "[--format md|html|json|text] [--out DIR] [--machine ID|all]",
       "render what the database holds for this machine (or another: --machine): a summary "
       "(the machine, ridge points, findings in the order they pay), the ceilings, the "
       "hierarchical roofline, results with verdicts, and each result in detail",
       "Without --out the report goes to stdout; with it, to DIR/report.<format> (text: "
       "DIR/report.txt). html is one self-contained page (pictures and styles inside: it works "
       "offline and mailed); md links its pictures, written beside it (DIR/latency.svg, "
       "DIR/roofline.svg, or one DIR/roofline-<op>-<dtype>.svg per kernel family when the "
       "results are more than 12); text fits a terminal ($COLUMNS, else its width, else 100 "
       "columns; a table too wide is printed one record per row). "
       "The database is only read: a missing one is not created, and this machine needs a stored "
       "profile (rooftune probe). --machine ID renders a machine whose rows the database holds "
       "(imported or merged from "
       "another server: rooftune db list shows them) from its stored profile; --machine all "
       "writes one report per machine, DIR/<ID>/.",
       {"format", "out", "machine"},
       ReportCommand},
  };
}

// Models of the machine: predictions, napkin arithmetic, the tiling law, sweeps.
std::vector<Command> ModelCommands() {
  return {
      {"predict",
       "--mlp W0,W1,... [--batch 1,64|--sweep batch|width] [--dtype f32|u8s8] [--threads T] "
       "[--repeat R] [--measure] [--json] [--out DIR]",
       "predict an MLP's forward pass before it runs: per layer and in total the operations, "
       "the bytes per memory level, the roofline bound and the ceiling that binds, and the time "
       "(the bound over the attainment of the nearest tuned row of the kernel that would run); "
       "--measure then runs it and prints the error",
       "At batch 1 a layer is the GEMV decode shape (gemv_f32, gemv_u8s8), above it a GEMM with M "
       "= batch (gemm_f32, gemm_s8), at the config the library API would run (a tuned row, the "
       "nearest tuned workload on the same side of the ridge, else the initial config). Bytes come "
       "from that kernel's traffic model at that config. In R passes in a row, a pass whose "
       "operands fit a measured cache level is charged to that level after the first pass, not to "
       "DRAM. Without a tuned row to take an attainment from, a layer's time is its bound (\"bound "
       "only\"). --sweep batch predicts batch 1 to 1024 (where each layer turns "
       "compute-bound); --sweep width grows the hidden widths until the pass outgrows the "
       "caches (the cache cliff); with --out either draws DIR/predict.svg. --measure runs the "
       "pass R times through the same kernels and configs, the operands evicted before the "
       "first, in five rounds each followed by every layer's ceiling timed beside it, and prints "
       "each layer's median time over the passes (and the median pass), its attainment (bound / "
       "measured) and the prediction's error, also priced at the ceilings' rates in that round: "
       "medians over the rounds. The prediction is printed first. --out writes "
       "DIR/predict.json.",
       {"mlp", "batch", "sweep", "dtype", "threads", "repeat", "measure", "json", "out"},
       PredictCommand},
      {"napkin", "CALC [--flops F --bytes B ...] [--hardware NAME|this] [--json]",
       "the napkin arithmetic of rooflines and model serving, one formula (CALC) at a time: "
       "intensity, ridge, roofline, mfu, hfu, mfu-budget, prefill, decode, latency, "
       "devices-for-budget, weights-fit, tile-efficiency, kv-cache, gqa, decode-intensity, "
       "depth-vs-width",
       "Each formula takes the flags it needs (a missing one, a flag of another formula, a size "
       "or rate that is not positive, an efficiency outside (0, 1], KV heads that do not divide "
       "the query heads: usage errors). Formulas of a machine (ridge, roofline, mfu, hfu, "
       "prefill, decode, latency, devices-for-budget, weights-fit) run on --hardware: a "
       "published accelerator (H100, A100-80GB, TPU-v5e, TPU-v5p: dense bf16 peak, memory and "
       "bandwidth, each with its source) or this (the default): this machine's measured compute "
       "ceiling of --dtype at --threads, its DRAM read bandwidth and its available memory. "
       "--json prints an object whose result is the headline figure, every other figure named "
       "beside it.",
       NapkinFlags(), nullptr,
       /*hidden=*/false, NapkinCommand},
      {"primer",
       "[--dim N] [--json]",
       "a roofline primer's tables: number formats from fp64 to int4 (limits computed from their "
       "bits), this machine's memory hierarchy as measured, and a tiled matmul's traffic against "
       "its tile size, modelled and simulated",
       "The hierarchy comes from the stored profile (a quick probe first if there is none): each "
       "level's measured size and hit latency (ns and cycles at the measured clock), its "
       "bandwidth at one thread and at every CPU, and how many times slower than L1. The tiled "
       "matmul table is the model (2 n^3 / T elements of A and B, n = 512 or --dim) with the level "
       "its three tiles fit, against the bytes valgrind's cache simulator sees filled into an L1 "
       "and an L2 of this machine's measured sizes while the textbook tiled kernel "
       "(tiled_gemm_f32) runs once per tile size (T = 8 to 256; about a minute at n = 512): the "
       "fills follow 1/T while three tiles fit, and leave it where they outgrow a level.",
       {"json", "dim"},
       PrimerCommand},
      {"sweep",
       "batch --shape NxK [--dtype f32|u8s8] [--batch 1,2,4,...] [--threads T] [--json]",
       "the batch sweep: one weight matrix against B inputs, as B decode GEMVs and as one GEMM of "
       "M = B, timed cold; the time per token, the batch where the GEMM turns compute-bound "
       "(measured and predicted by the roofline) and Little's law for the weights' stream",
       "Each kernel runs at the config the library API would pick. The GEMV is timed once (B "
       "calls re-stream W B times); the GEMM at each B, its operands evicted before every call. "
       "The crossover is the smallest batch whose time per call is twice batch 1's, measured and "
       "from the roofline bound alike. Little's law: the 64-byte lines that must be in flight to "
       "reach the DRAM bandwidth at the measured memory latency, against those the GEMV keeps in "
       "flight. Default batches 1 to 256 by doubling.",
       {"shape", "dtype", "batch", "threads", "json"},
       nullptr,
       /*hidden=*/false,
       SweepCommand},
  };
}

// The database, the cache simulator, the main job, and the workers' hidden entries.
std::vector<Command> PipelineCommands() {
  return {
      {"db",
       "list | export [--machine ID] --out FILE | import FILE | merge FILE [--prefer faster|newer] "
       "| check",
       "the tuning database across machines: list machines and rows with their provenance, "
       "export them to JSON, import an export, merge another database",
       "Rows are keyed by machine identity (CPU model, vendor, ISA flags, physical cores, cache "
       "geometry), so results tuned on one server serve its identical neighbours; each row keeps "
       "the rooftune version, OS release, THP setting and CPU count it was tuned with. list and "
       "export only read. import checks the whole file first (its format and schema version, "
       "every field, each machine's identity against its profile) and writes nothing when any of "
       "it is wrong; rows it holds replace the same keys. merge takes the other database's rows "
       "and machine profiles; where both hold a row for the same machine, kernel, workload, "
       "dtype and threads it keeps the faster (lower median time) unless --prefer newer, and "
       "each row taken records the file it came from (merged_from in its provenance). check runs "
       "SQLite's integrity check, then checks each machine's profile (readable, its identity "
       "its key) and each row (threads within the machine's CPUs, finite positive times, a known "
       "kernel, a current config schema, a config that parses): one line per problem, exit 1 "
       "when there is any.",
       {"machine", "prefer", "out", "json"},
       nullptr,
       /*hidden=*/false,
       DbCommand},
      {"simulate",
       "--kernel K --shape S [--config ...]",
       "SIMULATED counters: one cold call under valgrind's cache simulator with the measured "
       "cache geometry; L1 and last-level misses as bytes, beside the kernel's traffic model (for "
       "machines without a PMU)",
       "Valgrind runs at most the AVX2 target, on one thread. The same call on the smallest "
       "shape is simulated too: the fixed cost any call pays (dispatch, threads, stack), taken "
       "off before the comparison with the model, which also adds the packing buffers' first "
       "touch that a single cold call pays.",
       {"kernel", "shape", "dtype", "epilogue", "config"},
       SimulateCommand},
      {"run",
       "[--quick] [--out DIR]",
       "the main job: probe, tune every kernel on its default shapes, write "
       "rooftune-report/report.md, report.html and report.json",
       "Tunes at 1, 2, 4, ... threads and all of them (--quick: one and all), each kernel, "
       "workload and thread count for at most 30 s (--quick: 4 s), then writes the reports and "
       "pictures and prints a summary naming each result's first lever that pays.",
       {"quick", "force", "fresh", "out", "budget_seconds", "strategy"},
       RunAllCommand},
      {"tune-worker",
       "",
       "",
       "",
       {"kernel", "shape", "dtype", "epilogue", "threads"},
       TuneWorkerCommand,
       /*hidden=*/true},
      {"simulate-once",
       "",
       "",
       "",
       {"kernel", "shape", "dtype", "epilogue", "config"},
       SimulateOnceCommand,
       /*hidden=*/true},
  };
}

const std::vector<Command>& Commands() {
  static const std::vector<Command> commands = [] {
    std::vector<Command> all;
    for (const std::vector<Command>& group :
         {KernelCommands(), MachineCommands(), ModelCommands(), PipelineCommands()}) {
      all.insert(all.end(), group.begin(), group.end());
    }
    return all;
  }();
  return commands;
}

const Command* FindCommand(absl::string_view name) {
  for (const Command& c : Commands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// `words` joined by spaces into lines of at most `width` columns: the first word goes at
// `column` (where the caller's line stands), each later line starts at `indent`.
std::string Wrap(const std::vector<std::string>& words, size_t column, size_t indent,
                 size_t width = 100) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0 && column + 1 + words[i].size() > width) {
      absl::StrAppend(&out, "\n", std::string(indent, ' '));
      column = indent;
    } else if (i > 0) {
      out += ' ';
      ++column;
    }
    absl::StrAppend(&out, words[i]);
    column += words[i].size();
  }
  return out;
}

std::string Wrap(absl::string_view text, size_t column, size_t indent) {
  return Wrap(absl::StrSplit(text, ' ', absl::SkipEmpty()), column, indent);
}

// A synopsis split where a line may break: never inside [...], nor between a flag and its value.
std::vector<std::string> SynopsisUnits(absl::string_view synopsis) {
  std::vector<std::string> units;
  int depth = 0;
  for (absl::string_view word : absl::StrSplit(synopsis, ' ', absl::SkipEmpty())) {
    const bool joins = !units.empty() && (depth > 0 || (word[0] != '-' && word[0] != '['));
    if (joins) {
      absl::StrAppend(&units.back(), " ", word);
    } else {
      units.emplace_back(word);
    }
    depth += std::count(word.begin(), word.end(), '[') - std::count(word.begin(), word.end(), ']');
  }
  return units;
}

std::string Dashed(absl::string_view flag) {
  std::string name(flag);
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

// How a flag's value is shown in help: `--threads T`.
absl::string_view Placeholder(absl::string_view flag) {
  static constexpr std::pair<absl::string_view, absl::string_view> kPlaceholders[] = {
      {"kernel", "K"},       {"shape", "S"},      {"dtype", "T"},       {"epilogue", "E"},
      {"config", "p=v,..."}, {"threads", "T"},    {"strategy", "NAME"}, {"budget_seconds", "B"},
      {"format", "F"},       {"out", "DIR"},      {"db", "FILE"},       {"plugin", "a.so,..."},
      {"machine", "ID"},     {"prefer", "WHICH"}, {"mlp", "W0,W1,..."}, {"batch", "B,..."},
      {"repeat", "R"},       {"sweep", "KIND"}};
  for (const auto& [name, placeholder] : kPlaceholders) {
    if (name == flag) return placeholder;
  }
  return "";
}

std::string FlagHelp(absl::string_view flag) {
  const absl::CommandLineFlag* f = absl::FindCommandLineFlag(flag);
  const std::string left = absl::StrCat("  --", Dashed(flag), " ", Placeholder(flag));
  constexpr size_t kColumn = 26;
  std::string line = left.size() + 1 < kColumn ? left + std::string(kColumn - left.size(), ' ')
                                               : left + "\n" + std::string(kColumn, ' ');
  absl::StrAppend(&line, Wrap(f == nullptr ? "" : f->Help(), kColumn, kColumn), "\n");
  return line;
}

std::string CommandHelp(const Command& c) {
  const std::string usage = absl::StrCat("usage: rooftune ", c.name, " ");
  std::string text =
      absl::StrCat(usage, Wrap(SynopsisUnits(c.synopsis), usage.size(), usage.size()), "\n\n");
  std::string summary(c.summary);
  summary[0] = std::toupper(summary[0]);
  absl::StrAppend(&text, Wrap(summary + ".", 0, 0), "\n");
  if (!c.details.empty()) absl::StrAppend(&text, "\n", Wrap(c.details, 0, 0), "\n");
  absl::StrAppend(&text, "\nflags\n");
  for (absl::string_view flag : c.flags) absl::StrAppend(&text, FlagHelp(flag));
  for (absl::string_view flag : kGlobalFlags) absl::StrAppend(&text, FlagHelp(flag));
  return text;
}

std::string OverviewHelp() {
  std::string text =
      R"(rooftune: profile and autotune CPU kernels, judged against a roofline measured on this machine.

usage: rooftune <command> [flags]
       rooftune <command> --help     that command's flags, each explained

commands
)";
  constexpr size_t kSummaryColumn = 45;
  for (const Command& c : Commands()) {
    if (c.hidden) continue;
    std::string line = absl::StrFormat("  %-8s ", c.name);
    const size_t synopsis_column = line.size();
    absl::StrAppend(&line, Wrap(SynopsisUnits(c.synopsis), synopsis_column, synopsis_column));
    // Where the synopsis' last line ends (npos + 1 is 0: a synopsis on one line).
    const size_t column = line.size() - (line.rfind('\n') + 1);
    if (column + 2 <= kSummaryColumn) {
      line += std::string(kSummaryColumn - column, ' ');
    } else {
      absl::StrAppend(&line, "\n", std::string(kSummaryColumn, ' '));
    }
    absl::StrAppend(&text, line, Wrap(c.summary, kSummaryColumn, kSummaryColumn), "\n");
  }
  absl::StrAppend(&text, R"(
shapes     MxNxK for gemm (C[MxN] = A[MxK] B[KxN]), NxK for gemv (y[N] = W[NxK] x[K]);
           every dimension a positive integer
configs    without --config, verify and bench use the best config stored for this machine, kernel,
           workload and thread count, else the kernel's analytic initial config; output says which
timing     )",
                  Wrap(kCacheModes, 11, 11), R"(
flags      --dtype f32|u8s8|s8f32   --epilogue none|bias|bias_relu   --db FILE   --plugin a.so,b.so
           --out DIR   --force (re-probe even when the cached profile matches)
           --fresh (re-probe, and store this probe's ceilings even where lower)
database   --db, else $ROOFTUNE_DB, else $XDG_CACHE_HOME/rooftune/tuning.db, else
           ~/.cache/rooftune/tuning.db (SQLite; keyed by machine identity: rooftune db)
exit       0 success; 1 runtime failure (wrong result, unreadable database, bad plugin file, a
           plugin that crashes or hangs while loading, a config that crashes, hangs or exhausts
           memory in its worker, allocation failure); 2 usage error (unknown command, kernel or
           flag, a flag the command does not take, bad shape, config or thread count, shape too
           large for memory)
)");
  return text;
}

// A flag the command does not read would be ignored in silence: `list --shape 8x8` is a mistake
// the user should hear about.
absl::Status CheckFlagsApply(const Command& c, const std::vector<std::string>& given) {
  for (const std::string& flag : given) {
    const auto takes = [&](absl::string_view f) { return f == flag; };
    if (std::any_of(c.flags.begin(), c.flags.end(), takes) ||
        std::any_of(std::begin(kGlobalFlags), std::end(kGlobalFlags), takes)) {
      continue;
    }
    return UsageError(absl::StrCat("--", Dashed(flag), " does not apply to '", c.name,
                                   "' (see rooftune ", c.name, " --help)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> HelpText(const std::string& command) {
  if (command.empty()) return OverviewHelp();
  const Command* c = FindCommand(command);
  if (c == nullptr || c->hidden) {
    return UsageError(absl::StrCat("unknown command '", command, "' (see rooftune --help)"));
  }
  return CommandHelp(*c);
}

absl::StatusOr<int> RunCommand(const Arguments& args) {
  const Command* c = FindCommand(args.command);
  if (c == nullptr) {
    return UsageError(absl::StrCat("unknown command '", args.command, "' (see rooftune --help)"));
  }
  if (absl::Status s = CheckFlagsApply(*c, args.flags); !s.ok()) return s;
  if (c->run_with_operands == nullptr && !args.positional.empty()) {
    return UsageError(absl::StrCat("unexpected argument '", args.positional.front(),
                                   "' (flags start with --; see rooftune --help)"));
  }
  if (absl::Status s = LoadPluginsGuarded(PluginFlag()); !s.ok()) return s;
  Session session(DbPath());
  if (c->run_with_operands != nullptr) return c->run_with_operands(session, args.positional);
  return c->run(session);
}

}  // namespace rooftune::cli
