#include "strategies/data_parallel/fsdp2_units.hpp"

#include <stdexcept>

#include "strategies/layers/layer_program.hpp"

namespace parasim::strat {
namespace {

double param_bytes(const Scenario& s) {
  return cost::bytes_per_element(s.training.precision);
}
// MixedPrecisionPolicy.reduce_dtype is the scenario's gradient dtype (training.grad_precision).
double reduce_bytes(const Scenario& s) {
  return s.training.gradient_bytes();
}

}  // namespace

int fsdp2_post_forward_ranks(const Scenario& s, Fsdp2UnitKind kind) {
  const int shard = s.parallel.fsdp2_shard();
  const auto& given = s.parallel.fsdp2.reshard_after_forward;
  // The norm and head unit (with tied embeddings, the embedding's too) reshard only when told to
  // always (apply_fsdp_to_decoder: reshard_after_forward=policy == "always").
  const bool head_like = kind == Fsdp2UnitKind::kHead ||
                         (kind == Fsdp2UnitKind::kEmbedding && s.model.tied_embeddings);
  // An integer equal to the shard group is True (torch's _get_post_forward_mesh_info).
  const bool all = given && (*given == Fsdp2Spec::kShardGroup || *given == shard);
  if (head_like) return all ? shard : 1;
  if (!given) return s.parallel.pp > 1 ? 1 : shard;  // torchtitan's "default"
  return all ? shard : *given;
}

bool fsdp2_reduces_every_micro_batch(const Scenario& s) {
  return s.parallel.pp == 1;
}

Fsdp2CopyBytes fsdp2_copy_bytes(const Scenario& s, double elements) {
  const double p = param_bytes(s), r = reduce_bytes(s);
  const double shard = elements / s.parallel.fsdp2_shard();
  Fsdp2CopyBytes c;
  c.gather_copy_in = shard * (4 + p) + shard * 2 * p;
  c.gather_copy_out = elements * 2 * p;
  c.reduce_copy_in = elements * (p + r);
  c.grad_accumulate = shard * 12;
  // The unsharded gradient (p) added into the accumulated one kept in r (read, read, write).
  c.unsharded_accumulate = elements * (p + 2 * r);
  return c;
}

double fsdp2_post_forward_copy_in_bytes(const Scenario& s, double elements, int ranks) {
  return elements / ranks * 2 * param_bytes(s);
}

Fsdp2HostCopyBytes fsdp2_host_copy_bytes(const Scenario& s, double elements) {
  if (s.parallel.offload.flavour != cost::OffloadFlavour::kFsdp2) return {};
  const double fp32_shard = elements / s.parallel.fsdp2_shard() * 4;
  return {fp32_shard, fp32_shard};
}

double fsdp2_gather_bytes(const Scenario& s, double elements, Fsdp2UnitKind kind) {
  return elements *
         (kind == Fsdp2UnitKind::kBlock ? zero3_gathered_element_bytes(s) : param_bytes(s));
}
double fsdp2_reduce_bytes(const Scenario& s, double elements) {
  return elements * reduce_bytes(s);
}
double fsdp2_replica_reduce_bytes(const Scenario& s, double elements) {
  return elements / s.parallel.fsdp2_shard() * reduce_bytes(s);
}

cost::ModelStateBytes fsdp2_model_state_bytes(double parameters, int shard) {
  if (parameters < 0 || shard < 1) {
    throw std::invalid_argument("fsdp2_model_state_bytes: parameters >= 0 and shard >= 1");
  }
  const double per_rank = parameters / shard;
  return {cost::Bytes{4 * per_rank}, cost::Bytes{4 * per_rank}, cost::Bytes{8 * per_rank}};
}

}  // namespace parasim::strat
