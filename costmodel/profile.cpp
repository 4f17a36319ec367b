#include "costmodel/profile.hpp"

#include <fmt/format.h>

#include "costmodel/json_fields.hpp"
#include "costmodel/measured_tables_reader.hpp"

namespace parasim::cost {
namespace {

template <typename T, typename U>
void assign(T& field, const std::optional<U>& value) {
  if (value) field = static_cast<T>(*value);
}

// A number in [lo, hi] (profiles carry dimensionless fractions as plain numbers).
std::optional<double> fraction(JsonObjectReader& r, std::string_view key, double lo, double hi) {
  return r.number(key, false, lo, hi);
}

// provenance, complete and measurements (version 2 only).
void read_version_2(JsonObjectReader& r, const std::optional<std::int64_t>& version, Diagnostics& d,
                    Profile& p) {
  for (const char* key : {"provenance", "complete", "measurements"}) {
    if (r.has(key) && version && *version < 2) {
      d.add(r.child_path(key), "needs \"parasim_profile\": 2 (measured tables are version 2)");
    }
  }
  if (const auto* prov = r.child("provenance", false)) {
    read_provenance(*prov, r.child_path("provenance"), d, p.measured.provenance);
  }
  assign(p.measured.complete, r.boolean("complete", false));
  if (const auto* m = r.child("measurements", false)) {
    read_measurements(*m, r.child_path("measurements"), d, p.measured);
  }
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
  if (gemm.ceiling || !measured.gemm.empty()) c.device.kernels.calibrated = true;
  return c;
}

Profile parse_profile(const std::string& text, const std::string& file_name,
                      std::size_t max_file_bytes) {
  Diagnostics d(file_name);
  if (text.size() > max_file_bytes) {
    d.add("", file_too_large_message(text.size(), max_file_bytes, "profile"));
    throw InputError(std::move(d));
  }
  const std::optional<nlohmann::json> document = parse_json_document(text, d);
  if (!document) throw InputError(std::move(d));
  const nlohmann::json& root = *document;
  Profile p;
  p.file = file_name;
  JsonObjectReader r(root, "", d);
  if (!r.valid()) throw InputError(std::move(d));
  const auto version = r.integer("parasim_profile", true, 1, 1000);
  if (version && *version > kProfileVersion) {
    d.add("/parasim_profile",
          fmt::format("this parasim reads profile versions 1 and 2, got {}", *version));
  }
  assign(p.source, r.string("source", false));
  r.string("$schema", false);
  if (const auto* dev = r.child("device", false)) {
    JsonObjectReader dr(*dev, "/device", d);
    if (const auto* peak = dr.child("peak", false)) {
      JsonObjectReader pr(*peak, "/device/peak", d);
      // A profile's peak is a rate to compute with: positive (the scenario says what a device
      // lacks).
      p.peak_bf16 = pr.flop_rate("bf16", false, kRanges.flop_rate);
      p.peak_fp16 = pr.flop_rate("fp16", false, kRanges.flop_rate);
      p.peak_fp32 = pr.flop_rate("fp32", false, kRanges.flop_rate);
      p.peak_tf32 = pr.flop_rate("tf32", false, kRanges.flop_rate);
      p.peak_fp8 = pr.flop_rate("fp8", false, kRanges.flop_rate);
      pr.finish();
    }
    p.hbm_bandwidth = dr.bandwidth("hbm_bandwidth", false, kRanges.bandwidth);
    p.kernel_launch_overhead = dr.time("kernel_launch_overhead", false, kMaxPerEventDuration);
    dr.finish();
  }
  for (const char* key : {"intra_node", "inter_node"}) {
    const auto* link = r.child(key, false);
    if (link == nullptr) continue;
    JsonObjectReader lr(*link, r.child_path(key), d);
    const bool intra = std::string_view(key) == "intra_node";
    (intra ? p.intra_bandwidth : p.inter_bandwidth) = lr.bandwidth("bandwidth", false, kRanges.bandwidth);
    (intra ? p.intra_latency : p.inter_latency) = lr.time("latency", false, kMaxPerEventDuration);
    lr.finish();
  }
  if (const auto* gemm = r.child("gemm", false)) {
    JsonObjectReader gr(*gemm, "/gemm", d);
    assign(p.gemm.ceiling, fraction(gr, "ceiling", 1e-3, 1.0));
    assign(p.gemm.tile_m, gr.integer("tile_m", false, 1, 4096));
    assign(p.gemm.tile_n, gr.integer("tile_n", false, 1, 4096));
    assign(p.gemm.ctas_per_sm, gr.integer("ctas_per_sm", false, 1, 64));
    assign(p.gemm.k_half, fraction(gr, "k_half", 0.0, 1e9));
    assign(p.gemm.k_ref, fraction(gr, "k_ref", 1.0, 1e9));
    assign(p.gemm.memory_efficiency, fraction(gr, "memory_efficiency", 1e-3, 1.0));
    gr.finish();
  }
  p.memory_efficiency = fraction(r, "memory_efficiency", 1e-3, 1.0);
  read_version_2(r, version, d, p);
  r.finish();
  if (!d.ok()) throw InputError(std::move(d));
  return p;
}

Profile load_profile(const std::string& path, std::size_t max_file_bytes) {
  Diagnostics d(path);
  const std::optional<std::string> text = read_input_file(path, max_file_bytes, "profile", d);
  if (!text) throw InputError(std::move(d));
  return parse_profile(*text, path, max_file_bytes);
}

}  // namespace parasim::cost
