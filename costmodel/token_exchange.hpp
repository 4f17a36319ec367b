#pragma once
// parasim::cost token exchange — the traffic, the plan and the buffers of DeepEP's "normal"
// dispatch and combine kernels (deepseek-ai/DeepEP @ 567632d, csrc/kernels/intranode.cu and
// internode.cu; DeepSeek-V3 technical report, arXiv 2412.19437, §3.2.2), as Megatron-core's
// flex token dispatcher runs them (megatron-core 0.19.2 transformer/moe/fused_a2a.py,
// token_dispatcher.py _DeepepManager).
//
// Unlike an NCCL all-to-all of the k copies of each token, DeepEP sends a token once to each
// rank that holds at least one of its experts (the routing map becomes "is token in rank"), and
// across nodes once to each node: over the NIC to the rank of the same local index on that node,
// which forwards it over NVLink to that node's other target ranks. The NIC and NVLink parts run
// at the same time (warp-specialised channels), so the kernel lasts as long as the slower one.
//
// Notation: G ranks in the group (Megatron's TP x EP group: etp x ep, the experts' shards
// counted as virtual experts: token_dispatcher.py _DeepepManager), g of them per node, N = G / g
// nodes; E experts, k per token, each rank holding the experts of one ep slice (E / ep of them),
// each node those of min(N, ep) slices' worth (E / min(N, ep)). A token picks k distinct experts
// uniformly (a balanced router; the busiest rank's extra load R is applied to what it receives):
//   hit(e) = 1 - C(E - e, k) / C(E, k)   the chance that a bucket holding e of the E experts
//                                        receives the token (hypergeometric: no expert chosen
//                                        among its e is the complement).
//   Per token, NIC sends   = (N - 1) hit(E / min(N, ep))           (remote nodes reached once)
//              NVLink sends = (G - N)  hit(E / ep)                  (every target rank but the
//                                                                     landing rank of each node)
// With N = 1 the NVLink sends are (G - 1) hit(E / ep): every other target rank of the node.
// Bytes per rank = T x sends x bytes_per_token x R, T the rank's tokens. (T, R as in
// expert_load.hpp.)
//
// The plan is an all-to-all of kind kAllToAll, algorithm kDirect, its message S the busiest
// rank's logical bytes (every token copy it receives, its own included: what DeepEP's README
// counts in its "logical bandwidth"), with one step: a NIC phase
// concurrent with an NVLink phase (collective_cost.hpp's contract), each at the fabric's achieved
// share of the link, as NCCL's point-to-point phases. Published check (DeepEP README @ 567632d,
// H800, ~160 GB/s NVLink, CX7 400 Gb/s IB): 153 / 158 GB/s NVLink (intranode dispatch /
// combine, EP 8) and 43-58 GB/s RDMA (internode, EP 16-64) "bottleneck bandwidth", i.e. 0.96 of
// the NVLink and 0.86-1.16 of the NIC; the fabric shares the plan uses are in the same range
// (tests/costmodel/token_exchange_test.cpp). The kernels take num_sms SMs from the compute
// stream while they run (20 by default in Megatron-core 0.19.2, token_dispatcher.py): the
// engine's overlap slowdown (cost_model.hpp) stands for that.
//
// Buffers (DeepEP csrc/config.hpp get_nvl_buffer_size_hint / get_rdma_buffer_size_hint; the
// configs of deep_ep/buffer.py get_dispatch_config / get_combine_config; Megatron's fused_a2a.py
// get_buffer takes the larger of the two configs' hints, with hidden_bytes = h x max(element
// size, 2)): allocated once per process outside PyTorch's allocator (cudaMalloc with IPC handles
// for NVLink, NVSHMEM for RDMA), so they are non-tensor memory (non_tensor_memory.hpp).
//
// Units: tokens; bytes; the plan's times in sim::Time.

#include <optional>
#include <string>
#include <vector>

#include "costmodel/collective_cost.hpp"
#include "costmodel/units.hpp"

namespace parasim::cost {

// Invariants (checked, std::invalid_argument): tokens >= 0 and finite; bytes_per_token >= 0;
// experts >= 1; 1 <= top_k <= experts; ep >= 1 divides experts; etp >= 1; rank_factor >= 1.
struct TokenExchange {
  double tokens = 0;           // T: tokens one rank sends (one micro-batch, one layer)
  double bytes_per_token = 0;  // payload per token per destination (hidden, indices, weights)
  int experts = 0;             // E
  int top_k = 0;               // k
  int ep = 1;                  // expert-parallel ranks (each holds E / ep experts)
  int etp = 1;                 // shards of each expert (the group is etp x ep ranks)
  double rank_factor = 1;      // R: the busiest rank's received tokens over the mean
};

// hit(e) of the header: the chance that one of `held` of `experts` experts is among a token's
// `top_k` distinct choices. 0 <= held <= experts.
double token_hit_probability(int experts, int top_k, double held);

struct TokenTraffic {
  double rank_hit = 0;  // hit(E / ep)
  double node_hit = 0;  // hit(E / min(N, ep)); 0 on one node
  Bytes nvlink_per_rank;
  Bytes nic_per_rank;
  // Distinct tokens the busiest rank receives (its own included): the buffer the experts'
  // permutation reads, G hit(E / ep) T R.
  double received_tokens = 0;
};

// The header's per-rank traffic of one dispatch (or combine) over `group` (size etp x ep).
TokenTraffic token_traffic(const TokenExchange& x, const GroupPlacement& group);

// The one-step plan (header). Empty (free) for a group of one.
CollectivePlan plan_token_exchange(const TokenExchange& x, const GroupPlacement& group,
                                   const ClusterSpec& cluster);

// DeepEP's rank counts with a recommended config (deep_ep/buffer.py @ 567632d): Megatron's
// get_buffer asserts on any other group size.
const std::vector<int>& deepep_group_sizes();
// Why DeepEP cannot run over `ranks` ranks on nodes of `gpus_per_node` GPUs (a size without a
// config; internode kernels assume 8 NVLink peers a node, NUM_MAX_NVL_PEERS; intranode kernels
// need the group inside a node), or std::nullopt when it can.
std::optional<std::string> deepep_group_problem(int ranks, int gpus_per_node);
// Default SMs of the dispatch and combine kernels under Megatron-core 0.19.2.
inline constexpr int kDeepEpDefaultSms = 20;

// NVLink plus RDMA buffer bytes one rank of a `ranks`-rank DeepEP group allocates for tokens of
// `hidden_bytes` (h x max(element size, 2)), plus the Buffer's 32 MiB workspace (csrc/deep_ep.cpp,
// NUM_WORKSPACE_BYTES). 0 for a group of one. Throws std::invalid_argument
// for a size outside deepep_group_sizes() or an odd num_sms.
Bytes deepep_buffer_bytes(double hidden_bytes, int ranks, int num_sms = kDeepEpDefaultSms);

}  // namespace parasim::cost
