#include "costmodel/kernel_efficiency_json.hpp"

#include <fmt/format.h>

#include <optional>
#include <vector>

#include "costmodel/json_fields.hpp"

namespace parasim::cost {
namespace {

// Fractions are read as in profiles: (0, 1] as [1e-3, 1].
constexpr double kMinFraction = 1e-3;

void assign(double& field, const std::optional<double>& v) {
  if (v) field = *v;
}

// A JSON array of numbers in [lo, hi] of at most kMaxFlashAxis entries; nullopt on a problem.
std::optional<std::vector<double>> numbers(const nlohmann::json& j, const std::string& path,
                                           double lo, double hi, Diagnostics& d) {
  if (!j.is_array() || j.empty()) {
    d.add(path, "expected a non-empty array of numbers, got " + json_type_name(j));
    return std::nullopt;
  }
  if (j.size() > kMaxFlashAxis) {
    d.add(path, fmt::format("at most {} entries, got {}", kMaxFlashAxis, j.size()));
    return std::nullopt;
  }
  std::vector<double> out;
  bool ok = true;
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_number() || !(j[i].get<double>() >= lo && j[i].get<double>() <= hi)) {
      d.add(fmt::format("{}/{}", path, i),
            fmt::format("expected a number in [{}, {}], got {}", lo, hi, j[i].dump()));
      ok = false;
      continue;
    }
    out.push_back(j[i].get<double>());
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::vector<double>> axis(JsonObjectReader& r, const char* key, Diagnostics& d) {
  const nlohmann::json* j = r.child(key, true);
  if (j == nullptr) return std::nullopt;
  auto v = numbers(*j, r.child_path(key), 1.0, 1e9, d);
  if (!v) return std::nullopt;
  for (std::size_t i = 1; i < v->size(); ++i) {
    if (!((*v)[i] > (*v)[i - 1])) {
      d.add(r.child_path(key), "expected strictly increasing values");
      return std::nullopt;
    }
  }
  return v;
}

// rows x columns efficiencies, row-major.
std::optional<std::vector<double>> grid(JsonObjectReader& r, const char* key, std::size_t rows,
                                        std::size_t columns, Diagnostics& d) {
  const nlohmann::json* j = r.child(key, true);
  if (j == nullptr) return std::nullopt;
  const std::string path = r.child_path(key);
  if (!j->is_array() || j->size() != rows) {
    d.add(path,
          fmt::format("expected an array of {} rows (one per head dimension), got {}", rows,
                      j->is_array() ? fmt::format("{} rows", j->size()) : json_type_name(*j)));
    return std::nullopt;
  }
  std::vector<double> out;
  bool ok = true;
  for (std::size_t i = 0; i < rows; ++i) {
    const std::string row_path = fmt::format("{}/{}", path, i);
    auto row = numbers((*j)[i], row_path, kMinFraction, 1.0, d);
    if (!row) {
      ok = false;
      continue;
    }
    if (row->size() != columns) {
      d.add(row_path, fmt::format("expected {} values (one per sequence length), got {}", columns,
                                  row->size()));
      ok = false;
      continue;
    }
    out.insert(out.end(), row->begin(), row->end());
  }
  if (!ok) return std::nullopt;
  return out;
}

void read_flash(const nlohmann::json& node, const std::string& path, Diagnostics& d,
                FlashAttentionTable& flash) {
  JsonObjectReader r(node, path, d);
  const auto head_dims = axis(r, "head_dims", d);
  const auto seq_lens = axis(r, "seq_lens", d);
  std::optional<std::vector<double>> forward, backward;
  if (head_dims && seq_lens) {
    forward = grid(r, "forward", head_dims->size(), seq_lens->size(), d);
    backward = grid(r, "backward", head_dims->size(), seq_lens->size(), d);
  } else {
    r.child("forward", true);
    r.child("backward", true);
  }
  r.finish();
  if (head_dims && seq_lens && forward && backward) {
    flash = FlashAttentionTable{*head_dims, *seq_lens, *forward, *backward};
  }
}

}  // namespace

void read_kernel_efficiency(const nlohmann::json& node, const std::string& path, Diagnostics& d,
                            KernelEfficiency& k) {
  JsonObjectReader r(node, path, d);
  if (!r.valid()) return;
  if (const auto* ceilings = r.child("gemm_ceiling", false)) {
    JsonObjectReader c(*ceilings, r.child_path("gemm_ceiling"), d);
    assign(k.gemm_ceiling_bf16, c.number("bf16", false, kMinFraction, 1.0));
    assign(k.gemm_ceiling_fp16, c.number("fp16", false, kMinFraction, 1.0));
    assign(k.gemm_ceiling_tf32, c.number("tf32", false, kMinFraction, 1.0));
    assign(k.gemm_ceiling_fp32, c.number("fp32", false, kMinFraction, 1.0));
    assign(k.gemm_ceiling_fp8, c.number("fp8", false, kMinFraction, 1.0));
    c.finish();
  }
  assign(k.gemm_k_half, r.number("gemm_k_half", false, 0.0, 1e6));
  if (const auto t = r.time("min_gemm_body", false, kMaxPerEventDuration)) k.min_gemm_body = *t;
  assign(k.memory_streaming, r.number("memory_efficiency", false, kMinFraction, 1.0));
  if (const auto* flash = r.child("flash_attention", false)) {
    read_flash(*flash, r.child_path("flash_attention"), d, k.flash);
  }
  r.finish();
  k.calibrated = true;
}

}  // namespace parasim::cost
