// parasim: simulate and plan parallel training of large models. See `parasim --help`.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/compare_trace_command.hpp"
#include "cli/export_command.hpp"
#include "cli/limit_options.hpp"
#include "cli/option_checks.hpp"
#include "cli/plan_command.hpp"
#include "cli/suggest.hpp"
#include "cli/terminal_text.hpp"
#include "cli/validate_against_command.hpp"
#include "strategies/registry/registry.hpp"

namespace {

std::string joined_names(parasim::strat::EntryKind kind) {
  std::string out;
  for (const auto& name : parasim::strat::entry_names(kind)) {
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}
std::string dispatcher_names() {
  return joined_names(parasim::strat::EntryKind::kDispatcher);
}

using parasim::cli::nearest_name;

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
  }
  return names;
}

std::string did_you_mean(const std::optional<std::string>& suggestion) {
  return suggestion ? "; did you mean \"" + *suggestion + "\"?" : std::string();
}

// `parasim simulat x.json` or `parasim -V`: CLI11 alone would only say that a subcommand is
// required. The message for a first word that is neither a command nor a top-level option.
std::optional<std::string> unknown_first_word(const CLI::App& app, int argc, char** argv) {
  if (argc < 2) return std::nullopt;
  const std::string word = argv[1];
  const std::vector<std::string> commands = subcommand_names(app);
  std::string listed;
  for (const auto& c : commands) listed += (listed.empty() ? "" : ", ") + c;
  if (!word.empty() && word[0] == '-') {
    const std::vector<std::string> options{"--help", "--version"};
    if (word == "-h" || word == "--help" || word == "--version") return std::nullopt;
    return "unknown option \"" + word + "\"" + did_you_mean(nearest_name(word, options)) +
           " (parasim --help lists the commands: " + listed + ")";
  }
  for (const auto& c : commands) {
    if (c == word) return std::nullopt;
  }
  return "unknown command \"" + word + "\"" + did_you_mean(nearest_name(word, commands)) +
         " (commands: " + listed + "; parasim --help)";
}

// For each option of the chosen subcommand's command line that it does not know, the nearest it
// does ("--jsn" -> "--json").
std::string option_suggestions(const CLI::App& app, int argc, char** argv) {
  const std::vector<const CLI::App*> chosen =
      app.get_subcommands([](const CLI::App* sub) { return sub->parsed(); });
  if (chosen.empty()) return {};
  const CLI::App& sub = *chosen.front();
  std::vector<std::string> names;
  for (const CLI::Option* opt : sub.get_options()) {
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
  }
  std::string text;
  for (int i = 2; i < argc; ++i) {
    std::string word = argv[i];
    if (word.size() < 2 || word[0] != '-' || word == "--") continue;
    word = word.substr(0, word.find('='));
    if (sub.get_option_no_throw(word) != nullptr) continue;
    if (const auto s = nearest_name(word, names)) {
      text += "\"" + word + "\": did you mean \"" + *s + "\"?\n";
    }
  }
  return text;
}

// Restores std::cout's and std::cerr's buffers when main returns.
class TerminalSafeStreams {
 public:
  TerminalSafeStreams()
      : out_(std::cout.rdbuf()),
        err_(std::cerr.rdbuf()),
        old_out_(std::cout.rdbuf(&out_)),
        old_err_(std::cerr.rdbuf(&err_)) {}
  TerminalSafeStreams(const TerminalSafeStreams&) = delete;
  TerminalSafeStreams& operator=(const TerminalSafeStreams&) = delete;
  ~TerminalSafeStreams() {
    std::cout.flush();
    std::cerr.flush();
    out_.finish();
    err_.finish();
    std::cout.rdbuf(old_out_);
    std::cerr.rdbuf(old_err_);
  }

