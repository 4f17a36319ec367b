#pragma once
// parasim::cli suggestions for a mistyped command or option ("did you mean 'simulate'?").

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parasim::cli {

// Optimal-string-alignment distance (Levenshtein with adjacent transpositions counted as one
// edit), case-insensitive.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate `word` most likely stands for: one that `word` (without leading dashes) begins,
// when exactly one does ("-V" -> "--version", "sim" -> "simulate"); else the nearest by
// edit_distance within 1 edit for words of up to 4 letters and 2 for longer ones. nullopt when
// none is that close or several are equally close.
std::optional<std::string> nearest_name(std::string_view word,
                                        const std::vector<std::string>& candidates);

}  // namespace parasim::cli
