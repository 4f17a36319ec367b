// Launchers when an NVLink domain spans hosts (GB200 NVL72: 72 GPUs per node, 4 per host): the
// exports start gpus_per_host processes on each host.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "export_test_support.hpp"

using namespace parasim::test;
using parasim::exporter::Target;

TEST_CASE("an NVL72 rack launches 4 processes on each of its 18 hosts") {
  const nlohmann::json s = {
      {"model", "llama3-8b"},
      {"cluster", {{"preset", "gb200-nvl72"}, {"nodes", 2}}},
      {"training", {{"global_batch", 144}, {"micro_batch", 1}, {"attention", "flash"}}},
      {"parallel", {{"dp", 18}, {"tp", 8}, {"sequence_parallel", true}}}};
  const auto in = parasim::exporter::parse_export_input(s.dump(), "nvl72.json");
  const Outcome o = run_export(in, {Target::kMegatron, "", "megatron"}, false);
  REQUIRE_MESSAGE(o.result, o.refusal);
  bool launcher = false;
  for (const auto& note : o.result->notes) {
    launcher = launcher || note.find("144 GPUs (36 hosts x 4 GPUs; NVLink domains of 72): "
                                     "torchrun --nnodes 36 --nproc-per-node 4") !=
                               std::string::npos;
  }
  CHECK(launcher);
}