 private:
  parasim::cli::TerminalSafeBuffer out_, err_;
  std::streambuf* old_out_;
  std::streambuf* old_err_;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace parasim::cli;
  // A reader that went away (`parasim simulate --json - | head -c1`, a FIFO whose reader exited)
  // is a write error the commands report and clean up after (output_file.hpp: nothing left
  // behind), not a signal that ends the process halfway through a commit.
  std::signal(SIGPIPE, SIG_IGN);
  // Every byte the commands print passes the terminal-safe filter (terminal_text.hpp).
  const TerminalSafeStreams safe_streams;
  CLI::App app{
      "parasim " PARASIM_VERSION
      ": a discrete-event simulator and cost model for parallel training of large models.\n"
      "Describe a model, a cluster and a parallelization in a scenario JSON file "
      "(docs/scenario.md), then:\n"
      "  parasim validate scenarios/llama2-7b-dgx-h100.json   check it\n"
      "  parasim simulate scenarios/llama2-7b-dgx-h100.json   step time, bubbles, "
      "communication, memory\n"
      "  parasim list                                          presets and strategies"};
  app.require_subcommand(1);
  app.add_flag_callback(
      "--version",
      [] {
        std::cout << "parasim " PARASIM_VERSION "\n";
        throw CLI::Success();
      },
      "Print the version (parasim " PARASIM_VERSION ") and exit");

  SimulateOptions sim;
  auto* simulate = app.add_subcommand(
      "simulate",
      "Simulate one training step of SCENARIO and report step time, tokens/s, MFU, pipeline "
      "bubbles, communication (bytes and exposed time by kind) and peak memory per GPU.");
  simulate->add_option("scenario", sim.scenario, "Scenario JSON file (docs/scenario.md)")
      ->required()
      ->type_name("FILE");
  simulate
      ->add_option("--profile", sim.profile,
                   "Cost-model profile JSON (docs/profile.md) overriding the hardware "
                   "figures and model efficiencies")
      ->type_name("FILE");
  simulate->add_flag("--allow-foreign-profile", sim.allow_foreign_profile, kForeignProfileHelp);
  simulate
      ->add_option("--json", sim.json,
                   "Write the result JSON to FILE, or to standard output with '-' (the text "
                   "report then goes to standard error)")
      ->type_name("FILE");
  simulate
      ->add_option("--trace", sim.trace,
                   "Write a Chrome trace (open in https://ui.perfetto.dev): one lane per "
                   "stream, memory counters, arrows for pipeline transfers. Its size is "
                   "printed; one over 100 MB is announced before it is written")
      ->type_name("FILE");
  simulate
      ->add_option("--trace-ranks", sim.trace_ranks,
                   "Trace only these global ranks: comma-separated ranks and inclusive "
                   "ranges, e.g. 0-7,64 (without --full only one GPU per stage is simulated; "
                   "the others are named in a note)")
      ->type_name("LIST");
  simulate
      ->add_option("--trace-window", sim.trace_window,
                   "Trace only the ops that overlap START,END of simulated time, two "
                   "durations with units, e.g. \"0.5 s,1.2 s\" or \"200 ms,450 ms\"")
      ->type_name("START,END");
  simulate->add_flag("--full", sim.full,
                     "Simulate every GPU instead of one data-parallel replica and one tensor-"
                     "parallel rank per stage (slower; same result on symmetric inputs)");
  add_limit_options(*simulate, sim.limits);

