// The Nsight Systems reader on an export the test writes with SQLite: two processes, kernels
// named through StringIds, launches linked to emit_nvtx's ranges and their shapes.
#include "calibrate/trace/nsys_reader.hpp"

#include <doctest/doctest.h>
#include <sqlite3.h>

#include "calibrate/trace/op_nesting.hpp"
#include "calibrate/trace/trace_file.hpp"
#include "calibrate/trace/trace_fit.hpp"
#include "tests/trace/kineto_builder.hpp"

namespace parasim::calib::trace {
namespace {

void exec(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  REQUIRE_MESSAGE(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) == SQLITE_OK,
                  (error ? error : ""));
}

constexpr long long kPid1 = 100LL << 24, kPid2 = 200LL << 24;

std::filesystem::path write_export(const std::string& name) {
  const auto path = test::temp_dir("nsys-" + name) / "run.sqlite";
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  exec(db, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)");
  exec(db,
       "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId "
       "INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName "
       "INTEGER, shortName INTEGER)");
  exec(db,
       "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid "
       "INTEGER, correlationId INTEGER, nameId INTEGER)");
  exec(db,
       "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, "
       "textId INTEGER, globalTid INTEGER)");
  exec(db, "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT)");
  exec(db, "INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA A100-SXM4-80GB')");
  exec(db,
       "INSERT INTO StringIds VALUES (1, 'ampere_bf16_s16816gemm_bf16_128x128_ldg8_tn'), "
       "(2, 'ncclDevKernel_AllReduce_Sum_bf16_RING_LL'), (3, 'cudaLaunchKernel'), "
       "(4, 'ProfilerStep#7')");
  const std::string t1 = std::to_string(kPid1 + 11), t2 = std::to_string(kPid2 + 22);
  // Process 1: a step with an mm (its shapes in the range's text) and an all-reduce.
  exec(db, "INSERT INTO NVTX_EVENTS VALUES (0, 100000, 59, NULL, 4, " + t1 +
               "), (1000, 3000, "
               "59, 'aten::mm, seq = 3, sizes = [[8, 1024], [1024, 4096]]', NULL, " +
               t1 + ")");
  exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1500, 1600, " + t1 +
               ", 1, 3), "
               "(4000, 4100, " +
               t1 + ", 2, 3)");
  exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10000, 60000, 0, 7, 1, " +
               std::to_string(kPid1) + ", 1, 1), (70000, 90000, 0, 20, 2, " +
               std::to_string(kPid1) + ", 2, 2)");
  // Process 2: one kernel, no launch record.
  exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (5000, 8000, 1, 7, 9, " +
               std::to_string(kPid2) + ", 1, 1)");
  (void)t2;
  sqlite3_close(db);
  return path;
}

}  // namespace

TEST_CASE("Nsight reader: processes as ranks, kernels, launches into emit_nvtx's ops") {
  const auto path = write_export("two");
  CHECK(looks_like_sqlite(path.string()));
  const std::vector<RankTrace> ranks = read_trace_file(path.string());
  REQUIRE(ranks.size() == 2);
  const RankTrace& r = ranks[0];
  CHECK(r.format == "nsys");
  CHECK(r.device == "NVIDIA A100-SXM4-80GB");
  CHECK(r.world_size == 2);
  CHECK(r.steps == 1);
  REQUIRE(r.kernels.size() == 2);
  CHECK(r.kernels[0].start_us == 10);
  CHECK(r.kernels[0].duration_us == 50);
  CHECK(r.kernels[0].kind == KernelClass::kGemm);
  REQUIRE(r.kernels[0].launch_op >= 0);
  const TraceOp& mm = r.ops[static_cast<std::size_t>(r.kernels[0].launch_op)];
  CHECK(mm.name == "aten::mm");
  CHECK(mm.input_dims == std::vector<std::vector<std::int64_t>>{{8, 1024}, {1024, 4096}});
  CHECK(r.kernels[1].kind == KernelClass::kCollective);
  CHECK(!r.kernels[1].collective);  // sizes are not in the export's kernel rows
  REQUIRE(r.launch_call_us.size() == 2);
  CHECK(r.launch_call_us[0] == doctest::Approx(0.1));
  CHECK(ranks[1].kernels.size() == 1);
  CHECK(ranks[1].rank == 1);

  // Its GEMM's dtype comes from the kernel's name (emit_nvtx records no input types); the
  // other process's GEMM has no launch record, so no shape.
  const TraceFit fit = fit_traces(ranks, {});
  REQUIRE(fit.tables.gemm.size() == 1);
  CHECK(fit.tables.gemm[0].shape == cost::GemmShape{8, 4096, 1024, 1, cost::Dtype::kBf16});
  CHECK(fit.coverage.gemm_kernels_without_shape == 1);
  CHECK(fit.coverage.collective_kernels_without_metadata == 1);
}

