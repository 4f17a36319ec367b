#include "costmodel/profile_fit.hpp"

#include <fmt/format.h>

#include <cctype>

#include "costmodel/diagnostics.hpp"

namespace parasim::cost {
namespace {

constexpr const char* kFlag = "pass --allow-foreign-profile to apply it anyway";

}  // namespace

std::string device_model(std::string_view name) {
  std::string lower;
  for (unsigned char c : name) lower += static_cast<char>(std::tolower(c));
  // Words: runs of letters and digits.
  std::size_t i = 0;
  while (i < lower.size()) {
    while (i < lower.size() && !std::isalnum(static_cast<unsigned char>(lower[i]))) ++i;
    const std::size_t start = i;
    while (i < lower.size() && std::isalnum(static_cast<unsigned char>(lower[i]))) ++i;
    const std::string_view word = std::string_view(lower).substr(start, i - start);
    std::size_t letters = 0;
    while (letters < word.size() && std::isalpha(static_cast<unsigned char>(word[letters]))) {
      ++letters;
    }
    std::size_t digits = letters;
    while (digits < word.size() && std::isdigit(static_cast<unsigned char>(word[digits]))) ++digits;
    const std::size_t tail = word.size() - digits;
    if (letters >= 1 && letters <= 3 && digits - letters >= 2 && tail <= 1) {
      return std::string(word);
    }
  }
  return lower;
}

void check_profile_fits(const Profile& profile, const ClusterSpec& cluster, bool allow_foreign) {
  const MeasuredTables& t = profile.measured;
  if (allow_foreign || t.empty()) return;
  Diagnostics d(profile.file);
  const std::string& measured_on = t.provenance.device;
  const std::string& device = cluster.device.name;
  if (t.provenance.backend == "cpu") {
    d.add("/provenance/backend",
          fmt::format("the profile was measured by the cpu backend on \"{}\", but the scenario's "
                      "device is the GPU \"{}\": its timings do not describe it; measure that "
                      "device (parasim calibrate) or {}",
                      measured_on, device, kFlag));
  } else if (!measured_on.empty() && device_model(measured_on) != device_model(device)) {
    d.add("/provenance/device",
          fmt::format("the profile was measured on \"{}\" ({}), but the scenario's device is "
                      "\"{}\" ({}): its timings do not describe it; measure that device "
                      "(parasim calibrate) or {}",
                      measured_on, device_model(measured_on), device, device_model(device),
                      kFlag));
  }
  const ClusterSpec applied = profile.apply(cluster);
  int faster = 0;
  for (std::size_t i = 0; i < t.gemm.size(); ++i) {
    const GemmPoint& g = t.gemm[i];
    const double peak = applied.device.peak(g.shape.dtype).flop_per_s;
    const double floor_s = peak > 0 ? g.shape.flops().value / peak : 0;
    if (!(g.time.median_s < floor_s)) continue;
    if (++faster > 5) continue;  // the first five are enough to find the fault
    d.add(fmt::format("/measurements/gemm/{}/median_s", i),
          fmt::format("{:.3g} s for a {}x{}x{} GEMM is faster than the peak of \"{}\" allows "
                      "({:.3g} s at {}): a measurement error, or a profile of another device; {}",
                      g.time.median_s, g.shape.m, g.shape.n, g.shape.k, device, floor_s,
                      format_flop_rate(FlopRate{peak}), kFlag));
  }
  if (faster > 5) {
    d.add("/measurements/gemm", fmt::format("{} GEMMs in all are faster than the peak", faster));
  }
  if (!d.ok()) throw InputError(std::move(d));
}

}  // namespace parasim::cost
