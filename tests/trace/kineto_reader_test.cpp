// The Kineto reader on traces the test writes: links, phases, steps, classes, and bad input.
#include <doctest/doctest.h>

#include "calibrate/trace/kernel_classes.hpp"
#include "calibrate/trace/trace_file.hpp"
#include "costmodel/diagnostics.hpp"
#include "tests/trace/kineto_builder.hpp"

namespace parasim::calib::trace {
namespace {

using nlohmann::json;
const json kBf16x3 = json::array({"c10::BFloat16", "c10::BFloat16", "c10::BFloat16"});

// One profiled step: a forward addmm and mm (split-K: two kernels), a backward mm under autograd
// on its own thread with an all-reduce, the optimizer; and an mm after the step.
test::KinetoBuilder one_step() {
  test::KinetoBuilder t(3, 8);
  t.annotation("ProfilerStep#1", 1, 0, 1000)
      .op("aten::addmm", 1, 10, 30, 1, json::array({{4096}, {8, 1024}, {1024, 4096}}), kBf16x3)
      .kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 100, 50, 1)
      .op("aten::mm", 1, 40, 20, 2, json::array({{8, 4096}, {4096, 1024}}), kBf16x3)
      .kernel("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN", 160, 40, 2)
      .kernel("void cublasLt::splitKreduce_kernel<32, 16, int, float>", 200, 5, 2)
      .annotation("autograd::engine::evaluate_function: MmBackward0", 2, 300, 100)
      .op("MmBackward0", 2, 305, 90)
      .op("aten::mm", 2, 310, 20, 3, json::array({{8, 1024}, {1024, 4096}}), kBf16x3)
      .kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64", 400, 60, 3)
      .op("record_param_comms", 2, 350, 10, 4)
      .kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
              470, 100, 4, 20, test::collective_args("allreduce", 1 << 20, 1 << 20, 8))
      .annotation("Optimizer.step#AdamW.step", 1, 800, 100)
      .op("aten::_foreach_add_", 1, 810, 20, 5)
      .kernel("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<Adam>", 900, 30, 5)
      .op("aten::mm", 1, 2000, 10, 9, json::array({{8, 8}, {8, 8}}), kBf16x3)
      .kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64", 2100, 10, 9)
      .launch(12, 4, 1)
      .launch(42, 6, 2);
  return t;
}

RankTrace read_one(const std::filesystem::path& path) {
  auto ranks = read_trace_file(path.string());
  REQUIRE(ranks.size() == 1);
  return ranks.front();
}

}  // namespace

TEST_CASE("Kineto reader: one step's kernels, their ops, phases and classes") {
  const auto dir = test::temp_dir("kineto");
  test::write_file(dir / "t.json", one_step().text());
  const RankTrace t = read_one(dir / "t.json");
  CHECK(t.format == "kineto");
  CHECK(t.rank == 3);
  CHECK(t.world_size == 8);
  CHECK(t.device == "NVIDIA H100 80GB HBM3");
  CHECK(t.steps == 1);
  REQUIRE(t.kernels.size() == 6);  // the mm after the step is left out
  CHECK(t.launch_call_us == std::vector<double>{4, 6});
  const double starts[] = {100, 160, 200, 400, 470, 900};
  const KernelClass kinds[] = {KernelClass::kGemm,       KernelClass::kGemm,
                               KernelClass::kGemm,       KernelClass::kGemm,
                               KernelClass::kCollective, KernelClass::kMemoryBound};
  const TracePhase phases[] = {TracePhase::kForward,  TracePhase::kForward,
                               TracePhase::kForward,  TracePhase::kBackward,
                               TracePhase::kBackward, TracePhase::kOptimizer};
  for (std::size_t i = 0; i < 6; ++i) {
    CAPTURE(i);
    CHECK(t.kernels[i].start_us == starts[i]);
    CHECK(t.kernels[i].kind == kinds[i]);
    CHECK(t.kernels[i].phase == phases[i]);
    REQUIRE(t.kernels[i].launch_op >= 0);
  }
  CHECK(t.ops[static_cast<std::size_t>(t.kernels[2].launch_op)].name == "aten::mm");
  REQUIRE(t.kernels[4].collective);
  const TraceCollective& c = *t.kernels[4].collective;
  CHECK(c.kind == cost::CollectiveKind::kAllReduce);
  CHECK(c.group_size == 8);
  CHECK(c.message_bytes() == 2.0 * (1 << 20));
}

