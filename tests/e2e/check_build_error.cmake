# cmake -DKILN_SOURCE_DIR=DIR -DWORK_DIR=DIR -DKILNC=PATH -DKILN_CODEGEN=PATH -P check_build_error.cmake
#
# Configures and builds tests/e2e/syntax_error, whose kernel has a syntax
# error, and checks that the build fails with kilnc's diagnostic in its log:
# file:line:col, the source line and a caret.
foreach(var KILN_SOURCE_DIR WORK_DIR KILNC KILN_CODEGEN)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_build_error: -D${var}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${KILN_SOURCE_DIR}/tests/e2e/syntax_error" -B "${WORK_DIR}"
          -G Ninja "-DKILN_SOURCE_DIR=${KILN_SOURCE_DIR}" "-DKILNC=${KILNC}"
          "-DKILN_CODEGEN=${KILN_CODEGEN}"
  RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "configure failed:\n${out}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}"
                RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(result EQUAL 0)
  message(FATAL_ERROR "the build succeeded, but the kernel has a syntax error")
endif()
foreach(want
    "tests/e2e/bazel_rule_errors/syntax_error.py:7:31: error: unmatched ')'"
    "\n    offs = tl.arange(0, BLOCK))\n"
    "\n                              ^\n")
  string(FIND "${out}" "${want}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the build log lacks: ${want}\nLog:\n${out}")
  endif()
endforeach()
message(STATUS "the build failed with kilnc's diagnostic, as it should")
