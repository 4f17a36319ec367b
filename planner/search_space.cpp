#include "planner/search_space.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "strategies/input/stage_split.hpp"
#include "strategies/registry/registry.hpp"
#include "strategies/schedules/pipeline_schedule.hpp"

namespace parasim::plan {
namespace {

using nlohmann::json;

constexpr const char* kKeys[] = {"gpus",
                                 "dp",
                                 "tp",
                                 "pp",
                                 "cp",
                                 "sequence_parallel",
                                 "chunks",
                                 "schedule",
                                 "micro_batch",
                                 "recompute",
                                 "zero_stage",
                                 "sharding",
                                 "attention",
                                 "tp_placement",
                                 "optimizer",
                                 "block_size",
                                 "first_stage_layers",
                                 "last_stage_layers",
                                 "max_staleness",
                                 "allow_async",
                                 "tp_across_nodes",
                                 "ep",
                                 "etp",
                                 "moe_dispatcher",
                                 "cp_variant",
                                 "precision",
                                 "offload",
                                 "compile",
                                 "tp_comm_overlap"};

// The divisors of n up to cap, ascending (trial division to the square root).
std::vector<int> divisors(long long n, long long cap) {
  std::vector<int> low, high;
  for (long long d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    if (d <= cap) low.push_back(static_cast<int>(d));
    if (d != n / d && n / d <= cap) high.push_back(static_cast<int>(n / d));
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

// Every whole number that divides at least one of `counts`, ascending: for each d, its multiples
// up to the largest count (a harmonic sum, whatever the number of counts).
std::vector<int> divisors_of_any(const std::vector<int>& counts) {
  int largest = 0;
  for (int g : counts) largest = std::max(largest, g);
  std::vector<bool> is_count(static_cast<std::size_t>(largest) + 1, false);
  for (int g : counts) is_count[static_cast<std::size_t>(g)] = true;
  std::vector<int> out;
  for (int d = 1; d <= largest; ++d) {
    for (int k = d; k <= largest; k += d) {
      if (is_count[static_cast<std::size_t>(k)]) {
        out.push_back(d);
        break;
      }
    }
  }
  return out;
}

// The layouts dp x tp x pp x cp = g for every g of `gpus`, each degree from its list, in the
// lists' order (g, then tp, pp, cp), enumerated over the divisors of g only, so that long lists
// cost nothing where they do not divide. Stops once more than `limit` layouts are found (the
// caller refuses the space): the work is bounded by the limit, not by the lists' product.
std::vector<Layout> enumerate_layouts(const std::vector<int>& gpus, const std::vector<int>& dps,
                                      const std::vector<int>& tps, const std::vector<int>& pps,
                                      const std::vector<int>& cps, std::uint64_t limit,
                                      bool* over_limit) {
  auto positions = [](const std::vector<int>& list) {
    std::unordered_map<int, std::size_t> at;
    for (std::size_t i = 0; i < list.size(); ++i) at.emplace(list[i], i);
    return at;
  };
  const auto tp_at = positions(tps), pp_at = positions(pps), cp_at = positions(cps);
  const std::unordered_set<int> dp_set(dps.begin(), dps.end());
  // The divisors of g that `at` lists, in the list's order.
  auto listed = [](const std::vector<int>& divs, const std::unordered_map<int, std::size_t>& at) {
    std::vector<std::pair<std::size_t, int>> found;
    for (int x : divs) {
      if (auto it = at.find(x); it != at.end()) found.emplace_back(it->second, x);
    }
    std::sort(found.begin(), found.end());
    std::vector<int> out;
    for (const auto& entry : found) out.push_back(entry.second);
    return out;
  };
  std::vector<Layout> layouts;
  *over_limit = false;
  for (int g : gpus) {
    const std::vector<int> divs = divisors(g, g);
    const std::vector<int> tp_list = listed(divs, tp_at), pp_list = listed(divs, pp_at),
                           cp_list = listed(divs, cp_at);
    for (int tp : tp_list) {
      for (int pp : pp_list) {
        if ((g / tp) % pp != 0) continue;
        for (int cp : cp_list) {
          const long long tpc = static_cast<long long>(tp) * pp * cp;
          if (g % tpc != 0) continue;
          const int dp = static_cast<int>(g / tpc);
          if (dp_set.count(dp) == 0) continue;
          if (layouts.size() >= limit) {
            *over_limit = true;
            return layouts;
          }
          layouts.push_back(Layout{g, dp, tp, pp, cp});
        }
      }
    }
  }
  return layouts;
}

// A --search value: whole numbers and booleans as JSON numbers and booleans, else strings.
json flag_value(const std::string& token) {
  if (token == "true") return true;
  if (token == "false") return false;
  if (!token.empty() && token.find_first_not_of("0123456789") == std::string::npos &&
      token.size() < 10) {
    return std::stoi(token);
  }
  return token;
}

// At most this many layouts (gpus, dp, tp, pp, cp) in one space: 20 bytes each.
constexpr std::uint64_t kMaxLayouts = std::uint64_t{1} << 22;

// At most this many problems from one axis list (each value of a long list could be one): the
// rest of that list is not looked at.
constexpr std::size_t kMaxProblems = 20;

struct Specs {
  std::map<std::string, std::pair<json, std::string>> by_key;  // key -> (value, path)
};

class AxisReader {
 public:
  AxisReader(const Specs& specs, cost::Diagnostics& d) : specs_(specs), d_(d) {}

  const std::pair<json, std::string>* find(const std::string& key) const {
    auto it = specs_.by_key.find(key);
    return it == specs_.by_key.end() ? nullptr : &it->second;
  }

  // Integer axis: a list replaces `defaults` (each value in [lo, hi]); {"min", "max"} keeps
  // the defaults in range.
  std::vector<int> integers(const std::string& key, std::vector<int> defaults, int lo, int hi) {
    const auto* spec = find(key);
    if (spec == nullptr) return defaults;
    const json& v = spec->first;
    const std::string& path = spec->second;
    if (v.is_object()) {
      std::optional<long long> mn, mx;
      for (const auto& [k, x] : v.items()) {
        if ((k != "min" && k != "max") || !in_range(x, lo, hi)) {
          d_.add(path + "/" + k, fmt::format("expected \"min\" or \"max\" with a whole number "
                                             "from {} to {}",
                                             lo, hi));
          continue;
        }
        (k == "min" ? mn : mx) = x.get<long long>();
      }
      if (mn && mx && *mn > *mx) {
        d_.add(path, fmt::format("contradictory range: min {} is above max {}", *mn, *mx));
        return defaults;
      }
      std::vector<int> out;
      for (int x : defaults) {
        if ((!mn || x >= *mn) && (!mx || x <= *mx)) out.push_back(x);
      }
      if (out.empty()) {
        d_.add(path, fmt::format("no value of the default axis ({}) lies in the range; give "
                                 "the values as a list",
                                 join(defaults)));
      }
      return out;
    }
    std::vector<int> out;
    const json list = v.is_array() ? v : json::array({v});
    if (list.empty()) d_.add(path, "empty list: give at least one value");
    const auto range = static_cast<std::uint64_t>(hi - lo) + 1;
    if (const std::uint64_t n = distinct_values(list, range); n > range) {
      d_.add(path, fmt::format("more than {} different values, the {} whole numbers from {} to "
                               "{} the axis can take",
                               range, range, lo, hi));
      return out;
    }
    std::unordered_set<int> seen;
    std::size_t problems = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const json& x = list[i];
      const std::string at = v.is_array() ? fmt::format("{}/{}", path, i) : path;
      if (!in_range(x, lo, hi)) {
        d_.add(at, fmt::format("expected a whole number from {} to {}", lo, hi));
        if (++problems >= kMaxProblems) return out;  // a million bad values: enough said
        continue;
      }
      const int n = x.get<int>();
      if (seen.insert(n).second) out.push_back(n);
    }
    return out;
  }

  // Name axis: values from `allowed` (the registry's names for this axis).
  std::vector<std::string> names(const std::string& key, std::vector<std::string> defaults,
                                 const std::vector<std::string>& allowed) {
    const auto* spec = find(key);
    if (spec == nullptr) return defaults;
    const json& v = spec->first;
    const json list = v.is_array() ? v : json::array({v});
    std::vector<std::string> out;
    if (list.empty()) d_.add(spec->second, "empty list: give at least one value");
    if (distinct_values(list, allowed.size()) > allowed.size()) {
      d_.add(spec->second, fmt::format("more than {} different values, the {} the axis has ({})",
                                       allowed.size(), allowed.size(), join_names(allowed)));
      return out;
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string at = v.is_array() ? fmt::format("{}/{}", spec->second, i) : spec->second;
      const json& x = list[i];
      std::string text = x.is_string() ? x.get<std::string>() : x.is_boolean() ? (x.get<bool>() ? "true" : "false") : "";
      if (std::find(allowed.begin(), allowed.end(), text) == allowed.end()) {
        d_.add(at, fmt::format("expected one of {}", join_names(allowed)));
        continue;
      }
      if (std::find(out.begin(), out.end(), text) == out.end()) out.push_back(text);
    }
    return out;
  }

  // The different values of `list`, counted up to limit + 1 (a long list of repeats passes; a
  // long list of different values is refused without reading it all).
  static std::uint64_t distinct_values(const json& list, std::uint64_t limit) {
    std::set<std::string> seen;
    for (const json& x : list) {
      seen.insert(x.dump());
      if (seen.size() > limit) break;
    }
    return seen.size();
  }

  // A JSON whole number in [lo, hi]; an unsigned value above the signed range
  // (18446744073709551615) is out of range, not wrapped.
  static bool in_range(const json& x, long long lo, long long hi) {
    if (x.is_number_unsigned()) return x.get<std::uint64_t>() <= static_cast<std::uint64_t>(hi) &&
                                       x.get<std::uint64_t>() >= static_cast<std::uint64_t>(lo);
    return x.is_number_integer() && x.get<long long>() >= lo && x.get<long long>() <= hi;
  }

  static std::string join(const std::vector<int>& v) {
    std::string out;
    for (int x : v) out += (out.empty() ? "" : ", ") + std::to_string(x);
    return out;
  }
  static std::string join_names(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
    return out;
  }

 private:
  const Specs& specs_;
  cost::Diagnostics& d_;
};

// The registry's traits of entry `name` of `kind` (a name the axis reader accepted).
template <typename Traits>
const Traits& traits_of(strat::EntryKind kind, const std::string& name) {
  return std::get<Traits>(strat::find_entry(kind, name)->traits);
}

}  // namespace

std::uint64_t SearchSpace::size() const {
  std::uint64_t n = 1;
  for (std::size_t k :
       {layouts.size(), sequence_parallel.size(), chunks.size(), schedules.size(),
        micro_batches.size(), recomputes.size(), shardings.size(), attentions.size(),
        placements.size(), optimizers.size(), edge_layers.size(), eps.size(), etps.size(),
        dispatchers.size(), recipes.size(), cp_comms.size(), offloads.size(),
        compiles.size(), tp_overlaps.size()}) {
    if (k == 0) return 0;
    if (n > (std::uint64_t{1} << 62) / k) return std::uint64_t{1} << 62;  // saturate
    n *= k;
  }
  return n;
}

Candidate SearchSpace::decode(std::uint64_t index) const {
  Candidate c;
  auto take = [&index](std::size_t radix) {
    const std::size_t i = static_cast<std::size_t>(index % radix);
    index /= radix;
    return i;
  };
  // Fastest-varying first.
  c.compile = compiles[take(compiles.size())];
  c.tp_overlap = tp_overlaps[take(tp_overlaps.size())];
  c.offload = offloads[take(offloads.size())];
  c.recipe = recipes[take(recipes.size())];
  c.cp_comm = cp_comms[take(cp_comms.size())];
  c.dispatcher = dispatchers[take(dispatchers.size())];
  c.etp = etps[take(etps.size())];
  c.ep = eps[take(eps.size())];
  const auto& [first, last] = edge_layers[take(edge_layers.size())];
  c.first_stage_layers = first;
  c.last_stage_layers = last;
  const OptimizerChoice& o = optimizers[take(optimizers.size())];
  c.optimizer = o.kind;
  c.stacking = o.stacking;
  c.block_size = o.block_size;
  c.placement = placements[take(placements.size())];
  c.attention = attentions[take(attentions.size())];
  const Sharding& sh = shardings[take(shardings.size())];
  c.zero_stage = sh.zero_stage;
  c.fsdp2 = sh.fsdp2;
  c.recompute = recomputes[take(recomputes.size())];
  c.micro_batch = micro_batches[take(micro_batches.size())];
  c.schedule = schedules[take(schedules.size())];
  c.chunks = chunks[take(chunks.size())];
  c.sequence_parallel = sequence_parallel[take(sequence_parallel.size())];
  const Layout& l = layouts[take(layouts.size())];
  c.gpus = l.gpus;
  c.dp = l.dp;
  c.tp = l.tp;
  c.pp = l.pp;
  c.cp = l.cp;
  c.cp_a2a_size = c.cp > 1 && c.cp_comm == strat::CpComm::kAllToAllP2p ? cp_a2a_size : 0;
  if (first == 0 && last == 0 && c.pp > 1 && c.chunks == 1 && layers % c.pp != 0) {
    const std::vector<int> split = strat::balanced_edge_split(layers, c.pp);
    if (!split.empty()) {  // the counts, so that the candidate says what it runs
      c.first_stage_layers = split.front();
      c.last_stage_layers = split.back();
    }
  }
  return c;
}

SearchSpace make_search_space(const strat::Scenario& base, const nlohmann::json* search,
                              const SearchOptions& options, const std::string& file) {
  cost::Diagnostics d(file);
  Specs specs;
  const std::set<std::string> known(std::begin(kKeys), std::end(kKeys));
  if (search != nullptr) {
    if (!search->is_object()) {
      d.add("/search", "expected an object of axis names to values");
    } else {
      for (const auto& [key, value] : search->items()) {
        if (key == "$comment" || key == "trainer") continue;  // trainer: plan_question.hpp
        if (known.count(key) == 0) {
          d.add("/search/" + key, fmt::format("unknown search key; known keys: {}",
                                              AxisReader::join_names({std::begin(kKeys), std::end(kKeys)})));
          continue;
        }
        specs.by_key[key] = {value, "/search/" + key};
      }
    }
  }
  for (const std::string& flag : options.flags) {
    const auto eq = flag.find('=');
    const std::string key = flag.substr(0, eq);
    if (eq == std::string::npos || known.count(key) == 0) {
      d.add("--search " + key,
            fmt::format("expected KEY=V1,V2,... with KEY one of {}",
                        AxisReader::join_names({std::begin(kKeys), std::end(kKeys)})));
      continue;
    }
    json list = json::array();
    std::string rest = flag.substr(eq + 1);
    std::size_t start = 0;
    while (start <= rest.size()) {
      const auto comma = rest.find(',', start);
      const std::string token =
          rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!token.empty()) list.push_back(flag_value(token));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    specs.by_key[key] = {list, "--search " + key};
  }
  if (options.gpus > 0 && specs.by_key.count("gpus") > 0 &&
      specs.by_key["gpus"].second == "--search gpus") {
    d.add("--gpus", "the GPU count is given twice, by --gpus and by --search gpus=: give one");
  }
  if (options.gpus > 0) {  // the flag wins over search.gpus, as --search flags do
    specs.by_key["gpus"] = {json::array({options.gpus}), "--gpus"};
  }
  AxisReader r(specs, d);
  SearchSpace s;
  const auto& m = base.model;
  const int cluster_gpus = base.cluster.total_gpus();
  const int gpn = base.cluster.gpus_per_node;

  // Booleans first: they shape the defaults below.
  auto boolean = [&](const std::string& key, bool fallback) {
    const auto* spec = r.find(key);
    if (spec == nullptr) return fallback;
    const json& v = spec->first;
    const json x = v.is_array() && v.size() == 1 ? v[0] : v;
    if (!x.is_boolean()) {
      d.add(spec->second, "expected true or false");
      return fallback;
    }
    return x.get<bool>();
  };
  s.tp_across_nodes = boolean("tp_across_nodes", false);
  s.async_allowed = boolean("allow_async", options.allow_async);
  if (const auto* spec = r.find("max_staleness")) {
    const json& v = spec->first;
    const json x = v.is_array() && v.size() == 1 ? v[0] : v;
    if (!x.is_number_integer() || x.get<long long>() < 0 || x.get<long long>() > 1 << 20) {
      d.add(spec->second, "expected a whole number of optimizer updates (0 or more)");
    } else {
      s.max_staleness = x.get<int>();
      s.async_allowed = s.async_allowed || s.max_staleness > 0;
    }
  }

  const std::vector<int> gpus = r.integers("gpus", {cluster_gpus}, 1, base.cluster.total_gpus());
  std::vector<int> partial_nodes;
  for (int g : gpus) {
    if (g > gpn && g % gpn != 0) partial_nodes.push_back(g);
  }
  if (!partial_nodes.empty()) {
    d.add(r.find("gpus") ? r.find("gpus")->second : "/search/gpus",
          partial_nodes.size() == 1
              ? fmt::format("{} GPUs is not a whole number of nodes of {} GPUs",
                            partial_nodes.front(), gpn)
              : fmt::format("{} of the GPU counts (the first {}) are not whole numbers of nodes "
                            "of {} GPUs",
                            partial_nodes.size(), partial_nodes.front(), gpn));
  }
  const std::vector<int> any = divisors_of_any(gpus);  // divisors of any GPU count
  std::vector<int> tp_default;
  for (int x : any) {
    if (s.tp_across_nodes || x <= gpn) tp_default.push_back(x);
  }
  const auto dps = r.integers("dp", any, 1, 1 << 20);
  const auto tps = r.integers("tp", tp_default, 1, 1 << 12);
  const auto pps = r.integers("pp", any, 1, 1 << 12);
  const auto cps = r.integers("cp", any, 1, 1 << 12);
  for (const auto& name : r.names("sequence_parallel", {"false", "true"}, {"false", "true"})) {
    s.sequence_parallel.push_back(name == "true");
  }
  s.chunks = r.integers("chunks", divisors(m.layers, 8), 1, 64);

  std::vector<std::string> schedule_names, schedule_default;
  for (const auto& name : strat::entry_names(strat::EntryKind::kSchedule)) {
    strat::PipelineSchedule sc{};
    if (!strat::schedule_from_name(name, &sc)) continue;  // listed but not a scenario value
    schedule_names.push_back(name);
    if (sc == strat::PipelineSchedule::kGpipe) continue;
    if (strat::is_asynchronous(sc) && !s.async_allowed) continue;
    schedule_default.push_back(name);
  }
  for (const auto& name : r.names("schedule", schedule_default, schedule_names)) {
    strat::PipelineSchedule sc{};
    strat::schedule_from_name(name, &sc);
    if (strat::is_asynchronous(sc) && !s.async_allowed) {
      d.add(r.find("schedule")->second,
            fmt::format("{} is asynchronous (it changes the training algorithm): give "
                        "--allow-async or search.max_staleness",
                        name));
      continue;
    }
    s.schedules.push_back(sc);
  }
  s.micro_batches = r.integers("micro_batch", divisors(base.training.global_batch,
                                                       base.training.global_batch),
                               1, 1 << 20);
  using strat::EntryKind;
  const auto recompute_names = strat::entry_names(EntryKind::kRecompute);
  // torchtitan's per-op policy is searched when search.recompute names it or the plan is for
  // torchtitan (its rules refuse most other models: activation_checkpointing.hpp).
  std::vector<std::string> searched_recomputes;
  for (const auto& name : recompute_names) {
    if (name != "per-op" || options.per_op_recompute) searched_recomputes.push_back(name);
  }
  for (const auto& name : r.names("recompute", searched_recomputes, recompute_names)) {
    s.recomputes.push_back(traits_of<cost::Recompute>(EntryKind::kRecompute, name));
  }
  // Sharding: search.sharding names entries, search.zero_stage ZeRO stages (zero-N); by default
  // ZeRO's stages, and FSDP2 where the trainer runs it (the torchtitan framework, which plan
  // --for torchtitan sets) or the scenario uses it.
  std::vector<std::string> sharding_names, sharding_default;
  std::vector<int> stages;
  for (const auto* e : strat::entries_of(EntryKind::kSharding)) {
    const auto& t = std::get<strat::ShardingTraits>(e->traits);
    sharding_names.push_back(e->name);
    if (!t.fsdp2) stages.push_back(t.zero_stage);
    const bool fsdp2_wanted = base.training.framework.name == "torchtitan" ||
                              base.parallel.fsdp2.enabled;
    if (!t.fsdp2 || fsdp2_wanted) sharding_default.push_back(e->name);
  }
  if (r.find("sharding") != nullptr && r.find("zero_stage") != nullptr) {
    d.add("/search/zero_stage", "give search.sharding or search.zero_stage, not both "
                                "(zero_stage N is sharding \"zero-N\")");
  }
  std::vector<std::string> chosen;
  if (r.find("zero_stage") != nullptr) {
    for (int z : r.integers("zero_stage", stages, stages.front(), stages.back())) {
      chosen.push_back(fmt::format("zero-{}", z));
    }
  } else {
    chosen = r.names("sharding", sharding_default, sharding_names);
  }
  for (const auto& name : chosen) {
    const auto& t = traits_of<strat::ShardingTraits>(EntryKind::kSharding, name);
    s.shardings.push_back({t.zero_stage, t.fsdp2});
  }
  const auto attention_names = strat::entry_names(EntryKind::kAttention);
  for (const auto& name : r.names("attention", attention_names, attention_names)) {
    s.attentions.push_back(traits_of<strat::AttentionKind>(EntryKind::kAttention, name));
  }
  const auto placement_names = strat::entry_names(EntryKind::kTpPlacement);
  std::vector<std::string> placement_default;
  for (const auto& name : placement_names) {
    const bool low_rank_placement =
        traits_of<strat::PlacementTraits>(EntryKind::kTpPlacement, name).low_rank;
    if (m.low_rank.enabled() == low_rank_placement) placement_default.push_back(name);
  }
  for (const auto& name : r.names("tp_placement", placement_default, placement_names)) {
    s.placements.push_back(traits_of<strat::PlacementTraits>(EntryKind::kTpPlacement, name).id);
  }
  // Experts (docs/moe.md): ep any divisor of the experts (the rules keep those that fold over a
  // stage's GPUs), etp tp (0) or 1, alltoall and flex; a dense model: ep 1, etp tp.
  const std::vector<int> ep_default =
      m.moe.enabled() ? divisors(m.moe.experts, 1 << 16) : std::vector<int>{1};
  s.eps = r.integers("ep", ep_default, 1, 1 << 16);
  s.etps = m.moe.enabled() ? std::vector<int>{0, 1} : std::vector<int>{0};
  if (r.find("etp") != nullptr) s.etps = r.integers("etp", {1, 2, 4, 8}, 1, 1 << 12);
  const auto dispatcher_names = strat::entry_names(EntryKind::kDispatcher);
  // allgather only when asked: it gathers every token to every rank of etp x ep, which loses to
  // alltoall and flex once ep grows (Megatron-core's docs recommend alltoall for ep > 1).
  const std::vector<std::string> dispatcher_default =
      m.moe.enabled() ? std::vector<std::string>{"alltoall", "flex"}
                      : std::vector<std::string>{"alltoall"};
  for (const auto& name : r.names("moe_dispatcher", dispatcher_default, dispatcher_names)) {
    s.dispatchers.push_back(traits_of<strat::DispatcherTraits>(EntryKind::kDispatcher, name).id);
  }
  // Context parallelism's exchange (docs/context-parallel.md): the scenario's own unless listed.
  const strat::Entry* own_cp = strat::chosen_entry(EntryKind::kContextParallel, base);
  s.cp_comms.clear();
  for (const auto& name : r.names("cp_variant", {own_cp != nullptr ? own_cp->name : "ring"},
                                  strat::entry_names(EntryKind::kContextParallel))) {
    s.cp_comms.push_back(traits_of<strat::ContextParallelTraits>(EntryKind::kContextParallel, name).comm);
  }
  s.cp_a2a_size = base.parallel.cp_a2a_size;
  // Precision (docs/fp8.md): the scenario's own unless listed; the entries with its activation
  // dtype (bf16 and the FP8 recipes with a bf16 scenario).
  std::vector<std::string> precision_names;
  for (const strat::Entry* e : strat::entries_of(EntryKind::kPrecision)) {
    if (std::get<strat::PrecisionTraits>(e->traits).dtype == base.training.precision) {
      precision_names.push_back(e->name);
    }
  }
  s.recipes.clear();
  for (const auto& name :
       r.names("precision", {base.training.precision_name()}, precision_names)) {
    s.recipes.push_back(traits_of<strat::PrecisionTraits>(EntryKind::kPrecision, name).recipe);
  }
  // Optimizer offload: the scenario's own, with none beside an offloading scenario's (so a
  // trainer without that offload still finds a plan); search.offload lists others.
  std::vector<std::string> offload_default{"none"};
  const std::string own_offload = cost::offload_flavour_name(base.parallel.offload.flavour);
  if (own_offload != "none") offload_default.push_back(own_offload);
  s.offloads.clear();
  for (const auto& name :
       r.names("offload", offload_default, strat::entry_names(EntryKind::kOffload))) {
    s.offloads.push_back(traits_of<strat::OffloadTraits>(EntryKind::kOffload, name).flavour);
  }
  // torch.compile (docs/pytorch-native.md): search.compile lists "off" / "on"; by default both
  // where the framework runs torchtitan's dense block (the torchtitan preset, which plan --for
  // torchtitan sets), the scenario's own elsewhere.
  const auto& fw = base.training.framework;
  const bool compilable = fw.kernels == strat::LayerKernels::kTorchtitan && !m.moe.enabled() &&
                          !m.mla.enabled() && !m.low_rank.enabled();
  std::vector<std::string> compile_default{fw.compile.enabled ? "on" : "off"};
  if (compilable) compile_default = {"off", "on"};
  s.compiles.clear();
  for (const auto& name : r.names("compile", compile_default, {"off", "on"})) {
    s.compiles.push_back(name == "on");
  }
  // TP communication overlap: none, the scenario's own and the trainer's (options.tp_overlap),
  // so that a trainer without the scenario's overlap still finds a plan.
  std::vector<std::string> tp_overlap_default{"none"};
  for (const std::string& name :
       {std::string(strat::tp_comm_overlap_name(base.parallel.tp_comm_overlap)), options.tp_overlap}) {
    if (!name.empty() && std::find(tp_overlap_default.begin(), tp_overlap_default.end(), name) ==
                             tp_overlap_default.end()) {
      tp_overlap_default.push_back(name);
    }
  }
  s.tp_overlaps.clear();
  for (const auto& name : r.names("tp_comm_overlap", tp_overlap_default,
                                  strat::entry_names(EntryKind::kTpCommOverlap))) {
    s.tp_overlaps.push_back(
        traits_of<strat::TpCommOverlapTraits>(EntryKind::kTpCommOverlap, name).id);
  }
  // Optimizer implementation: AdamW is itself; Shampoo may run as DASH with either stacking.
  const auto kind = base.optimizer.kind;
  const auto is_adamw = [](strat::OptimizerKind k) { return k == strat::OptimizerKind::kAdamW; };
  std::vector<std::string> opt_default, opt_names = strat::entry_names(EntryKind::kOptimizer);
  for (const auto& name : opt_names) {
    const auto& o = traits_of<strat::OptimizerTraits>(EntryKind::kOptimizer, name);
    if (is_adamw(o.kind) == is_adamw(kind)) opt_default.push_back(name);
  }
  const auto& block_range = strat::registered_parameter("/optimizer/block_size");
  const auto blocks = r.integers("block_size", {base.optimizer.block_size},
                                 static_cast<int>(block_range.min), static_cast<int>(block_range.max));
  for (const auto& name : r.names("optimizer", opt_default, opt_names)) {
    if (is_adamw(traits_of<strat::OptimizerTraits>(EntryKind::kOptimizer, name).kind) !=
        is_adamw(kind)) {
      d.add(r.find("optimizer")->second,
            fmt::format("\"{}\" is another training algorithm than the scenario's {}: the planner "
                        "searches implementations of the scenario's optimizer",
                        name, strat::optimizer_name(kind)));
      continue;
    }
    for (int b : blocks) {
      OptimizerChoice o;
      const auto& t = traits_of<strat::OptimizerTraits>(EntryKind::kOptimizer, name);
      o.kind = t.kind;
      o.stacking = t.stacking;
      o.block_size = b;
      s.optimizers.push_back(o);
      if (o.kind == strat::OptimizerKind::kAdamW) break;  // block size is Shampoo's
    }
  }
  s.layers = m.layers;
  {
    const auto firsts = r.integers("first_stage_layers", {0}, 1, m.layers);
    const auto lasts = r.integers("last_stage_layers", {0}, 1, m.layers);
    s.edge_layers.clear();
    for (int f : firsts) {
      for (int l : lasts) s.edge_layers.emplace_back(f, l);
    }
  }
  // The layouts last: the other axes' product bounds how many may be enumerated.
  if (d.ok()) {
    s.layouts.push_back(Layout{});  // one stand-in layout: the product of the other axes
    const double others = static_cast<double>(s.size());
    s.layouts.clear();
    const double fit = std::floor(options.max_candidates / std::max(1.0, others));
    const auto limit = static_cast<std::uint64_t>(std::min(fit, static_cast<double>(kMaxLayouts)));
    bool over = false;
    s.layouts = enumerate_layouts(gpus, dps, tps, pps, cps, limit, &over);
    if (fit < 1) {
      d.add("/search", fmt::format("the axes other than the layout already make {} candidates, "
                                   "over the limit of {} (--max-candidates); narrow an axis with "
                                   "/search or --search",
                                   others, options.max_candidates));
    } else if (over) {
      d.add("/search",
            fmt::format("more than {} layouts of dp x tp x pp x cp, which with the other axes' {} "
                        "values is over the limit of {} candidates (--max-candidates){}; narrow "
                        "gpus, dp, tp, pp or cp",
                        limit, others, options.max_candidates,
                        fit > static_cast<double>(kMaxLayouts)
                            ? fmt::format(" or of {} layouts", kMaxLayouts)
                            : std::string()));
    } else if (s.layouts.empty()) {
      d.add("/search", "no dp x tp x pp x cp of the given degrees uses the GPUs asked for (" +
                           AxisReader::join(gpus) + ")");
    }
  }
  if (d.ok() && static_cast<double>(s.size()) > options.max_candidates) {
    d.add("/search", fmt::format("the space has {} candidates, over the limit of {} "
                                 "(--max-candidates); narrow an axis with /search or --search",
                                 static_cast<double>(s.size()), options.max_candidates));
  }
  if (!d.ok()) throw cost::InputError(std::move(d));
  return s;
}

}  // namespace parasim::plan
