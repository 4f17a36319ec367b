#include "calibrate/backend.hpp"

namespace parasim::calib {

MeasurementBackend::~MeasurementBackend() = default;

cost::MeasuredTime to_measured(const kernels::TimingStats& stats) {
  return cost::MeasuredTime{stats.median_s, stats.p20_s, stats.p80_s, stats.samples};
}

}  // namespace parasim::calib
