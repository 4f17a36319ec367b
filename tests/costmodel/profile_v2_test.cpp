// Profile format version 2 (docs/profile.md): measured tables read and written, version 1 still
// valid, every problem of a bad file reported at once with its JSON path.
#include <doctest/doctest.h>

#include <map>

#include "../support/test_support.hpp"
#include "costmodel/diagnostics.hpp"
#include "costmodel/profile.hpp"
#include "costmodel/profile_writer.hpp"

using namespace parasim;
using namespace parasim::cost;

namespace {

MeasuredTime mt(double median, int samples = 20) {
  return MeasuredTime{median, median * 0.9, median * 1.1, samples};
}

// A profile with every field set, with doubles that have no short decimal form.
Profile full_profile() {
  Profile p;
  p.source = "round trip: \"quoted\" and unicode \u00b5s";
  p.gemm.ceiling = 0.7;
  p.gemm.tile_m = 256;
  p.gemm.k_half = 100.0 / 3.0;
  p.memory_efficiency = 0.1 + 0.2;  // 0.30000000000000004
  p.peak_bf16 = FlopRate{989.4e12};
  p.peak_fp8 = FlopRate{1978.9e12 / 3.0};
  p.hbm_bandwidth = Bandwidth{4.8e12 / 7.0};
  p.kernel_launch_overhead = sim::Time::ps(2'718'281);
  p.inter_bandwidth = Bandwidth{50e9};
  p.intra_latency = sim::Time::ns(600);
  MeasuredTables& t = p.measured;
  t.provenance.backend = "cuda";
  t.provenance.device = "NVIDIA H200";
  t.provenance.device_count = 8;
  t.provenance.ranks = 8;
  t.provenance.nodes = 1;
  t.provenance.nccl = "2.28.9";
  t.provenance.date = "2026-11-29T12:00:00Z";
  t.complete = true;
  t.gemm.push_back({GemmShape{4096, 4096, 1024, 1, Dtype::kBf16}, false, true, mt(1.0 / 7e3)});
  t.gemm.push_back({GemmShape{1024, 512, 64, 8, Dtype::kFp32}, true, false, mt(3.3e-5, 50)});
  CollectiveSeries s;
  s.kind = CollectiveKind::kAllGather;
  s.group = GroupPlacement{16, 8, 2};
  s.fit = AlphaBeta{1.0 / 3.0 * 1e-5, 1.0 / 45e9};
  s.points.push_back({Bytes{1024}, false, mt(2e-5), true});
  s.points.push_back({Bytes{1024}, true, mt(2.1e-5), true});
  s.points.push_back({Bytes{1 << 20}, false, mt(5e-5), false});
  s.points.push_back({Bytes{1.5}, true, mt(1e-5), true});  // in-place series apart
  s.points.pop_back();
  t.collectives.push_back(s);
  t.collectives.push_back({CollectiveKind::kSendRecv,
                           GroupPlacement{2, 1, 2},
                           {{Bytes{4096}, false, mt(9e-6), true}},
                           std::nullopt});
  t.solvers.push_back({"newton-db", 1024, 32, 10, Dtype::kFp32, true, mt(0.0123)});
  t.solvers.push_back({"evd", 512, 4, 0, Dtype::kFp32, false, mt(0.5)});
  t.norms.push_back({8192, 4096, true, Bytes{134250496}, mt(6.1e-5)});
  t.launch_overhead = mt(2.5e-6, 1000);
  t.overlap.push_back(
      {GemmShape{8192, 8192, 8192, 1, Dtype::kBf16}, Bytes{256e6}, 1e-3, 1.1e-3, 2e-3, 2.4e-3});
  return p;
}

void check_same_values(const Profile& a, const Profile& b) {
  CHECK(a.source == b.source);
  CHECK(a.gemm.ceiling == b.gemm.ceiling);
  CHECK(a.gemm.tile_m == b.gemm.tile_m);
  CHECK(a.gemm.tile_n == b.gemm.tile_n);
  CHECK(a.gemm.k_half == b.gemm.k_half);
  CHECK(a.gemm.k_ref == b.gemm.k_ref);
  CHECK(a.memory_efficiency == b.memory_efficiency);
  CHECK(a.peak_bf16 == b.peak_bf16);
  CHECK(a.peak_fp16 == b.peak_fp16);
  CHECK(a.peak_fp8 == b.peak_fp8);
  CHECK(a.hbm_bandwidth == b.hbm_bandwidth);
  CHECK(a.kernel_launch_overhead == b.kernel_launch_overhead);
  CHECK(a.intra_bandwidth == b.intra_bandwidth);
  CHECK(a.inter_bandwidth == b.inter_bandwidth);
  CHECK(a.intra_latency == b.intra_latency);
  CHECK(a.inter_latency == b.inter_latency);
  CHECK(a.measured == b.measured);
}

}  // namespace

