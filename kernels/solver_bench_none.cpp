// The CUDA-less build of kernels/solver_bench.hpp: requests are checked as in the CUDA build,
// then there is nothing to run on. PARASIM_NO_CUDA_REASON comes from kernels/CMakeLists.txt.
#include "kernels/gpu_error.hpp"
#include "kernels/solver_bench.hpp"

namespace parasim::kernels {

SolverMeasurement measure_solver(const SolverRequest& request, const TimingOptions& /*options*/,
                                 int /*device*/) {
  check_solver_request(request);
  throw GpuUnavailable(PARASIM_NO_CUDA_REASON);
}

std::vector<double> run_solver(const SolverRequest& request, const std::vector<double>& /*blocks*/,
                               int /*device*/) {
  check_solver_request(request);
  throw GpuUnavailable(PARASIM_NO_CUDA_REASON);
}

}  // namespace parasim::kernels
