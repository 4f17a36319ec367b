#include "costmodel/measured_tables_reader.hpp"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <tuple>

#include "costmodel/json_fields.hpp"

namespace parasim::cost {
namespace {

constexpr double kMaxBytes = 1e18;   // an exabyte
constexpr std::int64_t kMaxDim = kMaxMeasuredDim;
constexpr std::int64_t kMaxCount = 1'000'000'000;

// Calls f(element, path) for each element of the array r[key]; reports a value that is not an
// array. Absent: nothing (or "required field is missing" when required).
template <typename F>
void for_each_element(JsonObjectReader& r, std::string_view key, bool required, Diagnostics& d,
                      F&& f) {
  const nlohmann::json* j = r.child(key, required);
  if (j == nullptr) return;
  const std::string path = r.child_path(key);
  if (!j->is_array()) {
    d.add(path, "expected an array, got " + json_type_name(*j));
    return;
  }
  for (std::size_t i = 0; i < j->size(); ++i) f((*j)[i], path + "/" + std::to_string(i));
}

// A number > 0 and at most `max`.
std::optional<double> positive(JsonObjectReader& r, std::string_view key, bool required, double max,
                               Diagnostics& d) {
  auto v = r.number(key, required, 0.0, max);
  if (v && !(*v > 0.0)) {
    d.add(r.child_path(key), fmt::format("expected a number > 0, got {}", *v));
    return std::nullopt;
  }
  return v;
}

template <typename T>
bool all_set(const std::optional<T>& v) {
  return v.has_value();
}
template <typename T, typename... Rest>
bool all_set(const std::optional<T>& v, const Rest&... rest) {
  return v.has_value() && all_set(rest...);
}

// median_s, p20_s, p80_s and samples of the object `r` reads; the order invariant is reported at
// the object's path.
std::optional<MeasuredTime> measured_time(JsonObjectReader& r, Diagnostics& d) {
  const auto median = positive(r, "median_s", true, kMaxMeasuredSeconds, d);
  const auto p20 = positive(r, "p20_s", true, kMaxMeasuredSeconds, d);
  const auto p80 = positive(r, "p80_s", true, kMaxMeasuredSeconds, d);
  const auto samples = r.integer("samples", true, 1, kMaxCount);
  if (!all_set(median, p20, p80, samples)) return std::nullopt;
  if (!(*p20 <= *median && *median <= *p80)) {
    d.add(r.path(),
          fmt::format("expected p20_s <= median_s <= p80_s, got {} {} {}", *p20, *median, *p80));
    return std::nullopt;
  }
  return MeasuredTime{*median, *p20, *p80, static_cast<int>(*samples)};
}

std::optional<Dtype> dtype(JsonObjectReader& r) {
  const auto name = r.choice("dtype", true, {"fp32", "tf32", "bf16", "fp16", "fp8"});
  return name ? parse_dtype(*name) : std::nullopt;
}

// m, n, k, batch (default 1) and dtype of the object `r` reads.
std::optional<GemmShape> gemm_shape(JsonObjectReader& r) {
  const auto m = r.integer("m", true, 1, kMaxDim);
  const auto n = r.integer("n", true, 1, kMaxDim);
  const auto k = r.integer("k", true, 1, kMaxDim);
  const auto batch = r.has("batch") ? r.integer("batch", true, 1, kMaxDim) : std::int64_t{1};
  const auto type = dtype(r);
  if (!all_set(m, n, k, batch, type)) return std::nullopt;
  return GemmShape{*m, *n, *k, *batch, *type};
}

void read_gemm(const nlohmann::json& node, const std::string& path, Diagnostics& d,
               std::vector<GemmPoint>& out) {
  JsonObjectReader r(node, path, d);
  if (!r.valid()) return;
  const auto shape = gemm_shape(r);
  const auto ta = r.boolean("transpose_a", false);
  const auto tb = r.boolean("transpose_b", false);
  const auto time = measured_time(r, d);
  r.finish();
  if (shape && time) out.push_back({*shape, ta.value_or(false), tb.value_or(false), *time});
}

std::optional<GroupPlacement> placement(JsonObjectReader& series, Diagnostics& d) {
  const nlohmann::json* node = series.child("group", true);
  if (node == nullptr) return std::nullopt;
  JsonObjectReader r(*node, series.child_path("group"), d);
  if (!r.valid()) return std::nullopt;
  const auto size = r.integer("size", true, 1, kMaxCount);
  const auto g = r.integer("gpus_per_node", true, 1, kMaxCount);
  const auto nodes = r.integer("nodes", true, 1, kMaxCount);
  r.finish();
  if (!all_set(size, g, nodes)) return std::nullopt;
  if (*size != *g * *nodes) {
    d.add(r.path(),
          fmt::format("size {} must equal gpus_per_node x nodes = {} x {}", *size, *g, *nodes));
    return std::nullopt;
  }
  return GroupPlacement{static_cast<int>(*size), static_cast<int>(*g), static_cast<int>(*nodes)};
}

std::optional<AlphaBeta> fit(JsonObjectReader& series, Diagnostics& d) {
  const nlohmann::json* node = series.child("fit", false);
  if (node == nullptr) return std::nullopt;
  JsonObjectReader r(*node, series.child_path("fit"), d);
  if (!r.valid()) return std::nullopt;
  const auto alpha = r.number("alpha_s", true, 0.0, kMaxPerEventDuration.to_seconds());
  const auto beta = r.number("beta_s_per_byte", true, 0.0, 1.0);
  r.finish();
  if (!all_set(alpha, beta)) return std::nullopt;
  return AlphaBeta{*alpha, *beta};
}

using SeriesKey = std::tuple<CollectiveKind, int, int, int>;

void read_series(const nlohmann::json& node, const std::string& path, Diagnostics& d,
                 std::map<SeriesKey, std::string>& seen, std::vector<CollectiveSeries>& out) {
  JsonObjectReader r(node, path, d);
  if (!r.valid()) return;
  const auto kind_name = r.choice(
      "kind", true,
      {"all-reduce", "all-gather", "reduce-scatter", "broadcast", "all-to-all", "send-recv"});
  const auto group = placement(r, d);
  const auto ab = fit(r, d);
  const bool fit_ok = !r.has("fit") || ab.has_value();
  CollectiveSeries series;
  bool points_ok = true;
  // Largest size so far of the out-of-place [0] and in-place [1] points.
  double last[2] = {0.0, 0.0};
  std::size_t elements = 0;
  for_each_element(r, "points", true, d, [&](const nlohmann::json& pn, const std::string& pp) {
    ++elements;
    JsonObjectReader pr(pn, pp, d);
    if (!pr.valid()) {
      points_ok = false;
      return;
    }
    const auto bytes = positive(pr, "bytes", true, kMaxBytes, d);
    const bool in_place = pr.boolean("in_place", false).value_or(false);
    const auto time = measured_time(pr, d);
    const auto correct = pr.boolean("correct", false);
    pr.finish();
    if (!all_set(bytes, time)) {
      points_ok = false;
      return;
    }
    double& previous = last[in_place ? 1 : 0];
    if (!(*bytes > previous)) {
      d.add(pr.child_path("bytes"),
            fmt::format("the {} points of a series must strictly increase in bytes; {} follows {}",
                        in_place ? "in-place" : "out-of-place", *bytes, previous));
      points_ok = false;
    }
    previous = *bytes;
    series.points.push_back({Bytes{*bytes}, in_place, *time, correct.value_or(true)});
  });
  if (elements == 0 && r.has("points") && node.at("points").is_array()) {
    d.add(r.child_path("points"), "a series needs at least one point");
    points_ok = false;
  }
  r.finish();
  if (!kind_name || !group || !fit_ok || !points_ok || series.points.empty()) return;
  series.kind = *parse_collective_kind(*kind_name);
  series.group = *group;
  series.fit = ab;
  const SeriesKey key{series.kind, group->size, group->gpus_per_node_in_group,
                      group->nodes_spanned};
  if (const auto it = seen.find(key); it != seen.end()) {
    d.add(path, fmt::format("a second {} series for {} GPUs ({} per node x {} nodes); the first "
                            "is {}",
                            *kind_name, group->size, group->gpus_per_node_in_group,
                            group->nodes_spanned, it->second));
    return;
  }
  seen.emplace(key, path);
  out.push_back(std::move(series));
}

void read_solver(const nlohmann::json& node, const std::string& path, Diagnostics& d,
                 std::vector<SolverPoint>& out) {
  JsonObjectReader r(node, path, d);
  if (!r.valid()) return;
  const auto solver = r.choice("solver", true, {"newton-db", "coupled-newton", "chebyshev", "evd"});
  const auto block = r.integer("block", true, 1, kMaxCount);
  const auto batch = r.integer("batch", true, 1, kMaxCount);
  auto iterations = r.integer("iterations", true, 0, kMaxCount);
  const auto type = dtype(r);
  const bool batched = r.boolean("batched", false).value_or(true);
  const auto time = measured_time(r, d);
  r.finish();
  if (solver && iterations && *solver != "evd" && *iterations < 1) {
    d.add(r.child_path("iterations"), fmt::format("{} is iterative: expected iterations >= 1, "
                                                  "got 0",
                                                  *solver));
    iterations.reset();
  }
  if (!all_set(solver, block, batch, iterations, type, time)) return;
  out.push_back({*solver, static_cast<int>(*block), static_cast<int>(*batch),
                 static_cast<int>(*iterations), *type, batched, *time});
}

void read_norm(const nlohmann::json& node, const std::string& path, Diagnostics& d,
               std::vector<NormPoint>& out) {
  JsonObjectReader r(node, path, d);
  if (!r.valid()) return;
  const auto rows = r.integer("rows", true, 1, kMaxDim);
  const auto hidden = r.integer("hidden", true, 1, kMaxDim);
  const bool fused = r.boolean("fused_statistic", false).value_or(false);
  const auto bytes = positive(r, "bytes", true, kMaxBytes, d);
  const auto time = measured_time(r, d);
  r.finish();
  if (!all_set(rows, hidden, bytes, time)) return;
  out.push_back({*rows, *hidden, fused, Bytes{*bytes}, *time});
}

void read_overlap(const nlohmann::json& node, const std::string& path, Diagnostics& d,
                  std::vector<OverlapPoint>& out) {
  JsonObjectReader r(node, path, d);
  if (!r.valid()) return;
  std::optional<GemmShape> shape;
  if (const nlohmann::json* g = r.child("gemm", true)) {
    JsonObjectReader gr(*g, r.child_path("gemm"), d);
    if (gr.valid()) shape = gemm_shape(gr);
    gr.finish();
  }
  const auto bytes = positive(r, "allreduce_bytes", true, kMaxBytes, d);
  const auto ga = positive(r, "gemm_alone_s", true, kMaxMeasuredSeconds, d);
  const auto go = positive(r, "gemm_overlapped_s", true, kMaxMeasuredSeconds, d);
  const auto aa = positive(r, "allreduce_alone_s", true, kMaxMeasuredSeconds, d);
  const auto ao = positive(r, "allreduce_overlapped_s", true, kMaxMeasuredSeconds, d);
  r.finish();
  if (!all_set(shape, bytes, ga, go, aa, ao)) return;
  out.push_back({*shape, Bytes{*bytes}, *ga, *go, *aa, *ao});
}

}  // namespace

void read_measurements(const nlohmann::json& node, const std::string& path, Diagnostics& d,
                       MeasuredTables& tables) {
  JsonObjectReader r(node, path, d);
  if (!r.valid()) return;
  for_each_element(r, "gemm", false, d, [&](const nlohmann::json& e, const std::string& p) {
    read_gemm(e, p, d, tables.gemm);
  });
  std::map<SeriesKey, std::string> seen;
  for_each_element(r, "collectives", false, d, [&](const nlohmann::json& e, const std::string& p) {
    read_series(e, p, d, seen, tables.collectives);
  });
  for_each_element(r, "solvers", false, d, [&](const nlohmann::json& e, const std::string& p) {
    read_solver(e, p, d, tables.solvers);
  });
  for_each_element(r, "norms", false, d, [&](const nlohmann::json& e, const std::string& p) {
    read_norm(e, p, d, tables.norms);
  });
  if (const nlohmann::json* launch = r.child("launch_overhead", false)) {
    JsonObjectReader lr(*launch, r.child_path("launch_overhead"), d);
    if (lr.valid()) {
      tables.launch_overhead = measured_time(lr, d);
      if (tables.launch_overhead &&
          tables.launch_overhead->median_s > kMaxPerEventDuration.to_seconds()) {
        d.add(lr.child_path("median_s"),
              fmt::format("expected a launch overhead of at most {} s, got {}",
                          kMaxPerEventDuration.to_seconds(), tables.launch_overhead->median_s));
        tables.launch_overhead.reset();
      }
    }
    lr.finish();
  }
  for_each_element(r, "overlap", false, d, [&](const nlohmann::json& e, const std::string& p) {
    read_overlap(e, p, d, tables.overlap);
  });
  r.finish();
}

void read_provenance(const nlohmann::json& node, const std::string& path, Diagnostics& d,
                     Provenance& p) {
  JsonObjectReader r(node, path, d);
  if (!r.valid()) return;
  auto text = [&](const char* key, std::string& field) {
    if (auto v = r.string(key, false)) field = std::move(*v);
  };
  auto count = [&](const char* key, int& field) {
    if (auto v = r.integer(key, false, 0, kMaxCount)) field = static_cast<int>(*v);
  };
  visit_provenance(p, text, count);
  r.finish();
}

}  // namespace parasim::cost
