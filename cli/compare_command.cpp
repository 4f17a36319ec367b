#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string_view>
#include <filesystem>
#include <memory>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/input_file.hpp"
#include "cli/output_file.hpp"
#include "cli/profile_notes.hpp"
#include "cli/report_format.hpp"
#include "cli/svg_plots.hpp"
#include "cli/svg_sweep.hpp"
#include "costmodel/profile.hpp"
#include "sim/engine.hpp"
#include "strategies/scenario_parser.hpp"
#include "strategies/step_report.hpp"
#include "strategies/workload_builder.hpp"

namespace parasim::cli {
namespace {

struct Row {
  std::string label;  // the schedule or placement this row varies
  strat::Scenario scenario;
  strat::BuiltWorkload built;
  sim::SimResult result;
  strat::StepReport report;
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// A whole number written with decimal digits only, 1..limit; 0 for anything else (signs,
// spaces, leading zeros, overflow).
int layout_degree(std::string_view text, int limit) {
  int value = 0;
  if (text.empty() || text.front() == '0' ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return 0;
  }
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1 || value > limit) {
    return 0;
  }
  return value;
}

BoxKind box_kind(strat::ItemKind k) {
  switch (k) {
    case strat::ItemKind::kForward: return BoxKind::kForward;
    case strat::ItemKind::kBackward: return BoxKind::kBackward;
    case strat::ItemKind::kWeightGrad: return BoxKind::kWeightGrad;
    case strat::ItemKind::kOptimizer: return BoxKind::kOptimizer;
  }
  return BoxKind::kOther;
}

// One lane per stage (its first simulated device): every pipeline item as a box.
std::string timeline_svg(const Row& row) {
  const auto& built = row.built;
  std::vector<TimelineLane> lanes(static_cast<std::size_t>(built.shape.stages));
  for (std::size_t s = 0; s < lanes.size(); ++s) lanes[s].name = fmt::format("stage {}", s);
  for (const auto& span : built.spans) {
    if (built.devices[span.device].dp_rank != 0 || built.devices[span.device].tp_rank != 0) continue;
    const char* letter = span.kind == strat::ItemKind::kForward    ? "F"
                         : span.kind == strat::ItemKind::kBackward ? "B"
                         : span.kind == strat::ItemKind::kWeightGrad ? "W"
                                                                     : "opt";
    std::string label = span.kind == strat::ItemKind::kOptimizer
                            ? fmt::format("opt {}", span.step)
                            : fmt::format("{}{}", letter, span.micro_batch);
    if (built.shape.chunks > 1 && span.kind != strat::ItemKind::kOptimizer) {
      label += fmt::format(".{}", span.chunk);
    }
    lanes[static_cast<std::size_t>(built.devices[span.device].stage)].boxes.push_back(
        TimelineBox{row.result.op_start[span.first].to_seconds(),
                    row.result.op_end[span.last].to_seconds(), box_kind(span.kind), label});
  }
  return svg_timeline(fmt::format("{}: {} ({} steps simulated)", row.report.scenario,
                                  row.report.schedule, row.report.steps_simulated),
                      lanes, row.result.makespan.to_seconds());
}

std::string memory_svg(const Row& row) {
  std::vector<MemorySeries> series;
  std::vector<int> series_of_device(row.built.devices.size(), -1);
  for (std::size_t d = 0; d < row.built.devices.size(); ++d) {
    const auto& dev = row.built.devices[d];
    if (dev.dp_rank != 0 || dev.tp_rank != 0) continue;
    series_of_device[d] = static_cast<int>(series.size());
    series.push_back(MemorySeries{fmt::format("stage {}", dev.stage), {}});
  }
  for (const auto& sample : row.result.memory_timeline) {
    const int s = series_of_device[sample.device];
    if (s >= 0) {
      series[static_cast<std::size_t>(s)].points.emplace_back(
          sample.time.to_seconds(), static_cast<double>(sample.total_bytes));
    }
  }
  return svg_memory(fmt::format("{}: {} memory per stage (ledger; stashed weight versions not "
                                "drawn)",
                                row.report.scenario, row.report.schedule),
                    series, row.result.makespan.to_seconds(),
                    row.scenario.cluster.device.hbm_capacity.value);
}

double max_of(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, x);
  return m;
}

std::string table(const std::vector<Row>& rows) {
  std::string o;
  const double base = rows.front().report.tokens_per_s;
  std::size_t w = 17;  // the variant column fits the longest label
  for (const auto& row : rows) w = std::max(w, row.label.size());
  o += fmt::format("{:<{}} {:>13} {:>8} {:>9} {:>9} {:>15} {:>9} {:>9}\n", "variant", w,
                   "tokens/s", "speedup", "bubble", "bubble", "peak memory", "max", "weight");
  o += fmt::format("{:<{}} {:>13} {:>8} {:>9} {:>9} {:>15} {:>9} {:>9}\n", "", w, "", "", "mean",
                   "max", "max stage", "stale", "versions");
  std::vector<std::string> too_big;
  for (const auto& row : rows) {
    const auto& r = row.report;
    double mean_bubble = 0;
    for (double b : r.bubble_fraction) mean_bubble += b / static_cast<double>(r.bubble_fraction.size());
    double peak = 0;
    for (const auto& m : r.memory) peak = std::max(peak, m.peak_bytes);
    int stale = 0, versions = 1;
    for (const auto& s : r.staleness) stale = std::max(stale, s.max);
    for (int v : r.weight_versions) versions = std::max(versions, v);
    const bool fits = peak <= r.hbm_capacity_bytes;
    if (!fits) too_big.push_back(row.label);
    o += fmt::format("{:<{}} {:>13.4g} {:>7.3f}x {:>8.1f}% {:>8.1f}% {:>10.2f} GiB{} {:>9} {:>9}\n",
                     row.label, w, r.tokens_per_s, r.tokens_per_s / base, 100 * mean_bubble,
                     100 * max_of(r.bubble_fraction), peak / (1024.0 * 1024 * 1024),
                     fits ? " " : "*", stale, versions);
  }
  if (!too_big.empty()) {
    o += fmt::format("* does not fit: the peak exceeds the device's {:.1f} GiB of HBM ({} of {} "
                     "variants; its tokens/s are as if it fitted)\n",
                     rows.front().report.hbm_capacity_bytes / (1024.0 * 1024 * 1024),
                     too_big.size(), rows.size());
  }
  o += "\nPeak memory per stage (GiB; stashed weight versions included)\n";
  o += fmt::format("{:<{}}", "variant", w);
  for (std::size_t s = 0; s < rows.front().report.bubble_fraction.size(); ++s) {
    o += fmt::format(" {:>7}", fmt::format("s{}", s));
  }
  o += "\n";
  for (const auto& row : rows) {
    o += fmt::format("{:<{}}", row.label, w);
    std::vector<double> per_stage(row.report.bubble_fraction.size(), 0.0);
    for (const auto& m : row.report.memory) {
      auto& slot = per_stage[static_cast<std::size_t>(m.stage)];
      slot = std::max(slot, m.peak_bytes);
    }
    for (double b : per_stage) o += fmt::format(" {:>7.2f}", b / (1024.0 * 1024 * 1024));
    o += "\n";
  }
  if (rows.front().report.optimizer_breakdown_s.size() > 1 ||
      rows.back().report.optimizer_breakdown_s.size() > 1) {
    o += "\nOptimizer step per GPU (ms), by part, and its host loop per step (stage 0, busiest rank)\n";
    for (const auto& row : rows) {
      double total = 0;
      std::string parts;
      for (const auto& [name, s] : row.report.optimizer_breakdown_s) {
        total += s;
        parts += fmt::format("{}{} {:.1f}", parts.empty() ? "" : ", ", name, s * 1e3);
      }
      if (row.report.optimizer_host_ops > 0) {
        parts += fmt::format("; host {} ops, {} syncs", row.report.optimizer_host_ops,
                             row.report.optimizer_host_syncs);
      }
      o += fmt::format("{:<{}} {:>9.1f}   [{}]\n", row.label, w, total * 1e3, parts);
    }
  }
  const bool dp_varies = std::any_of(rows.begin(), rows.end(), [&](const Row& row) {
    return row.scenario.parallel.dp != rows.front().scenario.parallel.dp;
  });
  if (dp_varies) {  // layouts of different group sizes on the same GPUs
    o += "\nGPUs per model replica (tp x cp x pp) and data-parallel replicas\n";
    for (const auto& row : rows) {
      const auto& p = row.scenario.parallel;
      o += fmt::format("{:<{}} {:>5} x {:>5}\n", row.label, w, p.tp * p.cp * p.pp, p.dp);
    }
  }
  for (const auto& row : rows) {
    if (row.report.asynchronous) {
      o += fmt::format("\n{}: {} global batches simulated, {} warm-up excluded\n",
                       row.report.schedule, row.report.steps_simulated, row.report.warmup_steps);
    }
  }
  return o;
}

}  // namespace

