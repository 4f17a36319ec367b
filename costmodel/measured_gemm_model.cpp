#include "costmodel/measured_gemm_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace parasim::cost {
namespace {

constexpr const char* kDimensionNames[4] = {"m", "n", "k", "batch"};

std::size_t index_of(Dtype d) {
  return static_cast<std::size_t>(d);
}

std::array<std::int64_t, 4> dims(const GemmShape& s) {
  return {s.m, s.n, s.k, s.batch};
}

std::array<double, 4> log_coordinates(const GemmShape& s) {
  const auto d = dims(s);
  return {std::log(static_cast<double>(d[0])), std::log(static_cast<double>(d[1])),
          std::log(static_cast<double>(d[2])), std::log(static_cast<double>(d[3]))};
}

}  // namespace

MeasuredGemmModel::MeasuredGemmModel(DeviceSpec device, GemmEfficiencyParams params,
                                     std::vector<GemmPoint> points,
                                     std::shared_ptr<CostWarnings> warnings)
    : roofline_(std::move(device), params), warnings_(std::move(warnings)) {
  if (!warnings_) throw std::invalid_argument("MeasuredGemmModel: null warnings sink");
  // One point per (dtype, m, n, k, batch): the first of NN, NT, TN, TT (header).
  std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t, std::int64_t>,
           const GemmPoint*>
      chosen;
  for (const GemmPoint& p : points) {
    validate(p.shape);
    if (!(p.time.median_s > 0.0)) {
      throw std::invalid_argument(fmt::format("measured GEMM {}x{}x{}: median must be > 0",
                                              p.shape.m, p.shape.n, p.shape.k));
    }
    const auto key = std::make_tuple(static_cast<int>(p.shape.dtype), p.shape.m, p.shape.n,
                                     p.shape.k, p.shape.batch);
    auto [it, inserted] = chosen.emplace(key, &p);
    const auto layout = [](const GemmPoint* g) {
      return std::make_pair(g->transpose_a, g->transpose_b);
    };
    if (!inserted && layout(&p) < layout(it->second)) it->second = &p;
  }
  for (const auto& [key, p] : chosen) {
    const DeviceSpec& dev = roofline_.device();
    if (!(dev.peak(p->shape.dtype).flop_per_s > 0.0)) {
      warnings_->add(
          fmt::format("measured {} GEMMs ignored: device {} has no {} peak to compare "
                      "them with",
                      dtype_name(p->shape.dtype), dev.name, dtype_name(p->shape.dtype)));
      continue;
    }
    const double roofline_s = roofline_.gemm_time(p->shape).to_seconds();
    Table& t = tables_[index_of(p->shape.dtype)];
    t.anchors.push_back(Anchor{log_coordinates(p->shape), p->shape, p->time.median_s,
                               std::log(p->time.median_s / roofline_s)});
  }
  // Anchors are in key order (dtype, m, n, k, batch): deterministic whatever the file order.
  for (Table& t : tables_) {
    if (t.anchors.empty()) continue;
    t.lo = t.hi = dims(t.anchors.front().shape);
    for (const Anchor& a : t.anchors) {
      const auto d = dims(a.shape);
      for (std::size_t i = 0; i < 4; ++i) {
        t.lo[i] = std::min(t.lo[i], d[i]);
        t.hi[i] = std::max(t.hi[i], d[i]);
      }
    }
  }
}

const MeasuredGemmModel::Table* MeasuredGemmModel::table_of(const GemmShape& shape) const {
  const Table& t = tables_[index_of(shape.dtype)];
  if (t.anchors.empty()) {
    warnings_->add(
        fmt::format("no measured {} GEMMs in the profile: {} GEMMs use the roofline "
                    "model",
                    dtype_name(shape.dtype), dtype_name(shape.dtype)));
    return nullptr;
  }
  return &t;
}

const MeasuredGemmModel::Anchor* MeasuredGemmModel::exact(const Table& table,
                                                          const GemmShape& shape) const {
  for (const Anchor& a : table.anchors) {
    if (a.shape == shape) return &a;
  }
  return nullptr;
}

void MeasuredGemmModel::warn_outside(const Table& table, const GemmShape& shape) const {
  const auto d = dims(shape);
  for (std::size_t i = 0; i < 4; ++i) {
    if (d[i] >= table.lo[i] && d[i] <= table.hi[i]) continue;
    warnings_->add(
        fmt::format("measured GEMM table: {} {} = {} is outside the measured range "
                    "[{}, {}]; its time is extrapolated from the nearest measured "
                    "shapes",
                    dtype_name(shape.dtype), kDimensionNames[i], d[i], table.lo[i], table.hi[i]));
  }
}

double MeasuredGemmModel::interpolated_log_correction(const Table& table,
                                                      const GemmShape& shape) const {
  const auto x = log_coordinates(shape);
  std::vector<std::pair<double, std::size_t>> by_distance;
  by_distance.reserve(table.anchors.size());
  for (std::size_t i = 0; i < table.anchors.size(); ++i) {
    double d2 = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      const double diff = x[j] - table.anchors[i].x[j];
      d2 += diff * diff;
    }
    by_distance.emplace_back(d2, i);
  }
  const std::size_t k = std::min<std::size_t>(kNeighbours, by_distance.size());
  std::partial_sort(by_distance.begin(), by_distance.begin() + static_cast<std::ptrdiff_t>(k),
                    by_distance.end());
  double weighted = 0, weights = 0;
  for (std::size_t i = 0; i < k; ++i) {
    const double w = 1.0 / by_distance[i].first;  // > 0: the shape is not a measured one
    weighted += w * table.anchors[by_distance[i].second].log_correction;
    weights += w;
  }
  return weighted / weights;
}

double MeasuredGemmModel::correction(const GemmShape& shape) const {
  validate(shape);
  const Table* t = table_of(shape);
  if (t == nullptr) return 1.0;
  if (const Anchor* a = exact(*t, shape)) return std::exp(a->log_correction);
  warn_outside(*t, shape);
  return std::exp(interpolated_log_correction(*t, shape));
}

sim::Time MeasuredGemmModel::gemm_time(const GemmShape& shape) const {
  validate(shape);
  const Table* t = table_of(shape);
  if (t == nullptr) return roofline_.gemm_time(shape);
  if (const Anchor* a = exact(*t, shape)) return sim::Time::seconds(a->median_s);
  warn_outside(*t, shape);
  const double c = std::exp(interpolated_log_correction(*t, shape));
  return sim::Time::seconds(roofline_.gemm_time(shape).to_seconds() * c);
}

double MeasuredGemmModel::efficiency(const GemmShape& shape) const {
  const double t = gemm_time(shape).to_seconds();
  const double peak = roofline_.device().peak(shape.dtype).flop_per_s;
  if (!(t > 0.0) || !(peak > 0.0)) return 1.0;
  return std::min(1.0, shape.flops().value / (peak * t));
}

}  // namespace parasim::cost
