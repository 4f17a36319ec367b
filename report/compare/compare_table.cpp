#include "report/compare/compare_table.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/number_text.hpp"

namespace parasim::cli {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

double max_of(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, x);
  return m;
}

double peak_of(const strat::StepReport& r) {
  double peak = 0;
  for (const auto& m : r.memory) peak = std::max(peak, m.device_bytes);
  return peak;
}

}  // namespace

std::string compare_table(const std::vector<CompareRow>& rows) {
  std::string o;
  const auto first_ran = std::find_if(rows.begin(), rows.end(), [](const CompareRow& r) { return r.ran(); });
  // Speedups are within one sequence length (--seq-lens repeats the variants at several): over
  // the first variant that applies at the row's own length.
  auto base_of = [&rows](const CompareRow& row) {
    for (const auto& r : rows) {
      if (r.ran() && r.variant.scenario.model.seq_len == row.variant.scenario.model.seq_len) {
        return &r;
      }
    }
    return &row;
  };
  bool several_lengths = false;
  for (const auto& row : rows) {
    several_lengths = several_lengths || (row.ran() && row.variant.scenario.model.seq_len !=
                                                           first_ran->variant.scenario.model.seq_len);
  }
  std::size_t w = 17;  // the variant column fits the longest label
  for (const auto& row : rows) w = std::max(w, row.variant.label.size());
  o += fmt::format("{:<{}} {:>13} {:>8} {:>9} {:>9} {:>15} {:>9} {:>9}\n", "variant", w,
                   "tokens/s", "speedup", "bubble", "bubble", "peak memory", "max", "weight");
  o += fmt::format("{:<{}} {:>13} {:>8} {:>9} {:>9} {:>15} {:>9} {:>9}\n", "", w, "", "", "mean",
                   "max", "max stage", "stale", "versions");
  std::size_t too_big = 0, ran = 0;
  for (const auto& row : rows) {
    if (!row.ran()) {
      o += fmt::format("{:<{}} not applicable: {}\n", row.variant.label, w,
                       not_applicable_text(row.variant));
      continue;
    }
    ++ran;
    const auto& r = row.report;
    double mean_bubble = 0;
    for (double b : r.bubble_fraction) mean_bubble += b / static_cast<double>(r.bubble_fraction.size());
    int stale = 0, versions = 1;
    for (const auto& s : r.staleness) stale = std::max(stale, s.max);
    for (int v : r.weight_versions) versions = std::max(versions, v);
    if (!r.fits_in_hbm) ++too_big;
    o += fmt::format("{:<{}} {:>13} {:>7.3f}x {:>8.1f}% {:>8.1f}% {:>10.2f} GiB{} {:>9} {:>9}\n",
                     row.variant.label, w, readable_count(r.tokens_per_s),
                     r.tokens_per_s / base_of(row)->report.tokens_per_s,
                     100 * mean_bubble, 100 * max_of(r.bubble_fraction), peak_of(r) / kGiB,
                     r.fits_in_hbm ? " " : "*", stale, versions);
  }
  if (several_lengths) {
    o += "speedup: over the first variant that applies at the same sequence length\n";
  } else if (first_ran != rows.begin()) {
    o += fmt::format("speedup: over {}, the first variant that applies\n", first_ran->variant.label);
  }
  if (too_big > 0) {
    o += fmt::format("* does not fit: the peak, CUDA context and NCCL buffers included, exceeds "
                     "the device's {:.1f} GiB of HBM ({} of {} "
                     "variants; its tokens/s are as if it fitted)\n",
                     first_ran->report.hbm_capacity_bytes / kGiB, too_big, ran);
  }
  const std::size_t stages = first_ran->report.bubble_fraction.size();
  o += "\nPeak memory per stage (GiB; stashed weight versions included)\n";
  o += fmt::format("{:<{}}", "variant", w);
  for (std::size_t s = 0; s < stages; ++s) o += fmt::format(" {:>7}", fmt::format("s{}", s));
  o += "\n";
  for (const auto& row : rows) {
    if (!row.ran()) continue;
    o += fmt::format("{:<{}}", row.variant.label, w);
    std::vector<double> per_stage(row.report.bubble_fraction.size(), 0.0);
    for (const auto& m : row.report.memory) {
      auto& slot = per_stage[static_cast<std::size_t>(m.stage)];
      slot = std::max(slot, m.peak_bytes);
    }
    for (double b : per_stage) o += fmt::format(" {:>7.2f}", b / kGiB);
    o += "\n";
  }
  const bool fp8 = std::any_of(rows.begin(), rows.end(), [](const CompareRow& row) {
    return row.ran() && row.variant.scenario.training.fp8.enabled();
  });
  if (fp8) {
    // What FP8 costs and saves on stage 0's GPU (docs/fp8.md): the recipe's quantisation
    // kernels (already in the step), its weight copies, its activations, at the memory peak.
    o += "\nFP8 on stage 0 (per GPU, per step; memory at the peak)\n";
    o += fmt::format("{:<{}} {:>15} {:>15} {:>15} {:>15}\n", "variant", w, "quant kernels",
                     "fp8 copies GiB", "weights GiB", "activations GiB");
    for (const auto& row : rows) {
      if (!row.ran() || row.report.memory.empty()) continue;
      auto category = [&](const std::string& name) {
        for (const auto& [cat, bytes] : row.report.memory.front().breakdown_bytes) {
          if (cat == name) return bytes / kGiB;
        }
        return 0.0;
      };
      const auto& q = row.report.fp8_quantization_s;
      o += fmt::format("{:<{}} {:>15} {:>15.2f} {:>15.2f} {:>15.2f}\n", row.variant.label, w,
                       q.empty() ? std::string("-") : fmt::format("{:.1f} ms", q.front() * 1e3),
                       category("fp8 weight copies"), category("weights"),
                       category("activations"));
    }
  }
  const bool shampoo = std::any_of(rows.begin(), rows.end(), [](const CompareRow& row) {
    return row.ran() && row.variant.scenario.optimizer.kind != strat::OptimizerKind::kAdamW;
  });
  if (shampoo) {
    o += "\nOptimizer step per GPU (ms) = its parts, and its host loop per step (stage 0, busiest "
         "rank)\n";
    for (const auto& row : rows) {
      if (!row.ran()) continue;
      std::string parts;
      for (const auto& [name, s] : row.report.optimizer_breakdown_s) {
        parts += fmt::format("{}{} {:.1f}", parts.empty() ? "" : " + ", name, s * 1e3);
      }
      if (row.report.optimizer_host_ops > 0) {
        parts += fmt::format("; host {} ops, {} syncs",
                             grouped_integer(row.report.optimizer_host_ops),
                             grouped_integer(row.report.optimizer_host_syncs));
      }
      o += fmt::format("{:<{}} {:>9.1f}   [{}]\n", row.variant.label, w,
                       row.report.optimizer_s * 1e3, parts);
    }
  }
  const auto& dp0 = first_ran->variant.scenario.parallel.dp;
  const bool dp_varies = std::any_of(rows.begin(), rows.end(), [&](const CompareRow& row) {
    return row.ran() && row.variant.scenario.parallel.dp != dp0;
  });
  if (dp_varies) {  // layouts of different group sizes on the same GPUs
    o += "\nGPUs per model replica (tp x cp x pp) and data-parallel replicas\n";
    for (const auto& row : rows) {
      if (!row.ran()) continue;
      const auto& p = row.variant.scenario.parallel;
      o += fmt::format("{:<{}} {:>5} x {:>5}\n", row.variant.label, w, p.tp * p.cp * p.pp, p.dp);
    }
  }
  std::string warmup;
  for (const auto& row : rows) {
    if (row.ran() && row.report.asynchronous) {
      warmup += fmt::format("{}{} {} of {}", warmup.empty() ? "" : ", ", row.variant.label,
                            row.report.warmup_steps,
                            count_of(row.report.steps_simulated, "global batch", "global batches"));
    }
  }
  if (!warmup.empty()) {
    o += fmt::format("\nWarm-up excluded from the figures of asynchronous schedules: {}\n", warmup);
  }
  return o;
}

}  // namespace parasim::cli
