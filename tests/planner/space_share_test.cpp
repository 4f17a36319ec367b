// The space shared among processes (planner/space_share.hpp, screen_tally.hpp): K shares of a
// space whose size is not a multiple of the block, merged on rank 0, give exactly the one-process
// plan (K = 1, 2, 3; ranks emulated by threads with an in-process gather); a rank's failure or
// a malformed tally reaches rank 0 as an error naming the rank.
#include <doctest/doctest.h>

#include <condition_variable>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "cli/plan_format.hpp"
#include "costmodel/profile.hpp"
#include "planner/cost_models.hpp"
#include "planner/planner.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace parasim::plan {
namespace {

using nlohmann::json;

// A small Llama with grouped-query attention on one 8-GPU node, micro-batch and chunks widened
// so the space spans several blocks and ends in a partial one (an odd count, not a multiple of 3).
const char* kDocument = R"({
  "name": "share-llama",
  "model": {"layers": 8, "hidden": 2048, "heads": 16, "kv_heads": 4, "ffn_hidden": 5632,
            "vocab": 32000, "seq_len": 2048, "mlp": "swiglu", "norm": "rmsnorm",
            "dropout": false},
  "cluster": "dgx-h100",
  "training": {"global_batch": 16, "micro_batch": 1},
  "parallel": {"dp": 8},
  "optimizer": {"name": "adamw"},
  "search": {"micro_batch": [1, 2, 4, 8], "chunks": [1, 2],
             "schedule": ["1f1b", "interleaved-1f1b", "zb-h1", "zb-h2", "zb-1p", "zb-2p"]}
})";

struct Fixture {
  json document = json::parse(kDocument);
  strat::Scenario base = strat::parse_scenario(document.dump(), "share.json");
  SearchSpace space;
  SpaceCostModels owned;
  CostModels costs;
  PlanOptions options;

  Fixture() {
    space = make_search_space(base, &document["search"], SearchOptions{}, "share.json");
    owned = make_space_cost_models(base, space, nullptr);
    costs = owned.view;
    options.threads = 1;
    options.keep_all = true;  // the merged --json list too
  }
};

// Everything a user sees of a plan but the wall times.
std::string outputs(const Fixture& f, const PlanResult& r) {
  const cli::PlanProvenance p{"test", "", "H100", "parasim plan share.json"};
  return cli::format_plan_text(f.base, r, false, {}) + cli::candidates_json(f.base, r).dump() +
         cli::plan_file_json(f.document, f.base, r, p).dump();
}

// K ranks as threads: gather() hands every rank's bytes to rank 0 once all have arrived; the
// other ranks return at once, as MPI's sends do.
class LocalRanks {
 public:
  explicit LocalRanks(int size) : bytes_(static_cast<std::size_t>(size)) {}
  std::vector<std::string> gather(int rank, const std::string& bytes) {
    std::unique_lock<std::mutex> lock(mutex_);
    bytes_[static_cast<std::size_t>(rank)] = bytes;
    ++arrived_;
    arrived_changed_.notify_all();
    if (rank != 0) return {};
    arrived_changed_.wait(lock, [this] { return arrived_ == bytes_.size(); });
    return bytes_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable arrived_changed_;
  std::vector<std::string> bytes_;
  std::size_t arrived_ = 0;
};

TEST_CASE("K shares merged on rank 0 give the one-process plan, byte for byte (K = 1, 2, 3)") {
  const Fixture f;
  const std::uint64_t n = f.space.size();
  INFO(n, " candidates in ", SpaceShare::blocks(n), " blocks");
  REQUIRE(n % kShareBlock != 0);            // the last block is partial
  REQUIRE(SpaceShare::blocks(n) % 2 == 1);  // and the blocks do not split evenly in 2 ...
  REQUIRE(SpaceShare::blocks(n) % 3 != 0);  // ... nor in 3
  const PlanResult one = run_plan(f.base, f.space, f.costs, f.options);
  REQUIRE(one.ranked > 0);
  REQUIRE(one.feasible > 10);
  const std::string expected = outputs(f, one);
  for (int k : {1, 2, 3}) {
    LocalRanks ranks(k);
    std::vector<std::optional<PlanResult>> results(static_cast<std::size_t>(k));
    std::vector<std::uint64_t> share_sizes(static_cast<std::size_t>(k));
    std::vector<std::thread> threads;
    for (int r = 0; r < k; ++r) {
      threads.emplace_back([&f, &ranks, &results, &share_sizes, k, r] {
        SpaceShare share;
        share.rank = r;
        share.size = k;
        share.gather = [&ranks, r](const std::string& b) { return ranks.gather(r, b); };
        share_sizes[static_cast<std::size_t>(r)] = share.candidates_of_share(f.space.size());
        results[static_cast<std::size_t>(r)] =
            run_plan_shared(f.base, f.space, f.costs, f.options, share);
      });
    }
    for (auto& t : threads) t.join();
    INFO("K = ", k);
    std::uint64_t covered = 0;
    for (std::uint64_t s : share_sizes) covered += s;
    CHECK(covered == n);
    REQUIRE(results[0].has_value());
    for (int r = 1; r < k; ++r) CHECK_FALSE(results[static_cast<std::size_t>(r)].has_value());
    const PlanResult& merged = *results[0];
    CHECK(merged.feasible == one.feasible);
    CHECK(merged.kept.size() == one.kept.size());
    CHECK(merged.rejects.counts == one.rejects.counts);
    CHECK(outputs(f, merged) == expected);
  }
}

TEST_CASE("a tally round-trips through its bytes; a rank's failure reaches rank 0 by name") {
  const Fixture f;
  // Rank 0 of 2 whose partner sends a failure, or bytes that are not a tally.
  auto with_partner = [&f](std::string partner) {
    SpaceShare share;
    share.size = 2;
    share.gather = [partner](const std::string& mine) {
      return std::vector<std::string>{mine, partner};
    };
    return run_plan_shared(f.base, f.space, f.costs, f.options, share);
  };
  ScreenTally failed;
  failed.error = "out of memory";
  CHECK_THROWS_WITH_AS(with_partner(encode(failed)), "rank 1 failed: out of memory",
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(with_partner("not a tally"),
                       doctest::Contains("a rank's screen tally is malformed"), std::runtime_error);
  // An empty partner share: rank 0's own tally plus nothing is the half it screened.
  const auto half = with_partner(encode(ScreenTally{}));
  REQUIRE(half.has_value());
  const PlanResult whole = run_plan(f.base, f.space, f.costs, f.options);
  CHECK(half->feasible < whole.feasible);

  ScreenTally t;
  t.counts[1] = 7;
  t.feasible = 3;
  Screened s;
  s.index = 42;
  s.candidate.tp = 4;
  s.estimate.step_s = 1.5;
  t.best = {s};
  t.kept = {s, s};
  t.error = "x";
  const ScreenTally back = decode_tally(encode(t));
  CHECK(back.counts == t.counts);
  CHECK(back.feasible == 3);
  REQUIRE(back.best.size() == 1);
  CHECK(back.best[0].index == 42);
  CHECK(back.best[0].candidate.tp == 4);
  CHECK(back.best[0].estimate.step_s == 1.5);
  CHECK(back.kept.size() == 2);
  CHECK(back.closest.empty());
  CHECK(back.error == "x");
  std::string truncated = encode(t);
  truncated.pop_back();
  CHECK_THROWS_AS(decode_tally(truncated), std::runtime_error);
}

}  // namespace
}  // namespace parasim::plan
