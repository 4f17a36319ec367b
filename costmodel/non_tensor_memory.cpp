#include "costmodel/non_tensor_memory.hpp"

#include <algorithm>

namespace parasim::cost {

Bytes nccl_communicator_bytes(const CollectiveFabric& fabric, const GroupPlacement& group) {
  if (group.size <= 1) return Bytes{0};
  const int searched = group.nodes_spanned <= 1 ? fabric.intra_node_channels
                                                : group.gpus_per_node_in_group;
  const int channels = std::min(kNcclMaxChannels, 2 * std::max(1, searched));
  // Per channel: the ring's connection and the tree's (parent and child; one in a pair).
  const int connections = 1 + std::min(2, group.size - 1);
  return Bytes{static_cast<double>(channels) * connections * kNcclConnectionBytes};
}

NonTensorMemory non_tensor_memory(const CollectiveFabric& fabric,
                                  const std::vector<GroupPlacement>& communicators) {
  NonTensorMemory m;
  m.cuda_context = Bytes{kCudaContextBytes};
  for (const auto& g : communicators) m.nccl_buffers += nccl_communicator_bytes(fabric, g);
  return m;
}

}  // namespace parasim::cost
