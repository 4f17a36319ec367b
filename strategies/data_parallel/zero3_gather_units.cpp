#include "strategies/data_parallel/zero3_gather_units.hpp"

#include "strategies/layers/layer_program.hpp"

namespace parasim::strat {
namespace {

// One submodule's gathered elements: its tensors above the persistence threshold.
class ModuleUnit {
 public:
  explicit ModuleUnit(double threshold) : threshold_(threshold) {}
  ModuleUnit& tensor(double elements) {
    if (elements > threshold_) elements_ += elements;
    return *this;
  }
  double elements() const { return elements_; }

 private:
  double threshold_;
  double elements_ = 0;
};

}  // namespace

std::vector<double> zero3_gather_units(const ModelSpec& m, int tp, const Zero3Gathering& z3) {
  if (z3.unit == Zero3Gather::kPerLayer) return {layer_params_per_tp_rank(m, tp)};
  // Megatron's layer layout on one TP rank (layer_params_per_tp_rank): column-parallel QKV and
  // fc1 (weights and biases / tp), row-parallel output projection and fc2 (weights / tp, biases
  // replicated), norms replicated.
  const double h = m.hidden, f = m.ffn_hidden, t = tp;
  const double kv = static_cast<double>(m.kv_heads) * m.head_dim();
  const double up = m.mlp == MlpKind::kSwiglu ? 2 : 1;  // fc1 holds SwiGLU's gate and up
  const bool layer_norm = m.norm == NormKind::kLayerNorm;
  const bool bias = m.linear_bias;
  const double th = z3.persistence_threshold;
  auto norm = [&] {
    ModuleUnit u(th);
    u.tensor(h);
    if (layer_norm) u.tensor(h);
    return u.elements();
  };
  std::vector<double> all;
  all.push_back(norm());
  all.push_back(ModuleUnit(th).tensor((h * h + 2 * h * kv) / t).tensor(bias ? (h + 2 * kv) / t : 0)
                    .elements());
  all.push_back(ModuleUnit(th).tensor(h * h / t).tensor(bias ? h : 0).elements());
  all.push_back(norm());
  all.push_back(ModuleUnit(th).tensor(up * h * f / t).tensor(bias ? up * f / t : 0).elements());
  all.push_back(ModuleUnit(th).tensor(h * f / t).tensor(bias ? h : 0).elements());
  std::vector<double> units;
  for (double e : all) {
    if (e > 0) units.push_back(e);
  }
  return units;
}

}  // namespace parasim::strat