TEST_CASE("Profile v2: format -> parse -> format is byte-identical and keeps every value") {
  const Profile p = full_profile();
  const std::string text = format_profile(p);
  CHECK(text.find("\"parasim_profile\": 2") != std::string::npos);
  const Profile back = parse_profile(text, "round-trip.json");
  check_same_values(p, back);
  CHECK(format_profile(back) == text);
  CHECK(format_profile(p) == text);  // deterministic
}

TEST_CASE("Profile writer writes only what is set") {
  Profile empty;
  CHECK(format_profile(empty) == "{\n  \"parasim_profile\": 2\n}\n");
  const Profile back = parse_profile(format_profile(empty), "empty.json");
  CHECK(!back.memory_efficiency);
  CHECK(back.measured.empty());
  CHECK(!back.measured.complete);

  Profile incomplete;  // what an interrupted calibration leaves: provenance, nothing measured
  incomplete.measured.provenance.backend = "cpu";
  const std::string text = format_profile(incomplete);
  CHECK(text.find("\"complete\": false") != std::string::npos);
  CHECK(parse_profile(text, "x.json").measured == incomplete.measured);
}

TEST_CASE("Profile v1 stays valid; a v2 file without measurements is the same model") {
  const Profile v1 = parse_profile(R"({"parasim_profile": 1, "memory_efficiency": 0.7,
      "device": {"kernel_launch_overhead": "3 us"}})",
                                   "v1.json");
  CHECK(v1.memory_efficiency == 0.7);
  CHECK(v1.kernel_launch_overhead == sim::Time::us(3));
  CHECK(v1.measured.empty());
  const Profile v2 = parse_profile(R"({"parasim_profile": 2, "memory_efficiency": 0.7,
      "device": {"kernel_launch_overhead": "3 us"}})",
                                   "v2.json");
  check_same_values(v1, v2);
}

TEST_CASE("Profile: an unsupported version is reported") {
  try {
    parse_profile(R"({"parasim_profile": 3})", "v3.json");
    FAIL("no error");
  } catch (const InputError& e) {
    REQUIRE(e.diagnostics().problems().size() == 1);
    CHECK(e.diagnostics().problems()[0].json_path == "/parasim_profile");
    CHECK(e.diagnostics().problems()[0].message.find("versions 1 and 2, got 3") !=
          std::string::npos);
  }
}

TEST_CASE("Bad profiles report every problem at once, each with its JSON path") {
  const auto dir = test::kSourceDir / "tests" / "data" / "bad-profile";
  const auto expected = test::expected_problems(dir);
  const auto files = test::json_files_in(dir);
  REQUIRE(files.size() == expected.size());
  for (const auto& file : files) {
    const std::string name = file.filename().string();
    INFO("file " << name);
    REQUIRE(expected.count(name) == 1);
    const auto& want = expected.at(name);
    try {
      load_profile(file.string());
      FAIL("no error");
    } catch (const InputError& e) {
      const auto& got = e.diagnostics().problems();
      CHECK_MESSAGE(got.size() == want.size(), e.what());
      for (const auto& entry : want) {
        // Named references, not a structured binding: clang 14 cannot capture one in a lambda.
        const auto& path = entry.first;
        const auto& text = entry.second;
        const bool found = std::any_of(got.begin(), got.end(), [&](const Problem& p) {
          const std::string shown = p.json_path.empty() ? "/" : p.json_path;  // the root is "/"
          return shown == path && p.message.find(text) != std::string::npos;
        });
        CHECK_MESSAGE(found, "expected at " << path << ": " << text << "\ngot:\n" << e.what());
      }
    }
  }
}
