// parasim_planner_bench: the planner's two tiers on the reference searches, figures
// printed (never a pass/fail on speed; benchmarks/README.md):
//  (a) GPT-3 175B on 1,024 A100s (scenarios/gpt3-175b-1024gpu.json) over the default space;
//  (b) Megatron-Turing NLG 530B (105 layers, hidden 20480, 128 heads, seq 2048, batch 2520) on
//      up to 4,096 A100s over a Calculon-sized space: every GPU count that is a whole number of
//      8-GPU nodes, tp 1-8, pp dividing the layers, micro-batch 1-16, interleaving, recompute,
//      SP and ZeRO.
// Usage: parasim_planner_bench [--threads N] [a|b]
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "costmodel/profile.hpp"
#include "planner/cost_models.hpp"
#include "planner/planner.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace {

using namespace parasim;
using nlohmann::json;

// `nodes` > 0: the cluster's node count, set after parsing (the document's own layout is valid
// on one node; on `nodes` it is not, so the plan has no "yours" row).
void run(const char* label, const json& doc, int threads, int nodes = 0) {
  strat::Scenario base = strat::parse_scenario(doc.dump(), label);
  if (nodes > 0) base.cluster.nodes = nodes;
  plan::SearchOptions so;
  so.max_candidates = 1e9;  // (b)'s index space is over the CLI's default limit
  const json* search = doc.contains("search") ? &doc["search"] : nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  const plan::SearchSpace space = plan::make_search_space(base, search, so, label);
  const plan::SpaceCostModels space_costs = plan::make_space_cost_models(base, space, nullptr);
  const plan::CostModels& costs = space_costs.view;
  plan::PlanOptions o;
  o.threads = threads;
  const plan::PlanResult r = plan::run_plan(base, space, costs, o);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int ran = 0;
  for (const auto& s : r.simulated) ran += s.ran ? 1 : 0;
  fmt::print("{}\n", label);
  fmt::print("  space {} candidates ({} layouts), {} valid and under the memory floor\n",
             r.space_size, space.layouts.size(), r.feasible);
  fmt::print("  screen   {:8.3f} s  {:.3g} candidates/s ({} threads, {:.3g} per thread)\n",
             r.screen_seconds, r.space_size / r.screen_seconds, threads,
             r.space_size / r.screen_seconds / threads);
  fmt::print("  simulate {:8.3f} s  {} candidates ({} fit)\n", r.simulate_seconds, ran, r.ranked);
  fmt::print("  whole plan {:.3f} s wall\n", wall);
  fmt::print("  screen error over the simulated set: mean |e| {:.1f} %, max {:.1f} %, Spearman "
             "{:.3f}\n",
             100 * r.mean_abs_error, 100 * r.max_abs_error, r.spearman);
  if (r.ranked > 0) {
    const auto& w = r.simulated.front();
    fmt::print("  winner {}: {:.3f} s per step, MFU {:.1f} %\n", plan::describe(w.screened.candidate),
               w.report.step_time_s, 100 * w.report.mfu);
  }
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str());
}

}  // namespace

constexpr const char* kUsage =
    "usage: parasim_planner_bench [--threads N] [a|b|ab]\n"
    "  the planner's screen and simulate tiers on the reference searches, figures printed:\n"
    "  a   GPT-3 175B on 1,024 A100s (scenarios/gpt3-175b-1024gpu.json), the default space\n"
    "  b   MT-NLG 530B on up to 4,096 A100s, a Calculon-sized space\n"
    "  --threads N   screen threads (default: every core)\n";

int main(int argc, char** argv) {
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string which = "ab";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--threads" && i + 1 < argc) {
      char* end = nullptr;
      const long n = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || n < 1 || n > 1024) {
        std::fprintf(stderr, "parasim_planner_bench: --threads takes 1 to 1024, got \"%s\"\n%s",
                     argv[i], kUsage);
        return 2;
      }
      threads = static_cast<int>(n);
    } else if (arg == "a" || arg == "b" || arg == "ab") {
      which = arg;
    } else {
      std::fprintf(stderr, "parasim_planner_bench: unknown argument \"%s\"\n%s", argv[i], kUsage);
      return 2;
    }
  }
  if (which.find('a') != std::string::npos) {
    run("(a) GPT-3 175B, 1024 A100, default space",
        read_json(std::string(PARASIM_SOURCE_DIR) + "/scenarios/gpt3-175b-1024gpu.json"), threads);
  }
  if (which.find('b') != std::string::npos) {
    json gpus = json::array();
    for (int g = 8; g <= 4096; g += 8) gpus.push_back(g);
    const json doc = {
        {"name", "mt-nlg-530b"},
        {"model", {{"name", "mt-nlg-530b"}, {"layers", 105}, {"hidden", 20480}, {"heads", 128},
                   {"vocab", 51200}, {"seq_len", 2048}}},
        // 512 nodes (4,096 GPUs) are set after parsing: no layout of batch 2520 with pp dividing
        // 105 layers uses exactly 4,096 GPUs (dp would have to be 512), so the document's own
        // layout is one node's and the search's GPU counts go up to 4,096.
        {"cluster", {{"preset", "dgx-a100-80gb"}, {"nodes", 1}}},
        {"training", {{"global_batch", 2520}, {"micro_batch", 1}}},
        {"parallel", {{"dp", 1}, {"tp", 8}, {"pp", 1}}},
        {"optimizer", {{"name", "adamw"}}},
        {"search", {{"gpus", gpus}, {"tp", {1, 2, 4, 8}}, {"cp", {1}},
                    {"micro_batch", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 15, 18, 20}},
                    {"schedule", {"1f1b", "interleaved-1f1b"}}, {"attention", {"unfused"}}}}};
    run("(b) MT-NLG 530B, up to 4096 A100, Calculon-sized space", doc, threads, 512);
  }
  return 0;
}
