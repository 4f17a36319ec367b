#pragma once
// parasim::cli option lists — the comma-separated values of `parasim compare`'s options
// (--schedules, --placements, --layouts, --seq-lens, --optimizers) and the whole numbers inside
// them (sequence lengths, layout degrees, optimizer block sizes, --chunks), read with range checks
// so that "abc", "0", "-4" or "99999999999999" are refused with the option and the legal range
// named, never wrapped or read as 0.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parasim::cli {

// The items of "a,b,,c" in order ("a", "b", "c"): empty items are skipped.
std::vector<std::string> split_list(std::string_view text);

// A whole number written in decimal digits only (no sign, space, leading zero or suffix) in
// [min, max]; nullopt for anything else, overflow included.
std::optional<long long> parse_whole_number(std::string_view text, long long min, long long max);

// `OPTION: "ITEM" is not a whole number from MIN to MAX (WHAT)`, the numbers with thousands
// separators: the message for an item parse_whole_number refused.
std::string whole_number_message(std::string_view option, std::string_view item, long long min,
                                 long long max, std::string_view what);

}  // namespace parasim::cli
