#include "strategies/input/stage_split.hpp"

namespace parasim::strat {

std::vector<int> edge_stage_layers(int layers, int pp, std::optional<int> first,
                                   std::optional<int> last) {
  if (pp < 2) return {};
  const long long f = first.value_or(0), l = last.value_or(0);
  const int middle = pp - (first ? 1 : 0) - (last ? 1 : 0);
  const long long rest = layers - f - l;
  if (rest < 0 || (middle == 0 && rest != 0) || (middle > 0 && (rest < middle || rest % middle))) {
    return {};
  }
  std::vector<int> out(static_cast<std::size_t>(pp),
                       middle > 0 ? static_cast<int>(rest / middle) : 0);
  if (first) out.front() = static_cast<int>(f);
  if (last) out.back() = static_cast<int>(l);
  return out;
}

std::vector<int> balanced_edge_split(int layers, int pp) {
  if (pp < 2 || layers < pp) return {};
  if (layers % pp == 0) return std::vector<int>(static_cast<std::size_t>(pp), layers / pp);
  const int share = (layers + pp - 1) / pp;
  const int rest = layers - (pp - 2) * share;
  const int first = (rest + 1) / 2, last = rest - first;
  if (last < 1 || first > share) return {};
  std::vector<int> out(static_cast<std::size_t>(pp), share);
  out.front() = first;
  out.back() = last;
  return out;
}

}  // namespace parasim::strat
