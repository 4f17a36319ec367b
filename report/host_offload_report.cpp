#include "report/host_offload_report.hpp"

#include <algorithm>

namespace parasim::strat {

std::optional<HostOffloadReport> host_offload_report(const Scenario& sc, const BuiltWorkload& built,
                                                     const sim::SimResult& r, double per_step) {
  if (!sc.parallel.offload.enabled() || built.host_memory.empty()) return std::nullopt;
  HostOffloadReport h;
  h.host_bytes_per_gpu = *std::max_element(built.host_memory.begin(), built.host_memory.end());
  h.host_bytes_per_node = h.host_bytes_per_gpu * sc.cluster.gpus_per_node;
  h.host_capacity_bytes = sc.cluster.host.memory.value;
  h.fits_in_host = h.host_bytes_per_node <= h.host_capacity_bytes;
  h.link_bytes_per_s = sc.cluster.host.link_bandwidth.bytes_per_s;
  if (!built.host_links.empty()) {
    h.d2h_bytes_per_gpu = r.link_bytes[built.host_links.front().first] * per_step;
    h.h2d_bytes_per_gpu = r.link_bytes[built.host_links.front().second] * per_step;
  }
  return h;
}

}  // namespace parasim::strat
