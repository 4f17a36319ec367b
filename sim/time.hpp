#pragma once
// parasim::sim::Time — simulated time as a strong type over int64 picoseconds.
//
// Invariants: exact integer arithmetic; 1 ps resolution; range about +-106 days, far beyond any
// training step. There is no implicit conversion to or from double: construct with the named
// constructors (Time::us(1.5)) and read back with to_seconds() / to_us() for reports only.
// A conversion from a double outside +-kMaxSeconds (or not a number) throws TimeRangeError
// instead of wrapping: such a duration comes from absurd inputs (a bandwidth of bytes per
// second), and the caller reports it as bad input.

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace parasim::sim {

class TimeRangeError : public std::range_error {
 public:
  using std::range_error::range_error;
};

class Time {
 public:
  constexpr Time() = default;

  static constexpr Time ps(std::int64_t v) { return Time(v); }
  // Picoseconds computed in floating point, rounded to the nearest; range-checked like seconds().
  static constexpr Time ps_rounded(double v) { return from_scaled(v, 1.0); }
  static constexpr Time ns(double v) { return from_scaled(v, 1e3); }
  static constexpr Time us(double v) { return from_scaled(v, 1e6); }
  static constexpr Time ms(double v) { return from_scaled(v, 1e9); }
  static constexpr Time seconds(double v) { return from_scaled(v, 1e12); }
  static constexpr Time zero() { return Time(0); }
  static constexpr Time max() { return Time(std::numeric_limits<std::int64_t>::max()); }
  // The largest duration a double converts to (well inside the int64 range, so that sums of a
  // few such durations cannot wrap either).
  static constexpr double kMaxSeconds = 1e6;

  constexpr std::int64_t picoseconds() const { return ps_; }
  constexpr double to_seconds() const { return static_cast<double>(ps_) * 1e-12; }
  constexpr double to_ms() const { return static_cast<double>(ps_) * 1e-9; }
  constexpr double to_us() const { return static_cast<double>(ps_) * 1e-6; }

  constexpr auto operator<=>(const Time&) const = default;
  // Checked: a result outside int64 picoseconds throws TimeRangeError instead of wrapping.
  constexpr Time operator+(Time o) const { return Time(checked_add(ps_, o.ps_)); }
  constexpr Time operator-(Time o) const { return Time(checked_sub(ps_, o.ps_)); }
  constexpr Time& operator+=(Time o) { ps_ = checked_add(ps_, o.ps_); return *this; }
  constexpr Time& operator-=(Time o) { ps_ = checked_sub(ps_, o.ps_); return *this; }
  constexpr Time operator*(std::int64_t k) const {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(ps_, k, &r)) overflow();
    return Time(r);
  }
  // Ratio of two durations (for fractions in reports).
  constexpr double operator/(Time o) const {
    return static_cast<double>(ps_) / static_cast<double>(o.ps_);
  }

 private:
  constexpr explicit Time(std::int64_t v) : ps_(v) {}
  // Rounds to the nearest picosecond; negative inputs are allowed (differences).
  static constexpr Time from_scaled(double v, double ps_per_unit) {
    double scaled = v * ps_per_unit;
    if (!(scaled < kMaxSeconds * 1e12 && scaled > -kMaxSeconds * 1e12)) {
      throw TimeRangeError(range_message(scaled * 1e-12));
    }
    return Time(static_cast<std::int64_t>(scaled < 0 ? scaled - 0.5 : scaled + 0.5));
  }

  static std::string range_message(double seconds) {
    char text[128];
    std::snprintf(text, sizeof text,
                  "a duration of %.3g s is outside the simulator's range of %.0f s", seconds,
                  kMaxSeconds);
    return text;
  }
  [[noreturn]] static void overflow() {
    throw TimeRangeError("a simulated time left the int64 picosecond range (about 106 days)");
  }
  static constexpr std::int64_t checked_add(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) overflow();
    return r;
  }
  static constexpr std::int64_t checked_sub(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    if (__builtin_sub_overflow(a, b, &r)) overflow();
    return r;
  }

  std::int64_t ps_ = 0;
};

constexpr Time max(Time a, Time b) { return a < b ? b : a; }
constexpr Time min(Time a, Time b) { return a < b ? a : b; }

}  // namespace parasim::sim
