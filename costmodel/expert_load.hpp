#pragma once
// parasim::cost expert load — how unevenly a mixture-of-experts router loads an expert-parallel
// (EP) group: the expected tokens of the busiest expert and of the busiest EP rank, relative to a
// perfectly uniform split, per micro-batch and per MoE layer.
//
// Notation: E experts, top-k routing, ep ranks in the EP group (E % ep == 0, n = E/ep experts on
// each rank), T tokens one EP rank routes per micro-batch per layer (the same on every rank), so
// the group routes T_group = T*ep tokens and k*T_group token-expert assignments.
//
// Model. The tokens of all ep ranks meet at the experts (the all-to-all dispatch), so under a
// uniform split an expert receives m = k*T*ep/E tokens and a rank, holding n experts, n*m = k*T.
// One expert's load X_i is modelled as an independent normal, X_i ~ N(m, sd_e^2), with two parts:
//   * sampling noise: each token picks k distinct experts, so with a balanced router an expert's
//     count is Binomial(T_group, k/E): variance m*(1 - k/E). (The exact multinomial counts are
//     slightly negatively correlated across experts; we ignore that.)
//   * systematic skew: the router prefers some experts over a training batch. Its size comes from
//     MaxVio (Wang et al., "Auxiliary-Loss-Free Load Balancing Strategy for Mixture-of-Experts",
//     arXiv:2408.15664, eq. 4: MaxVio = (max_i Load_i - mean Load) / mean Load). We give the
//     expert loads a coefficient of variation cv_skew such that the expected maximum of E such
//     loads, without sampling noise, is the measured MaxVio: cv_skew = MaxVio / z(E), where z(n)
//     is the expected maximum of n independent standard normals (expected_max_standard_normal).
//   sd_e = sqrt((cv_skew*m)^2 + m*(1 - k/E)).
// Busiest expert: m + sd_e*z(E) (Gaussian order statistics; the normal understates the Binomial's
// right tail slightly for small m).
// Busiest rank: a rank's load is the sum of its n experts' loads, mean n*m = k*T. We assume the
// experts are placed on ranks without regard to their popularity, so the skew adds independently
// over the n local experts (variance n*(cv_skew*m)^2); the sampling variances add to
// n*m*(1 - k/E), again ignoring the small negative covariance. sd_r = sqrt(n) * sd_e, and the
// busiest of the ep ranks receives k*T + sd_r*z(ep). With ep == 1 (z(1) == 0) it is exactly k*T.
//
// Capacity (Megatron-LM's --moe-expert-capacity-factor; capacity_factor 0 means dropless): an
// expert keeps at most C = capacity_factor * m tokens and drops the rest, a rank at most n*C.
// The busiest loads are capped: min(m + sd_e*z(E), C) and min(k*T + sd_r*z(ep), n*C). (This caps
// the expected maximum rather than taking the expectation of the capped maximum: an upper bound,
// since min(., C) is concave; the per-rank cap also ignores that capping individual experts can
// lower a rank below n*C.) The dropped fraction is the expected overflow of one expert over its
// mean load, with the normal's partial expectation: for X ~ N(m, sd_e^2) and a = (C - m)/sd_e,
//   E[(X - C)+] = sd_e*phi(a) + (m - C)*(1 - Phi(a)),   dropped_fraction = E[(X - C)+] / m.
//
// Which MaxVio to use: the defaults below are MaxVio_global of the paper's Table 2, measured
// over the whole validation set. The skew within one training batch (MaxVio_batch, the paper's
// Figure 3, shown as curves only) is larger; that extra is partly sampling noise, which this
// model adds separately from the actual batch size T, rather than baking it into MaxVio.
//
// Units: tokens (token-expert assignments) per micro-batch per MoE layer; factors are ratios.

namespace parasim::cost {

// MaxVio_global of a router trained with an auxiliary load-balancing loss: Wang et al.,
// arXiv:2408.15664, Table 2, 3B model, auxiliary-loss-controlled.
inline constexpr double kMaxViolationAuxLoss = 0.52;
// MaxVio_global of the auxiliary-loss-free router (per-expert bias, as in DeepSeek-V3): same
// table, Loss-Free Balancing, 1B and 3B models.
inline constexpr double kMaxViolationExpertBias = 0.04;

// Invariants (checked, std::invalid_argument): experts >= 1; 1 <= top_k <= experts; ep >= 1 and
// experts % ep == 0; tokens finite and > 0; max_violation finite and >= 0, and 0 when
// top_k == experts (every expert then receives every token, so loads are exactly uniform);
// capacity_factor finite and either 0 (dropless) or >= 1.
struct ExpertLoadInput {
  int experts = 0;             // E, routed experts per MoE layer
  int top_k = 0;               // k, experts each token is routed to
  int ep = 1;                  // expert-parallel group size; each rank holds E/ep experts
  double tokens = 0;           // T, tokens one EP rank routes per micro-batch per layer
  double max_violation = 0;    // MaxVio, the router's systematic skew (arXiv:2408.15664 eq. 4)
  double capacity_factor = 0;  // 0: dropless; else an expert keeps <= capacity_factor * mean
};

// All token counts are per micro-batch per MoE layer. Invariants: busiest_* >= mean_*, so
// rank_factor >= 1 and expert_factor >= 1 (z(n) >= 0 and capacity_factor >= 1); dropped_fraction
// in [0, 1], 0 when dropless (clamped at 1, which the normal model reaches only for skews far
// beyond the published MaxVio, cv_skew above about 2.5, where it also gives negative loads).
struct ExpertLoad {
  double mean_tokens_per_expert = 0;  // m = k*T*ep/E, uniform split
  double busiest_expert_tokens = 0;   // expected load of the busiest of the E experts, capped
  double mean_tokens_per_rank = 0;    // k*T = (E/ep) * m
  double busiest_rank_tokens = 0;     // expected load of the busiest of the ep ranks, capped
  double rank_factor = 1;             // busiest_rank_tokens / mean_tokens_per_rank
  double expert_factor = 1;           // busiest_expert_tokens / mean_tokens_per_expert
  double dropped_fraction = 0;        // expected share of assignments dropped by capacity
};

// z(n) = E[max of n independent N(0, 1)] = integral of x * n * phi(x) * Phi(x)^(n-1) dx,
// by composite Simpson on a fixed grid over [-10, 12] (deterministic; relative error < 1e-6 for
// any n >= 2; z(1) == 0 exactly). About 10 us per call, no allocation. Throws std::invalid_argument
// if n < 1.
double expected_max_standard_normal(int n);

// The expected load imbalance of one MoE layer across an EP group (model above).
ExpertLoad expert_load(const ExpertLoadInput& input);

}  // namespace parasim::cost