TEST_CASE("Kineto reader: gzip and plain read the same; several GPUs keep the busiest") {
  const auto dir = test::temp_dir("kineto-gz");
  auto t = one_step();
  test::write_file(dir / "t.json", t.text());
  test::write_gzip(dir / "t.json.gz", t.text());
  const RankTrace plain = read_one(dir / "t.json");
  const RankTrace gz = read_one(dir / "t.json.gz");
  CHECK(gz.kernels.size() == plain.kernels.size());
  CHECK(gz.gpu_window_us() == plain.gpu_window_us());

  t.doc()["deviceProperties"].push_back({{"id", 1}, {"name", "other"}});
  json k = t.doc()["traceEvents"][2];  // a kernel, moved to GPU 1 as a long one
  k["args"]["device"] = 1;
  k["dur"] = 5000;
  t.add(k);
  test::write_file(dir / "two.json", t.text());
  const RankTrace two = read_one(dir / "two.json");
  CHECK(two.device == "other");
  CHECK(two.kernels.size() == 1);
  REQUIRE(two.notes.size() == 1);
  CHECK(two.notes[0].find("GPU 1 (the most kernel time)") != std::string::npos);
}

TEST_CASE("Kineto reader: without ProfilerStep marks the whole trace is one step") {
  auto t = one_step();
  auto& events = t.doc()["traceEvents"];
  events.erase(events.begin());  // the ProfilerStep annotation
  const auto dir = test::temp_dir("kineto-nosteps");
  test::write_file(dir / "t.json", t.text());
  const RankTrace r = read_one(dir / "t.json");
  CHECK(r.steps == 0);
  CHECK(r.kernels.size() == 7);
}

TEST_CASE("Kineto reader: kernel names into classes, the launching op refining them") {
  CHECK(classify_kernel("ncclKernel_AllGather_RING_LL_Sum_int8_t") == KernelClass::kCollective);
  CHECK(classify_kernel("flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128>>") ==
        KernelClass::kAttention);
  CHECK(classify_kernel("cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4") ==
        KernelClass::kGemm);
  CHECK(classify_kernel("sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32") ==
        KernelClass::kConvolution);
  CHECK(classify_kernel("triton_poi_fused_add_mul_0") == KernelClass::kMemoryBound);
  CHECK(classify_kernel("triton_tem_fused_mm_0") == KernelClass::kGemm);
  CHECK(classify_kernel("my_custom_kernel") == KernelClass::kOther);
  CHECK(classify_launched_kernel(KernelClass::kGemm, "aten::cudnn_convolution") ==
        KernelClass::kConvolution);
  CHECK(classify_launched_kernel(KernelClass::kOther, "aten::_flash_attention_forward") ==
        KernelClass::kAttention);
  CHECK(classify_launched_kernel(KernelClass::kMemoryBound, "aten::_flash_attention_forward") ==
        KernelClass::kMemoryBound);
  CHECK(profiler_collective("_allgather_base") == cost::CollectiveKind::kAllGather);
  CHECK(profiler_collective("reduce_scatter_tensor_coalesced") ==
        cost::CollectiveKind::kReduceScatter);
  CHECK(profiler_collective("all_to_allv") == cost::CollectiveKind::kAllToAll);
  CHECK(!profiler_collective("barrier"));
  CHECK(profiler_dtype_bytes("Float") == 4);
  CHECK(profiler_dtype_bytes("c10::BFloat16") == 2);
  CHECK(profiler_dtype_bytes("Float8_e4m3fn") == 1);
  CHECK(profiler_dtype_bytes("Complex") == 0);
  CHECK(gemm_dtype_from_kernel_name("ampere_bf16_s16816gemm_bf16_128x128_ldg8") ==
        cost::Dtype::kBf16);
  CHECK(gemm_dtype_from_kernel_name("cutlass_80_tensorop_s1688gemm_256x64") == cost::Dtype::kFp32);
  CHECK(gemm_dtype_from_kernel_name("sm90_xmma_gemm_e4m3e4m3_e4m3f32") == cost::Dtype::kFp8);
  CHECK(!gemm_dtype_from_kernel_name("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN"));
}

