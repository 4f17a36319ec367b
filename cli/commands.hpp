#pragma once
// parasim::cli commands — each subcommand as a function returning the process exit code, so the
// tests can run them without a process. Only main() exits.
//
// Exit codes: 0 success; 2 bad input (every problem of the file reported, nothing written), or
// an output path that cannot take an output (a folder, a read-only file, a missing folder:
// output_file.hpp); 1 anything else (a broken invariant, an I/O failure such as a full disk),
// with a message on stderr; 3 no GPU to use (`devices`, `calibrate --backend cuda`: one line says
// why, whether the CUDA plugin or its libraries are missing or there is no driver or device).

#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "strategies/input/workload_estimate.hpp"

namespace parasim::cli {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitNoDevice = 3;

// Appended to a sim::TimeRangeError (a simulated time beyond the engine's range): what to check.
inline constexpr const char* kTimeRangeHint =
    "; check the scenario's and the profile's hardware figures (a bandwidth or FLOP rate far too "
    "small, a latency far too large?)";

// A command-line value that is wrong (exit 2); the message names the option and what it expects.
// --allow-foreign-profile's help, the same for every command that takes --profile.
inline constexpr const char* kForeignProfileHelp =
    "Apply a measured profile to a scenario whose device it was not measured on (by default such "
    "a profile, or one with a GEMM faster than the device's peak, is refused with exit code 2)";

class CommandLineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SimulateOptions {
  std::string scenario;
  std::string profile;  // empty: the analytical model with the scenario's hardware
  bool allow_foreign_profile = false;  // --allow-foreign-profile (costmodel/profile_fit.hpp)
  std::string json;     // empty: none; "-": standard output (the text report then goes to stderr)
  std::string trace;    // Chrome trace path, empty for none
  std::string trace_ranks;   // --trace-ranks "0-7,64" (cli/trace_options.hpp); empty: all
  std::string trace_window;  // --trace-window "0.5 s,1.2 s"; empty: the whole run
  bool full = false;
  strat::WorkloadLimits limits;  // --max-ops, --max-memory, --max-shampoo-blocks
};

int run_simulate(const SimulateOptions& options, std::ostream& out, std::ostream& err);

struct CompareOptions {
  std::string scenario;
  // Empty: every schedule but gpipe when the scenario pipelines (pp > 1, kDefaultSchedules in
  // compare_variants.hpp), the scenario's own when it does not (pp = 1).
  std::string schedules;
  std::string placements;  // non-empty: compare TP placements (megatron,vanilla,btp) instead
  std::string layouts;     // non-empty: compare layouts of the tp x cp group (tsp,tp,cp,tpNxspM)
  std::string seq_lens;    // with layouts: repeat each at these sequence lengths
  std::string optimizers;  // non-empty: compare optimizers NAME/SOLVER/PRECISION[/BLOCK[/SCALING]]
  std::string ep;           // non-empty: compare expert-parallel degrees (models with experts)
  std::string dispatchers;  // non-empty: compare MoE token dispatchers (alltoall, allgather)
  std::string precisions;   // non-empty: compare precisions (bf16, fp8:delayed, fp8:mxfp8, ...)
  std::string shardings;    // non-empty: compare sharding entries (zero-0 .. zero-3, fsdp2)
  std::string tp_overlaps;  // non-empty: compare TP communication overlaps (none, async-tp, ...)
  std::string cp_variants;  // non-empty: compare context-parallel exchanges (ring, a2a, ...)
  std::string recomputes;   // non-empty: compare recompute modes (none, selective, full, per-op)
  std::string compiles;     // non-empty: compare torch.compile off and on (training.framework)
  int chunks = 2;         // v for interleaved-1f1b when the scenario does not set one
  std::string profile;
  bool allow_foreign_profile = false;  // --allow-foreign-profile
  std::string json;       // "-": standard output
  std::string svg_dir;    // timeline and memory SVG per schedule
  strat::WorkloadLimits limits;  // per variant
};

// The same scenario under several pipeline schedules, placements, layouts (and sequence lengths)
// or optimizers, side by side; a variant that does not apply is a row saying why.
int run_compare(const CompareOptions& options, std::ostream& out, std::ostream& err);
struct CalibrateOptions {
  std::string backend = "cuda";  // "cuda" or "cpu"
  bool quick = false;
  std::string ops;        // comma-separated families; empty: all
  std::string min_bytes;  // -b, nccl-tests syntax (8, 64K, 128M, 1G); empty: the default
  std::string max_bytes;  // -e
  double factor = 0;      // -f; 0: the default
  int iterations = 20;    // -n
  int warmup = 5;         // -w
  std::string out;        // --out: the profile to write
  std::string check;      // --check: the profile to check (instead of --out)
  std::vector<std::string> from_trace;  // --from-trace: profiler traces to fit instead
  int gpus_per_node = 0;  // --gpus-per-node with --from-trace; 0: from the traces
  std::string command_line;  // for provenance
};

// Measures this machine (every MPI rank calls it) and writes a version 2 profile, rewritten
// after every point; or, with --check, compares held-out measurements with a profile.
int run_calibrate(const CalibrateOptions& options, std::ostream& out, std::ostream& err);
// calibrate --from-trace: profiler traces of a real run fitted into a version 2 profile
// (calibrate/trace/), with the coverage printed (cli/calibrate_from_trace.cpp).
int run_calibrate_from_trace(const CalibrateOptions& options, std::ostream& out,
                             std::ostream& err);
// Checks the file and the work its simulation would take (symmetric, or --full when `full`)
// against `limits`, as simulate would.
int run_validate(const std::string& scenario, std::ostream& out, std::ostream& err,
                 const strat::WorkloadLimits& limits = {}, bool full = false);
// `json`: the same as JSON (cli/runs/list_json.hpp), what the Python API's presets() and
// registry() read.
int run_list(const std::string& what, std::ostream& out, std::ostream& err, bool json = false);
// Lists the GPUs (exit 0), or says why there are none (exit 3).
int run_devices(std::ostream& out);

}  // namespace parasim::cli
