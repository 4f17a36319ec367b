#include "costmodel/device_clock.hpp"

#include <stdexcept>

namespace parasim::cost {
namespace {

struct PeakField {
  const char* name;
  FlopRate DeviceSpec::*peak;
  bool GivenPeaks::*given;
};

constexpr PeakField kPeakFields[] = {
    {"bf16", &DeviceSpec::peak_bf16, &GivenPeaks::bf16},
    {"fp16", &DeviceSpec::peak_fp16, &GivenPeaks::fp16},
    {"fp32", &DeviceSpec::peak_fp32, &GivenPeaks::fp32},
    {"tf32", &DeviceSpec::peak_tf32, &GivenPeaks::tf32},
    {"fp8", &DeviceSpec::peak_fp8, &GivenPeaks::fp8},
    {"fp4", &DeviceSpec::peak_fp4, &GivenPeaks::fp4}};

}  // namespace

void scale_peaks_to_clock(DeviceSpec& d, double clock_mhz, const GivenPeaks& given) {
  if (!(d.peak_clock_mhz > 0) || !(clock_mhz > 0) || clock_mhz > d.peak_clock_mhz) {
    throw std::invalid_argument("scale_peaks_to_clock: need 0 < clock <= the peaks' clock");
  }
  const double ratio = clock_mhz / d.peak_clock_mhz;
  for (const PeakField& f : kPeakFields) {
    if (!(given.*f.given)) (d.*f.peak).flop_per_s *= ratio;
  }
  d.clock_mhz = clock_mhz;
}

std::vector<std::string> peaks_not_given(const DeviceSpec& d, const GivenPeaks& given) {
  std::vector<std::string> missing;
  for (const PeakField& f : kPeakFields) {
    if (!(given.*f.given) && (d.*f.peak).flop_per_s > 0) missing.emplace_back(f.name);
  }
  return missing;
}

}  // namespace parasim::cost