  CompareOptions cmp;
  auto* compare = app.add_subcommand(
      "compare",
      "Simulate SCENARIO changed along one axis and print one table: tokens/s, speedup over the "
      "first variant, bubbles, peak memory per stage (* when it does not fit), weight staleness "
      "and versions. The axis is the pipeline schedule (default), the tensor-parallel placement "
      "(--placements), the layout of the tp x cp GPUs (--layouts, repeated at each --seq-lens "
      "length) or the optimizer (--optimizers). A variant that does not apply to the scenario "
      "(PACI with ZeRO-2, say) is a row marked \"not applicable: why\" and the others are "
      "compared; exit code 2 when none applies. For example\n"
      "  parasim compare scenarios/llama2-7b-dgx-h100.json\n"
      "  parasim compare scenarios/boost-7b-tp4.json --placements megatron,vanilla,btp\n"
      "  parasim compare scenarios/tsp-7b-mi300x.json --layouts tsp,tp,cp --seq-lens 16384,65536\n"
      "  parasim compare scenarios/dash-llama-953m.json --optimizers "
      "adamw,dash-gpu/newton-db/fp16/1024");
  compare->add_option("scenario", cmp.scenario, "Scenario JSON file")->required();
  compare->add_option("--schedules", cmp.schedules,
                      "Comma-separated schedules: gpipe, 1f1b, interleaved-1f1b, zb-h1, zb-h2, "
                      "pipedream, pipedream-2bw, paci (default: all but gpipe when the scenario "
                      "pipelines; with pp = 1 only the scenario's own schedule)");
  compare->add_option("--placements", cmp.placements,
                      "Compare tensor-parallel placements instead of schedules: megatron (dense "
                      "model), vanilla, btp (BOOST's low-rank model; r = hidden/4 if the scenario "
                      "has none)");
  compare->add_option("--layouts", cmp.layouts,
                      "Compare layouts of the scenario's tp x cp GPUs instead: tsp (folded), tp, "
                      "cp, tspN (TSP on N GPUs), tpNxspM (N-way TP with SP, M-way sequence "
                      "sharding), N and M from 1 to 4096; a group of another size keeps the GPU "
                      "count: dp becomes dp x tp x cp / (N x M), and a group that does not divide "
                      "them does not apply");
  compare->add_option(
      "--seq-lens", cmp.seq_lens,
      "With --layouts: repeat every layout at these sequence lengths (tokens, "
      "comma-separated whole numbers from 1 to 16777216; rows labelled LAYOUT@16K); "
      "--svg then also draws peak memory against length");
  compare->add_option(
      "--optimizers", cmp.optimizers,
      "Compare optimizers instead: adamw or NAME/SOLVER/PRECISION[/BLOCK[/SCALING]] "
      "with NAME shampoo, dash-layer, dash-gpu; SOLVER evd, coupled-newton, "
      "newton-db, chebyshev; PRECISION fp32, fp16, bf16; BLOCK 16 to 65536; SCALING "
      "frobenius, power-iteration (e.g. shampoo/coupled-newton/fp32/1024,"
      "dash-gpu/coupled-newton/fp16/1024); the table adds the optimizer step by part");
  compare->add_option("--ep", cmp.ep,
                      "Compare expert-parallel degrees instead (a model with experts; "
                      "comma-separated whole numbers, each dividing the experts, e.g. 1,2,4,8); "
                      "the experts' all-to-all shows as communication kind ep (docs/moe.md)");
  compare->add_option("--precisions", cmp.precisions,
                      "Compare precisions instead (comma-separated registry names: " +
                          joined_names(parasim::strat::EntryKind::kPrecision) +
                          "; fp8 alone: the scenario's recipe, or delayed): what FP8 buys, its "
                          "extra kernels and memory (docs/fp8.md)");
  compare->add_option("--shardings", cmp.shardings,
                      "Compare what the data-parallel replicas shard instead (comma-separated "
                      "registry names: " +
                          joined_names(parasim::strat::EntryKind::kSharding) +
                          "): ZeRO's stages against FSDP2, with the scenario's parallel.fsdp "
                          "options (docs/pytorch-native.md)");
  compare->add_option("--recomputes", cmp.recomputes,
                      "Compare activation recomputation instead (comma-separated registry "
                      "names: " +
                          joined_names(parasim::strat::EntryKind::kRecompute) +
                          "; docs/activation-checkpointing.md)");
  compare->add_option("--compiles", cmp.compiles,
                      "Compare torch.compile of torchtitan's blocks instead (comma-separated: "
                      "off, on; training.framework.compile, docs/pytorch-native.md)");
  compare->add_option("--dispatchers", cmp.dispatchers,
                      "Compare MoE token dispatchers instead (comma-separated): " +
                          dispatcher_names() + " (parasim list describes them; docs/moe.md)");
  compare->add_option("--cp-variants", cmp.cp_variants,
                      "Compare context-parallel exchanges instead (comma-separated): " +
                          joined_names(parasim::strat::EntryKind::kContextParallel) +
                          " (a2a+p2p with the scenario's cp_a2a_size; docs/context-parallel.md)");
  compare->add_option("--tp-overlaps", cmp.tp_overlaps,
                      "Compare tensor-parallel communication overlaps instead (comma-separated): " +
                          joined_names(parasim::strat::EntryKind::kTpCommOverlap) +
                          " (docs/tp-overlap.md)");
  compare
      ->add_option("--chunks", cmp.chunks,
                   "Model chunks per stage for interleaved-1f1b when the scenario sets none")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  compare->add_option("--profile", cmp.profile, "Cost-model profile JSON (docs/profile.md)");
  compare->add_flag("--allow-foreign-profile", cmp.allow_foreign_profile, kForeignProfileHelp);
  compare->add_option(
      "--json", cmp.json,
      "Write {\"rows\": [...]} to FILE, or '-' for standard output: per variant its "
      "label, axis, schedule, placement, layout, sequence length, optimizer and "
      "parallel degrees, then the simulate result (docs/result.md), or why it does "
      "not apply");
  compare->add_option("--svg", cmp.svg_dir,
                      "Write DIR/<variant>-timeline.svg (asynchronous schedules: the warm-up the "
                      "figures exclude shaded) and DIR/<variant>-memory.svg per variant, the "
                      "label's characters outside A-Z a-z 0-9 . _ - replaced by _");
  add_limit_options(*compare, cmp.limits);

