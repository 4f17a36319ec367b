// A real run's trace (tests/data/traces/README.md): what parasim reads from it against figures
// computed from the file by a separate script (the events' counts and `dur` sums within the
// ProfilerStep windows: 3,774 GPU events, 165.185838 ms, of which 21 NCCL kernels, 46.876493 ms).
#include <doctest/doctest.h>

#include "calibrate/trace/phase_breakdown.hpp"
#include "calibrate/trace/trace_file.hpp"
#include "calibrate/trace/trace_fit.hpp"

namespace parasim::calib::trace {

TEST_CASE("real trace: HTA's 2 x A100 DDP run, rank 0") {
  const auto ranks = read_trace_file(std::string(PARASIM_SOURCE_DIR) +
                                     "/tests/data/traces/hta-resnet-ddp-2xa100-rank0.json.gz");
  REQUIRE(ranks.size() == 1);
  const RankTrace& r = ranks.front();
  CHECK(r.device == "NVIDIA A100-PG509-200");
  CHECK(r.rank == 0);
  CHECK(r.world_size == 2);
  CHECK(r.steps == 3);
  CHECK(r.kernels.size() == 3774);
  double total = 0, nccl = 0;
  int nccl_kernels = 0, with_metadata = 0;
  for (const auto& k : r.kernels) {
    total += k.duration_us;
    if (k.kind == KernelClass::kCollective) {
      nccl += k.duration_us;
      ++nccl_kernels;
      with_metadata += k.collective ? 1 : 0;
    }
  }
  CHECK(total == doctest::Approx(165185.838).epsilon(1e-9));
  CHECK(nccl == doctest::Approx(46876.493).epsilon(1e-9));
  CHECK(nccl_kernels == 21);
  CHECK(with_metadata == 21);

  const TraceFit fit = fit_traces(ranks, {});
  CHECK(fit.coverage.collective_calls == 21);
  CHECK(fit.coverage.class_time_us[static_cast<std::size_t>(KernelClass::kOther)] == 0);
  REQUIRE(fit.tables.collectives.size() == 2);
  CHECK(fit.tables.collectives[0].kind == cost::CollectiveKind::kAllReduce);
  CHECK(fit.tables.collectives[0].group == cost::GroupPlacement{2, 2, 1});
  CHECK(fit.tables.collectives[1].kind == cost::CollectiveKind::kBroadcast);
  CHECK(fit.tables.gemm.empty());  // profiled without record_shapes

  const PhaseBreakdown b = trace_phases(r);
  CHECK(b.steps == 3);
  CHECK(b.compute_us + b.exposed_comm_us + b.idle_us == doctest::Approx(b.window_us));
  CHECK(b.phase_us[static_cast<std::size_t>(TracePhase::kBackward)] > 0);
  CHECK(b.phase_us[static_cast<std::size_t>(TracePhase::kOptimizer)] > 0);
}

}  // namespace parasim::calib::trace
