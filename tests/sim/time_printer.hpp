#pragma once
// Lets doctest print sim::Time in failed checks.
#include <doctest/doctest.h>

#include <string>

#include "sim/time.hpp"

namespace doctest {
template <>
struct StringMaker<parasim::sim::Time> {
  static String convert(const parasim::sim::Time& t) {
    return (std::to_string(t.picoseconds()) + " ps").c_str();
  }
};
}  // namespace doctest
