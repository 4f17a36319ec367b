#include "strategies/data_parallel/zero3_resident.hpp"

#include <algorithm>
#include <cstddef>
#include <stdexcept>

namespace parasim::strat {
namespace {

struct TraceEntry {
  std::size_t module;  // layer * modules_per_layer + module index
  std::size_t pass;    // layer for a forward, layers + layer for a backward
  double elements;
};

// One micro-batch's submodule uses in the order the hooks see them.
std::vector<TraceEntry> micro_batch_trace(const std::vector<double>& units, int layers,
                                          bool checkpointed) {
  const std::size_t k = units.size();
  const auto n = static_cast<std::size_t>(layers);
  std::vector<TraceEntry> trace;
  trace.reserve(n * k * (checkpointed ? 3 : 2));
  for (std::size_t l = 0; l < n; ++l) {
    for (std::size_t m = 0; m < k; ++m) trace.push_back({l * k + m, l, units[m]});
  }
  for (std::size_t l = n; l-- > 0;) {
    if (checkpointed) {
      for (std::size_t m = 0; m < k; ++m) trace.push_back({l * k + m, n + l, units[m]});
    }
    for (std::size_t m = k; m-- > 0;) trace.push_back({l * k + m, n + l, units[m]});
  }
  return trace;
}

// Whether `module` is used again within `max_reuse` elements of the trace after `t`
// (`__params_to_release`: the traversal stops once the elements passed reach the limit).
bool reused_within(const std::vector<TraceEntry>& trace, std::size_t t, std::size_t module,
                   double max_reuse) {
  double traversed = 0;
  for (std::size_t q = t + 1; q < trace.size(); ++q) {
    if (traversed >= max_reuse) return false;
    if (trace[q].module == module) return true;
    traversed += trace[q].elements;
  }
  return false;
}

}  // namespace

Zero3Resident zero3_resident_elements(const std::vector<double>& units, int layers,
                                      bool checkpointed, const Zero3Gathering& z3) {
  if (layers < 1) throw std::invalid_argument("zero3_resident_elements: layers must be >= 1");
  if (units.empty()) throw std::invalid_argument("zero3_resident_elements: no module to gather");
  for (double u : units) {
    if (!(u > 0)) throw std::invalid_argument("zero3_resident_elements: a unit is not positive");
  }
  const auto trace = micro_batch_trace(units, layers, checkpointed);
  const std::size_t modules = units.size() * static_cast<std::size_t>(layers);
  std::vector<bool> available(modules, false);
  // The latest trace step at which the coordinator popped a use of the module from its queue
  // (`__most_recent_step_id_param_fetched_for`); -1: none yet.
  std::vector<long long> popped_use(modules, -1);
  double available_elements = 0;
  std::size_t queue = 0;  // the next trace entry the prefetcher has not popped
  Zero3Resident out;
  out.forward.assign(static_cast<std::size_t>(layers), 0.0);
  out.backward.assign(static_cast<std::size_t>(layers), 0.0);
  out.forward_end.assign(static_cast<std::size_t>(layers), 0.0);
  out.backward_end.assign(static_cast<std::size_t>(layers), 0.0);
  const auto pass_figure = [&](Zero3Resident& r, bool end, std::size_t pass) -> double& {
    const std::size_t n = r.forward.size();
    if (pass < n) return end ? r.forward_end[pass] : r.forward[pass];
    return end ? r.backward_end[pass - n] : r.backward[pass - n];
  };
  const auto fetch = [&](std::size_t module, double elements) {
    if (available[module]) return 0.0;
    available[module] = true;
    available_elements += elements;
    return elements;
  };
  for (std::size_t t = 0; t < trace.size(); ++t) {
    const TraceEntry& use = trace[t];
    if (queue <= t) {  // the current use leaves the queue
      queue = t + 1;
      popped_use[use.module] = std::max(popped_use[use.module], static_cast<long long>(t));
    }
    fetch(use.module, use.elements);
    const double limit =
        std::min(z3.max_live_parameters - available_elements, z3.prefetch_bucket_size);
    double prefetching = 0;
    while (queue < trace.size() && prefetching < limit) {
      const TraceEntry& next = trace[queue];
      popped_use[next.module] = std::max(popped_use[next.module], static_cast<long long>(queue));
      prefetching += fetch(next.module, next.elements);
      ++queue;
    }
    double& resident = pass_figure(out, false, use.pass);
    resident = std::max(resident, available_elements);
    // Released after its use unless the prefetcher passed over a later use of it or it is used
    // again within the reuse distance (the coordinator's step counter is t + 1 here).
    const bool keep = popped_use[use.module] > static_cast<long long>(t + 1) ||
                      reused_within(trace, t, use.module, z3.max_reuse_distance);
    if (!keep) {
      available[use.module] = false;
      available_elements -= use.elements;
    }
    if (t + 1 == trace.size() || trace[t + 1].pass != use.pass) {
      pass_figure(out, true, use.pass) = available_elements;  // what the pass leaves gathered
    }
  }
  return out;
}

}  // namespace parasim::strat
