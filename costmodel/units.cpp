#include "costmodel/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>

namespace parasim::cost {
namespace {

struct UnitScale {
  std::string_view suffix;
  double scale;
};

constexpr std::array kByteUnits{
    UnitScale{"B", 1.0},      UnitScale{"kB", 1e3},    UnitScale{"KB", 1e3},
    UnitScale{"MB", 1e6},     UnitScale{"GB", 1e9},    UnitScale{"TB", 1e12},
    UnitScale{"KiB", kKiB},   UnitScale{"MiB", kMiB},  UnitScale{"GiB", kGiB},
    UnitScale{"TiB", kGiB * 1024.0}};
constexpr std::array kBandwidthUnits{
    UnitScale{"B/s", 1.0},        UnitScale{"kB/s", 1e3},       UnitScale{"MB/s", 1e6},
    UnitScale{"GB/s", 1e9},       UnitScale{"TB/s", 1e12},      UnitScale{"KiB/s", kKiB},
    UnitScale{"MiB/s", kMiB},     UnitScale{"GiB/s", kGiB},     UnitScale{"TiB/s", kGiB * 1024},
    UnitScale{"Mb/s", 1e6 / 8},   UnitScale{"Gb/s", 1e9 / 8},   UnitScale{"Tb/s", 1e12 / 8},
    UnitScale{"Mbit/s", 1e6 / 8}, UnitScale{"Gbit/s", 1e9 / 8}, UnitScale{"Tbit/s", 1e12 / 8}};
constexpr std::array kFlopRateUnits{
    UnitScale{"FLOP/s", 1.0}, UnitScale{"GFLOP/s", 1e9}, UnitScale{"TFLOP/s", 1e12},
    UnitScale{"PFLOP/s", 1e15}};
constexpr std::array kTimeUnits{UnitScale{"ps", 1e-12}, UnitScale{"ns", 1e-9},
                                UnitScale{"us", 1e-6}, UnitScale{"ms", 1e-3},
                                UnitScale{"s", 1.0}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits "12.5 GB/s" into 12.5 and "GB/s"; returns false when there is no leading number, or
// (with *overflow set) when it is beyond the range of a double ("1e400 s").
bool split_number(std::string_view text, double* number, std::string_view* unit, bool* overflow) {
  *overflow = false;
  text = trim(text);
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.' ||
                             text[i] == '-' || text[i] == '+' || text[i] == 'e' ||
                             text[i] == 'E')) {
    // 'e' only counts as an exponent when a digit or sign follows it.
    if ((text[i] == 'e' || text[i] == 'E') &&
        !(i + 1 < text.size() && (std::isdigit(static_cast<unsigned char>(text[i + 1])) ||
                                  text[i + 1] == '-' || text[i + 1] == '+'))) {
      break;
    }
    ++i;
  }
  if (i == 0) return false;
  std::string num(text.substr(0, i));
  char* end = nullptr;
  *number = std::strtod(num.c_str(), &end);
  if (end != num.c_str() + num.size()) return false;
  if (!std::isfinite(*number)) {
    *overflow = true;
    return false;
  }
  *unit = trim(text.substr(i));
  return true;
}

template <std::size_t N>
std::optional<double> parse_with(std::string_view text, const std::array<UnitScale, N>& units,
                                 std::string_view dimension, std::string_view example,
                                 std::string* why) {
  double number = 0;
  std::string_view unit;
  auto fail = [&](std::string msg) -> std::optional<double> {
    if (why) *why = std::move(msg);
    return std::nullopt;
  };
  std::string allowed;
  for (const auto& u : units) {
    if (!allowed.empty()) allowed += ", ";
    allowed += u.suffix;
  }
  bool overflow = false;
  if (!split_number(text, &number, &unit, &overflow)) {
    if (overflow) {
      return fail(fmt::format("the number in \"{}\" is beyond the range of a double (about "
                              "1.8e308)",
                              text));
    }
    return fail(fmt::format("expected {} such as \"{}\", got \"{}\"", dimension, example, text));
  }
  if (unit.empty()) {
    return fail(fmt::format("expected {} with a unit such as \"{}\"; a bare number is ambiguous "
                            "(units: {})",
                            dimension, example, allowed));
  }
  for (const auto& u : units) {
    if (u.suffix == unit) {
      if (number < 0) return fail(fmt::format("expected {} that is not negative, got \"{}\"",
                                              dimension, text));
      return number * u.scale;
    }
  }
  return fail(fmt::format("unknown unit \"{}\" for {} (expected one of: {})", unit, dimension,
                          allowed));
}

std::string format_scaled(double v, const char* const* prefixes, int count, double base,
                          std::string_view unit) {
  int i = 0;
  while (i + 1 < count && std::fabs(v) >= base) {
    v /= base;
    ++i;
  }
  return fmt::format("{:.{}f} {}{}", v, std::fabs(v) >= 100 ? 1 : (std::fabs(v) >= 10 ? 2 : 3),
                     prefixes[i], unit);
}

}  // namespace

