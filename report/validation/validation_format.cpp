#include "report/validation/validation_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace parasim::validation {
namespace {

using nlohmann::json;

constexpr const char* kErrorDefinition =
    "signed error = (predicted - measured) / measured step time";

// The critical-path categories the CSV gives a column each; anything else goes to path_other_s.
// "host": the framework's host thread (the GPU waiting for it to issue or to return from a sync).
constexpr const char* kPathCategories[] = {"forward", "backward", "optimizer", "tp-comm",
                                           "pp-comm", "dp-comm",  "cp-comm",   "host"};

std::string percent(double fraction) {
  return fmt::format("{:.2f}", 100.0 * fraction);
}

std::string seconds_text(double s) {
  return fmt::format("{:.4g}", s);
}

json number_or_null(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

const ValidationCase& case_of(const FormatContext& c, const CaseResult& r) {
  return c.files[r.file].cases[r.index];
}

// "forward 1.2 s, backward 2.5 s, tp-comm 0.1 s; bubble 4.0 %": the parts that are not zero.
std::string breakdown_text(const StepBreakdown& b) {
  std::string out;
  for (const auto& [category, s] : b.critical_path_s) {
    if (s <= 0) continue;
    out += fmt::format("{}{} {} s", out.empty() ? "" : ", ", category, seconds_text(s));
  }
  return out + fmt::format("; bubble {:.1f} %", 100.0 * b.bubble_fraction);
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string csv_number(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : "";
}

}  // namespace

std::string format_summary(const FormatContext& c, std::size_t worst_k) {
  const GroupStats& overall = c.groups.front();
  std::string out = fmt::format(
      "parasim validate-against: {} file{}, {} case{}: {} simulated, {} not expressible\n",
      c.files.size(), c.files.size() == 1 ? "" : "s", overall.stats.cases,
      overall.stats.cases == 1 ? "" : "s", overall.stats.simulated, overall.stats.not_expressible);
  out += "cost model: " + c.cost_model + "\n";
  if (!c.filter.empty()) out += fmt::format("filter: cases matching \"{}\"\n", c.filter);
  out +=
      "step-time error e = (predicted - measured) / measured; MAE = mean |e|, median |e|, "
      "worst e (largest |e|), bias = mean e; in percent\n\n";

  std::size_t name_w = 5, case_w = 10;
  for (const GroupStats& g : c.groups) {
    name_w = std::max(name_w, std::string(scope_name(g.scope)).size() + 1 + g.name.size());
    case_w = std::max(case_w, g.stats.worst_case.size());
  }
  const auto label = [](const GroupStats& g) {
    return g.scope == GroupScope::kOverall ? g.name
                                           : std::string(scope_name(g.scope)) + " " + g.name;
  };
  out += fmt::format("{:<{}}  {:>6}  {:>9}  {:>8}  {:>8}  {:>8}  {:<{}}  {:>7}\n", "group", name_w,
                     "cases", "simulated", "MAE %", "median %", "worst %", "worst case", case_w,
                     "bias %");
  for (const GroupStats& g : c.groups) {
    const ErrorStats& s = g.stats;
    const bool e = s.has_errors();
    out += fmt::format("{:<{}}  {:>6}  {:>9}  {:>8}  {:>8}  {:>8}  {:<{}}  {:>7}\n", label(g),
                       name_w, s.cases, s.simulated, e ? percent(s.mae) : "-",
                       e ? percent(s.median_abs_error) : "-", e ? percent(s.worst) : "-",
                       e ? s.worst_case : "-", case_w, e ? percent(s.bias) : "-");
  }

  bool any_memory = false;
  for (const GroupStats& g : c.groups) any_memory = any_memory || g.stats.memory.count > 0;
  if (any_memory) {
    out += "\nPeak memory (the ledger's peak of the fullest GPU, the bytes its tensors request, "
           "against the measured one, where a case measured it; CUDA context and NCCL buffers left "
           "out), in percent\n";
    out += fmt::format("{:<{}}  {:>6}  {:>8}  {:>8}  {:>8}  {:<{}}  {:>7}\n", "group", name_w,
                       "cases", "MAE %", "median %", "worst %", "worst case", case_w, "bias %");
    for (const GroupStats& g : c.groups) {
      const ErrorFigures& m = g.stats.memory;
      if (m.count == 0) continue;
      out += fmt::format("{:<{}}  {:>6}  {:>8}  {:>8}  {:>8}  {:<{}}  {:>7}\n", label(g), name_w,
                         m.count, percent(m.mae), percent(m.median_abs_error), percent(m.worst),
                         m.worst_case, case_w, percent(m.bias));
    }
  }

  out += "\nSources\n";
  for (const ValidationFile& f : c.files) {
    out += fmt::format("  {}: {} ({} cases)\n", f.name, f.source, f.cases.size());
  }

  if (overall.stats.not_expressible > 0) {
    out += fmt::format("\nNot expressible: {} cases, by reason\n", overall.stats.not_expressible);
    for (const GroupStats& g : c.groups) {
      if (g.scope != GroupScope::kSource) continue;
      for (const auto& [reason, count] : g.stats.reasons) {
        out += fmt::format("  {} {:>5}  {}\n", g.name, count, reason);
      }
    }
  }

  const auto worst = worst_cases(c.results, worst_k);
  if (!worst.empty()) {
    std::size_t id_w = 4, family_w = 6;
    for (const CaseResult* r : worst) {
      id_w = std::max(id_w, case_of(c, *r).id.size());
      family_w = std::max(family_w, case_of(c, *r).family.size());
    }
    out += fmt::format(
        "\nWorst {} case{} by |error|, and where the predicted step went "
        "(critical path; recompute is inside backward)\n",
        worst.size(), worst.size() == 1 ? "" : "s");
    out += fmt::format("  {:<{}}  {:<{}}  {:>11}  {:>12}  {:>8}  {}\n", "case", id_w, "family",
                       family_w, "measured s", "predicted s", "error %", "critical path");
    for (const CaseResult* r : worst) {
      const ValidationCase& vc = case_of(c, *r);
      out += fmt::format("  {:<{}}  {:<{}}  {:>11}  {:>12}  {:>8}  {}\n", vc.id, id_w, vc.family,
                         family_w, seconds_text(r->measured_s), seconds_text(r->predicted_s),
                         percent(r->signed_error), breakdown_text(r->breakdown));
    }
  }
  return out;
}

json results_to_json(const FormatContext& c) {
  json out;
  out["parasim_validation_result"] = 1;
  out["cost_model"] = c.cost_model;
  out["filter"] = c.filter;
  out["error_definition"] = kErrorDefinition;
  out["inputs"] = json::array();
  for (const ValidationFile& f : c.files) {
    out["inputs"].push_back(
        {{"file", f.path}, {"name", f.name}, {"source", f.source}, {"cases", f.cases.size()}});
  }
  out["groups"] = json::array();
  for (const GroupStats& g : c.groups) {
    const ErrorStats& s = g.stats;
    json reasons = json::array();
    for (const auto& [reason, count] : s.reasons) {
      reasons.push_back({{"reason", reason}, {"cases", count}});
    }
    const bool e = s.has_errors();
    out["groups"].push_back(
        {{"scope", scope_name(g.scope)},
         {"name", g.name},
         {"cases", s.cases},
         {"simulated", s.simulated},
         {"not_expressible", s.not_expressible},
         {"not_expressible_reasons", reasons},
         {"mae_fraction", e ? json(s.mae) : json(nullptr)},
         {"median_abs_error_fraction", e ? json(s.median_abs_error) : json(nullptr)},
         {"worst_signed_error_fraction", e ? json(s.worst) : json(nullptr)},
         {"worst_case", e ? json(s.worst_case) : json(nullptr)},
         {"bias_fraction", e ? json(s.bias) : json(nullptr)},
         {"peak_memory", s.memory.count == 0
                             ? json(nullptr)
                             : json{{"cases", s.memory.count},
                                    {"mae_fraction", s.memory.mae},
                                    {"median_abs_error_fraction", s.memory.median_abs_error},
                                    {"worst_signed_error_fraction", s.memory.worst},
                                    {"worst_case", s.memory.worst_case},
                                    {"bias_fraction", s.memory.bias}}}});
  }
  out["cases"] = json::array();
  for (const CaseResult& r : c.results) {
    const ValidationCase& vc = case_of(c, r);
    json row = {{"source", c.files[r.file].name},
                {"id", vc.id},
                {"family", vc.family},
                {"status", r.simulated ? "simulated" : "not expressible"},
                {"measured_step_time_s", number_or_null(r.measured_s)}};
    if (r.simulated) {
      json path = json::object();
      for (const auto& [category, s] : r.breakdown.critical_path_s) path[category] = s;
      json exposed = json::object();
      for (int k = 0; k < strat::kCommKinds; ++k) {
        exposed[strat::comm_kind_name(static_cast<strat::CommKind>(k))] =
            r.breakdown.exposed_comm_s[static_cast<std::size_t>(k)];
      }
      row["predicted_step_time_s"] = r.predicted_s;
      row["signed_error_fraction"] = r.signed_error;
      row["critical_path_s"] = path;
      row["exposed_comm_s"] = exposed;
      row["bubble_fraction_mean"] = r.breakdown.bubble_fraction;
      row["mfu_fraction"] = r.breakdown.mfu;
      row["host_busy_s"] = r.breakdown.host_busy_s;
      row["predicted_peak_memory_bytes"] = r.predicted_memory_bytes;
      if (r.memory_measured) {
        row["measured_peak_memory_bytes"] = r.measured_memory_bytes;
        row["memory_signed_error_fraction"] = r.memory_signed_error;
      }
    } else {
      row["not_expressible"] = vc.not_expressible;
    }
    out["cases"].push_back(std::move(row));
  }
  return out;
}

std::string results_to_csv(const FormatContext& c) {
  std::string out =
      "source,id,family,status,measured_step_time_s,predicted_step_time_s,signed_error_fraction";
  for (const char* category : kPathCategories) {
    std::string column = category;
    std::replace(column.begin(), column.end(), '-', '_');
    out += ",path_" + column + "_s";
  }
  out += ",path_other_s";
  for (int k = 0; k < strat::kCommKinds; ++k) {
    out += fmt::format(",exposed_{}_s", strat::comm_kind_name(static_cast<strat::CommKind>(k)));
  }
  out += ",bubble_fraction_mean,mfu_fraction,host_busy_s,not_expressible";
  out += ",measured_peak_memory_bytes,predicted_peak_memory_bytes,memory_signed_error_fraction\n";
  for (const CaseResult& r : c.results) {
    const ValidationCase& vc = case_of(c, r);
    out += fmt::format("{},{},{},{},{}", csv_field(c.files[r.file].name), csv_field(vc.id),
                       csv_field(vc.family), r.simulated ? "simulated" : "not expressible",
                       csv_number(r.measured_s));
    if (r.simulated) {
      out += fmt::format(",{},{}", csv_number(r.predicted_s), csv_number(r.signed_error));
      double other = 0;
      std::vector<double> known(std::size(kPathCategories), 0.0);  // then the other columns
      for (const auto& [category, s] : r.breakdown.critical_path_s) {
        // A named copy: clang 14 cannot capture a structured binding in a lambda.
        const std::string& name = category;
        const auto it = std::find_if(std::begin(kPathCategories), std::end(kPathCategories),
                                     [&](const char* k) { return name == k; });
        if (it == std::end(kPathCategories))
          other += s;
        else
          known[static_cast<std::size_t>(it - std::begin(kPathCategories))] += s;
      }
      known.push_back(other);
      for (double s : r.breakdown.exposed_comm_s) known.push_back(s);
      known.push_back(r.breakdown.bubble_fraction);
      known.push_back(r.breakdown.mfu);
      known.push_back(r.breakdown.host_busy_s);
      for (double s : known) out += fmt::format(",{}", csv_number(s));
      out += ",";  // not expressible: empty
      out += r.memory_measured ? fmt::format(",{},{},{}\n", csv_number(r.measured_memory_bytes),
                                             csv_number(r.predicted_memory_bytes),
                                             csv_number(r.memory_signed_error))
                               : fmt::format(",,{},\n", csv_number(r.predicted_memory_bytes));
    } else {
      // predicted, error, the path and exposed columns, bubble, mfu and host are empty.
      out += std::string(2 + std::size(kPathCategories) + 1 + strat::kCommKinds + 3, ',');
      out += fmt::format(",{},,,\n", csv_field(vc.not_expressible));
    }
  }
  return out;
}

}  // namespace parasim::validation
