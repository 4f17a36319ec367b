#pragma once
// parasim::cli sweep plot: one line per strategy through (x, y) points, as SVG text. Used for peak
// memory against sequence length (`parasim compare --seq-lens`). x on a log2 axis labelled in K
// tokens, y linear in GiB; an optional dashed capacity line. Deterministic output.

#include <string>
#include <utility>
#include <vector>

namespace parasim::cli {

struct SweepSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (tokens, bytes), x > 0
};

std::string svg_sweep(const std::string& title, const std::vector<SweepSeries>& series,
                      double capacity_bytes);

}  // namespace parasim::cli
