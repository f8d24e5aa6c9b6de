# cmake -DCASE=NAME -DEXPECT=TEXT -DKILN_SOURCE_DIR=DIR -DWORK_DIR=DIR -DKILNC=PATH
#       -P check_cmake_rule_error.cmake
#
# Configures tests/e2e/cmake_rule_errors with -DCASE=NAME, then builds its
# first step, kilnc's check of the specializations (kilnc check-spec), and
# checks the outcome: EXPECT=success wants both to succeed; any other EXPECT
# is text that the configure's error, or else the check's, must contain
# (CMake's line wrapping undone). With success, the optional NINJA_HAS and
# NINJA_LACKS (lists joined by "|") are texts that the generated build.ninja
# must hold, and must not. CHECK_TARGET (default
# scale.kiln/specializations.checked) names the check to build.
foreach(var CASE EXPECT KILN_SOURCE_DIR WORK_DIR KILNC)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_cmake_rule_error: -D${var}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${KILN_SOURCE_DIR}/tests/e2e/cmake_rule_errors" -B "${WORK_DIR}"
          -G Ninja "-DKILN_SOURCE_DIR=${KILN_SOURCE_DIR}" "-DCASE=${CASE}" "-DKILNC=${KILNC}"
  RESULT_VARIABLE result
  OUTPUT_VARIABLE out
  ERROR_VARIABLE out)
if(result EQUAL 0)
  # The configure passed: kilnc's check of the specializations is next.
  if(NOT DEFINED CHECK_TARGET)
    set(CHECK_TARGET scale.kiln/specializations.checked)
  endif()
  execute_process(
    COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}" --target ${CHECK_TARGET}
    RESULT_VARIABLE result
    OUTPUT_VARIABLE out
    ERROR_VARIABLE out)
endif()
string(REGEX REPLACE "\n  +" " " flat "${out}")
if(EXPECT STREQUAL "success")
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "case ${CASE}: configure or check failed, expected success:\n${out}")
  endif()
  file(READ "${WORK_DIR}/build.ninja" ninja)
  if(DEFINED NINJA_HAS)
    string(REPLACE "|" ";" wanted "${NINJA_HAS}")
    foreach(text IN LISTS wanted)
      string(FIND "${ninja}" "${text}" at)
      if(at EQUAL -1)
        message(FATAL_ERROR "case ${CASE}: build.ninja lacks: ${text}")
      endif()
    endforeach()
  endif()
  if(DEFINED NINJA_LACKS)
    string(REPLACE "|" ";" unwanted "${NINJA_LACKS}")
    foreach(text IN LISTS unwanted)
      string(FIND "${ninja}" "${text}" at)
      if(NOT at EQUAL -1)
        message(FATAL_ERROR "case ${CASE}: build.ninja holds: ${text}")
      endif()
    endforeach()
  endif()
  message(STATUS "case ${CASE}: configured and checked")
  return()
endif()
if(result EQUAL 0)
  message(FATAL_ERROR "case ${CASE}: configure and check succeeded, expected an error with: ${EXPECT}")
endif()
string(FIND "${flat}" "${EXPECT}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "case ${CASE}: the error lacks: ${EXPECT}\nOutput:\n${out}")
endif()
# The error's line: kilnc's from the check, else CMake's.
string(REGEX MATCH "error: triton_kernel\\(NAME [^\n]*" line "${flat}")
if(NOT line)
  string(REGEX MATCH "triton_kernel\\(NAME [^\n]*" line "${flat}")
endif()
message(STATUS "case ${CASE}: ${line}")
