#pragma once
// parasim::cost non-tensor memory — device memory a training process holds outside PyTorch's
// caching allocator: its CUDA context and the buffers of its NCCL communicators. It is not in
// torch.cuda.max_memory_allocated (what `peak_memory_bytes` models) but it is in the GPU's
// memory: whether a step fits counts both.
//
// CUDA context: 400 MB, ptrblck in pytorch/pytorch#109888 for CUDA >= 11.7 with lazy module
// loading (the default since PyTorch 1.13, pytorch/pytorch PR #86509, which measured 287,047,680 B
// lazy against 666,632,192 B eager for a minimal program; a training process loads more modules).
//
// NCCL (NVIDIA/nccl v2.21.5-1, src/init.cc L542-L547, src/include/device.h): every connection
// of a channel holds one buffer per protocol on its receiving side (src/transport/p2p.cc
// L419-L422; in P2P read mode the Simple buffer moves to the sender, the total is the same):
//   LL     8 lines x 512 threads x 8 steps x 16 B   =   524,288 B
//   LL128  120 x 640 threads x 8 steps x 8 B        = 4,915,200 B
//   Simple 1 << 22                                  = 4,194,304 B   (NCCL_BUFFSIZE)
// = 9,633,792 B per connection. Before v2.22 (runtime connection) a communicator connects its
// rings and trees when it is created: per channel one ring connection (from the ring's
// predecessor) and the tree's, one from the parent and one from a child in NCCL's intra-node
// chain (one for a 2-rank group). Channels: the topology search's rings doubled at run time,
// at most 32 (src/graph/connect.cc L443, MAXCHANNELS): 2 x fabric.intra_node_channels on one
// node (24 on an HGX A100: NVIDIA/nccl-tests#100), 2 x the group's GPUs per node across nodes
// (one ring per NIC, nccl_model.hpp). Checked against pytorch/NCCL measurements on 4 A100s
// (NVIDIA/nccl#964): 688 MB for a communicator of more than two GPUs (this model: 694 MB),
// 544 MB for two (this model: 462 MB).
//
// Not modelled: NVLS buffers (Hopper NVSwitch multicast: 768 MiB per 8-GPU communicator in
// v2.21, about 256 MiB from v2.22, allocated only when NVLS is used from v2.22 on), the p2p
// connections a send/recv opens on first use, proxy and host-side buffers, the allocator's
// reserve beyond what it has allocated, cuBLAS workspaces (8,519,680 B per handle and stream
// before sm90, 32 MiB on sm90: pytorch/pytorch PRs #89027, #91564; they come from the caching
// allocator).
//
// Units: bytes. Invariants: every figure >= 0.

#include <vector>

#include "costmodel/collective_cost.hpp"
#include "costmodel/collective_fabric.hpp"
#include "costmodel/units.hpp"

namespace parasim::cost {

inline constexpr double kCudaContextBytes = 400e6;
inline constexpr double kNcclConnectionBytes = 524288.0 + 4915200.0 + 4194304.0;
inline constexpr int kNcclMaxChannels = 32;

struct NonTensorMemory {
  Bytes cuda_context;
  Bytes nccl_buffers;
  Bytes dispatch_buffers;  // DeepEP's NVLink and RDMA buffers (token_exchange.hpp); 0 without
  // Transformer Engine's userbuffers (tp_comm_overlap "userbuffers": strategies/layers/
  // tp_overlap.hpp, userbuffers_bytes); 0 without
  Bytes overlap_buffers;

  Bytes total() const { return cuda_context + nccl_buffers + dispatch_buffers + overlap_buffers; }
};

// Buffers of one communicator over `group` on each of its GPUs; 0 for a group of one.
Bytes nccl_communicator_bytes(const CollectiveFabric& fabric, const GroupPlacement& group);

// The CUDA context plus the buffers of every communicator in `communicators` (one entry per
// communicator the GPU belongs to; groups of one are skipped).
NonTensorMemory non_tensor_memory(const CollectiveFabric& fabric,
                                  const std::vector<GroupPlacement>& communicators);

}  // namespace parasim::cost
