# FindNCCL: locate the NVIDIA Collective Communications Library.
#
# Hints (cache or environment): NCCL_ROOT. Also searches the CUDA toolkit prefix
# (CUDAToolkit_INCLUDE_DIRS / CUDAToolkit_LIBRARY_ROOT), where NCCL ships in recent toolkits.
#
# Result variables:
#   NCCL_FOUND, NCCL_INCLUDE_DIR, NCCL_LIBRARY, NCCL_VERSION (MAJOR.MINOR.PATCH),
#   NCCL_VERSION_MAJOR, NCCL_VERSION_MINOR, NCCL_VERSION_PATCH
# Imported target:
#   NCCL::nccl (shared library, include directory attached)

find_path(NCCL_INCLUDE_DIR nccl.h
  HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS}
  PATH_SUFFIXES include)
find_library(NCCL_LIBRARY nccl
  HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_ROOT}
  PATH_SUFFIXES lib lib64)

if(NCCL_INCLUDE_DIR AND EXISTS "${NCCL_INCLUDE_DIR}/nccl.h")
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _nccl_version_lines
    REGEX "^#define[ \t]+NCCL_(MAJOR|MINOR|PATCH)[ \t]+[0-9]+")
  foreach(_part MAJOR MINOR PATCH)
    set(NCCL_VERSION_${_part} "")
    foreach(_line IN LISTS _nccl_version_lines)
      if(_line MATCHES "^#define[ \t]+NCCL_${_part}[ \t]+([0-9]+)")
        set(NCCL_VERSION_${_part} "${CMAKE_MATCH_1}")
      endif()
    endforeach()
  endforeach()
  if(NOT NCCL_VERSION_MAJOR STREQUAL "" AND NOT NCCL_VERSION_MINOR STREQUAL ""
     AND NOT NCCL_VERSION_PATCH STREQUAL "")
    set(NCCL_VERSION "${NCCL_VERSION_MAJOR}.${NCCL_VERSION_MINOR}.${NCCL_VERSION_PATCH}")
  endif()
  unset(_nccl_version_lines)
  unset(_part)
  unset(_line)
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NCCL
  REQUIRED_VARS NCCL_LIBRARY NCCL_INCLUDE_DIR
  VERSION_VAR NCCL_VERSION)

if(NCCL_FOUND AND NOT TARGET NCCL::nccl)
  add_library(NCCL::nccl UNKNOWN IMPORTED)
  set_target_properties(NCCL::nccl PROPERTIES
    IMPORTED_LOCATION "${NCCL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
endif()

mark_as_advanced(NCCL_INCLUDE_DIR NCCL_LIBRARY)
