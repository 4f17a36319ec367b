// The simulate report without noise: one line for a flush schedule's staleness, no rows for kinds
// of communication a step does not have, the critical path largest first, singular nouns for one,
// counts with thousands separators, the optimizer step equal to the sum of its parts, and
// fits_in_hbm in the JSON.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <regex>
#include <sstream>

#include "../support/test_support.hpp"
#include "cli/commands.hpp"

using namespace parasim::cli;
using namespace parasim::test;

namespace {

struct Report {
  std::string text;
  nlohmann::json json;
  std::string json_text;
};

Report simulate_file(const fs::path& scenario) {
  TempDir tmp;
  SimulateOptions o;
  o.scenario = scenario.string();
  o.json = tmp.file("result.json");
  std::ostringstream out, err;
  REQUIRE_MESSAGE(run_simulate(o, out, err) == kExitOk, err.str());
  const std::string json_text = read_text(o.json);
  return {out.str(), parse_json(json_text, "result JSON"), json_text};
}

// The lines of `text` from the one starting with `heading` to the next blank line.
std::vector<std::string> section(const std::string& text, const std::string& heading) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (!inside && line.rfind(heading, 0) == 0) inside = true;
    else if (inside && line.empty()) break;
    else if (inside) lines.push_back(line);
  }
  return lines;
}

const fs::path kScenarios = kSourceDir / "scenarios";

}  // namespace

TEST_CASE("report: a flush schedule says no staleness in one line; asynchronous ones keep the table") {
  const Report flush = simulate_file(kScenarios / "llama2-7b-dgx-h100.json");
  CHECK(flush.text.find("Weight staleness: flush schedule: no staleness (one weight version per "
                        "stage)\n\n") != std::string::npos);
  CHECK(flush.text.find("max 0   mean 0.000") == std::string::npos);
  const Report async = simulate_file(kScenarios / "paci-gpt2-medium.json");
  CHECK(async.text.find("Weight staleness per stage") != std::string::npos);
  CHECK(section(async.text, "Weight staleness per stage").size() == 8);
}

TEST_CASE("report: communication kinds the step does not have get no row") {
  const Report r = simulate_file(kScenarios / "dash-llama-953m.json");  // dp 8 only
  const auto rows = section(r.text, "Communication per step");
  REQUIRE(rows.size() == 3);  // header, dp, link classes
  CHECK(rows[1].rfind("  dp ", 0) == 0);
  CHECK(r.text.find("  cp          0.000 B") == std::string::npos);
  CHECK(r.text.find("inter-node (NIC) 0 B") != std::string::npos);
  // The JSON keeps every kind (scripts index it).
  CHECK(r.json.at("comm_bytes").at("cp") == 0.0);
}

TEST_CASE("report: the critical path is listed largest share first") {
  for (const char* name : {"llama2-7b-dgx-h100.json", "dash-llama-953m.json"}) {
    CAPTURE(name);
    const Report r = simulate_file(kScenarios / name);
    const auto rows = section(r.text, "Critical path by category");
    REQUIRE(rows.size() >= 3);
    std::vector<double> shares;
    const std::regex share(R"(\(([0-9.]+) %\)$)");
    for (const auto& row : rows) {
      std::smatch m;
      REQUIRE_MESSAGE(std::regex_search(row, m, share), row);
      shares.push_back(std::stod(m[1]));
    }
    CHECK(std::is_sorted(shares.rbegin(), shares.rend()));
    // The JSON object in the same order.
    std::vector<double> seconds;  // read in file order
    const auto ordered = nlohmann::ordered_json::parse(r.json_text);
    for (const auto& [cat, s] : ordered.at("critical_path_s").items()) {
      seconds.push_back(s.get<double>());
    }
    CHECK(std::is_sorted(seconds.rbegin(), seconds.rend()));
  }
}

TEST_CASE("report: one of a thing is singular, counts have thousands separators, no e-notation") {
  const Report dash = simulate_file(kScenarios / "dash-llama-953m.json");
  CHECK(dash.text.find("cluster dgx-h100: 1 node x 8 GPUs = 8 x H100") != std::string::npos);
  CHECK(dash.text.find("batch 256 sequences = 1 micro-batch of 32 per replica") != std::string::npos);
  CHECK(dash.text.find("inverse roots every step") != std::string::npos);
  for (const char* noise : {"1 nodes", "1 micro-batches", "step(s)", "1 steps"}) {
    CHECK_MESSAGE(dash.text.find(noise) == std::string::npos, noise);
  }
  const Report llama = simulate_file(kScenarios / "llama2-7b-dgx-h100.json");
  const double tps = llama.json.at("tokens_per_s").get<double>();
  CHECK(llama.text.find(fmt::format("throughput           {},{:03d} tokens/s (262,144 tokens per "
                                    "step)",
                                    static_cast<int>(tps + 0.5) / 1000,
                                    static_cast<int>(tps + 0.5) % 1000)) != std::string::npos);
  CHECK(llama.text.find("5,004 ops") != std::string::npos);
  CHECK(std::regex_search(llama.text, std::regex(R"([0-9]e[+-][0-9])")) == false);
}

