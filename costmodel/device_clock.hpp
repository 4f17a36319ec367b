#pragma once
// parasim::cost device clock — a device run below the clock its peaks are quoted at (locked
// clocks, or the clock a power cap holds), and the power cap itself.
//
// Every peak is units x FLOP per unit and clock x clock: H100 SXM5's 989.4 TFLOP/s bf16 is 528
// tensor cores x 1024 dense FLOP/clock x 1.83 GHz (glennklockwood.com/garden/processors/h100),
// B200's 2.25 PFLOP/s is 148 SMs x 8192 x 1.85 GHz (FlashAttention-4, arXiv 2603.05451 sec.
// 2.2), MI300X's 1307.4 is 304 CUs x 2048 x 2.1 GHz (AMD datasheet). At an SM clock f the peaks
// are therefore peak x f / DeviceSpec::peak_clock_mhz, every precision alike (the vector FP32
// rate too). What the clock does not change: HBM bandwidth (its own memory clock), links, the
// kernel efficiencies (fractions of the scaled peaks) and the launch overhead.
// Simplification: presets' sustained GEMM ceilings were measured at the power limit, where the
// clock already sits below boost (H200 at 1465 MHz, B200 at 1339 MHz: kernel_presets.cpp), so a
// clock_mhz near those counts the fall twice; give device.kernel_efficiency with it if measured.
//
// A power limit (watts) below the device's TDP lowers the clock by an amount that depends on the
// kernel and the part; parasim does not know it, so it asks for the clock or the peaks
// (scenario_parser.cpp refuses the limit alone).

#include <string>
#include <vector>

#include "costmodel/hardware.hpp"

namespace parasim::cost {

// The peaks a scenario gave itself in device.peak: those are taken at the running clock as they
// are, the others follow the clock.
struct GivenPeaks {
  bool bf16 = false, fp16 = false, fp32 = false, tf32 = false, fp8 = false, fp4 = false;
};

// Scales the peaks not in `given` by clock_mhz / d.peak_clock_mhz and records d.clock_mhz.
// Precondition: 0 < clock_mhz <= d.peak_clock_mhz (std::invalid_argument otherwise).
void scale_peaks_to_clock(DeviceSpec& d, double clock_mhz, const GivenPeaks& given);

// The names ("bf16", "fp16", "fp32", "tf32", "fp8", "fp4") of the device's non-zero peaks that
// `given` leaves out, in that order: the ones a clock or power change leaves unknown.
std::vector<std::string> peaks_not_given(const DeviceSpec& d, const GivenPeaks& given);

}  // namespace parasim::cost
