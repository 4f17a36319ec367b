#include "strategies/workload/communicators.hpp"

#include <algorithm>
#include <set>

#include "costmodel/token_exchange.hpp"
#include "strategies/layers/tp_overlap.hpp"

namespace parasim::strat {

std::vector<cost::GroupPlacement> device_communicators(const Scenario& sc, const RankLayout& layout,
                                                       int stage, int replica, int tp_rank) {
  const auto& p = sc.parallel;
  std::vector<cost::GroupPlacement> out;
  const auto add = [&](const cost::GroupPlacement& g) {
    if (g.size > 1) out.push_back(g);
  };
  add(layout.tp_group(stage, replica));
  add(layout.model_parallel_group(replica, p.pp));
  add(layout.dp_group(stage, tp_rank));
  if (p.cp > 1) add(layout.replica_block_group(stage, replica - replica % p.cp, p.cp));
  if (p.pp > 1) {
    std::set<int> peers;
    if (stage > 0) peers.insert(stage - 1);
    if (stage + 1 < p.pp) peers.insert(stage + 1);
    // Interleaving's loop: the last stage's chunks also feed the first (the V turns on one GPU).
    const bool loop = p.chunks > 1 && !places_chunks_in_v(p.schedule);
    if (loop && stage == 0) peers.insert(p.pp - 1);
    if (loop && stage == p.pp - 1) peers.insert(0);
    for (int peer : peers) add(layout.stage_pair(stage, peer, replica, tp_rank));
    // The embedding group: tied embeddings, or MTP modules that read the table on the last stage.
    const int head = sc.head_stage();  // 0 under a V: the table stays on one GPU
    if ((sc.model.tied_embeddings || sc.model.mtp_layers > 0) && head > 0 &&
        (stage == 0 || stage == head)) {
      add(layout.stage_pair(0, head, replica, tp_rank));
    }
  }
  return out;
}

cost::NonTensorMemory device_non_tensor_memory(const Scenario& sc, const RankLayout& layout,
                                               const cost::CollectiveFabric& fabric, int stage,
                                               int replica, int tp_rank) {
  cost::NonTensorMemory m =
      cost::non_tensor_memory(fabric, device_communicators(sc, layout, stage, replica, tp_rank));
  const auto& p = sc.parallel;
  if (sc.model.moe.enabled() && p.moe_dispatcher == MoeDispatcher::kFlex) {
    // Megatron's fused_a2a.py get_hidden_bytes: h x max(element size, 2).
    const double hidden_bytes =
        sc.model.hidden * std::max(2.0, cost::bytes_per_element(sc.training.precision));
    m.dispatch_buffers = cost::deepep_buffer_bytes(hidden_bytes, p.expert_tp() * p.ep);
  }
  m.overlap_buffers = cost::Bytes{detail::userbuffers_bytes(sc)};
  return m;
}

}  // namespace parasim::strat
