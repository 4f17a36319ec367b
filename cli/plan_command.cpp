#include "cli/plan_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>

#include "cli/commands.hpp"
#include "cli/input_file.hpp"
#include "cli/output_file.hpp"
#include "cli/plan_format.hpp"
#include "cli/profile_notes.hpp"
#include "costmodel/profile.hpp"
#include "planner/planner.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace parasim::cli {

int run_plan_command(const PlanCommandOptions& o, std::ostream& out, std::ostream& err) {
  try {
    if (o.top < 1 || o.max_simulate < 1) {
      throw CommandLineError("--top and --max-simulate take a whole number of 1 or more");
    }
    if (!(o.headroom >= 0 && o.headroom < 1)) {
      throw CommandLineError("--headroom takes a fraction of HBM from 0 to below 1, e.g. 0.05");
    }
    OutputFile json_file(o.json), plan_file(o.out);
    if (json_file.is_stdout() && plan_file.is_stdout()) {
      throw OutputError("--json and --out would both write to standard output", kExitBadInput);
    }
    json_file.check_target();
    plan_file.check_target();
    check_input_file(o.scenario);
    if (!o.profile.empty()) check_input_file(o.profile);
    const strat::Scenario base = strat::load_scenario(o.scenario);
    cost::Diagnostics read(o.scenario);
    const auto file_text =
        cost::read_input_file(o.scenario, cost::kMaxInputFileBytes, "scenario", read);
    if (!file_text) throw cost::InputError(std::move(read));
    const nlohmann::json document = nlohmann::json::parse(*file_text);
    plan::SearchOptions so;
    so.allow_async = o.allow_async;
    so.gpus = o.gpus;
    so.max_candidates = o.max_candidates;
    so.flags = o.search;
    const nlohmann::json* search = document.contains("search") ? &document["search"] : nullptr;
    const plan::SearchSpace space = plan::make_search_space(base, search, so, o.scenario);

    cost::Profile profile;
    if (!o.profile.empty()) profile = cost::load_profile(o.profile);
    for (const auto& w : profile_warnings(profile, o.profile)) err << "warning: " << w << "\n";
    std::set<int> gpu_counts;
    for (const auto& l : space.layouts) gpu_counts.insert(l.gpus);
    gpu_counts.insert(base.cluster.total_gpus());
    std::vector<std::unique_ptr<cost::CostModel>> owned;
    plan::CostModels costs;
    for (int g : gpu_counts) {
      cost::ClusterSpec cluster = base.cluster;
      cluster.nodes = g >= cluster.gpus_per_node ? g / cluster.gpus_per_node : 1;
      owned.push_back(std::make_unique<cost::CostModel>(
          cost::make_cost_model(cluster, o.profile.empty() ? nullptr : &profile)));
      costs.by_gpus[g] = owned.back().get();
    }

    plan::PlanOptions po;
    po.top = o.top;
    po.max_simulate = o.max_simulate;
    po.headroom = o.headroom;
    po.threads = o.threads > 0 ? o.threads
                               : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    po.keep_all = !o.json.empty();
    po.keep = o.keep;
    const bool terminal = o.progress && isatty(STDERR_FILENO) == 1;
    const auto start = std::chrono::steady_clock::now();
    if (terminal) {
      po.progress = [&err, start](const char* tier, std::uint64_t done, std::uint64_t total) {
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double eta = done > 0 ? elapsed * (static_cast<double>(total) / done - 1) : 0;
        err << fmt::format("\r  {} {} of {} (ETA {:.0f} s)   ", tier, done, total, eta)
            << std::flush;
      };
    }
    const plan::PlanResult r = plan::run_plan(base, space, costs, po);
    if (terminal) err << "\r" << std::string(60, ' ') << "\r" << std::flush;

    const std::string text_out = format_plan_text(base, r, o.timings);
    if (!o.json.empty()) json_file.stage(candidates_json(base, r).dump(2) + "\n");
    if (r.ranked == 0) {
      out << text_out;
      err << o.scenario << ": no feasible plan (see the rejects above); nothing written\n";
      return kExitFailure;
    }
    if (!o.out.empty()) {
      PlanProvenance p{PARASIM_VERSION, o.profile, costs.at(base.cluster.total_gpus()).device().name,
                       o.command_line};
      plan_file.stage(plan_file_json(document, base, r, p).dump(2) + "\n");
    }
    commit_outputs({&json_file, &plan_file}, out);
    std::ostream& text = json_file.is_stdout() || plan_file.is_stdout() ? err : out;
    text << text_out;
    return kExitOk;
  } catch (const OutputError& e) {
    err << e.what() << "\n";
    return e.exit_code();
  } catch (const CommandLineError& e) {
    err << "parasim plan: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const cost::InputError& e) {
    err << e.what();
    return kExitBadInput;
  } catch (const std::exception& e) {
    err << o.scenario << ": " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace parasim::cli