  PlanCommandOptions pl;
  auto* plan = app.add_subcommand(
      "plan",
      "Search every way to train SCENARIO's model on its cluster (dp x tp x pp x cp, sequence "
      "parallel, interleaving, schedule, micro-batch, recompute, ZeRO, attention, placement, "
      "optimizer implementation), screen them analytically, simulate the best and print a ranked "
      "table; the scenario's parallel section is shown as \"yours\". Under mpirun -np K the "
      "ranks share the screen and rank 0 writes what one process would (docs/planner.md)");
  plan->add_option("scenario", pl.scenario,
                   "Scenario JSON file; its \"search\" section "
                   "narrows or widens the space")
      ->required()
      ->type_name("FILE");
  plan->add_option("--profile", pl.profile, "Cost-model profile JSON (docs/profile.md)");
  plan->add_flag("--allow-foreign-profile", pl.allow_foreign_profile, kForeignProfileHelp);
  plan->add_option("--out", pl.out,
                   "Write the plan (docs/plan.md) to FILE: the winning scenario "
                   "in full (parasim simulate FILE reproduces it), its figures, "
                   "runners-up, rejects, provenance");
  plan->add_option("--json", pl.json,
                   "Write every screened candidate with its estimate and the "
                   "simulated ones with their full results to FILE ('-': "
                   "standard output)");
  plan->add_option("--keep", pl.keep, "With --json: only the best N screened candidates")
      ->check(CLI::Range(1.0, 1e12));
  plan->add_option("--search", pl.search,
                   "KEY=V1,V2,... replaces one axis (keys in "
                   "docs/planner.md); repeatable")
      ->type_name("KEY=VALUES");
  plan->add_option("--gpus", pl.gpus,
                   "Plan for N GPUs of the cluster instead of all of them "
                   "(replaces search.gpus)")
      ->check(CLI::Range(1, 1 << 30));
  plan->add_flag("--allow-async", pl.allow_async,
                 "Also search asynchronous schedules (PipeDream, 2BW, PACI), which change the "
                 "training algorithm; the plan states the staleness accepted");
  plan->add_option("--headroom", pl.headroom,
                   "Fraction of HBM kept free: peak memory per GPU <= HBM x (1 - headroom)")
      ->default_val(0.05);
  plan->add_option("--top", pl.top,
                   "Simulate the N best estimates (plus every estimate within "
                   "10 % of the best)")
      ->default_val(16)
      ->check(CLI::Range(1, 1 << 20));
  plan->add_option("--max-simulate", pl.max_simulate, "Simulate at most N candidates")
      ->default_val(64)
      ->check(CLI::Range(1, 1 << 20));
  plan->add_option("--threads", pl.threads,
                   "Threads per process (default: every core; under "
                   "mpirun the screen's divided among a node's ranks); "
                   "the output is the same for any count")
      ->check(CLI::Range(1, 1024));
  plan->add_option("--max-candidates", pl.max_candidates,
                   "Refuse a space larger than N candidates (exit 2); the screen takes about "
                   "10 s for 2 x 10^8 on 2 cores")
      ->default_val(4e8)
      ->check(parasim::cli::finite_range(1, 1e18));
  plan->add_option("--for", pl.trainer,
                   "Plan only what TRAINER runs as exported (megatron: megatron-core 0.19.2, "
                   "deepspeed: DeepSpeed 0.19.8, torchtitan: torchtitan 0.3.0), simulated with "
                   "its defaults where the scenario does not choose (its framework preset, its "
                   "gradient precision); also the scenario's search.trainer")
      ->type_name("TRAINER")
      ->check(CLI::IsMember({"megatron", "deepspeed", "torchtitan"}));
  plan->add_option("--tie", pl.tie_percent,
                   "Rows within PERCENT of the winner's step time are marked as a tie (default: "
                   "parasim's step-time error for the regime, docs/validation.md: 7.2 multi-node, "
                   "23.8 on one node; 0: off)")
      ->type_name("PERCENT")
      ->check(parasim::cli::finite_range(0, 100));
  plan->add_flag("--timings", pl.timings, "Print the wall time of each tier");

