#pragma once
// parasim::cost::MeasuredGemmModel — GEMM time from measured cuBLASLt timings (a version 2
// profile's "measurements.gemm", measured_tables.hpp), the roofline model filling the gaps.
//
// Model. For a shape S of dtype d, with R the RooflineGemmModel of the device and the profile's
// GemmEfficiencyParams (compute_cost.hpp) and the measured points P_i of dtype d:
//   * S measured (same m, n, k, batch, dtype): time = the point's median, exactly.
//   * otherwise: time = R.gemm_time(S) x c(S), where the correction c_i = median_i /
//     R.gemm_time(P_i) is known at every measured point and c(S) interpolates it by inverse
//     distance weighting (Shepard, power 2) in the space x = (ln m, ln n, ln k, ln batch):
//         ln c(S) = sum_i w_i ln c_i / sum_i w_i,   w_i = 1 / |x(S) - x(P_i)|^2,
//     over the kNeighbours points nearest to S (Euclidean distance in that space; ties go to the
//     point with the smaller (m, n, k, batch), so the result does not depend on the file
//     order). Interpolating ln c is a weighted geometric mean of the corrections, the natural
//     mean for ratios. The roofline carries the shape effects the
//     measurements cannot (FLOPs, bytes, tile and wave quantization); the correction carries
//     what the roofline gets wrong near the measured shapes.
//   * no measured point of dtype d: R.gemm_time(S), with a warning.
// Layouts: GemmShape has no transposes, so a shape measured in several layouts uses one point,
// the first of NN, NT, TN, TT (transpose_a, transpose_b) that was measured (the cost model's
// GEMMs are not layout-specific; NN is the calibrator's default layout).
// Extrapolation: a shape with any of m, n, k, batch outside [min, max] of that dimension over the
// measured points of its dtype still gets a time (the nearest points' correction), with one
// warning per dtype, dimension and value.
// efficiency(S) = S.flops() / (peak(d) x gemm_time(S)), clamped to (0, 1]: the fraction of the
// datasheet peak the modelled time achieves, consistent with gemm_time (memory-bound shapes
// included, unlike the roofline's compute-bound efficiency).
// Measured points of a dtype for which the device has no peak (fp8 on A100) cannot be compared
// with the roofline; they are left out, with a warning.
//
// Immutable after construction and safe to share across threads (the warning sink is
// thread-safe). Sources: the interpolation scheme is Shepard's (Proc. ACM national conference
// 1968, "A two-dimensional interpolation function for irregularly-spaced data"); measuring
// GEMMs on log-spaced grids and interpolating is how measured-table simulators work (SimAI and
// Vidur read profiled CSVs; Calculon an efficiency table by size).

#include <array>
#include <memory>
#include <vector>

#include "costmodel/compute_cost.hpp"
#include "costmodel/cost_warnings.hpp"
#include "costmodel/measured_tables.hpp"

namespace parasim::cost {

class MeasuredGemmModel final : public GemmCostModel {
 public:
  static constexpr int kNeighbours = 8;

  // Throws std::invalid_argument for invalid params (validate), an invalid point shape or a
  // median that is not > 0, or a null warnings sink.
  MeasuredGemmModel(DeviceSpec device, GemmEfficiencyParams params, std::vector<GemmPoint> points,
                    std::shared_ptr<CostWarnings> warnings);

  sim::Time gemm_time(const GemmShape& shape) const override;
  double efficiency(const GemmShape& shape) const override;

  // The factor applied to the roofline time of a shape (measured / roofline at a measured shape;
  // 1 when no point of the dtype exists). Adds the same warnings as gemm_time.
  double correction(const GemmShape& shape) const;
  const RooflineGemmModel& roofline() const { return roofline_; }

 private:
  struct Anchor {
    std::array<double, 4> x;  // ln m, ln n, ln k, ln batch
    GemmShape shape;
    double median_s;
    double log_correction;
  };
  struct Table {
    std::vector<Anchor> anchors;
    std::array<std::int64_t, 4> lo{}, hi{};  // box of the measured dimensions
  };
  // The measured point of exactly this shape, or nullptr.
  const Anchor* exact(const Table& table, const GemmShape& shape) const;
  // ln c(S) by inverse distance weighting (shape not measured, table not empty).
  double interpolated_log_correction(const Table& table, const GemmShape& shape) const;
  void warn_outside(const Table& table, const GemmShape& shape) const;
  const Table* table_of(const GemmShape& shape) const;

  RooflineGemmModel roofline_;
  std::array<Table, 5> tables_;  // indexed by Dtype
  std::shared_ptr<CostWarnings> warnings_;
};

}  // namespace parasim::cost