TEST_CASE("Nsight reader: emit_nvtx range texts") {
  const TraceOp a = parse_nvtx_op(
      "aten::addmm, seq = 12, sizes = [[4096], [8, 1024], [1024, "
      "4096], [], []]");
  CHECK(a.name == "aten::addmm");
  CHECK(a.input_dims ==
        std::vector<std::vector<std::int64_t>>{{4096}, {8, 1024}, {1024, 4096}, {}, {}});
  CHECK(parse_nvtx_op("MmBackward0, seq = 3").name == "MmBackward0");
  CHECK(parse_nvtx_op("my range").input_dims.empty());
}

TEST_CASE("Nsight reader: an export without kernels says which table is missing") {
  const auto path = test::temp_dir("nsys-empty") / "empty.sqlite";
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  exec(db, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)");
  sqlite3_close(db);
  try {
    read_trace_file(path.string());
    FAIL("an export without kernels was read");
  } catch (const cost::InputError& e) {
    CHECK(std::string(e.what()).find("empty.sqlite: CUPTI_ACTIVITY_KIND_KERNEL: missing") !=
          std::string::npos);
  }
}

}  // namespace parasim::calib::trace

namespace parasim::calib::trace {

TEST_CASE("Nsight reader: correlation ids per process; hostile ids and sizes") {
  const auto path = test::temp_dir("nsys-collide") / "run.sqlite";
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  exec(db, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)");
  exec(db,
       "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId "
       "INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName "
       "INTEGER)");
  exec(db,
       "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid "
       "INTEGER, correlationId INTEGER, nameId INTEGER)");
  exec(db,
       "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, "
       "textId INTEGER, globalTid INTEGER)");
  exec(db, "INSERT INTO StringIds VALUES (1, 'ampere_bf16_s16816gemm_bf16_128x128_ldg8_tn')");
  // Two processes, each launching its GEMM with correlation id 5; a third with a negative id.
  for (long long pid : {kPid1, kPid2, 300LL << 24}) {
    const std::string tid = std::to_string(pid + 1), p = std::to_string(pid);
    const std::string corr = pid == (300LL << 24) ? "-12" : "5";
    exec(db,
         "INSERT INTO NVTX_EVENTS VALUES (1000, 3000, 59, 'aten::mm, seq = 3, sizes = [[8, "
         "1024], [1024, 4096]]', NULL, " +
             tid + ")");
    exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1500, 1600, " + tid + ", " + corr +
                 ", 0)");
    exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10000, 60000, 0, 7, " + corr + ", " +
                 p + ", 1)");
  }
  exec(db,
       "INSERT INTO NVTX_EVENTS VALUES (1000, 3000, 59, 'aten::mm, sizes = "
       "[[99999999999999999999, 2]]', NULL, " +
           std::to_string(kPid1 + 2) + ")");
  sqlite3_close(db);
  const std::vector<RankTrace> ranks = read_trace_file(path.string());
  REQUIRE(ranks.size() == 3);
  for (const RankTrace& r : ranks) {
    CAPTURE(r.rank);
    REQUIRE(r.kernels.size() == 1);
    REQUIRE(r.kernels[0].launch_op >= 0);
    CHECK(r.ops[static_cast<std::size_t>(r.kernels[0].launch_op)].input_dims.size() == 2);
  }
  bool oversized_dropped = false;
  for (const TraceOp& op : ranks[0].ops) oversized_dropped |= op.input_dims.empty();
  CHECK(oversized_dropped);
}

TEST_CASE("OpLocator: the innermost span, past many closed siblings") {
  std::vector<TraceOp> ops;
  auto add = [&](double a, double b) {
    TraceOp o;
    o.thread = 1;
    o.start_us = a;
    o.end_us = b;
    ops.push_back(o);
  };
  add(0, 1000);                                             // 0: the outer range
  for (int i = 0; i < 100; ++i) add(1 + i * 2, 2 + i * 2);  // 1..100: short children
  add(500, 600);                                            // 101
  add(510, 520);                                            // 102
  const OpLocator locate(ops);
  CHECK(locate.innermost(1, 515) == 102);
  CHECK(locate.innermost(1, 550) == 101);
  CHECK(locate.innermost(1, 700) == 0);
  CHECK(locate.innermost(1, 3.5) == 2);
  CHECK(locate.innermost(1, 1500) == -1);
  CHECK(locate.innermost(2, 515) == -1);
}

}  // namespace parasim::calib::trace

namespace parasim::calib::trace {

TEST_CASE("Nsight reader: a kernel longer than a profile can hold is a problem, not a point") {
  const auto path = test::temp_dir("nsys-long") / "long.sqlite";
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  exec(db, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)");
  exec(db,
       "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId "
       "INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName "
       "INTEGER)");
  exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (0, 200000000000000000, 0, 7, 1, " +
               std::to_string(kPid1) + ", 1)");
  sqlite3_close(db);
  try {
    read_trace_file(path.string());
    FAIL("a 2e8 s kernel was read");
  } catch (const cost::InputError& e) {
    CHECK(std::string(e.what()).find("long.sqlite: CUPTI_ACTIVITY_KIND_KERNEL: 1 GPU activities "
                                     "run longer than 100000 s") != std::string::npos);
  }
}

}  // namespace parasim::calib::trace
