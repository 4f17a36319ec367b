#pragma once
// parasim::strat registry — every strategy parasim can model, in one explicit list that the code
// runs from: the scenario parser takes its choices and ranges from it and runs its entries'
// rules, `parasim list strategies` prints it, `parasim compare` and the planner enumerate it,
// and tests/strategies/registry_schema_test.cpp generates the JSON Schema's choice lists from it.
//
// Adding a schedule (docs/ARCHITECTURE.md, "How to add a schedule"): a value in PipelineSchedule
// (scenario.hpp), one file strategies/schedules/schedule_NAME.cpp defining its Entry (traits with
// the stage order builder, parameters, rules), and its line in registry.cpp's list.
//
// Built once on first use behind a function-local static (no static-initialisation order);
// read-only afterwards, so safe from several threads.

#include <string>
#include <string_view>
#include <vector>

#include "strategies/registry/entry.hpp"

namespace parasim::strat {

// What a kind is called and where a scenario chooses it.
struct KindInfo {
  EntryKind kind;
  std::string title;        // "schedule"
  std::string scenario_key; // "/parallel/schedule"
  std::string about;        // one line on what the kind is
  // Parameters every entry of the kind takes (the pipeline's pp and stage sizes for schedules).
  std::vector<ParameterSpec> shared_parameters;
};

// Every entry, grouped by kind in kAllEntryKinds order, in the order the schema lists them.
const std::vector<Entry>& registry_entries();
const KindInfo& kind_info(EntryKind kind);

// The entries of one kind, in registry order.
std::vector<const Entry*> entries_of(EntryKind kind);
// The entry of `kind` called `name`, or nullptr.
const Entry* find_entry(EntryKind kind, std::string_view name);
// The entry of `kind` whose scenario value is `value` (the first, for DASH's two stackings).
const Entry* find_entry_by_value(EntryKind kind, std::string_view value);
// The scenario values of a kind, each once, in registry order: a parser's legal choices.
std::vector<std::string> scenario_values(EntryKind kind);
// The entry names of a kind, in registry order.
std::vector<std::string> entry_names(EntryKind kind);

// The entry `scenario` chooses of `kind`; nullptr where it chooses none (cp = 1, a framework
// written out field by field, DASH without stacking).
const Entry* chosen_entry(EntryKind kind, const Scenario& scenario);

// The schedule entry of `s` (every PipelineSchedule has one; tested).
const Entry& schedule_entry(PipelineSchedule s);
const ScheduleTraits& schedule_traits(PipelineSchedule s);
const PlacementTraits& placement_traits(TpPlacement p);

// The parameter of any entry or kind at scenario path `path` ("/parallel/chunks"); throws
// std::logic_error when none (a programming error: the parser asks only for registered paths).
const ParameterSpec& registered_parameter(std::string_view path);

// The FP8 options of `from` carried to `recipe` (compare --precisions, the planner's precision
// axis): the bf16 first/last layers unless the recipe refuses them (delayed), the format within
// Transformer Engine's recipes (torchao's are fixed), param_gather within the library that
// gathers (torchao: tensorwise only); `from` itself when the recipe is its own.
Fp8Spec fp8_with_recipe(const Fp8Spec& from, cost::QuantRecipe recipe);

// Every entry's rules for `scenario`: for each kind, the chosen entry's rules, then, once per
// path, the when_not_taken rule of each parameter of the kind that the chosen entry does not take.
void check_entry_rules(const Scenario& scenario, cost::Diagnostics& d);

}  // namespace parasim::strat
