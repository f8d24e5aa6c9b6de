# cmake -DMODE=subdirectory|fetchcontent -DKILN_SOURCE_DIR=DIR -DKILNC=FILE
#       -DWORK_DIR=DIR [-DCXX=FILE] [-DCUDA_HOME=DIR] [-DLLVM_DIR=DIR]
#       [-Dabsl_DIR=DIR] [-DLAUNCHER=FILE] -P check_consumer_subproject.cmake
#
# tests/e2e/consumer/MODE, a project that pulls the Kiln tree KILN_SOURCE_DIR
# in with add_subdirectory or FetchContent, configured with the prebuilt
# kilnc KILNC (so that only the runtime and kiln-codegen build here, not the
# compiler), built and run. The parent build's C++ compiler, CUDA toolkit,
# LLVM, Abseil and compiler launcher (ccache) are passed on.
cmake_policy(VERSION 3.20)
foreach(var MODE KILN_SOURCE_DIR KILNC WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_consumer_subproject: -D${var}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${what} failed (${result}):\n${out}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

set(options -DCMAKE_BUILD_TYPE=Release "-DKILN_SOURCE_DIR=${KILN_SOURCE_DIR}"
            "-DKILN_KILNC=${KILNC}")
if(CXX)
  list(APPEND options "-DCMAKE_CXX_COMPILER=${CXX}")
endif()
if(LAUNCHER)
  list(APPEND options "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}")
endif()
foreach(var LLVM_DIR absl_DIR)
  if(${var})
    list(APPEND options "-D${var}=${${var}}")
  endif()
endforeach()
# The fetchcontent consumer finds the toolkit with find_package(CUDAToolkit),
# and Kiln takes it from there; the other is given CUDA_HOME.
if(CUDA_HOME AND MODE STREQUAL "fetchcontent")
  list(APPEND options "-DCUDAToolkit_ROOT=${CUDA_HOME}")
elseif(CUDA_HOME)
  list(APPEND options "-DCUDA_HOME=${CUDA_HOME}")
endif()

set(build "${WORK_DIR}/build")
run("configuring the ${MODE} consumer" "${CMAKE_COMMAND}"
    -S "${KILN_SOURCE_DIR}/tests/e2e/consumer/${MODE}" -B "${build}" -G Ninja ${options})
set(configure_output "${last_output}")
run("building the ${MODE} consumer" "${CMAKE_COMMAND}" --build "${build}")
set(build_output "${last_output}")

# Kiln as a subproject: no tests, examples or benchmarks, no MLIR, and the
# compiler not rebuilt.
file(STRINGS "${build}/CMakeCache.txt" cache REGEX "^KILN_BUILD_[A-Z]+:BOOL=")
foreach(option TESTS EXAMPLES BENCH COMPILER)
  if(NOT "KILN_BUILD_${option}:BOOL=OFF" IN_LIST cache)
    message(FATAL_ERROR "KILN_BUILD_${option} is not OFF in the ${MODE} consumer: ${cache}")
  endif()
endforeach()
if(build_output MATCHES "compiler/(ir|frontend|transforms|conversion|target|driver)/")
  message(FATAL_ERROR "the ${MODE} consumer built compiler sources:\n${build_output}")
endif()
if(NOT build_output MATCHES "kiln_runtime" OR NOT build_output MATCHES "kiln-codegen")
  message(FATAL_ERROR "the ${MODE} consumer did not build the runtime and kiln-codegen:\n"
                      "${build_output}")
endif()
# The generated files are the consumer's (the target's own directory in its
# build tree, named from its source root), not Kiln's.
foreach(file scale.kiln/include/scale.h scale.kiln/include/scale.cc)
  if(NOT EXISTS "${build}/${file}")
    message(FATAL_ERROR "the ${MODE} consumer did not generate ${build}/${file}")
  endif()
endforeach()

run("running the ${MODE} consumer" "${build}/consumer")
message(STATUS "consumer (${MODE}): built with Kiln from ${KILN_SOURCE_DIR} and kilnc ${KILNC}; "
               "it says:\n${last_output}")
