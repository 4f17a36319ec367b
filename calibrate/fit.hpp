#pragma once
// parasim::calib alpha-beta fit — t(S) = alpha + beta S for a measured collective series
// (Hockney's model; Thakur, Rabenseifner and Gropp, IJHPCA 19(1) 2005), as stored beside the raw points of a version 2
// profile (costmodel/measured_tables.hpp, AlphaBeta).
//
// Least squares on RELATIVE error: minimise sum_i ((alpha + beta S_i - t_i) / t_i)^2, i.e.
// ordinary least squares with weights 1 / t_i^2. Over 1 KB .. 1 GB the times span four or more
// decades; unweighted least squares would fit the largest messages alone and leave alpha
// (which only small messages see) to their noise, while relative error gives every size the same
// say, so the latency term is fitted by the small messages and the bandwidth term by the large
// ones.
// Solved with Eigen's column-pivoting Householder QR on the weighted system (rows
// [1/t_i, S_i/(S_max t_i)] = 1, S scaled for conditioning), not the normal equations.
// Constraints: alpha >= 0 and beta >= 0. When the unconstrained optimum has alpha < 0 the fit is
// redone with alpha = 0 (beta = sum(r_i) / sum(r_i^2), r_i = S_i / t_i), and when it has beta < 0
// with beta = 0 (alpha = sum(1/t_i) / sum(1/t_i^2)): the constrained optimum lies on that edge.

#include <optional>
#include <vector>

#include "costmodel/measured_tables.hpp"

namespace parasim::calib {

struct FitPoint {
  double bytes = 0;    // S >= 0
  double seconds = 0;  // t > 0
};

struct AlphaBetaFit {
  cost::AlphaBeta fit;
  double max_relative_residual = 0;  // max_i |alpha + beta S_i - t_i| / t_i
};

// Throws std::invalid_argument with fewer than two points, fewer than two distinct sizes, a size
// that is negative or not finite, or a time that is not > 0 and finite.
AlphaBetaFit fit_alpha_beta(const std::vector<FitPoint>& points);

// The fit the cost model uses for a series: over the out-of-place points (the in-place ones when
// there is no out-of-place point), the same points measured_collectives.hpp interpolates.
// std::nullopt when those points have fewer than two distinct sizes.
std::optional<cost::AlphaBeta> fit_series(const cost::CollectiveSeries& series);

}  // namespace parasim::calib
