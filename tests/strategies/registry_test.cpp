#include <doctest/doctest.h>

#include <algorithm>

#include "costmodel/activation_memory.hpp"
#include "strategies/registry.hpp"
#include "strategies/input/scenario.hpp"

using namespace parasim;

namespace {
bool listed(const std::string& group, const std::string& name) {
  const auto& r = strat::registry();
  return std::any_of(r.begin(), r.end(),
                     [&](const auto& e) { return e.group == group && e.name == name; });
}
}  // namespace

TEST_CASE("Every schedule, recompute mode and optimizer the scenario accepts is listed") {
  for (auto s : strat::kAllSchedules) {
    CAPTURE(strat::schedule_name(s));
    CHECK(listed("schedule", strat::schedule_name(s)));
  }
  for (auto r : {cost::Recompute::kNone, cost::Recompute::kSelective, cost::Recompute::kFull}) {
    CHECK(listed("recompute", cost::recompute_name(r)));
  }
  CHECK(listed("optimizer", "adamw"));
  // Every tensor-parallel placement: megatron is the "tp" entry, the others their own.
  for (auto p : {strat::TpPlacement::kVanilla, strat::TpPlacement::kBtp, strat::TpPlacement::kTsp}) {
    const std::string name = strat::tp_placement_name(p);
    CAPTURE(name);
    CHECK(listed("parallel", "tp_placement: " + name));
  }
  CHECK(listed("parallel", "tp"));
  // Both attention cores ("training".attention).
  CHECK(listed("attention", "unfused"));
  CHECK(listed("attention", "flash"));
  for (const auto& e : strat::registry()) {
    CAPTURE(e.name);
    CHECK_FALSE(e.description.empty());
    CHECK(e.paper.find("20") != std::string::npos);  // a citation with its year
  }
}
