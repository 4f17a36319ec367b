#pragma once
// mpi_sanitizer_env — the environment prefix for a shell command that starts `parasim calibrate`
// (which initialises MPI through the MPI plugin) from a test. Under the sanitizer build (CTest
// sets ASAN_OPTIONS, cmake/ParasimSanitize.cmake) such a process needs full allocation stacks
// (fast_unwind_on_malloc=0) so that OpenMPI's own leaks reach the entry points
// cmake/lsan-openmpi.supp suppresses, as PARASIM_SANITIZER_MPI_ENVIRONMENT gives the calibrate
// suite; only those commands pay the slower mallocs. Empty outside the sanitizer build.

#include <cstdlib>
#include <string>

#include "tests/cli/shell_command.hpp"

namespace parasim::test {

inline std::string mpi_sanitizer_env() {
  const char* asan = std::getenv("ASAN_OPTIONS");
  if (asan == nullptr || *asan == '\0') return "";
  return "ASAN_OPTIONS=" + shell_quote(std::string(asan) + ":fast_unwind_on_malloc=0") + " ";
}

}  // namespace parasim::test