  std::string validate_path;
  auto* validate = app.add_subcommand(
      "validate", "Check a scenario file and report every problem in it (exit code 2 if any)");
  validate->add_option("scenario", validate_path, "Scenario JSON file")
      ->required()
      ->type_name("FILE");
  bool validate_full = false;
  validate->add_flag("--full", validate_full,
                     "Check the limits of a simulate --full run (every GPU simulated)");
  parasim::strat::WorkloadLimits validate_limits;
  add_limit_options(*validate, validate_limits);

  std::string list_what;
  auto* list = app.add_subcommand(
      "list", "List model and cluster presets (with their sources) and the strategies");
  list->add_option("topic", list_what, "presets or strategies (default: both)")
      ->check(CLI::IsMember({"presets", "strategies"}));
  bool list_json = false;
  list->add_flag("--json", list_json,
                 "JSON on standard output: the presets with their figures and sources, every "
                 "registry entry with its parameters (units in the key names)");

  CalibrateOptions cal;
  auto* calibrate = app.add_subcommand(
      "calibrate",
      "Measure this machine's GEMMs, collectives, optimizer solvers, RMSNorm bandwidth, launch "
      "overhead and compute/communication overlap, and write a profile for --profile "
      "(docs/profile.md). Run one process per GPU under MPI, e.g.\n"
      "  mpirun -np 8 parasim calibrate --out h100.json\n"
      "  mpirun -np 2 parasim calibrate --backend cpu --quick --out cpu.json   (any machine)\n"
      "  parasim calibrate --check h100.json   held-out points: predicted against measured\n"
      "The profile is rewritten after every point: an interrupted run leaves a valid profile of "
      "what was measured, marked \"complete\": false. Exit code 3: no GPU (cuda backend).");
  calibrate
      ->add_option("--backend", cal.backend,
                   "cuda: cuBLASLt, NCCL and CUDA solvers on the GPUs; cpu: Eigen, MPI and "
                   "the CPU reference solvers on this host")
      ->capture_default_str()
      ->check(CLI::IsMember({"cuda", "cpu"}));
  calibrate->add_flag("--quick", cal.quick,
                      "Fewer points (coarser grids, fewer sizes): minutes instead of an hour on "
                      "a GPU node");
  calibrate->add_option("--ops", cal.ops,
                        "Comma-separated measurements: gemm, collectives, solvers, norm, launch, "
                        "overlap (default: all the backend can do)");
  calibrate->add_option("-b,--min-bytes", cal.min_bytes,
                        "Smallest collective message, nccl-tests sizes: bytes with K, M or G "
                        "(default cuda 1K, cpu 1K; --quick 64K / 4K)");
  calibrate->add_option("-e,--max-bytes", cal.max_bytes,
                        "Largest collective message (default cuda 1G, cpu 64M; --quick 256M / 4M)");
  calibrate
      ->add_option("-f,--step-factor", cal.factor,
                   "Multiplication factor between message sizes (default 2; --quick 4)")
      ->check(CLI::PositiveNumber);
  calibrate->add_option("-n,--iters", cal.iterations, "Timed samples per point (median, p20, p80)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  calibrate->add_option("-w,--warmup-iters", cal.warmup, "Untimed warm-up runs per point")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  calibrate
      ->add_option("--out", cal.out,
                   "Profile JSON to write (version 2, docs/profile.md); '-' for standard "
                   "output")
      ->type_name("FILE");
  auto* check_option = calibrate->add_option(
      "--check", cal.check,
      "Instead of calibrating: measure points held out of PROFILE's fit and print predicted "
      "against measured with the error in percent");
  calibrate
      ->add_option("--from-trace", cal.from_trace,
                   "Instead of measuring: fit the profile from profiler traces of a real run "
                   "(PyTorch profiler JSON or .json.gz, one per rank, record_shapes=True for GEMM "
                   "shapes; Nsight Systems SQLite exports), and print what share of the GPU time "
                   "they cover (docs/calibration.md#from-a-trace)")
      ->type_name("TRACE...")
      ->excludes(check_option);
  calibrate
      ->add_option("--gpus-per-node", cal.gpus_per_node,
                   "With --from-trace: GPUs per node of the profiled run, to place its "
                   "process groups (default: the GPUs the traces saw, else 8)")
      ->check(CLI::Range(1, 1024));

  ValidateAgainstOptions va;
  CLI::App* validate_against = add_validate_against_command(app, va);

  CompareTraceOptions compare_trace_options;
  CLI::App* compare_trace = add_compare_trace_command(app, compare_trace_options);

  ExportCommandOptions export_options;
  CLI::App* export_cmd = add_export_command(app, export_options);

  auto* devices = app.add_subcommand(
      "devices", "Show the GPUs this machine has, or say plainly why there are none");

  if (const auto message = unknown_first_word(app, argc, argv)) {
    std::cerr << "parasim: " << *message << "\n";
    return kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a wrong command line is bad input like a bad file.
    const int code = app.exit(e);
    if (code != 0) std::cerr << option_suggestions(app, argc, argv);
    return code == 0 ? kExitOk : kExitBadInput;
  }
  auto run_chosen = [&]() -> int {
    if (*simulate) return run_simulate(sim, std::cout, std::cerr);
    if (*plan) {
      for (int i = 0; i < argc; ++i) pl.command_line += (i ? " " : "") + std::string(argv[i]);
      return run_plan_command(pl, std::cout, std::cerr);
    }
    if (*compare) return run_compare(cmp, std::cout, std::cerr);
    if (*validate) {
      return run_validate(validate_path, std::cout, std::cerr, validate_limits, validate_full);
    }
    if (*list) return run_list(list_what, std::cout, std::cerr, list_json);
    if (*devices) return run_devices(std::cout);
    if (*validate_against) return run_validate_against(va, std::cout, std::cerr);
    if (*export_cmd) return run_export(export_options, std::cout, std::cerr);
    if (*compare_trace) return run_compare_trace(compare_trace_options, std::cout, std::cerr);
    for (int i = 0; i < argc; ++i) cal.command_line += (i ? " " : "") + std::string(argv[i]);
    return run_calibrate(cal, std::cout, std::cerr);
  };
  const int code = run_chosen();
  // A report that did not reach standard output (a full disk, a closed pipe) is a failure.
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::cerr << "parasim: cannot write standard output\n";
    return code == kExitOk ? kExitFailure : code;
  }
  return code;
}
