# cmake -DKILN_SOURCE_DIR=DIR -DWORK_DIR=DIR -DKILNC=FILE -DKILN_CODEGEN=FILE
#       [-DCXX=FILE] [-DLAUNCHER=FILE] [-DCUDA_HOME=DIR] [-Dabsl_DIR=DIR]
#       -P check_hermetic_headers.cmake
#
# Configures tests/e2e/hermetic_headers (two triton_kernel() targets, first
# and sub/second) and checks that a target's generated header reaches the
# sources that link it and no others: after both libraries are built (so
# that both headers exist), includes_own ("first.h", linked against first)
# and includes_both (both headers, linked against both) compile, and
# includes_other ("sub/second.h", linked against first only) does not, for
# want of the header.
cmake_policy(VERSION 3.20)
foreach(var KILN_SOURCE_DIR WORK_DIR KILNC KILN_CODEGEN)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_hermetic_headers: -D${var}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")
set(ENV{LC_ALL} C)  # the compiler's messages in English (checked below)

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${what} failed (${result}):\n${out}")
  endif()
endfunction()

set(options -DCMAKE_BUILD_TYPE=Release "-DKILN_SOURCE_DIR=${KILN_SOURCE_DIR}"
            "-DKILNC=${KILNC}" "-DKILN_CODEGEN=${KILN_CODEGEN}")
if(CXX)
  list(APPEND options "-DCMAKE_CXX_COMPILER=${CXX}")
endif()
if(LAUNCHER)
  list(APPEND options "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}")
endif()
foreach(var CUDA_HOME absl_DIR)
  if(${var})
    list(APPEND options "-D${var}=${${var}}")
  endif()
endforeach()
run("configuring tests/e2e/hermetic_headers" "${CMAKE_COMMAND}"
    -S "${KILN_SOURCE_DIR}/tests/e2e/hermetic_headers" -B "${WORK_DIR}" -G Ninja ${options})
run("building first and second" "${CMAKE_COMMAND}" --build "${WORK_DIR}" --target first second)
file(GLOB_RECURSE headers RELATIVE "${WORK_DIR}" "${WORK_DIR}/*.h")
foreach(header first.h sub/second.h)
  string(REPLACE "." "\\." pattern "(^|/)${header}$")
  set(found "")
  foreach(file IN LISTS headers)
    if(file MATCHES "${pattern}")
      set(found "${file}")
    endif()
  endforeach()
  if(NOT found)
    message(FATAL_ERROR "building first and second generated no ${header}: ${headers}")
  endif()
endforeach()
run("compiling includes_own (#include \"first.h\", linked against first)"
    "${CMAKE_COMMAND}" --build "${WORK_DIR}" --target includes_own)
run("compiling includes_both (both headers, linked against both)"
    "${CMAKE_COMMAND}" --build "${WORK_DIR}" --target includes_both)

execute_process(COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}" --target includes_other
                RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(result EQUAL 0)
  message(FATAL_ERROR "includes_other compiled #include \"sub/second.h\" linked against first "
                      "only: second's generated header is on first's include path\n${out}")
endif()
# GCC: "sub/second.h: No such file or directory"; Clang: "'sub/second.h' file not found".
if(NOT out MATCHES "sub/second\\.h'?:? (No such file or directory|file not found)")
  message(FATAL_ERROR "includes_other failed, but not for want of sub/second.h:\n${out}")
endif()
message(STATUS "each library's generated header reaches its own users only: "
               "sub/second.h is not found from a source linked against first")
