# The Python extension module parasim._core (python/), built with nanobind.
#
# PARASIM_PYTHON = AUTO (default): build it when a Python 3.9+ with its development files and
#                  nanobind (`python -m nanobind --cmake_dir`) are found.
#                  ON:  require them; configuring fails without.
#                  OFF: never look.
# `pip install .` (pyproject.toml, scikit-build-core) configures with ON; scripts/test.sh points
# Python_EXECUTABLE at the virtual environment scripts/python-env.sh makes.
#
# Sets PARASIM_HAVE_PYTHON, and, when ON, position-independent code for every library (they are
# linked into a shared module). Include before the libraries are added.

set(PARASIM_PYTHON "AUTO" CACHE STRING
  "Build the Python module parasim._core: AUTO (when Python and nanobind are found), ON, OFF")
set_property(CACHE PARASIM_PYTHON PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${PARASIM_PYTHON}" _parasim_python_mode)
if(NOT _parasim_python_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "PARASIM_PYTHON must be AUTO, ON or OFF (got '${PARASIM_PYTHON}')")
endif()

set(PARASIM_HAVE_PYTHON OFF)
set(_parasim_no_python "")
if(_parasim_python_mode STREQUAL "OFF")
  set(_parasim_no_python "PARASIM_PYTHON=OFF")
else()
  find_package(Python 3.9 COMPONENTS Interpreter Development.Module QUIET)
  if(NOT Python_FOUND)
    set(_parasim_no_python "no Python 3.9+ with its development files (Debian: python3-dev)")
  else()
    execute_process(COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir
                    OUTPUT_VARIABLE _parasim_nanobind_dir OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE _parasim_nanobind_status ERROR_QUIET)
    if(NOT _parasim_nanobind_status EQUAL 0)
      set(_parasim_no_python "no nanobind for ${Python_EXECUTABLE} (pip install nanobind)")
    else()
      list(APPEND CMAKE_PREFIX_PATH "${_parasim_nanobind_dir}")
      find_package(nanobind CONFIG REQUIRED)
      set(PARASIM_HAVE_PYTHON ON)
    endif()
  endif()
endif()

if(PARASIM_HAVE_PYTHON)
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
  message(STATUS "parasim Python module: ON (${Python_EXECUTABLE}, Python ${Python_VERSION})")
elseif(_parasim_python_mode STREQUAL "ON")
  message(FATAL_ERROR "PARASIM_PYTHON=ON but the Python module cannot be built: ${_parasim_no_python}")
else()
  message(STATUS "parasim Python module: OFF (${_parasim_no_python})")
endif()
