# cmake -DKILN_BUILD_DIR=DIR -DKILN_SOURCE_DIR=DIR -DWORK_DIR=DIR -P check_consumer.cmake
#
# `cmake --install` of the Kiln build tree KILN_BUILD_DIR into WORK_DIR/prefix,
# then tests/e2e/consumer configured against it (find_package(Kiln)), built
# twice in two directories, the generated sources and cubins compared byte
# for byte, and the program run (it checks its results on a GPU).
cmake_policy(VERSION 3.20)
foreach(var KILN_BUILD_DIR KILN_SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_consumer: -D${var}=... is required")
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

set(prefix "${WORK_DIR}/prefix")
run("cmake --install" "${CMAKE_COMMAND}" --install "${KILN_BUILD_DIR}" --prefix "${prefix}")
foreach(tree one two/deeper)
  set(build "${WORK_DIR}/${tree}")
  run("configuring the consumer in ${tree}" "${CMAKE_COMMAND}"
      -S "${KILN_SOURCE_DIR}/tests/e2e/consumer" -B "${build}" -G Ninja
      -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=${prefix}")
  run("building the consumer in ${tree}" "${CMAKE_COMMAND}" --build "${build}")
endforeach()

# scale.kiln: the launchers (include/scale.{h,cc}), the image shards and cubins.
file(GLOB_RECURSE generated RELATIVE "${WORK_DIR}/one" "${WORK_DIR}/one/scale.kiln/*")
list(LENGTH generated count)
if(count LESS 10 OR NOT "scale.kiln/include/scale.h" IN_LIST generated
   OR NOT "scale.kiln/include/scale.cc" IN_LIST generated)
  message(FATAL_ERROR "expected the generated files and cubins, found: ${generated}")
endif()
foreach(file IN LISTS generated)
  file(SHA256 "${WORK_DIR}/one/${file}" a)
  file(SHA256 "${WORK_DIR}/two/deeper/${file}" b)
  if(NOT a STREQUAL b)
    message(FATAL_ERROR "${file} differs between two builds of the consumer")
  endif()
endforeach()

run("running the consumer" "${WORK_DIR}/one/consumer")
message(STATUS "consumer: built against ${prefix} twice (${count} generated files identical); it says:\n${last_output}")
