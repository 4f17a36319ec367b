#pragma once
// parasim::cli compare variants — the scenario changed along one axis, one variant per item of
// `parasim compare`'s list: schedules (--schedules), tensor-parallel placements (--placements),
// layouts of the tp x cp group (--layouts, each repeated at every --seq-lens length),
// optimizers (--optimizers), expert-parallel degrees (--ep), MoE token dispatchers
// (--dispatchers), precisions (--precisions), shardings (--shardings), context-parallel
// exchanges (--cp-variants), TP communication overlaps (--tp-overlaps), recompute modes
// (--recomputes) or torch.compile (--compiles).
//
// Two kinds of problem, kept apart:
// - the command line is wrong (an unknown name, a malformed layout or optimizer spec, a number
//   outside its range): cost::InputError with every such problem, exit code 2, nothing runs;
// - a well-formed variant does not apply to this scenario (PACI needs ZeRO 0 or 1, interleaved-1f1b
// needs
//   the layers to split over pp x chunks, a layout's group must divide the GPUs): the variant is
//   kept with the reasons in `not_applicable` (the scenario checks' JSON paths and messages),
//   and the others are compared.

#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "costmodel/diagnostics.hpp"
#include "report/compare/compare_variant.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::cli {

// The schedules compared when --schedules is not given and the scenario pipelines (pp > 1).
// With pp = 1 there is no pipeline to schedule: only the scenario's own schedule is run.
inline constexpr const char* kDefaultSchedules =
    "1f1b,interleaved-1f1b,zb-h1,zb-h2,pipedream,pipedream-2bw,paci";

// Range of a --seq-lens item: the scenario format's range for model.seq_len
// (strategies/input/scenario_parser.cpp, read_model: 1 to 2^24 tokens).
inline constexpr long long kMaxSeqLen = 1LL << 24;
// Range of a layout degree N or M: the scenario format's range for parallel.tp and parallel.cp
// (strategies/input/scenario_parser.cpp, read_parallel: 1 to 4096).
inline constexpr long long kMaxLayoutDegree = 1 << 12;
// Range of an --ep item: the scenario format's parallel.ep (1 to 65536).
inline constexpr long long kMaxEp = 1 << 16;
// Range of --chunks: the scenario format's parallel.chunks (1 to 64).
inline constexpr long long kMaxChunks = 64;

struct CompareVariants {
  std::vector<CompareVariant> variants;  // in the order of the command line
  std::string note;                      // said above the table when non-empty (a default taken)
};

// The variants of `options` on `base` (a validated scenario read from options.scenario).
// Throws cost::InputError naming options.scenario when the command line is wrong.
CompareVariants compare_variants(const strat::Scenario& base, const CompareOptions& options);

// Every variant's reasons into `d` as "with AXIS LABEL: message" at their JSON paths (for the
// exit-2 message when no variant applies or the command line is wrong).
void add_not_applicable(const std::vector<CompareVariant>& variants, cost::Diagnostics& d);

}  // namespace parasim::cli
