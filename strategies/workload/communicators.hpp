#pragma once
// parasim::strat::device_communicators — the NCCL communicators one GPU holds, as Megatron-LM
// and DeepSpeed set up their process groups and torch.distributed opens communicators on them
// (one per process group on its first collective; one per peer pair for send/recv,
// ProcessGroupNCCL's getNCCLComm keyed by "rank:peer"). Their buffers are device memory outside
// the allocator (costmodel/non_tensor_memory.hpp).
//
// Per GPU at (stage, replica, tp rank), where `layout` sees dp x cp replicas:
//   - its tensor-parallel group (tp > 1), and with tp x pp > 1 the model-parallel group of every
//     stage's tensor-parallel ranks, over which the optimizer all-reduces the gradient norm and
//     the overflow flag (megatron/core/optimizer/clip_grads.py, clip_grad_norm_fp32, and
//     optimizer.py, found_inf: group=model_parallel_group); a process group of its own, so a
//     communicator of its own even when it has the tensor-parallel group's ranks;
//   - its data-parallel group over the dp x cp replicas (Megatron's data-parallel group with
//     context parallelism) and, with cp > 1, its context-parallel group;
//   - with pp > 1, one pair per neighbouring stage it sends to or receives from (the previous
//     and the next; with interleaving the last stage's chunks also feed the first); a PyTorch
//     that batches p2p on the pipeline group's own communicator (batch_isend_irecv) holds one
//     communicator of pp GPUs instead, with about as many buffers [not checked here];
//   - with pp > 1 and tied embeddings, the embedding group of the first and last stages
//     (megatron/core/parallel_state.py, _EMBEDDING_GROUP).
// Groups of one GPU are left out. Not modelled: further groups a framework builds but a step
// does not use (Megatron's position-embedding group, DeepSpeed's expert groups),
// communicators NCCL shares through ncclCommSplit.

#include <vector>

#include "costmodel/collective_cost.hpp"
#include "costmodel/non_tensor_memory.hpp"
#include "strategies/input/scenario.hpp"
#include "strategies/workload/rank_layout.hpp"

namespace parasim::strat {

std::vector<cost::GroupPlacement> device_communicators(const Scenario& scenario,
                                                       const RankLayout& layout, int stage,
                                                       int replica, int tp_rank);

// What that GPU holds outside the allocator: the CUDA context, those communicators' buffers and,
// with the flex dispatcher, DeepEP's buffers over etp x ep (allocated on the first dispatch;
// counted on every stage, though a stage of dense layers only would not allocate them). The one
// place the builder and the planner's screen both read.
cost::NonTensorMemory device_non_tensor_memory(const Scenario& scenario, const RankLayout& layout,
                                               const cost::CollectiveFabric& fabric, int stage,
                                               int replica, int tp_rank);

}  // namespace parasim::strat
