#pragma once
// parasim::plan rules — whether a candidate is a scenario `validate` accepts, in a fast form
// that returns a reason code without formatting anything (the report formats the counts).
//
// The rules are the cross-field rules of strategies/registry/scenario_rules.cpp (check_scenario),
// restated for the fields a candidate changes; tests/planner/planner_test.cpp checks, for every
// candidate of several spaces, that check_reason() == kOk exactly when check_scenario() finds no
// problem. The planner also runs check_scenario itself on every candidate it simulates, so a
// rule added to the parser later (a new schedule's) is enforced there even before it is
// restated here. Three reasons are the planner's own: kDuplicate (pp = 1 makes every schedule the
// same: only the first of the axis is kept; interleaved-1f1b with one chunk is the 1F1B layout,
// kept as 1f1b when that is searched; with FlashAttention selective recompute is the same run as
// none, kept only when none is not searched), kStaleness (above search.max_staleness) and
// kTrainer (plan --for: the trainer's exporter refuses it).

#include <cstdint>

#include "planner/candidate.hpp"
#include "planner/search_space.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::plan {

enum class Reason : std::uint8_t {
  kOk,
  kHeads,             // tp must divide heads and kv heads
  kLayers,            // pp x chunks must divide the layers
  kChunks,            // chunks the schedule does not run (V: 2; interleaved-zb: 2 or more)
  kInterleavedBatch,  // the schedule's micro-batch rule (interleaved groups or rounds, dualpipev)
  kAsync,             // asynchronous schedules: adamw, ZeRO 0-1, no FSDP2, no offload
  kZero3,             // ZeRO-3 only with gpipe and 1f1b
  kFsdp2,             // FSDP2's rules (schedules, dense, HSDP replicas, reshard group)
  kPlacement,         // TSP / low-rank placement rules
  kBatch,             // global batch a multiple of micro-batch x dp (and the micro-batch limit)
  kContextParallel,   // cp's rules
  kTpNodes,           // tp and the node size
  kUnevenGroups,      // data-parallel groups uneven on nodes
  kRails,             // rails-only fabric rules
  kHidden,            // tp must divide hidden and ffn_hidden
  kSequenceParallel,  // SP needs tp > 1
  kExperts,           // the experts' layout rules (dispatchers.cpp), or ep > 1 without experts
  kPrecision,         // no peak for the precision
  kStaleness,         // above search.max_staleness
  kDuplicate,         // the same run as another candidate (pp = 1 and another schedule)
  kScheduleMemory,    // zb-1p / zb-2p: one forward over the search's memory limit (screen)
  kMemory,            // peak memory over HBM x (1 - headroom)
  kSimulatedMemory,   // the simulation's peak over the limit (the screen's floor was under it)
  kValidate,          // check_scenario found a problem the fast rules do not restate
  kTrainer,           // the trainer of plan --for cannot run it (trainer_filter.hpp)
  kCount
};
// "tp must divide heads", ... (for the rejects table).
const char* reason_text(Reason r);

// What check_reason needs to know of the space: the duplicates it drops are dropped in favour of
// a candidate the space also holds.
struct SpaceFacts {
  strat::PipelineSchedule first_schedule = strat::PipelineSchedule::kOneFOneB;  // kept at pp 1
  int max_staleness = -1;                              // search.max_staleness (-1: not stated)
  bool none_searched = true;                           // recompute "none" is on the axis
  bool one_f_one_b_searched = true;                    // 1f1b is on the axis
  bool etp_tp_searched = true;                         // etp 0 ("as tp") is on the axis
  strat::CpComm first_cp_comm = strat::CpComm::kRing;  // kept at cp 1
};
SpaceFacts space_facts(const SearchSpace& space);

// First rule the candidate breaks, kOk when none (memory is the screen's, not checked here).
Reason check_reason(const strat::Scenario& base, const Candidate& c, const SpaceFacts& facts);

// Staleness a schedule accepts in closed form: the most optimizer updates a micro-batch's
// backward may see after its forward (pipedream P-1, pipedream-2bw 1, paci ceil((P-1)/m)); 0
// for flush schedules. The simulate tier reports the measured figure.
int closed_form_staleness(strat::PipelineSchedule s, int pp, int micro_batches);

}  // namespace parasim::plan