TEST_CASE("Kineto reader: bad input names the file and the path, every problem at once") {
  const auto dir = test::temp_dir("kineto-bad");
  auto problems = [&](const std::string& name, const std::string& bytes, bool gz = false) {
    const auto path = dir / name;
    if (gz) {
      test::write_gzip(path, bytes);
    } else {
      test::write_file(path, bytes);
    }
    try {
      read_trace_file(path.string());
    } catch (const cost::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(problems("a.json", R"({"foo": 1})").find("a.json: /traceEvents: missing") !=
        std::string::npos);
  CHECK(problems("b.txt", "hello").find("not a trace parasim reads") != std::string::npos);
  CHECK(problems("c.json", R"({"traceEvents": [)").find("invalid JSON") != std::string::npos);
  const std::string two_bad =
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "abc", "dur": 1},
          {"ph": "X", "cat": "python_function", "name": "p", "ts": 1, "dur": 1},
          {"ph": "X", "cat": "cpu_op", "name": "o", "ts": 1, "dur": -4}]})";
  const std::string both = problems("d.json", two_bad);
  CHECK(both.find("d.json: /traceEvents/0/ts: expected a number, found a string") !=
        std::string::npos);
  CHECK(both.find("d.json: /traceEvents/2/dur: expected a duration >= 0") != std::string::npos);
  // A truncated gzip file.
  test::write_gzip(dir / "whole.json.gz", one_step().text());
  std::ifstream in(dir / "whole.json.gz", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  test::write_file(dir / "cut.json.gz", bytes.substr(0, bytes.size() / 2));
  try {
    read_trace_file((dir / "cut.json.gz").string());
    FAIL("a truncated gzip file was read");
  } catch (const cost::InputError& e) {
    CHECK(std::string(e.what()).find("gzip: the gzip stream is truncated") != std::string::npos);
  }
  CHECK(problems("deep.json", std::string(200, '[') + std::string(200, ']'))
            .find("not a trace parasim reads") != std::string::npos);
  CHECK(problems("deep2.json", "{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}")
            .find("nested deeper than") != std::string::npos);
  try {
    read_trace_file(dir.string());
    FAIL("a folder was read");
  } catch (const cost::InputError& e) {
    CHECK(std::string(e.what()).find("not a regular file") != std::string::npos);
  }
}

}  // namespace parasim::calib::trace

namespace parasim::calib::trace {

TEST_CASE("Kineto reader: hostile fields are problems with their paths, never a crash") {
  const auto dir = test::temp_dir("kineto-hostile");
  auto problems = [&](const std::string& text) {
    test::write_file(dir / "t.json", text);
    try {
      read_trace_file((dir / "t.json").string());
    } catch (const cost::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(problems(R"({"traceEvents":[{"ph":1,"cat":"kernel","name":"x","ts":1,"dur":1}]})")
            .find("/traceEvents/0/ph: expected a string, found an integer") != std::string::npos);
  CHECK(problems(R"({"traceEvents":[{"ph":"X","cat":"kernel","name":5,"ts":1,"dur":1}]})")
            .find("/traceEvents/0/name: expected a string") != std::string::npos);
  CHECK(problems(R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":"nan","dur":1}]})")
            .find("/traceEvents/0/ts: expected a finite number") != std::string::npos);
  CHECK(problems(R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1e300}]})")
            .find("/traceEvents/0/dur: expected a finite number") != std::string::npos);
  // A kernel longer than a profile can hold (1e5 s).
  CHECK(problems(R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":2e11}]})")
            .find("/traceEvents/0/dur: expected a finite number of microseconds within +-1e+11") !=
        std::string::npos);
  // Elements that are not events still count in the paths.
  CHECK(problems(
            R"({"traceEvents":[1, "x", null, [2], {"ph":"X","cat":"kernel","name":"k","ts":1}]})")
            .find("/traceEvents/4/dur: missing") != std::string::npos);
  // Out-of-range ids, ranks and group sizes are ignored, not wrapped.
  test::KinetoBuilder t;
  t.doc()["distributedInfo"]["rank"] = 1e300;
  t.annotation("ProfilerStep#1", 1, 0, 100)
      .op("aten::mm", 1, 1, 5, 1)
      .kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 10, 5, 1, 7,
              test::collective_args("allreduce", 8, 8, 0));
  t.doc()["traceEvents"][2]["args"]["Group size"] = 4294967298.0;
  t.doc()["traceEvents"][2]["args"]["External id"] = 1e300;
  // Process Group Ranks as deeply nested text: refused before parsing, not recursed into.
  t.doc()["traceEvents"][2]["args"]["Process Group Ranks"] =
      std::string(100000, '[') + std::string(100000, ']');
  test::write_file(dir / "ids.json", t.text());
  const auto ranks = read_trace_file((dir / "ids.json").string());
  REQUIRE(ranks.size() == 1);
  CHECK(ranks[0].rank == 0);
  REQUIRE(ranks[0].kernels.size() == 1);
  CHECK(ranks[0].kernels[0].launch_op == -1);
  REQUIRE(ranks[0].kernels[0].collective);
  CHECK(ranks[0].kernels[0].collective->group_size == 0);
  CHECK(ranks[0].kernels[0].collective->ranks.empty());
}

TEST_CASE("gzip: members read in turn, padding after the last one ignored, a limit kept") {
  const auto dir = test::temp_dir("gzip");
  auto gz = [&](const std::string& text) {
    test::write_gzip(dir / "x.gz", text);
    std::ifstream in(dir / "x.gz", std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  const std::string one = gz("hello "), two = gz("world");
  CHECK(gunzip(one + two, 100) == "hello world");
  CHECK(gunzip(one + std::string(16, '\0'), 100) == "hello ");
  CHECK_THROWS_WITH_AS(gunzip(gz(std::string(200000, 'a')), 1000),
                       doctest::Contains("once inflated"), std::runtime_error);
}

}  // namespace parasim::calib::trace
