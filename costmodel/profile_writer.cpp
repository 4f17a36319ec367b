#include "costmodel/profile_writer.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace parasim::cost {
namespace {

using Json = nlohmann::ordered_json;

// Shortest text that reads back to the same double (fmt's default), in base units.
std::string quantity(double value, const char* unit) {
  return fmt::format("{} {}", value, unit);
}
std::string time_text(sim::Time t) {
  return fmt::format("{} ps", t.picoseconds());
}

// Byte counts are integers in practice; written as JSON integers when exactly so.
Json bytes_number(double v) {
  if (std::floor(v) == v && std::fabs(v) < 9.0e15) return static_cast<std::int64_t>(v);
  return v;
}

void put_time(Json& j, const MeasuredTime& t) {
  j["median_s"] = t.median_s;
  j["p20_s"] = t.p20_s;
  j["p80_s"] = t.p80_s;
  j["samples"] = t.samples;
}

Json shape_json(const GemmShape& s) {
  Json j;
  j["m"] = s.m;
  j["n"] = s.n;
  j["k"] = s.k;
  j["batch"] = s.batch;
  j["dtype"] = dtype_name(s.dtype);
  return j;
}

Json device_json(const Profile& p) {
  Json dev = Json::object();
  Json peak = Json::object();
  const std::pair<const char*, const std::optional<FlopRate>*> peaks[] = {{"bf16", &p.peak_bf16},
                                                                          {"fp16", &p.peak_fp16},
                                                                          {"fp32", &p.peak_fp32},
                                                                          {"tf32", &p.peak_tf32},
                                                                          {"fp8", &p.peak_fp8}};
  for (const auto& [name, rate] : peaks) {
    if (*rate) peak[name] = quantity((*rate)->flop_per_s, "FLOP/s");
  }
  if (!peak.empty()) dev["peak"] = peak;
  if (p.hbm_bandwidth) dev["hbm_bandwidth"] = quantity(p.hbm_bandwidth->bytes_per_s, "B/s");
  if (p.kernel_launch_overhead) {
    dev["kernel_launch_overhead"] = time_text(*p.kernel_launch_overhead);
  }
  return dev;
}

Json link_json(const std::optional<Bandwidth>& bw, const std::optional<sim::Time>& latency) {
  Json j = Json::object();
  if (bw) j["bandwidth"] = quantity(bw->bytes_per_s, "B/s");
  if (latency) j["latency"] = time_text(*latency);
  return j;
}

Json gemm_json(const GemmEfficiencyParams& g) {
  const GemmEfficiencyParams d;
  Json j = Json::object();
  if (g.ceiling) j["ceiling"] = *g.ceiling;
  if (g.tile_m != d.tile_m) j["tile_m"] = g.tile_m;
  if (g.tile_n != d.tile_n) j["tile_n"] = g.tile_n;
  if (g.ctas_per_sm != d.ctas_per_sm) j["ctas_per_sm"] = g.ctas_per_sm;
  if (g.k_half) j["k_half"] = *g.k_half;
  if (g.k_ref != d.k_ref) j["k_ref"] = g.k_ref;
  if (g.memory_efficiency != d.memory_efficiency) j["memory_efficiency"] = g.memory_efficiency;
  return j;
}

Json provenance_json(const Provenance& p) {
  Json j = Json::object();
  auto text = [&](const char* key, const std::string& v) {
    if (!v.empty()) j[key] = v;
  };
  auto count = [&](const char* key, int v) {
    if (v != 0) j[key] = v;
  };
  visit_provenance(p, text, count);
  return j;
}

Json series_json(const CollectiveSeries& s) {
  Json j;
  j["kind"] = collective_name(s.kind);
  j["group"] = Json{{"size", s.group.size},
                    {"gpus_per_node", s.group.gpus_per_node_in_group},
                    {"nodes", s.group.nodes_spanned}};
  if (s.fit) {
    j["fit"] = Json{{"alpha_s", s.fit->alpha_s}, {"beta_s_per_byte", s.fit->beta_s_per_byte}};
  }
  Json points = Json::array();
  for (const auto& p : s.points) {
    Json q;
    q["bytes"] = bytes_number(p.message.value);
    q["in_place"] = p.in_place;
    put_time(q, p.time);
    q["correct"] = p.correct;
    points.push_back(std::move(q));
  }
  j["points"] = std::move(points);
  return j;
}

Json measurements_json(const MeasuredTables& t) {
  Json m = Json::object();
  if (!t.gemm.empty()) {
    Json& a = m["gemm"] = Json::array();
    for (const auto& g : t.gemm) {
      Json j = shape_json(g.shape);
      j["transpose_a"] = g.transpose_a;
      j["transpose_b"] = g.transpose_b;
      put_time(j, g.time);
      a.push_back(std::move(j));
    }
  }
  if (!t.collectives.empty()) {
    Json& a = m["collectives"] = Json::array();
    for (const auto& s : t.collectives) a.push_back(series_json(s));
  }
  if (!t.solvers.empty()) {
    Json& a = m["solvers"] = Json::array();
    for (const auto& s : t.solvers) {
      Json j;
      j["solver"] = s.solver;
      j["block"] = s.block;
      j["batch"] = s.batch;
      j["iterations"] = s.iterations;
      j["dtype"] = dtype_name(s.dtype);
      j["batched"] = s.batched;
      put_time(j, s.time);
      a.push_back(std::move(j));
    }
  }
  if (!t.norms.empty()) {
    Json& a = m["norms"] = Json::array();
    for (const auto& n : t.norms) {
      Json j;
      j["rows"] = n.rows;
      j["hidden"] = n.hidden;
      j["fused_statistic"] = n.fused_statistic;
      j["bytes"] = bytes_number(n.moved.value);
      put_time(j, n.time);
      a.push_back(std::move(j));
    }
  }
  if (t.launch_overhead) {
    Json j;
    put_time(j, *t.launch_overhead);
    m["launch_overhead"] = std::move(j);
  }
  if (!t.overlap.empty()) {
    Json& a = m["overlap"] = Json::array();
    for (const auto& o : t.overlap) {
      Json j;
      j["gemm"] = shape_json(o.gemm);
      j["allreduce_bytes"] = bytes_number(o.allreduce_message.value);
      j["gemm_alone_s"] = o.gemm_alone_s;
      j["gemm_overlapped_s"] = o.gemm_overlapped_s;
      j["allreduce_alone_s"] = o.allreduce_alone_s;
      j["allreduce_overlapped_s"] = o.allreduce_overlapped_s;
      a.push_back(std::move(j));
    }
  }
  return m;
}

}  // namespace

std::string format_profile(const Profile& p) {
  Json root;
  root["parasim_profile"] = kProfileVersion;
  if (!p.source.empty()) root["source"] = p.source;
  if (Json dev = device_json(p); !dev.empty()) root["device"] = std::move(dev);
  if (Json l = link_json(p.intra_bandwidth, p.intra_latency); !l.empty()) root["intra_node"] = l;
  if (Json l = link_json(p.inter_bandwidth, p.inter_latency); !l.empty()) root["inter_node"] = l;
  if (Json g = gemm_json(p.gemm); !g.empty()) root["gemm"] = std::move(g);
  if (p.memory_efficiency) root["memory_efficiency"] = *p.memory_efficiency;
  const MeasuredTables& t = p.measured;
  Json prov = provenance_json(t.provenance);
  if (!t.empty() || !prov.empty() || t.complete) {
    if (!prov.empty()) root["provenance"] = std::move(prov);
    root["complete"] = t.complete;
    root["measurements"] = measurements_json(t);
  }
  return root.dump(2) + "\n";
}

}  // namespace parasim::cost
