#include "report/report_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>

#include "costmodel/diagnostics.hpp"
#include "costmodel/units.hpp"
#include "report/number_text.hpp"
#include "strategies/layers/checkpoint_groups.hpp"

namespace parasim::cli {
namespace {

using cost::Bytes;

std::string seconds(double s) { return cost::format_seconds(s); }
std::string gib(double bytes) { return cost::format_bytes(Bytes{bytes}); }
std::string si(double bytes) { return bytes == 0 ? "0 B" : cost::format_bytes_si(Bytes{bytes}); }

template <typename... Args>
void line(std::string& out, fmt::format_string<Args...> format, Args&&... args) {
  out += fmt::format(format, std::forward<Args>(args)...);
  out += '\n';
}

// "ZeRO N", or FSDP2 with its shard group, replicas and resharding.
std::string sharding_text(const strat::ParallelSpec& p) {
  if (!p.fsdp2.enabled) return fmt::format("ZeRO {}", p.zero_stage);
  const auto& f = p.fsdp2.reshard_after_forward;
  const std::string reshard = !f                                   ? "default"
                              : *f == strat::Fsdp2Spec::kShardGroup ? "true"
                              : *f == 1                             ? "false"
                                                                    : std::to_string(*f);
  return fmt::format("FSDP2 (shard {}{}, reshard after forward {})", p.fsdp2_shard(),
                     p.fsdp2.replicate > 1 ? fmt::format(" x replicate {}", p.fsdp2.replicate)
                                           : std::string(),
                     reshard);
}

// " (ring)", " (all-gather)" as before; the all-to-all modes by their registry name.
std::string cp_comm_label(const strat::ParallelSpec& p) {
  switch (p.cp_comm) {
    case strat::CpComm::kRing: return " (ring)";
    case strat::CpComm::kAllGather: return " (all-gather)";
    case strat::CpComm::kAllToAll: return " (a2a)";
    case strat::CpComm::kAllToAllP2p:
      return fmt::format(" (a2a {} x p2p {})", p.cp_a2a_size, p.cp / std::max(1, p.cp_a2a_size));
  }
  return "";
}

// "full (every 2nd layer)": the recompute mode with the layers a grouped full recompute
// checkpoints (strategies/layers/checkpoint_groups.hpp).
std::string recompute_label(const strat::TrainingSpec& t) {
  const std::string mode = cost::recompute_name(t.recompute);
  if (!strat::grouped_recompute(t)) return mode;
  const int n = t.recompute_num_layers;
  switch (t.recompute_method) {
    case cost::RecomputeMethod::kUniform: return fmt::format("{} (groups of {} layers)", mode, n);
    case cost::RecomputeMethod::kBlock:
      return fmt::format("{} (the first {} layers of each stage)", mode, n);
    case cost::RecomputeMethod::kEveryNth: {
      const int tens = n % 100;
      const char* suffix = (tens >= 11 && tens <= 13) ? "th"
                           : n % 10 == 1              ? "st"
                           : n % 10 == 2              ? "nd"
                           : n % 10 == 3              ? "rd"
                                                      : "th";
      return n == 1 ? mode : fmt::format("{} (every {}{} layer)", mode, n, suffix);
    }
  }
  return mode;
}

// The text report's sections, in the order printed, each ending with its blank line but the last.
void header_section(std::string& o, const strat::Scenario& sc, const strat::StepReport& r) {
  const auto& p = sc.parallel;
  // Names come from the file: one line each, whatever they hold (cost::printable).
  line(o, "parasim simulate: {}", cost::printable(r.scenario));
  line(o, "  model {} ({:.2f} B parameters), {} layers, sequence {}",
       cost::printable(sc.model.name), static_cast<double>(sc.model.total_params()) / 1e9,
       sc.model.layers, sc.model.seq_len);
  line(o, "  cluster {}: {} x {} = {} x {}", cost::printable(sc.cluster.name),
       count_of(sc.cluster.nodes, "node"), count_of(sc.cluster.gpus_per_node, "GPU"),
       r.total_gpus, cost::printable(sc.cluster.device.name));
  line(o, "  parallel dp {} tp {}{} pp {}{}{}, schedule {}{}, {}, recompute {}, {}{}", p.dp,
       p.tp, p.tp_placement == strat::TpPlacement::kTsp ? " (TSP)" : "", p.pp,
       p.cp > 1 ? fmt::format(" cp {}{}", p.cp, cp_comm_label(p))
                : std::string(),
       p.sequence_parallel ? " +SP" : "", strat::schedule_name(p.schedule),
       p.chunks > 1 ? fmt::format(" (v = {})", p.chunks) : std::string(),
       sharding_text(p), recompute_label(sc.training), sc.training.precision_name(),
       sc.training.fp32_gradients ? " (fp32 gradients)" : "");
  line(o, "  batch {} = {} of {} per replica", count_of(sc.training.global_batch, "sequence"),
       count_of(r.micro_batches, "micro-batch", "micro-batches"), sc.training.micro_batch);
  if (sc.model.low_rank.enabled()) {
    line(o, "  low-rank {} ranks {} (attention) / {} (MLP), placement {}",
         strat::low_rank_variant_name(sc.model.low_rank.variant), sc.model.low_rank.attn_rank,
         sc.model.low_rank.mlp_rank, strat::tp_placement_name(p.tp_placement));
  }
  const auto& opt = sc.optimizer;
  if (opt.kind == strat::OptimizerKind::kAdamW) {
    line(o, "  optimizer adamw");
  } else {
    line(o, "  optimizer {}: {} x {} at {}{}, blocks of {}, inverse roots every {}, stacking {}",
         strat::optimizer_name(opt.kind), strat::root_solver_name(opt.solver),
         count_of(opt.iterations, "iteration"), cost::dtype_name(opt.precision),
         opt.allow_tf32 ? " (fp32 as TF32)" : "", opt.block_size,
         opt.precondition_frequency == 1 ? std::string("step")
                                         : count_of(opt.precondition_frequency, "step"),
         strat::stacking_name(opt.stacking));
  }
  line(o, "  simulated {} of {} ({}), {} ops, {} events", r.simulated_devices,
       count_of(r.total_gpus, "GPU"), r.full ? "full" : "symmetric",
       grouped_integer(static_cast<double>(r.ops)), grouped_integer(static_cast<double>(r.events)));
  if (r.asynchronous) {
    line(o, "  asynchronous: {} simulated, first {} excluded as warm-up; figures per batch in "
            "steady state",
         count_of(r.steps_simulated, "global batch", "global batches"), r.warmup_steps);
  }
  line(o, "");
}

void step_section(std::string& o, const strat::Scenario&, const strat::StepReport& r) {
  line(o, "Step");
  line(o, "  step time            {}", seconds(r.step_time_s));
  line(o, "  throughput           {} tokens/s ({} tokens per step)", readable_count(r.tokens_per_s),
       readable_count(r.tokens_per_step));
  line(o, "  model FLOP/s per GPU {:.1f} TFLOP/s", r.model_tflops_per_gpu);
  line(o, "  MFU                  {:.1f} %  (HFU, recompute included: {:.1f} %)", 100 * r.mfu,
       100 * r.hfu);
  line(o, "  pipeline (to last backward) {}, optimizer step {} (stage 0)",
       seconds(r.pipeline_time_s), seconds(r.optimizer_s));
  if (r.optimizer_breakdown_s.size() > 1) {
    std::string parts;
    for (const auto& [name, s] : r.optimizer_breakdown_s) {
      parts += fmt::format("{}{} {}", parts.empty() ? "" : " + ", name, seconds(s));
    }
    line(o, "  optimizer step = {}", parts);
  }
  if (r.optimizer_host_ops > 0) {
    line(o, "  optimizer host loop: {} ops and {} host syncs per step (stage 0, busiest rank)",
         r.optimizer_host_ops, r.optimizer_host_syncs);
  }
  line(o, "  host ({})      busy {} per step per GPU ({:.1f} % of the step), {} syncs; on the "
          "critical path {}",
       r.framework, seconds(r.host_busy_s),
       r.step_time_s > 0 ? 100 * r.host_busy_s / r.step_time_s : 0.0,
       grouped_integer(r.host_syncs_per_step), seconds(r.host_critical_path_s));
  line(o, "");
}

void bubble_section(std::string& o, const strat::Scenario&, const strat::StepReport& r) {
  line(o, "Bubble fraction per stage (idle share of the pipeline time)");
  std::string bubbles = " ";
  for (std::size_t s = 0; s < r.bubble_fraction.size(); ++s) {
    bubbles += fmt::format(" stage {}: {:.1f} %", s, 100 * r.bubble_fraction[s]);
    if (s + 1 < r.bubble_fraction.size()) bubbles += s % 6 == 5 ? ",\n " : ",";
  }
  line(o, "{}", bubbles);
  line(o, "");
}

void staleness_section(std::string& o, const strat::Scenario&, const strat::StepReport& r) {
  const bool none_stale = std::all_of(r.staleness.begin(), r.staleness.end(),
                                      [](const strat::StageStaleness& st) { return st.max == 0; }) &&
                          std::all_of(r.weight_versions.begin(), r.weight_versions.end(),
                                      [](int v) { return v == 1; });
  if (!r.asynchronous && none_stale) {
    line(o, "Weight staleness: flush schedule: no staleness (one weight version per stage)");
  } else {
    line(o, "Weight staleness per stage (optimizer updates crossed between a micro-batch's "
            "forward and backward) and weight versions held");
  }
  for (std::size_t s = 0; s < r.staleness.size() && (r.asynchronous || !none_stale); ++s) {
    std::string histogram;
    for (const auto& [crossed, count] : r.staleness[s].histogram) {
      histogram += fmt::format("{}{}: {}", histogram.empty() ? "" : ", ", crossed, count);
    }
    line(o, "  stage {:<3} max {:<3} mean {:<6.3f} versions {}   [{}]", s, r.staleness[s].max,
         r.staleness[s].mean, r.weight_versions[s], histogram);
  }
  line(o, "");
}

void communication_section(std::string& o, const strat::Scenario&, const strat::StepReport& r) {
  line(o, "Communication per step");
  line(o, "  {:<4} {:>14} {:>22}", "kind", "bytes (cluster)", "exposed per GPU");
  bool any_kind = false;
  for (int k = 0; k < strat::kCommKinds; ++k) {
    const auto i = static_cast<std::size_t>(k);
    if (r.comm_bytes[i] == 0 && r.exposed_comm_s[i] == 0) continue;  // a kind the step has not
    any_kind = true;
    line(o, "  {:<4} {:>14} {:>22}", strat::comm_kind_name(static_cast<strat::CommKind>(k)),
         si(r.comm_bytes[i]), seconds(r.exposed_comm_s[i]));
  }
  if (!any_kind) line(o, "  none: nothing leaves a GPU");
  line(o, "  by link class: intra-node {}, inter-node (NIC) {}", si(r.link_bytes_intra_node),
       si(r.link_bytes_inter_node));
  line(o, "");
}

void collectives_section(std::string& o, const strat::Scenario&, const strat::StepReport& r) {
  if (r.collectives.empty()) {
    line(o, "Collectives: none");
  } else {
    line(o, "Collectives (mean per instance; algbw and busbw as nccl-tests reports them)");
    line(o, "  {:<4} {:<15} {:>5} {:>9} {:>11} {:>11} {:>12} {:>12}", "kind", "op", "ranks",
         "per GPU", "message", "time", "algbw", "busbw");
  }
  for (const auto& c : r.collectives) {
    line(o, "  {:<4} {:<15} {:>5} {:>9.0f} {:>11} {:>11} {:>12} {:>12}", c.kind, c.op,
         c.group_size, c.count_per_gpu, si(c.mean_message_bytes), seconds(c.mean_time_s),
         cost::format_bandwidth(cost::Bandwidth{c.algbw_bytes_per_s}),
         cost::format_bandwidth(cost::Bandwidth{c.busbw_bytes_per_s}));
  }
  line(o, "");
}

void memory_section(std::string& o, const strat::Scenario& s, const strat::StepReport& r) {
  line(o, "Peak memory per device (HBM {}): tensors, then PyTorch's {} allocator (allocated, "
          "reserved), then memory outside it",
       gib(r.hbm_capacity_bytes), strat::allocator_name(s.training.allocator_kind()));
  for (const auto& m : r.memory) {
    std::string parts;
    for (const auto& [name, bytes] : m.breakdown_bytes) {
      if (bytes > 0) parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", name, gib(bytes));
    }
    line(o, "  {:<28} {:>11}{}  [{}]", m.device, gib(m.peak_bytes),
         m.fits_in_hbm ? "" : "  DOES NOT FIT", parts);
    std::string retries;
    if (m.allocator_out_of_memory > 0) {
      retries = fmt::format("; the segments would not fit: a request of {} found no room",
                            gib(m.allocator_out_of_memory_bytes));
    } else if (m.allocator_retries > 0) {
      retries = fmt::format("; cache freed {} time{} per step to make room (num_alloc_retries: "
                            "each a synchronize and cudaFree)",
                            m.allocator_retries, m.allocator_retries == 1 ? "" : "s");
    }
    line(o, "  {:<28} {:>11}  allocated; reserved {} (+{} cached){}", "",
         "= " + gib(m.allocated_bytes), gib(m.reserved_bytes),
         gib(m.reserved_bytes - m.allocated_bytes), retries);
    std::string extra =
        m.dispatch_buffer_bytes > 0 ? ", DeepEP buffers " + gib(m.dispatch_buffer_bytes) : "";
    if (m.userbuffer_bytes > 0) extra += ", userbuffers " + gib(m.userbuffer_bytes);
    line(o, "  {:<28} {:>11}  outside the allocator (CUDA context {}, NCCL buffers {}{}): {} in all",
         "",
         "+ " + gib(m.cuda_context_bytes + m.nccl_buffer_bytes + m.dispatch_buffer_bytes +
                    m.userbuffer_bytes),
         gib(m.cuda_context_bytes), gib(m.nccl_buffer_bytes), extra, gib(m.device_bytes));
  }
  if (const auto& h = r.host_offload) {  // optimizer offload (docs/offload.md)
    line(o, "Host memory (offload): {} per GPU, {} per node of {}{}", gib(h->host_bytes_per_gpu),
         gib(h->host_bytes_per_node), gib(h->host_capacity_bytes),
         h->fits_in_host ? "" : "  DOES NOT FIT");
    line(o, "Host link per GPU and step: {} device-to-host, {} host-to-device at {} each way",
         gib(h->d2h_bytes_per_gpu), gib(h->h2d_bytes_per_gpu),
         cost::format_bandwidth(cost::Bandwidth{h->link_bytes_per_s}));
  }
  line(o, "");
}

void critical_path_section(std::string& o, const strat::Scenario&, const strat::StepReport& r) {
  line(o, "Critical path by category (largest share first)");
  for (const auto& [cat, s] : r.critical_path_s) {
    line(o, "  {:<10} {:>12}  ({:.1f} %)", cat, seconds(s), 100 * s / r.step_time_s);
  }
}

}  // namespace

std::string format_text_report(const strat::Scenario& sc, const strat::StepReport& r) {
  std::string o;
  for (auto section : {header_section, step_section, bubble_section, staleness_section,
                       communication_section, collectives_section, memory_section,
                       critical_path_section}) {
    section(o, sc, r);
  }
  return o;
}

nlohmann::ordered_json report_to_json(const strat::Scenario& sc, const strat::StepReport& r) {
  nlohmann::ordered_json j;
  j["parasim_result"] = 1;
  j["scenario"] = r.scenario;
  j["mode"] = r.full ? "full" : "symmetric";
  j["schedule"] = r.schedule;
  j["asynchronous"] = r.asynchronous;
  j["steps_simulated"] = r.steps_simulated;
  j["warmup_steps"] = r.warmup_steps;
  j["simulated_time_s"] = r.simulated_time_s;
  j["step_time_s"] = r.step_time_s;
  j["tokens_per_s"] = r.tokens_per_s;
  j["tokens_per_step"] = r.tokens_per_step;
  j["mfu"] = r.mfu;
  j["hfu"] = r.hfu;
  j["model_tflops_per_gpu"] = r.model_tflops_per_gpu;
  j["model_flops_per_step"] = r.model_flops_per_step;
  j["pipeline_time_s"] = r.pipeline_time_s;
  j["optimizer_step_s"] = r.optimizer_s;
  nlohmann::ordered_json parts = nlohmann::ordered_json::object();
  for (const auto& [name, s] : r.optimizer_breakdown_s) parts[name] = s;
  j["optimizer_breakdown_s"] = parts;
  j["optimizer_host_ops"] = r.optimizer_host_ops;
  j["optimizer_host_syncs"] = r.optimizer_host_syncs;
  j["framework"] = r.framework;
  j["host_busy_s"] = r.host_busy_s;
  j["host_syncs_per_step"] = r.host_syncs_per_step;
  j["host_critical_path_s"] = r.host_critical_path_s;
  j["micro_batches"] = r.micro_batches;
  j["total_gpus"] = r.total_gpus;
  j["simulated_devices"] = r.simulated_devices;
  j["bubble_fraction"] = r.bubble_fraction;
  j["bubble_window_s"] = {r.window_begin_s, r.window_end_s};
  nlohmann::ordered_json staleness = nlohmann::ordered_json::array();
  for (const auto& st : r.staleness) {
    nlohmann::ordered_json hist = nlohmann::ordered_json::object();
    for (const auto& [crossed, count] : st.histogram) hist[std::to_string(crossed)] = count;
    staleness.push_back({{"max", st.max}, {"mean", st.mean}, {"histogram", hist}});
  }
  j["staleness"] = staleness;
  j["weight_versions"] = r.weight_versions;
  nlohmann::ordered_json peak = nlohmann::ordered_json::array();
  nlohmann::ordered_json breakdown = nlohmann::ordered_json::array();
  for (const auto& m : r.memory) {
    peak.push_back(m.peak_bytes);
    nlohmann::ordered_json b;
    b["device"] = m.device;
    b["stage"] = m.stage;
    for (const auto& [name, bytes] : m.breakdown_bytes) b[name] = bytes;
    breakdown.push_back(b);
  }
  j["peak_memory_bytes"] = peak;
  j["memory_breakdown_bytes"] = breakdown;
  j["allocator"] = strat::allocator_name(sc.training.allocator_kind());
  nlohmann::ordered_json allocated = nlohmann::ordered_json::array();
  nlohmann::ordered_json reserved = nlohmann::ordered_json::array();
  nlohmann::ordered_json retries = nlohmann::ordered_json::array();
  for (const auto& m : r.memory) {
    allocated.push_back(m.allocated_bytes);
    reserved.push_back(m.reserved_bytes);
    retries.push_back({{"retries", m.allocator_retries},
                       {"out_of_memory", m.allocator_out_of_memory},
                       {"out_of_memory_request_bytes", m.allocator_out_of_memory_bytes}});
  }
  j["allocated_memory_bytes"] = allocated;
  j["reserved_memory_bytes"] = reserved;
  j["allocator_events"] = retries;
  nlohmann::ordered_json device = nlohmann::ordered_json::array();
  nlohmann::ordered_json outside = nlohmann::ordered_json::array();
  for (const auto& m : r.memory) {
    device.push_back(m.device_bytes);
    outside.push_back({{"cuda_context", m.cuda_context_bytes},
                       {"nccl_buffers", m.nccl_buffer_bytes},
                       {"deepep_buffers", m.dispatch_buffer_bytes},
                       {"userbuffers", m.userbuffer_bytes}});
  }
  j["non_tensor_memory_bytes"] = outside;
  j["device_memory_bytes"] = device;
  j["hbm_capacity_bytes"] = r.hbm_capacity_bytes;
  j["fits_in_hbm"] = r.fits_in_hbm;
  nlohmann::ordered_json fits = nlohmann::ordered_json::array();
  for (const auto& m : r.memory) fits.push_back(m.fits_in_hbm);
  j["fits_in_hbm_per_device"] = fits;
  if (const auto& h = r.host_offload) {
    j["host_offload"] = {{"host_bytes_per_gpu", h->host_bytes_per_gpu},
                         {"host_bytes_per_node", h->host_bytes_per_node},
                         {"host_capacity_bytes", h->host_capacity_bytes},
                         {"fits_in_host", h->fits_in_host},
                         {"d2h_bytes_per_gpu", h->d2h_bytes_per_gpu},
                         {"h2d_bytes_per_gpu", h->h2d_bytes_per_gpu}};
  }
  nlohmann::ordered_json bytes, exposed;
  for (int k = 0; k < strat::kCommKinds; ++k) {
    const char* name = strat::comm_kind_name(static_cast<strat::CommKind>(k));
    bytes[name] = r.comm_bytes[static_cast<std::size_t>(k)];
    exposed[name] = r.exposed_comm_s[static_cast<std::size_t>(k)];
  }
  j["comm_bytes"] = bytes;
  j["exposed_comm_s"] = exposed;
  j["link_bytes"] = {{"intra_node", r.link_bytes_intra_node},
                     {"inter_node", r.link_bytes_inter_node}};
  nlohmann::ordered_json collectives = nlohmann::ordered_json::array();
  for (const auto& c : r.collectives) {
    collectives.push_back({{"kind", c.kind},
                           {"op", c.op},
                           {"group_size", c.group_size},
                           {"count_per_gpu", c.count_per_gpu},
                           {"mean_message_bytes", c.mean_message_bytes},
                           {"mean_time_s", c.mean_time_s},
                           {"algbw_bytes_per_s", c.algbw_bytes_per_s},
                           {"busbw_bytes_per_s", c.busbw_bytes_per_s}});
  }
  j["collectives"] = collectives;
  nlohmann::ordered_json path;
  for (const auto& [cat, s] : r.critical_path_s) path[cat] = s;
  j["critical_path_s"] = path;
  j["ops"] = r.ops;
  j["events"] = r.events;
  (void)sc;
  return j;
}

}  // namespace parasim::cli
