#include "costmodel/profile.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "costmodel/json_fields.hpp"

namespace parasim::cost {
namespace {

template <typename T, typename U>
void assign(T& field, const std::optional<U>& value) {
  if (value) field = static_cast<T>(*value);
}

// A number in [lo, hi] (profiles carry dimensionless fractions as plain numbers).
std::optional<double> fraction(JsonObjectReader& r, std::string_view key, double lo, double hi,
                               Diagnostics& d) {
  const nlohmann::json* j = r.child(key, false);
  if (j == nullptr) return std::nullopt;
  if (!j->is_number() || j->get<double>() < lo || j->get<double>() > hi) {
    d.add(r.child_path(key), fmt::format("expected a number in [{}, {}], got {}", lo, hi, j->dump()));
    return std::nullopt;
  }
  return j->get<double>();
}

}  // namespace

ClusterSpec Profile::apply(ClusterSpec c) const {
  assign(c.device.peak_bf16, peak_bf16);
  assign(c.device.peak_fp16, peak_fp16);
  assign(c.device.peak_fp32, peak_fp32);
  assign(c.device.peak_tf32, peak_tf32);
  assign(c.device.peak_fp8, peak_fp8);
  assign(c.device.hbm_bandwidth, hbm_bandwidth);
  assign(c.device.kernel_launch_overhead, kernel_launch_overhead);
  assign(c.intra_node.bandwidth, intra_bandwidth);
  assign(c.intra_node.latency, intra_latency);
  assign(c.inter_node.bandwidth, inter_bandwidth);
  assign(c.inter_node.latency, inter_latency);
  return c;
}

Profile parse_profile(const std::string& text, const std::string& file_name) {
  Diagnostics d(file_name);
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    d.add("", fmt::format("invalid JSON at byte {}: {}", e.byte, e.what()));
    throw InputError(std::move(d));
  }
  Profile p;
  p.file = file_name;
  JsonObjectReader r(root, "", d);
  if (!r.valid()) throw InputError(std::move(d));
  if (auto v = r.integer("parasim_profile", true, 1, 1000); v && *v != 1) {
    d.add("/parasim_profile", fmt::format("this parasim reads profile version 1, got {}", *v));
  }
  assign(p.source, r.string("source", false));
  r.string("$schema", false);
  if (const auto* dev = r.child("device", false)) {
    JsonObjectReader dr(*dev, "/device", d);
    if (const auto* peak = dr.child("peak", false)) {
      JsonObjectReader pr(*peak, "/device/peak", d);
      p.peak_bf16 = pr.flop_rate("bf16", false);
      p.peak_fp16 = pr.flop_rate("fp16", false);
      p.peak_fp32 = pr.flop_rate("fp32", false);
      p.peak_tf32 = pr.flop_rate("tf32", false);
      p.peak_fp8 = pr.flop_rate("fp8", false);
      pr.finish();
    }
    p.hbm_bandwidth = dr.bandwidth("hbm_bandwidth", false);
    p.kernel_launch_overhead = dr.time("kernel_launch_overhead", false);
    dr.finish();
  }
  for (const char* key : {"intra_node", "inter_node"}) {
    const auto* link = r.child(key, false);
    if (link == nullptr) continue;
    JsonObjectReader lr(*link, r.child_path(key), d);
    const bool intra = std::string_view(key) == "intra_node";
    (intra ? p.intra_bandwidth : p.inter_bandwidth) = lr.bandwidth("bandwidth", false);
    (intra ? p.intra_latency : p.inter_latency) = lr.time("latency", false);
    lr.finish();
  }
  if (const auto* gemm = r.child("gemm", false)) {
    JsonObjectReader gr(*gemm, "/gemm", d);
    assign(p.gemm.ceiling, fraction(gr, "ceiling", 1e-3, 1.0, d));
    assign(p.gemm.tile_m, gr.integer("tile_m", false, 1, 4096));
    assign(p.gemm.tile_n, gr.integer("tile_n", false, 1, 4096));
    assign(p.gemm.ctas_per_sm, gr.integer("ctas_per_sm", false, 1, 64));
    assign(p.gemm.k_half, fraction(gr, "k_half", 0.0, 1e9, d));
    assign(p.gemm.k_ref, fraction(gr, "k_ref", 1.0, 1e9, d));
    assign(p.gemm.memory_efficiency, fraction(gr, "memory_efficiency", 1e-3, 1.0, d));
    gr.finish();
  }
  assign(p.memory_efficiency, fraction(r, "memory_efficiency", 1e-3, 1.0, d));
  r.finish();
  if (!d.ok()) throw InputError(std::move(d));
  return p;
}

Profile load_profile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    Diagnostics d(path);
    d.add("", "cannot open the profile (does it exist and is it readable?)");
    throw InputError(std::move(d));
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  return parse_profile(buf.str(), path);
}

CostModel make_cost_model(const ClusterSpec& cluster, const Profile* profile) {
  if (profile == nullptr) return CostModel(cluster);
  return CostModel(profile->apply(cluster), profile->gemm, profile->memory_efficiency);
}

}  // namespace parasim::cost
