#include "costmodel/token_exchange.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "costmodel/fat_tree.hpp"

namespace parasim::cost {
namespace {

void check(const TokenExchange& x) {
  const bool ok = std::isfinite(x.tokens) && x.tokens >= 0 && std::isfinite(x.bytes_per_token) &&
                  x.bytes_per_token >= 0 && x.experts >= 1 && x.top_k >= 1 &&
                  x.top_k <= x.experts && x.ep >= 1 && x.experts % x.ep == 0 && x.etp >= 1 &&
                  std::isfinite(x.rank_factor) && x.rank_factor >= 1;
  if (!ok) {
    throw std::invalid_argument(
        "token exchange: needs tokens >= 0, bytes per token >= 0, 1 <= top_k <= experts, ep "
        "dividing the experts, etp >= 1 and a rank factor >= 1");
  }
}

// DeepEP config (deep_ep/buffer.py @ 567632d): NVL receive tokens per channel and peer, RDMA
// send and receive chunk tokens, for the dispatch and the combine.
struct DeepEpConfig {
  int ranks;
  int nvl_recv_dispatch, rdma_send_dispatch, nvl_recv_combine, rdma_send_combine;
};
constexpr int kRdmaRecvTokens = 128;  // every config's num_max_rdma_chunked_recv_tokens
constexpr DeepEpConfig kDeepEpConfigs[] = {
    {2, 256, 6, 256, 6},     {4, 256, 6, 256, 6},     {8, 256, 6, 256, 6},
    {16, 288, 20, 288, 12},  {24, 288, 8, 288, 8},    {32, 288, 8, 288, 8},
    {48, 288, 8, 288, 8},    {64, 288, 8, 288, 8},    {96, 480, 12, 480, 8},
    {128, 560, 12, 560, 8},  {144, 720, 12, 720, 8},  {160, 720, 12, 720, 8},
};
constexpr int kNvlPeers = 8;  // NUM_MAX_NVL_PEERS
constexpr double kWorkspaceBytes = 32.0 * 1024 * 1024;  // NUM_WORKSPACE_BYTES, deep_ep.cpp's cudaMalloc
// Per token in the buffers besides the hidden bytes (config.hpp): source meta (2 ints), top-k
// indices (128 x int64), top-k weights (128 x float), scales (128 x float).
constexpr double kNvlTokenExtraBytes = 8 + 128 * 8 + 128 * 4 + 128 * 4;
constexpr double kRdmaTokenExtraBytes = kNvlTokenExtraBytes + 16;  // + an int4 per token

double round_up_128(double bytes) { return std::ceil(bytes / 128.0) * 128.0; }

// Config::Config rounds the RDMA receive tokens up to a multiple of the send chunk.
double rdma_recv_tokens(int send_chunk) {
  return std::ceil(static_cast<double>(kRdmaRecvTokens) / send_chunk) * send_chunk;
}

double nvl_hint(double hidden_bytes, int ranks, int channels, int recv_tokens) {
  const double rdma_ranks = std::max(ranks / kNvlPeers, 1);
  const double nvl_ranks = std::min(ranks, kNvlPeers);
  double bytes = channels * nvl_ranks * (2 * rdma_ranks + 3) * 4.0;
  bytes += channels * nvl_ranks * recv_tokens * (hidden_bytes + kNvlTokenExtraBytes);
  return round_up_128(bytes);
}

double rdma_hint(double hidden_bytes, int ranks, int channels, double recv_tokens) {
  if (ranks <= kNvlPeers) return 0;
  const double rdma_ranks = ranks / kNvlPeers;
  double bytes = channels * rdma_ranks * (kNvlPeers * 2 + 2) * 2 * 4.0;
  bytes += channels * rdma_ranks * recv_tokens * 2 * (hidden_bytes + kRdmaTokenExtraBytes);
  bytes += 1048576;  // "a large number to be safe"
  return round_up_128(bytes);
}

}  // namespace

double token_hit_probability(int experts, int top_k, double held) {
  if (!(held >= 0) || held > experts || top_k < 1 || top_k > experts) {
    throw std::invalid_argument("token_hit_probability: needs 0 <= held <= experts, 1 <= k <= E");
  }
  // C(E - e, k) / C(E, k) = prod_{i < k} (E - e - i) / (E - i).
  double miss = 1;
  for (int i = 0; i < top_k; ++i) {
    const double num = experts - held - i;
    if (num <= 0) return 1;
    miss *= num / (experts - i);
  }
  return 1 - miss;
}

TokenTraffic token_traffic(const TokenExchange& x, const GroupPlacement& group) {
  check(x);
  TokenTraffic t;
  const int ranks = group.size, nodes = group.nodes_spanned;
  if (ranks != x.ep * x.etp) {
    throw std::invalid_argument("token exchange: the group (" + std::to_string(ranks) +
                                " ranks) must be etp x ep = " + std::to_string(x.etp * x.ep));
  }
  t.rank_hit = token_hit_probability(x.experts, x.top_k, static_cast<double>(x.experts) / x.ep);
  if (nodes > 1) {
    t.node_hit = token_hit_probability(x.experts, x.top_k,
                                       static_cast<double>(x.experts) / std::min(nodes, x.ep));
  }
  const double load = x.tokens * x.bytes_per_token * x.rank_factor;
  t.nic_per_rank = Bytes{load * (nodes - 1) * t.node_hit};
  t.nvlink_per_rank = Bytes{load * (ranks - nodes) * t.rank_hit};
  t.received_tokens = ranks * t.rank_hit * x.tokens * x.rank_factor;
  return t;
}

CollectivePlan plan_token_exchange(const TokenExchange& x, const GroupPlacement& group,
                                   const ClusterSpec& cluster) {
  const TokenTraffic t = token_traffic(x, group);
  CollectivePlan plan;
  plan.kind = CollectiveKind::kAllToAll;
  plan.algorithm = CollectiveAlgorithm::kDirect;
  plan.protocol = CollectiveProtocol::kSimple;
  // DeepEP's logical bytes (what its README's bandwidths count): every copy the busiest rank
  // receives, its own included.
  plan.message = Bytes{t.received_tokens * x.bytes_per_token};
  if (group.size == 1) return plan;
  const int g = group.gpus_per_node_in_group, nodes = group.nodes_spanned;
  if (nodes > 1) {
    CollectivePhase nic =
        point_to_point_phase(LinkClass::kInterNode, t.nic_per_rank, 1, "deepep rdma", cluster, 1);
    nic.concurrent_with_next = g > 1;
    plan.phases.push_back(nic);
  }
  if (g > 1) {
    plan.phases.push_back(point_to_point_phase(LinkClass::kIntraNode, t.nvlink_per_rank, 1,
                                               "deepep nvlink", cluster, g - 1));
  }
  // Tokens go to every remote node alike: the spine's uniform pattern (fat_tree.hpp).
  apply_spine(plan, SpinePattern::kUniform, nodes, cluster);
  return plan;
}

const std::vector<int>& deepep_group_sizes() {
  static const std::vector<int> sizes = [] {
    std::vector<int> v;
    for (const auto& c : kDeepEpConfigs) v.push_back(c.ranks);
    return v;
  }();
  return sizes;
}

std::optional<std::string> deepep_group_problem(int ranks, int gpus_per_node) {
  const auto& sizes = deepep_group_sizes();
  if (std::find(sizes.begin(), sizes.end(), ranks) == sizes.end()) {
    std::string list;
    for (int n : sizes) list += (list.empty() ? "" : ", ") + std::to_string(n);
    return "DeepEP (flex) runs over etp x ep = " + std::to_string(ranks) +
           " ranks; it has configs for " + list + " only";
  }
  if (ranks > kNvlPeers && gpus_per_node != kNvlPeers) {
    return "DeepEP (flex) over " + std::to_string(ranks) +
           " ranks spans nodes and needs 8 GPUs a node (the cluster has " +
           std::to_string(gpus_per_node) + ")";
  }
  if (ranks <= kNvlPeers && gpus_per_node % ranks != 0) {
    return "DeepEP (flex) over " + std::to_string(ranks) + " ranks runs inside one node: " +
           std::to_string(ranks) + " must divide the cluster's " + std::to_string(gpus_per_node) +
           " GPUs a node";
  }
  return std::nullopt;
}

Bytes deepep_buffer_bytes(double hidden_bytes, int ranks, int num_sms) {
  if (ranks <= 1) return Bytes{};
  if (num_sms <= 0 || num_sms % 2 != 0) {
    throw std::invalid_argument("DeepEP buffers: num_sms must be even and positive");
  }
  const DeepEpConfig* config = nullptr;
  for (const auto& c : kDeepEpConfigs) {
    if (c.ranks == ranks) config = &c;
  }
  if (config == nullptr) {
    throw std::invalid_argument("DeepEP has no config for " + std::to_string(ranks) + " ranks");
  }
  const int channels = num_sms / 2;
  const double nvl = std::max(nvl_hint(hidden_bytes, ranks, channels, config->nvl_recv_dispatch),
                              nvl_hint(hidden_bytes, ranks, channels, config->nvl_recv_combine));
  const double rdma =
      std::max(rdma_hint(hidden_bytes, ranks, channels, rdma_recv_tokens(config->rdma_send_dispatch)),
               rdma_hint(hidden_bytes, ranks, channels, rdma_recv_tokens(config->rdma_send_combine)));
  return Bytes{nvl + rdma + kWorkspaceBytes};
}

}  // namespace parasim::cost
