# Sanitizer and fuzzing builds (scripts/sanitize.sh runs both; README "Building by hand").
#
# PARASIM_SANITIZE = ON: every C++ target (libraries, tests, the executable) is compiled and
#                    linked with AddressSanitizer (with LeakSanitizer) and UndefinedBehavior-
#                    Sanitizer. A UBSan finding aborts (-fno-sanitize-recover=all), so it fails
#                    its test instead of scrolling past. gcc or clang.
# PARASIM_FUZZ     = ON: additionally builds the libFuzzer harnesses of tests/fuzz/ (clang only):
#                    every target gets libFuzzer's coverage instrumentation
#                    (-fsanitize=fuzzer-no-link) on top of ASan and UBSan, and the harnesses
#                    link -fsanitize=fuzzer. Implies PARASIM_SANITIZE.
#
# Either one makes PARASIM_CUDA default to OFF (an explicit -DPARASIM_CUDA=ON/AUTO still wins):
# the sanitizers cannot see into nvcc-compiled code, and the CUDA runtime needs
# ASAN_OPTIONS=protect_shadow_gap=0 under ASan (https://github.com/google/sanitizers/issues/629).
#
# Sets, for the rest of the build:
#   PARASIM_SANITIZER_ENVIRONMENT       VAR=VALUE list for CTest's ENVIRONMENT property (empty
#                                       when neither option is on); see tests/CMakeLists.txt.
#   PARASIM_SANITIZER_MPI_ENVIRONMENT   the same for the tests that initialise MPI.
# Must be included before ParasimCuda.

option(PARASIM_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(PARASIM_FUZZ "Build the libFuzzer harnesses in tests/fuzz (clang; implies PARASIM_SANITIZE)"
       OFF)

set(PARASIM_SANITIZER_ENVIRONMENT "")
set(PARASIM_SANITIZER_MPI_ENVIRONMENT "")
if(NOT PARASIM_SANITIZE AND NOT PARASIM_FUZZ)
  return()
endif()

if(PARASIM_FUZZ AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "PARASIM_FUZZ=ON needs clang (libFuzzer is part of clang), but the C++ "
    "compiler is ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER}. Configure a separate build "
    "directory with -DCMAKE_CXX_COMPILER=clang++ (Debian 12: clang-14, whose libFuzzer is in "
    "libclang-rt-14-dev), or leave PARASIM_FUZZ OFF.")
endif()

if(NOT DEFINED CACHE{PARASIM_CUDA})
  set(PARASIM_CUDA "OFF" CACHE STRING
    "Build the CUDA kernels: AUTO (when nvcc is found), ON (required), OFF")
endif()

set(_parasim_sanitizers "-fsanitize=address,undefined")
if(PARASIM_FUZZ)
  set(_parasim_sanitizers "-fsanitize=fuzzer-no-link,address,undefined")
endif()
set(_parasim_sanitizers
  "${_parasim_sanitizers};-fno-sanitize-recover=all;-fno-omit-frame-pointer")
add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${_parasim_sanitizers}>")
add_link_options("$<$<LINK_LANGUAGE:CXX>:-fsanitize=address,undefined>")
unset(_parasim_sanitizers)

# Runtime options of the sanitized tests: findings abort with a stack; LSan's suppressions cover
# leaks inside OpenMPI, never parasim's own code (cmake/lsan-openmpi.supp says which and why).
set(_parasim_asan_options "detect_leaks=1:strict_string_checks=1:check_initialization_order=1")
string(APPEND _parasim_asan_options ":detect_stack_use_after_return=1")
set(_parasim_other_options
  "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
  "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan-openmpi.supp:print_suppressions=0")
set(PARASIM_SANITIZER_ENVIRONMENT "ASAN_OPTIONS=${_parasim_asan_options}" ${_parasim_other_options})
# Tests that call MPI_Init: full (DWARF) stacks on every allocation, so that OpenMPI's leaks reach
# the MPI entry points the suppressions name (5x slower mallocs, hence only for these tests).
set(PARASIM_SANITIZER_MPI_ENVIRONMENT
  "ASAN_OPTIONS=${_parasim_asan_options}:fast_unwind_on_malloc=0" ${_parasim_other_options})
unset(_parasim_asan_options)
unset(_parasim_other_options)
if(PARASIM_FUZZ)
  message(STATUS "parasim sanitizers: ASan + UBSan + libFuzzer instrumentation (tests/fuzz)")
else()
  message(STATUS "parasim sanitizers: ASan + UBSan")
endif()
