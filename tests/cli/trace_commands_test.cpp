// calibrate --from-trace and compare-trace as a user runs them: files in, profile and tables
// out, bad input refused with exit code 2 and nothing written.
#include <doctest/doctest.h>

#include <filesystem>

#include "cli/commands.hpp"
#include "cli/compare_trace_command.hpp"
#include "costmodel/profile.hpp"
#include "tests/cli/command_run.hpp"
#include "tests/trace/kineto_builder.hpp"

namespace parasim::cli {
namespace {

using nlohmann::json;

std::string llama_step() {
  test::KinetoBuilder t(0, 1, "NVIDIA H100 80GB HBM3");
  const json bf16 = json::array({"c10::BFloat16", "c10::BFloat16"});
  t.annotation("ProfilerStep#1", 1, 0, 10000);
  for (int i = 0; i < 4; ++i) {
    const double at = 100 + i * 1000;
    t.op("aten::mm", 1, at, 20, i + 1, json::array({{4096, 4096}, {4096, 4096}}), bf16)
        .kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", at + 100, 120 + i, i + 1);
  }
  return t.text();
}

const std::string kScenario =
    std::string(PARASIM_SOURCE_DIR) + "/scenarios/llama2-7b-dgx-h100.json";

}  // namespace

TEST_CASE("calibrate --from-trace writes a profile the cost model reads, and its coverage") {
  const auto dir = test::temp_dir("cli-from-trace");
  test::write_file(dir / "rank0.json", llama_step());
  CalibrateOptions o;
  o.from_trace = {(dir / "rank0.json").string()};
  o.out = (dir / "profile.json").string();
  const test::Run r =
      test::run_command([&](auto& out, auto& err) { return run_calibrate(o, out, err); });
  CHECK(r.code == kExitOk);
  CHECK(r.out.find("| gemm | 4 | 0.486 | 100.0 % |") != std::string::npos);
  CHECK(r.out.find("fitted into the profile: 100.0 %") != std::string::npos);
  const cost::Profile p = cost::load_profile(o.out);
  REQUIRE(p.measured.gemm.size() == 1);
  CHECK(p.measured.gemm[0].time.samples == 4);
  CHECK(p.measured.gemm[0].time.median_s == doctest::Approx(121.5e-6));
  CHECK(p.measured.provenance.backend == "trace");
  CHECK(p.measured.provenance.device == "NVIDIA H100 80GB HBM3");

  SUBCASE("the same traces give the same bytes") {
    const std::string first = [&] {
      std::ifstream in(o.out);
      return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    }();
    test::run_command([&](auto& out, auto& err) { return run_calibrate(o, out, err); });
    std::ifstream in(o.out);
    CHECK(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()) ==
          first);
  }
}

TEST_CASE("calibrate --from-trace: bad traces are exit 2 and nothing is written") {
  const auto dir = test::temp_dir("cli-from-trace-bad");
  test::write_file(dir / "bad.json", R"({"traceEvents": 5})");
  CalibrateOptions o;
  o.from_trace = {(dir / "bad.json").string()};
  o.out = (dir / "profile.json").string();
  test::Run r = test::run_command([&](auto& out, auto& err) { return run_calibrate(o, out, err); });
  CHECK(r.code == kExitBadInput);
  CHECK(r.err.find("bad.json: /traceEvents: missing") != std::string::npos);
  CHECK(!std::filesystem::exists(o.out));

  // A trace with nothing to fit: no GEMM shapes, no collective metadata.
  test::KinetoBuilder t;
  t.op("aten::relu", 1, 0, 10, 1).kernel("void at::native::elementwise_kernel", 20, 5, 1);
  test::write_file(dir / "plain.json", t.text());
  o.from_trace = {(dir / "plain.json").string()};
  r = test::run_command([&](auto& out, auto& err) { return run_calibrate(o, out, err); });
  CHECK(r.code == kExitBadInput);
  CHECK(r.err.find("nothing could be fitted") != std::string::npos);
  CHECK(!std::filesystem::exists(o.out));

  o.from_trace = {(dir / "missing.json").string()};
  r = test::run_command([&](auto& out, auto& err) { return run_calibrate(o, out, err); });
  CHECK(r.code == kExitBadInput);
  CHECK(r.err.find("missing.json: /: cannot open the trace file") != std::string::npos);
}

TEST_CASE("compare-trace: the run's kernels priced, and the step per phase beside parasim's") {
  const auto dir = test::temp_dir("cli-compare-trace");
  test::write_file(dir / "rank0.json", llama_step());
  CompareTraceOptions o;
  o.files = {(dir / "rank0.json").string(), kScenario};
  const test::Run r =
      test::run_command([&](auto& out, auto& err) { return run_compare_trace(o, out, err); });
  CHECK(r.code == kExitOk);
  CHECK(r.out.find("| gemm 4096x4096x4096 bf16 | 4 | 121.5 |") != std::string::npos);
  CHECK(r.out.find("| forward compute | 0.486 |") != std::string::npos);
  CHECK(r.out.find("step time error:") != std::string::npos);

  o.files = {(dir / "rank0.json").string(), (dir / "nope.json").string()};
  const test::Run bad =
      test::run_command([&](auto& out, auto& err) { return run_compare_trace(o, out, err); });
  CHECK(bad.code == kExitBadInput);
  CHECK(bad.err.find("nope.json") != std::string::npos);
}

}  // namespace parasim::cli

namespace parasim::cli {

TEST_CASE("compare-trace --json: the figures for scripts; an asynchronous run's steady state") {
  const auto dir = test::temp_dir("cli-compare-trace-json");
  test::write_file(dir / "rank0.json", llama_step());
  CompareTraceOptions o;
  o.files = {(dir / "rank0.json").string(),
             std::string(PARASIM_SOURCE_DIR) + "/scenarios/paci-gpt2-medium.json"};
  o.json = (dir / "out.json").string();
  const test::Run r =
      test::run_command([&](auto& out, auto& err) { return run_compare_trace(o, out, err); });
  REQUIRE(r.code == kExitOk);
  std::ifstream in(o.json);
  const nlohmann::json j = nlohmann::json::parse(in);
  CHECK(j["coverage"]["classes"]["gemm"]["kernels"] == 4);
  CHECK(j["largest_priced_kernels"][0]["calls_per_step"] == 4);
  // PACI simulates warm-up steps; the per-step window is the steady state's, as simulate's step.
  const double window_ms = j["phases"]["parasim"]["window_us"].get<double>() / 1e3;
  const test::Run sim = test::run_command([&](auto& out, auto& err) {
    SimulateOptions s;
    s.scenario = o.files.back();
    s.json = (dir / "sim.json").string();
    return run_simulate(s, out, err);
  });
  REQUIRE(sim.code == kExitOk);
  std::ifstream sin(dir / "sim.json");
  const double step_ms = nlohmann::json::parse(sin)["step_time_s"].get<double>() * 1e3;
  CHECK(window_ms == doctest::Approx(step_ms).epsilon(0.01));

  // A bad trace writes nothing.
  std::filesystem::remove(o.json);
  test::write_file(dir / "bad.json", "{}");
  o.files.front() = (dir / "bad.json").string();
  const test::Run bad =
      test::run_command([&](auto& out, auto& err) { return run_compare_trace(o, out, err); });
  CHECK(bad.code == kExitBadInput);
  CHECK(!std::filesystem::exists(o.json));
}

}  // namespace parasim::cli
