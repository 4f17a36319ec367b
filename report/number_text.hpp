#pragma once
// parasim::cli number text — counts for people: thousands separators instead of e-notation, and
// singular or plural nouns. Locale-independent (the output stays byte-identical everywhere).

#include <string>
#include <string_view>

namespace parasim::cli {

// v rounded to a whole number with a comma every three digits: 633521.4 -> "633,521",
// -1234 -> "-1,234". Not finite: "inf", "-inf" or "nan".
std::string grouped_integer(double v);

// A rate or count with consistent digits and never an exponent: at least 100 as grouped_integer;
// below, four significant digits in fixed notation (12.35, 0.004321); 0 as "0".
std::string readable_count(double v);

// "1 node", "2 nodes", "0 nodes": the count and the noun, plural unless the count is 1 (the
// plural adds "s" unless given).
std::string count_of(long long n, std::string_view singular, std::string_view plural = {});

}  // namespace parasim::cli
