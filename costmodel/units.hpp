#pragma once
// parasim::cost units — quantities as types, and the one place where unit text is parsed.
//
// Bytes, Flops, Bandwidth (bytes per second) and FlopRate (FLOP per second) are thin strong types
// over double. Dividing work by a rate yields sim::Time, rounded to the nearest picosecond.
//
// Unit text (scenario and profile files): a number, optional space, a unit.
//   Bytes:     B, kB, MB, GB, TB (powers of 1000) and KiB, MiB, GiB, TiB (powers of 1024).
//   Bandwidth: B/s, kB/s, MB/s, GB/s, TB/s, KiB/s .. TiB/s, and bits: Gb/s, Gbit/s, Mb/s, Tb/s.
//   FlopRate:  FLOP/s, GFLOP/s, TFLOP/s, PFLOP/s.
//   Time:      ps, ns, us, ms, s.
// GB and GiB are kept apart; a bare number where a unit is due is an error.

#include <optional>
#include <string>
#include <string_view>

#include "sim/time.hpp"

namespace parasim::cost {

struct Bytes {
  double value = 0;
  constexpr auto operator<=>(const Bytes&) const = default;
  constexpr Bytes operator+(Bytes o) const { return {value + o.value}; }
  constexpr Bytes operator-(Bytes o) const { return {value - o.value}; }
  constexpr Bytes operator*(double k) const { return {value * k}; }
  constexpr Bytes operator/(double k) const { return {value / k}; }
  constexpr Bytes& operator+=(Bytes o) { value += o.value; return *this; }
};

struct Flops {
  double value = 0;
  constexpr auto operator<=>(const Flops&) const = default;
  constexpr Flops operator+(Flops o) const { return {value + o.value}; }
  constexpr Flops operator*(double k) const { return {value * k}; }
  constexpr Flops& operator+=(Flops o) { value += o.value; return *this; }
};

// Bytes per second.
struct Bandwidth {
  double bytes_per_s = 0;
  constexpr auto operator<=>(const Bandwidth&) const = default;
  constexpr Bandwidth operator*(double k) const { return {bytes_per_s * k}; }
};

// FLOP per second.
struct FlopRate {
  double flop_per_s = 0;
  constexpr auto operator<=>(const FlopRate&) const = default;
  constexpr FlopRate operator*(double k) const { return {flop_per_s * k}; }
};

inline sim::Time operator/(Bytes b, Bandwidth bw) {
  return sim::Time::seconds(b.value / bw.bytes_per_s);
}
inline sim::Time operator/(Flops f, FlopRate r) {
  return sim::Time::seconds(f.value / r.flop_per_s);
}

constexpr double kKiB = 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Parsers: return std::nullopt and fill *why with what was expected when the text is not a
// quantity of that dimension ("expected a size such as \"80 GiB\"; \"GB/s\" is a bandwidth").
std::optional<Bytes> parse_bytes(std::string_view text, std::string* why);
std::optional<Bandwidth> parse_bandwidth(std::string_view text, std::string* why);
std::optional<FlopRate> parse_flop_rate(std::string_view text, std::string* why);
// A duration in seconds, any size (callers cap it); parse_time also refuses durations outside
// the simulator's range (sim::Time::kMaxSeconds) instead of letting Time throw.
std::optional<double> parse_duration_seconds(std::string_view text, std::string* why);
std::optional<sim::Time> parse_time(std::string_view text, std::string* why);

// Human formatting with units, for reports: "1.23 GiB", "456.7 GB/s", "12.3 ms".
std::string format_bytes(Bytes b);        // binary prefixes (memory)
std::string format_bytes_si(Bytes b);     // decimal prefixes (traffic)
std::string format_bandwidth(Bandwidth bw);
std::string format_flop_rate(FlopRate r);
std::string format_time(sim::Time t);
std::string format_seconds(double seconds);  // as format_time, for report values in seconds

}  // namespace parasim::cost