TEST_CASE("report: the optimizer step is the sum of its parts, in text and JSON") {
  // Shampoo/DASH: the compute parts and the update all-gather.
  const Report dash = simulate_file(kScenarios / "dash-llama-953m.json");
  double sum = 0;
  std::vector<std::string> names;
  for (const auto& [name, s] : dash.json.at("optimizer_breakdown_s").items()) {
    sum += s.get<double>();
    names.push_back(name);
  }
  CHECK(names == std::vector<std::string>{"factor update", "inverse roots",
                                          "precondition and grafting", "update all-gather"});
  CHECK(dash.json.at("optimizer_step_s").get<double>() == doctest::Approx(sum).epsilon(1e-12));
  CHECK(dash.text.find("optimizer step = factor update ") != std::string::npos);
  // AdamW with ZeRO-1 and dp 2: the update and the all-gather of the updated parameters.
  const Report adam = simulate_file(kScenarios / "llama2-7b-dgx-h100.json");
  const auto& parts = adam.json.at("optimizer_breakdown_s");
  REQUIRE(parts.size() == 2);
  CHECK(parts.contains("adamw step"));
  CHECK(parts.contains("param all-gather"));
  CHECK(adam.json.at("optimizer_step_s").get<double>() ==
        doctest::Approx(parts.at("adamw step").get<double>() +
                        parts.at("param all-gather").get<double>())
            .epsilon(1e-12));
  // ZeRO 0, dp 1: the update alone.
  const Report alone = simulate_file(kScenarios / "gpt2-medium-gpipe.json");
  CHECK(alone.json.at("optimizer_breakdown_s").size() == 1);
  CHECK(alone.json.at("optimizer_step_s") == alone.json.at("optimizer_breakdown_s").at("adamw step"));
}

TEST_CASE("report: the result JSON says whether each device fits in HBM") {
  const Report fits = simulate_file(kScenarios / "llama2-7b-dgx-h100.json");
  CHECK(fits.json.at("fits_in_hbm") == true);
  CHECK(fits.json.at("fits_in_hbm_per_device") == nlohmann::json::array({true, true}));
  TempDir tmp;
  write_text(tmp.path() / "small.json", R"({
    "name": "small", "model": {"preset": "llama2-7b", "layers": 4},
    "cluster": {"preset": "dgx-h100", "nodes": 1, "device": {"hbm_capacity": "6 GiB"}},
    "training": {"global_batch": 8, "micro_batch": 1},
    "parallel": {"tp": 1, "pp": 2, "dp": 4}})");
  const Report small = simulate_file(tmp.path() / "small.json");
  const auto& peaks = small.json.at("peak_memory_bytes");
  const auto& device = small.json.at("device_memory_bytes");
  const auto& outside = small.json.at("non_tensor_memory_bytes");
  const auto& allocated = small.json.at("allocated_memory_bytes");
  const auto& reserved = small.json.at("reserved_memory_bytes");
  const auto& events = small.json.at("allocator_events");
  CHECK(small.json.at("allocator") == "caching");
  const double capacity = small.json.at("hbm_capacity_bytes").get<double>();
  REQUIRE(device.size() == peaks.size());
  REQUIRE(outside.size() == peaks.size());
  bool all = true;
  for (std::size_t d = 0; d < peaks.size(); ++d) {
    // The device's memory: the caching allocator's allocated peak (at least the ledger's; its
    // reserved peak is at least that), the CUDA context and the NCCL buffers.
    const double context = outside[d].at("cuda_context").get<double>();
    const double nccl = outside[d].at("nccl_buffers").get<double>();
    CHECK(context == 400e6);
    CHECK(nccl > 0);  // dp 4 and the pipeline pair
    CHECK(allocated[d].get<double>() >= peaks[d].get<double>());
    CHECK(reserved[d].get<double>() >= allocated[d].get<double>());
    // 6 GiB cannot hold the segments either: the request that found no room is named.
    CHECK(events[d].at("out_of_memory").get<std::int64_t>() == 1);
    CHECK(events[d].at("out_of_memory_request_bytes").get<double>() > 0);
    CHECK(device[d].get<double>() == allocated[d].get<double>() + context + nccl);
    const bool fits_d = device[d].get<double>() <= capacity;
    CHECK(small.json.at("fits_in_hbm_per_device")[d] == fits_d);
    all = all && fits_d;
  }
  CHECK(small.json.at("fits_in_hbm") == all);
  CHECK(small.json.at("fits_in_hbm") == false);
  CHECK(small.text.find("DOES NOT FIT") != std::string::npos);
  CHECK(small.text.find("outside the allocator (CUDA context 381.5 MiB, NCCL buffers") !=
        std::string::npos);
}
