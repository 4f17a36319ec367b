# Optional CUDA/NCCL support (CMake CheckLanguage and FindCUDAToolkit; NCCL from the toolkit prefix).
#
# PARASIM_CUDA = AUTO (default): build the CUDA kernels when nvcc is found.
#                ON:             require nvcc; configuring fails without it.
#                OFF:            never look for CUDA.
#
# Sets, for the rest of the build:
#   PARASIM_HAVE_CUDA        ON when the CUDA kernels are built (CUDA language enabled,
#                            CUDA::cudart available).
#   PARASIM_HAVE_NCCL        ON when PARASIM_HAVE_CUDA and NCCL::nccl was found.
#   PARASIM_NO_CUDA_REASON   why CUDA is not built (empty when PARASIM_HAVE_CUDA).
# The machine configuring needs no GPU or driver: architectures are explicit, never "native".

set(PARASIM_CUDA "AUTO" CACHE STRING
  "Build the CUDA kernels: AUTO (when nvcc is found), ON (required), OFF")
set_property(CACHE PARASIM_CUDA PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${PARASIM_CUDA}" _parasim_cuda_mode)
if(NOT _parasim_cuda_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "PARASIM_CUDA must be AUTO, ON or OFF (got '${PARASIM_CUDA}')")
endif()

set(PARASIM_HAVE_CUDA OFF)
set(PARASIM_HAVE_NCCL OFF)
set(PARASIM_NO_CUDA_REASON "")

if(_parasim_cuda_mode STREQUAL "OFF")
  set(PARASIM_NO_CUDA_REASON "parasim was built without CUDA: it was configured with \
-DPARASIM_CUDA=OFF (reconfigure with -DPARASIM_CUDA=AUTO or ON to build the CUDA kernels)")
  message(STATUS "parasim CUDA: OFF (PARASIM_CUDA=OFF)")
else()
  include(CheckLanguage)
  # check_language() keeps a cached NOTFOUND from an earlier run; when CUDA is now required,
  # look again (the toolkit may have been installed since).
  if(_parasim_cuda_mode STREQUAL "ON" AND DEFINED CMAKE_CUDA_COMPILER AND NOT CMAKE_CUDA_COMPILER)
    unset(CMAKE_CUDA_COMPILER CACHE)
  endif()
  check_language(CUDA)

  if(CMAKE_CUDA_COMPILER)
    # Must be set before enable_language(CUDA), which would otherwise pick a default. "native"
    # fails on machines without a GPU; CUDAARCHS in the environment still takes precedence.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
      set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING
        "CUDA architectures (80 = A100, 90 = H100/H200); never 'native'")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    find_package(NCCL)
    set(PARASIM_HAVE_CUDA ON)
    if(NCCL_FOUND)
      set(PARASIM_HAVE_NCCL ON)
      set(_parasim_nccl_note "NCCL ${NCCL_VERSION}")
    else()
      set(_parasim_nccl_note "NCCL not found")
    endif()
    message(STATUS "parasim CUDA: ON (PARASIM_CUDA=${_parasim_cuda_mode}, nvcc "
      "${CMAKE_CUDA_COMPILER_VERSION}, archs ${CMAKE_CUDA_ARCHITECTURES}, ${_parasim_nccl_note})")
    unset(_parasim_nccl_note)
  elseif(_parasim_cuda_mode STREQUAL "ON")
    message(FATAL_ERROR "PARASIM_CUDA=ON but no CUDA compiler (nvcc) was found. Install the "
      "NVIDIA CUDA toolkit (nvcc and cudart; NCCL optional), for example the cuda-toolkit package "
      "from NVIDIA's apt repository, then put nvcc on PATH or pass "
      "-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc. Or configure with -DPARASIM_CUDA=AUTO "
      "(or OFF) to build without CUDA.")
  else()
    set(PARASIM_NO_CUDA_REASON "parasim was built without CUDA: nvcc was not found when CMake \
configured (reconfigure with -DPARASIM_CUDA=ON after installing the CUDA toolkit)")
    message(STATUS "parasim CUDA: OFF (PARASIM_CUDA=AUTO, nvcc not found)")
  endif()
endif()
unset(_parasim_cuda_mode)
