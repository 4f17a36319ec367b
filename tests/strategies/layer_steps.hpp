#pragma once
// Reading a layer program's steps (strategies/layers/layer_program.hpp) in tests: the collectives
// of one label and kind summed, and a compute step found by its label.
#include <string>
#include <vector>

#include "strategies/layers/layer_program.hpp"

namespace parasim::test {

struct CollectiveSum {
  double bytes = 0;  // the messages' sum (nccl-tests S each)
  int count = 0;
};
inline CollectiveSum collectives(const std::vector<strat::LayerStep>& steps,
                                 const std::string& label, cost::CollectiveKind kind) {
  CollectiveSum s;
  for (const auto& st : steps) {
    if (st.is_collective && st.collective.label == label && st.collective.kind == kind) {
      s.bytes += st.collective.message.value;
      ++s.count;
    }
  }
  return s;
}

// The first compute step labelled `label`, or nullptr.
inline const strat::LayerStep* compute_step(const std::vector<strat::LayerStep>& steps,
                                            const std::string& label) {
  for (const auto& st : steps) {
    if (!st.is_collective && st.compute.label == label) return &st;
  }
  return nullptr;
}

}  // namespace parasim::test