std::optional<Bytes> parse_bytes(std::string_view text, std::string* why) {
  auto v = parse_with(text, kByteUnits, "a size", "80 GiB", why);
  if (!v) return std::nullopt;
  return Bytes{*v};
}
std::optional<Bandwidth> parse_bandwidth(std::string_view text, std::string* why) {
  auto v = parse_with(text, kBandwidthUnits, "a bandwidth", "900 GB/s", why);
  if (!v) return std::nullopt;
  return Bandwidth{*v};
}
std::optional<FlopRate> parse_flop_rate(std::string_view text, std::string* why) {
  auto v = parse_with(text, kFlopRateUnits, "a FLOP rate", "989 TFLOP/s", why);
  if (!v) return std::nullopt;
  return FlopRate{*v};
}
std::optional<double> parse_duration_seconds(std::string_view text, std::string* why) {
  return parse_with(text, kTimeUnits, "a duration", "2 us", why);
}
std::optional<sim::Time> parse_time(std::string_view text, std::string* why) {
  auto v = parse_duration_seconds(text, why);
  if (!v) return std::nullopt;
  // The simulator's range (sim::Time::kMaxSeconds, about 11.6 days): refuse instead of throwing.
  if (!(*v < sim::Time::kMaxSeconds)) {
    if (why) {
      *why = fmt::format("expected a duration under {:.0f} s (the simulator's range), got \"{}\"",
                         sim::Time::kMaxSeconds, text);
    }
    return std::nullopt;
  }
  return sim::Time::seconds(*v);
}

std::string format_bytes(Bytes b) {
  static const char* const kPrefixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi"};
  return format_scaled(b.value, kPrefixes, 6, 1024.0, "B");
}
std::string format_bytes_si(Bytes b) {
  static const char* const kPrefixes[] = {"", "k", "M", "G", "T", "P"};
  return format_scaled(b.value, kPrefixes, 6, 1000.0, "B");
}
std::string format_bandwidth(Bandwidth bw) {
  static const char* const kPrefixes[] = {"", "k", "M", "G", "T"};
  return format_scaled(bw.bytes_per_s, kPrefixes, 5, 1000.0, "B/s");
}
std::string format_flop_rate(FlopRate r) {
  static const char* const kPrefixes[] = {"", "k", "M", "G", "T", "P"};
  return format_scaled(r.flop_per_s, kPrefixes, 6, 1000.0, "FLOP/s");
}
std::string format_time(sim::Time t) { return format_seconds(t.to_seconds()); }
std::string format_seconds(double s) {
  double a = std::fabs(s);
  if (a >= 1.0) return fmt::format("{:.3f} s", s);
  if (a >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  if (a >= 1e-6) return fmt::format("{:.3f} us", s * 1e6);
  return fmt::format("{:.1f} ns", s * 1e9);
}

}  // namespace parasim::cost
