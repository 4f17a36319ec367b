#pragma once
// parasim::strat registry lists per kind — each file strategies/registry/KIND.cpp defines the
// entries of one kind (schedules: one file each, schedule_list.hpp). Internal to the registry.

#include <vector>

#include "strategies/registry/entry.hpp"

namespace parasim::strat {

std::vector<Entry> placement_entries();         // placements.cpp
std::vector<Entry> context_parallel_entries();  // context_parallel.cpp
std::vector<Entry> sharding_entries();          // sharding.cpp
std::vector<Entry> optimizer_entries();         // optimizers.cpp
std::vector<Entry> attention_entries();         // layer_choices.cpp
std::vector<Entry> recompute_entries();         // layer_choices.cpp
std::vector<Entry> framework_entries();         // frameworks.cpp
std::vector<Entry> dispatcher_entries();        // dispatchers.cpp
std::vector<Entry> precision_entries();         // precisions.cpp
std::vector<Entry> offload_entries();           // offload.cpp
std::vector<Entry> tp_comm_overlap_entries();   // tp_overlap.cpp
std::vector<Entry> allocator_entries();         // allocators.cpp

}  // namespace parasim::strat
