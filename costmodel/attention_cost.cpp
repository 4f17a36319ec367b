#include "costmodel/attention_cost.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace parasim::cost {

Flops flash_attention_flops(const AttentionShape& s, FlashPass pass) {
  if (!(s.heads > 0 && s.seq_q > 0 && s.seq_kv > 0 && s.head_dim > 0)) {
    throw std::invalid_argument(
        fmt::format("attention shape needs heads, seq_q, seq_kv, head_dim > 0, got {} {} {} {}",
                    s.heads, s.seq_q, s.seq_kv, s.head_dim));
  }
  const double forward = 4.0 * s.heads * s.seq_q * s.seq_kv * s.head_dim * (s.causal ? 0.5 : 1.0);
  return Flops{pass == FlashPass::kForward ? forward : 2.5 * forward};
}

sim::Time flash_attention_time(const AttentionShape& s, FlashPass pass, const DeviceSpec& device) {
  const Flops flops = flash_attention_flops(s, pass);
  const FlopRate peak = device.peak(s.dtype);
  if (!(peak.flop_per_s > 0.0)) {
    throw std::invalid_argument(fmt::format("device {} has no {} peak; cannot cost FlashAttention",
                                            device.name, dtype_name(s.dtype)));
  }
  return flops / (peak * device.kernels.flash.efficiency(pass, s.head_dim, s.seq_kv));
}

}  // namespace parasim::cost
