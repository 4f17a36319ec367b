#include "costmodel/compute_cost.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace parasim::cost {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

double as_double(std::int64_t v) {
  return static_cast<double>(v);
}

// r(k) = k / (k + k_half), the fraction of per-tile time spent in the main loop.
double main_loop_fraction(double k, double k_half) {
  return k / (k + k_half);
}

}  // namespace

Flops GemmShape::flops() const {
  return Flops{2.0 * as_double(m) * as_double(n) * as_double(k) * as_double(batch)};
}

Bytes GemmShape::bytes() const {
  const double elements =
      (as_double(m) * as_double(k) + as_double(k) * as_double(n) + as_double(m) * as_double(n)) *
      as_double(batch);
  return Bytes{elements * bytes_per_element(dtype)};
}

void validate(const GemmShape& shape) {
  if (shape.m < 1 || shape.n < 1 || shape.k < 1 || shape.batch < 1) {
    throw std::invalid_argument(
        fmt::format("GEMM shape needs m, n, k, batch >= 1, got m={} n={} k={} batch={}", shape.m,
                    shape.n, shape.k, shape.batch));
  }
}

GemmCostModel::~GemmCostModel() = default;

void validate(const GemmEfficiencyParams& params) {
  auto fail = [](const std::string& what) {
    throw std::invalid_argument("GEMM efficiency parameters: " + what);
  };
  if (params.ceiling && !(*params.ceiling > 0.0 && *params.ceiling <= 1.0)) {
    fail(fmt::format("ceiling must be in (0, 1], got {}", *params.ceiling));
  }
  if (params.tile_m < 1 || params.tile_n < 1) {
    fail(fmt::format("tile must be at least 1x1, got {}x{}", params.tile_m, params.tile_n));
  }
  if (params.ctas_per_sm < 1) {
    fail(fmt::format("ctas_per_sm must be >= 1, got {}", params.ctas_per_sm));
  }
  if (params.k_half && !(*params.k_half >= 0.0)) {
    fail(fmt::format("k_half must be >= 0, got {}", *params.k_half));
  }
  if (!(params.k_ref > 0.0)) fail(fmt::format("k_ref must be > 0, got {}", params.k_ref));
  if (!(params.memory_efficiency > 0.0 && params.memory_efficiency <= 1.0)) {
    fail(fmt::format("memory_efficiency must be in (0, 1], got {}", params.memory_efficiency));
  }
}

RooflineGemmModel::RooflineGemmModel(DeviceSpec device, GemmEfficiencyParams params)
    : device_(std::move(device)), params_(params) {
  validate(params_);
  validate(device_.kernels);
  if (device_.sm_count < 0) {
    throw std::invalid_argument(
        fmt::format("device {}: sm_count must be >= 0, got {}", device_.name, device_.sm_count));
  }
}

GemmEfficiencyBreakdown RooflineGemmModel::breakdown(const GemmShape& shape) const {
  validate(shape);
  GemmEfficiencyBreakdown b;
  b.ceiling = ceiling(shape.dtype);

  const std::int64_t tiles_m = ceil_div(shape.m, params_.tile_m);
  const std::int64_t tiles_n = ceil_div(shape.n, params_.tile_n);
  b.tile = (as_double(shape.m) * as_double(shape.n)) /
           (as_double(tiles_m * params_.tile_m) * as_double(tiles_n * params_.tile_n));

  b.tiles = tiles_m * tiles_n * shape.batch;
  if (device_.sm_count > 0) {
    const std::int64_t capacity = static_cast<std::int64_t>(device_.sm_count) * params_.ctas_per_sm;
    b.waves = ceil_div(b.tiles, capacity);
    b.wave = as_double(b.tiles) / (as_double(b.waves) * as_double(capacity));
  }

  const double r_ref = main_loop_fraction(params_.k_ref, k_half());
  b.small_k = std::min(1.0, main_loop_fraction(as_double(shape.k), k_half()) / r_ref);
  return b;
}

double RooflineGemmModel::ceiling(Dtype dtype) const {
  return params_.ceiling ? *params_.ceiling : device_.kernels.gemm_ceiling(dtype);
}

double RooflineGemmModel::k_half() const {
  return params_.k_half ? *params_.k_half : device_.kernels.gemm_k_half;
}

double RooflineGemmModel::efficiency(const GemmShape& shape) const {
  return breakdown(shape).efficiency();
}

sim::Time RooflineGemmModel::compute_time(const GemmShape& shape) const {
  const FlopRate peak = device_.peak(shape.dtype);
  if (!(peak.flop_per_s > 0.0)) {
    throw std::invalid_argument(fmt::format("device {} has no {} peak; cannot cost this GEMM",
                                            device_.name, dtype_name(shape.dtype)));
  }
  return shape.flops() / (peak * efficiency(shape));
}

sim::Time RooflineGemmModel::memory_time(const GemmShape& shape) const {
  validate(shape);
  return memory_bound_time(shape.bytes(), device_, params_.memory_efficiency);
}

sim::Time RooflineGemmModel::gemm_time(const GemmShape& shape) const {
  return sim::max(sim::max(compute_time(shape), memory_time(shape)),
                  device_.kernels.min_gemm_body);
}

sim::Time memory_bound_time(Bytes moved, const DeviceSpec& device, double memory_efficiency) {
  if (!(memory_efficiency > 0.0 && memory_efficiency <= 1.0)) {
    throw std::invalid_argument(
        fmt::format("memory_efficiency must be in (0, 1], got {}", memory_efficiency));
  }
  if (!(device.hbm_bandwidth.bytes_per_s > 0.0)) {
    throw std::invalid_argument(fmt::format(
        "device {} has no HBM bandwidth; cannot cost a memory-bound kernel", device.name));
  }
  return moved / (device.hbm_bandwidth * memory_efficiency);
}

sim::Time memory_bound_time(Bytes moved, const DeviceSpec& device) {
  return memory_bound_time(moved, device, device.kernels.memory_streaming);
}

sim::Time kernel_time(sim::Time body, const DeviceSpec& device) {
  return body + device.kernel_launch_overhead;
}

}  // namespace parasim::cost