int run_compare(const CompareOptions& o, std::ostream& out, std::ostream& err) {
  try {
    check_input_file(o.scenario);
    if (!o.profile.empty()) check_input_file(o.profile);
    const strat::Scenario base = strat::load_scenario(o.scenario);
    cost::Profile profile;
    if (!o.profile.empty()) profile = cost::load_profile(o.profile);
    for (const auto& w : profile_warnings(profile, o.profile)) err << "warning: " << w << "\n";
    const cost::CostModel costs =
        cost::make_cost_model(base.cluster, o.profile.empty() ? nullptr : &profile);
    const bool by_placement = !o.placements.empty();
    const auto names = split_list(by_placement ? o.placements : o.schedules);
    cost::Diagnostics problems(o.scenario);
    std::vector<strat::Scenario> variants;
    std::vector<std::string> labels;
    // Optimizer variants: NAME/SOLVER/PRECISION[/BLOCK[/SCALING]], NAME one of adamw, shampoo,
    // dash-layer, dash-gpu.
    for (const auto& spec : split_list(o.optimizers)) {
      std::vector<std::string> f;
      std::stringstream in(spec);
      for (std::string part; std::getline(in, part, '/');) f.push_back(part);
      strat::Scenario s = base;
      auto& opt = s.optimizer;
      const std::string& name = f.empty() ? spec : f[0];
      bool ok = true;
      if (name == "adamw") {
        opt.kind = strat::OptimizerKind::kAdamW;
      } else if (name == "shampoo" || name == "dash-layer" || name == "dash-gpu") {
        opt.kind = name == "shampoo" ? strat::OptimizerKind::kShampoo : strat::OptimizerKind::kDash;
        opt.stacking = name == "shampoo"      ? strat::Stacking::kNone
                       : name == "dash-layer" ? strat::Stacking::kLayer
                                              : strat::Stacking::kGpu;
        if (f.size() > 1) {
          if (f[1] == "evd") opt.solver = strat::RootSolver::kEvd;
          else if (f[1] == "coupled-newton") opt.solver = strat::RootSolver::kCoupledNewton;
          else if (f[1] == "newton-db") opt.solver = strat::RootSolver::kNewtonDb;
          else if (f[1] == "chebyshev") opt.solver = strat::RootSolver::kChebyshev;
          else ok = false;
        }
        if (f.size() > 2) {
          if (f[2] == "fp32") opt.precision = cost::Dtype::kFp32;
          else if (f[2] == "fp16") opt.precision = cost::Dtype::kFp16;
          else if (f[2] == "bf16") opt.precision = cost::Dtype::kBf16;
          else ok = false;
        }
        if (f.size() > 3) opt.block_size = std::atoi(f[3].c_str());
        if (f.size() > 4) {
          if (f[4] == "frobenius") opt.scaling = strat::RootScaling::kFrobenius;
          else if (f[4] == "power-iteration") opt.scaling = strat::RootScaling::kPowerIteration;
          else ok = false;
        }
        if (opt.block_size < 16 || f.size() > 5) ok = false;
      } else {
        ok = false;
      }
      if (!ok) {
        problems.add("/optimizer", fmt::format("--optimizers: \"{}\" is not NAME/SOLVER/PRECISION"
                                               "[/BLOCK[/SCALING]] (NAME adamw, shampoo, "
                                               "dash-layer, dash-gpu; SOLVER evd, coupled-newton, "
                                               "newton-db, chebyshev; PRECISION fp32, fp16, bf16)",
                                               spec));
        continue;
      }
      cost::Diagnostics d(o.scenario);
      strat::check_scenario(s, d);
      for (const auto& p : d.problems()) {
        problems.add(p.json_path, fmt::format("with optimizer {}: {}", spec, p.message));
      }
      labels.push_back(spec);
      variants.push_back(std::move(s));
    }
    // Layouts of one group of G = tp x cp GPUs: tsp (folded), tp (Megatron), cp (context
    // parallel), tspN (TSP on D = N GPUs), tpNxspM (N-way TP with SP inside, M-way sequence
    // sharding). A tspN or tpNxspM group of another size keeps the cluster: data parallelism
    // becomes dp x G / (N x M) (TSP's "matched" TP+SP: 8-way TP and 2-way SP on 16 GPUs against
    // TSP on 8, with half the replicas; the paper's D in {2, 4, 8}).
    if (!o.layouts.empty()) {
      const int g = base.parallel.tp * base.parallel.cp;
      const int gpus = g * base.parallel.dp;
      std::vector<std::pair<std::string, strat::Scenario>> layouts;
      for (const auto& name : split_list(o.layouts)) {
        strat::Scenario s = base;
        s.parallel.sequence_parallel = false;
        s.parallel.tp_placement = strat::TpPlacement::kMegatron;
        const std::string_view text(name);
        const std::size_t x = text.find("xsp");
        const int tsp_d = text.starts_with("tsp") ? layout_degree(text.substr(3), gpus) : 0;
        const int mesh_t = text.starts_with("tp") && x != std::string_view::npos
                               ? layout_degree(text.substr(2, x - 2), gpus)
                               : 0;
        const int mesh_m = mesh_t > 0 ? layout_degree(text.substr(x + 3), gpus) : 0;
        if (name == "tsp") {
          s.parallel.tp = g, s.parallel.cp = 1;
          s.parallel.tp_placement = strat::TpPlacement::kTsp;
        } else if (name == "tp") {
          s.parallel.tp = g, s.parallel.cp = 1;
        } else if (name == "cp") {
          s.parallel.tp = 1, s.parallel.cp = g;
        } else if (tsp_d > 0 && gpus % tsp_d == 0) {
          s.parallel.tp = tsp_d, s.parallel.cp = 1;  // TSP on D = N GPUs, the rest data parallel
          s.parallel.dp = gpus / tsp_d;
          s.parallel.tp_placement = strat::TpPlacement::kTsp;
        } else if (mesh_t > 0 && mesh_m > 0 &&
                   gpus % (static_cast<long long>(mesh_t) * mesh_m) == 0) {
          s.parallel.tp = mesh_t, s.parallel.cp = mesh_m;
          s.parallel.dp = gpus / (mesh_t * mesh_m);
          s.parallel.sequence_parallel = mesh_t > 1;
        } else {
          problems.add("/parallel",
                       fmt::format("--layouts: \"{}\" is not tsp, tp, cp, tspN or tpNxspM "
                                   "with N (x M) dividing the {} GPUs of each pipeline stage (dp "
                                   "{} x tp {} x cp {})",
                                   name, gpus, base.parallel.dp, base.parallel.tp,
                                   base.parallel.cp));
          continue;
        }
        // The scenario's head bucketing goes with the TSP layouts only.
        if (s.parallel.tp_placement != strat::TpPlacement::kTsp) s.parallel.tsp_kv_buckets = 1;
        layouts.emplace_back(name, std::move(s));
      }
      for (const auto& length : split_list(o.seq_lens.empty() ? std::to_string(base.model.seq_len)
                                                              : o.seq_lens)) {
        for (const auto& [name, layout] : layouts) {
          strat::Scenario s = layout;
          s.model.seq_len = std::atoi(length.c_str());
          cost::Diagnostics d(o.scenario);
          strat::check_scenario(s, d);
          for (const auto& p : d.problems()) {
            problems.add(p.json_path, fmt::format("with layout {} at {} tokens: {}", name,
                                                  s.model.seq_len, p.message));
          }
          labels.push_back(o.seq_lens.empty() ? name
                                              : fmt::format("{}@{}K", name, s.model.seq_len / 1024));
          variants.push_back(std::move(s));
        }
      }
    }
    for (const auto& name : by_placement ? names : std::vector<std::string>{}) {
      // Placements: megatron runs the dense model; vanilla and btp the low-rank one (the
      // scenario's low_rank, or r = hidden/4 when it has none, BOOST's setting).
      strat::Scenario s = base;
      s.parallel.tsp_kv_buckets = 1;  // the placements compared are not TSP
      if (name == "megatron") {
        s.parallel.tp_placement = strat::TpPlacement::kMegatron;
        s.model.low_rank = {};
        s.parallel.lowrank_checkpointing = false;
      } else if (name == "vanilla" || name == "btp") {
        s.parallel.tp_placement =
            name == "btp" ? strat::TpPlacement::kBtp : strat::TpPlacement::kVanilla;
        if (!s.model.low_rank.enabled()) {
          s.model.low_rank.attn_rank = s.model.low_rank.mlp_rank = s.model.hidden / 4;
        }
        if (name == "vanilla") s.parallel.lowrank_checkpointing = false;
      } else {
        problems.add("/parallel/tp_placement",
                     fmt::format("--placements: unknown placement \"{}\" (known: megatron, "
                                 "vanilla, btp)",
                                 name));
        continue;
      }
      cost::Diagnostics d(o.scenario);
      strat::check_scenario(s, d);
      for (const auto& p : d.problems()) {
        problems.add(p.json_path, fmt::format("with placement {}: {}", name, p.message));
      }
      variants.push_back(std::move(s));
      labels.push_back(name);
    }
    for (const auto& name : by_placement || !o.layouts.empty() || !o.optimizers.empty()
                                ? std::vector<std::string>{}
                                : names) {
      strat::Scenario s = base;
      if (!strat::schedule_from_name(name, &s.parallel.schedule)) {
        std::string known;
        for (auto k : strat::kAllSchedules) known += (known.empty() ? "" : ", ") + std::string(strat::schedule_name(k));
        problems.add("/parallel/schedule", fmt::format("--schedules: unknown schedule \"{}\" (known: {})", name, known));
        continue;
      }
      if (s.parallel.schedule == strat::PipelineSchedule::kInterleaved && s.parallel.chunks == 1) {
        s.parallel.chunks = o.chunks;
      } else if (s.parallel.schedule != strat::PipelineSchedule::kInterleaved) {
        s.parallel.chunks = 1;
      }
      if (s.parallel.schedule != strat::PipelineSchedule::kPaci) s.parallel.paci_mode = strat::PaciMode::kPerf;
      labels.push_back(name);
      cost::Diagnostics d(o.scenario);
      strat::check_scenario(s, d);
      for (const auto& p : d.problems()) {
        problems.add(p.json_path, fmt::format("with schedule {}: {}", name, p.message));
      }
      variants.push_back(std::move(s));
    }
    if (names.empty() && o.layouts.empty() && o.optimizers.empty()) {
      problems.add("/parallel/schedule", "--schedules or --placements names nothing");
    }
    if (!problems.ok()) throw cost::InputError(std::move(problems));

    std::vector<Row> rows;
    for (std::size_t i = 0; i < variants.size(); ++i) {
      auto& s = variants[i];
      Row row;
      row.label = labels[i];
      row.scenario = s;
      row.built = strat::build_workload(s, costs, {});
      sim::EngineOptions options;
      options.record_memory_timeline = !o.svg_dir.empty();
      row.result = sim::Engine(row.built.workload, options).run();
      row.report = strat::make_step_report(s, row.built, row.result);
      rows.push_back(std::move(row));
    }
    // Everything computed: stage the files, then put them in place.
    std::vector<std::unique_ptr<OutputFile>> files;
    if (!o.svg_dir.empty()) {
      std::filesystem::create_directories(o.svg_dir);
      if (!o.seq_lens.empty()) {  // peak memory against sequence length, one line per layout
        std::vector<SweepSeries> series;
        for (const auto& row : rows) {
          const std::string name = row.label.substr(0, row.label.find('@'));
          auto it = std::find_if(series.begin(), series.end(),
                                 [&](const SweepSeries& s) { return s.name == name; });
          if (it == series.end()) {
            series.push_back({name, {}});
            it = series.end() - 1;
          }
          double peak = 0;
          for (const auto& m : row.report.memory) peak = std::max(peak, m.peak_bytes);
          it->points.emplace_back(row.scenario.model.seq_len, peak);
        }
        files.push_back(std::make_unique<OutputFile>(
            (std::filesystem::path(o.svg_dir) / "memory-vs-sequence.svg").string()));
        files.back()->stage(svg_sweep(fmt::format("{}: peak memory per GPU against sequence length",
                                                  base.name),
                                      series, base.cluster.device.hbm_capacity.value));
      }
      for (const auto& row : rows) {
        const std::string stem = (std::filesystem::path(o.svg_dir) / row.label).string();
        files.push_back(std::make_unique<OutputFile>(stem + "-timeline.svg"));
        files.back()->stage(timeline_svg(row));
        files.push_back(std::make_unique<OutputFile>(stem + "-memory.svg"));
        files.back()->stage(memory_svg(row));
      }
    }
    OutputFile json_file(o.json);
    if (!o.json.empty()) {
      nlohmann::ordered_json j;
      j["parasim_compare"] = 1;
      j["scenario"] = base.name;
      j["rows"] = nlohmann::ordered_json::array();
      for (const auto& row : rows) {
        nlohmann::ordered_json entry;
        entry["schedule"] = row.report.schedule;
        entry["tp_placement"] = strat::tp_placement_name(row.scenario.parallel.tp_placement);
        const auto& par = row.scenario.parallel;
        entry["parallel"] = {{"dp", par.dp}, {"tp", par.tp}, {"cp", par.cp}, {"pp", par.pp}};
        const nlohmann::ordered_json result = report_to_json(row.scenario, row.report);
        for (auto it = result.begin(); it != result.end(); ++it) {
          if (it.key() != "schedule" && it.key() != "tp_placement" && it.key() != "parallel") {
            entry[it.key()] = it.value();
          }
        }
        j["rows"].push_back(entry);
      }
      json_file.stage(j.dump(2) + "\n");
    }
    std::vector<OutputFile*> outputs{&json_file};  // all or none (output_file.hpp)
    for (auto& f : files) outputs.push_back(f.get());
    commit_outputs(outputs, out);
    std::ostream& text = json_file.is_stdout() ? err : out;
    const bool same_micro_batches = std::all_of(rows.begin(), rows.end(), [&](const Row& row) {
      return row.scenario.micro_batches() == base.micro_batches();
    });
    text << fmt::format("parasim compare: {} ({} on {} x {} GPUs, pp {}, {})\n\n", base.name,
                        base.model.name, base.cluster.nodes, base.cluster.gpus_per_node,
                        base.parallel.pp,
                        same_micro_batches
                            ? fmt::format("{} micro-batches per step", base.micro_batches())
                            : std::string("micro-batches per step vary with the replicas"));
    text << table(rows);
    if (!o.svg_dir.empty()) {
      text << fmt::format("\npictures: {}/<variant>-timeline.svg and -memory.svg\n", o.svg_dir);
    }
    for (const std::string& w : costs.warnings().list()) err << "warning: " << w << "\n";
    return kExitOk;
  } catch (const OutputError& e) {
    err << e.what() << "\n";
    return e.exit_code();
  } catch (const cost::InputError& e) {
    err << e.what();
    return kExitBadInput;
  } catch (const sim::TimeRangeError& e) {
    err << o.scenario << ": " << e.what() << kTimeRangeHint << "\n";
    return kExitBadInput;
  } catch (const std::length_error& e) {
    err << o.scenario << ": " << e.what() << "\n";
    return std::string(e.what()).find("over the limit") != std::string::npos ? kExitBadInput
                                                                               : kExitFailure;
  } catch (const std::exception& e) {
    err << o.scenario << ": " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace parasim::cli
