# cmake -DKILNC=... -DCODEGEN=... -DTEMPLATES=DIR -DSOURCE=add.py -DWORK_DIR=DIR
#       -P check_determinism.cmake
#
# Builds the same kernel twice, as two build trees in different directories
# would: the source copied to each, kilnc run there for two archs and both
# variants (and PTX), kiln-codegen run on the results. Every output -- cubins,
# PTX, metadata, the generated header and source -- must be byte-identical
# between the two, so that remote and disk caches hit across machines.
foreach(var KILNC CODEGEN TEMPLATES SOURCE WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_determinism: -D${var}=... is required")
  endif()
endforeach()

set(specs "x_ptr=*fp32, y_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=1024"
          "x_ptr=*fp16, y_ptr=*fp16, out_ptr=*fp16, n=i32, BLOCK=2048, num_warps=8")
set(outputs "")
file(REMOVE_RECURSE "${WORK_DIR}")
foreach(tree first/tree second/a/much/deeper/tree)
  set(dir "${WORK_DIR}/${tree}")
  file(MAKE_DIRECTORY "${dir}/src" "${dir}/out")
  get_filename_component(source_name "${SOURCE}" NAME)
  configure_file("${SOURCE}" "${dir}/src/${source_name}" COPYONLY)
  set(pairs "")
  foreach(arch sm_80 sm_90a)
    set(index 0)
    foreach(spec IN LISTS specs)
      foreach(variant general aligned)
        set(flag "")
        if(variant STREQUAL "aligned")
          set(flag --aligned)
        endif()
        set(stem "out/${arch}_s${index}_${variant}")
        # The PTX fallback comes from the cubin's own compile (--ptx-output).
        execute_process(
          COMMAND "${KILNC}" compile "${dir}/src/${source_name}" -s "${spec}" --arch ${arch}
                  ${flag} -o "${dir}/${stem}.cubin" --metadata "${dir}/${stem}.json"
                  --ptx-output "${dir}/${stem}.fallback.ptx"
          RESULT_VARIABLE result ERROR_VARIABLE error)
        if(NOT result EQUAL 0)
          message(FATAL_ERROR "kilnc failed for ${arch} ${spec} ${variant}:\n${error}")
        endif()
        execute_process(
          COMMAND "${KILNC}" compile "${dir}/src/${source_name}" -s "${spec}" --arch ${arch}
                  ${flag} --emit ptx -o "${dir}/${stem}.ptx"
          RESULT_VARIABLE result ERROR_VARIABLE error)
        if(NOT result EQUAL 0)
          message(FATAL_ERROR "kilnc --emit ptx failed for ${arch} ${spec} ${variant}:\n${error}")
        endif()
        # ... and is the PTX that --emit ptx writes.
        file(SHA256 "${dir}/${stem}.ptx" alone)
        file(SHA256 "${dir}/${stem}.fallback.ptx" beside)
        if(NOT alone STREQUAL beside)
          message(FATAL_ERROR "${stem}: --ptx-output wrote other PTX than --emit ptx")
        endif()
        list(APPEND pairs "${stem}.json=${stem}.cubin" "${stem}.json=${stem}.ptx")
        if(tree STREQUAL "first/tree")
          list(APPEND outputs "${stem}.cubin" "${stem}.json" "${stem}.ptx")
        endif()
      endforeach()
      math(EXPR index "${index} + 1")
    endforeach()
  endforeach()
  # Relative pairs, as the rules pass them, from the tree's root.
  execute_process(
    COMMAND "${CODEGEN}" --name add --namespace kernels --include-path gen/add.h
            --templates "${TEMPLATES}" --out-header out/add.h --out-source out/add.cc ${pairs}
    WORKING_DIRECTORY "${dir}"
    RESULT_VARIABLE result ERROR_VARIABLE error)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "kiln-codegen failed:\n${error}")
  endif()
  # Images embedded by the assembler, compressed: the shards name the blobs
  # by the relative prefix, as Bazel's actions do.
  execute_process(
    COMMAND "${CODEGEN}" --name add --namespace kernels --include-path gen/add.h
            --templates "${TEMPLATES}" --out-header out/incbin/add.h
            --out-source out/incbin/add.cc --embed incbin --asm-prefix out/incbin/images_
            --asm-shards 2 --compress zstd ${pairs}
    WORKING_DIRECTORY "${dir}"
    RESULT_VARIABLE result ERROR_VARIABLE error)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "kiln-codegen --embed incbin failed:\n${error}")
  endif()
endforeach()
list(APPEND outputs out/add.h out/add.cc out/incbin/add.h out/incbin/add.cc
     out/incbin/images_0.cc out/incbin/images_1.cc out/incbin/images_0.bin
     out/incbin/images_1.bin)

set(differ "")
foreach(output IN LISTS outputs)
  file(SHA256 "${WORK_DIR}/first/tree/${output}" a)
  file(SHA256 "${WORK_DIR}/second/a/much/deeper/tree/${output}" b)
  if(NOT a STREQUAL b)
    list(APPEND differ "${output}")
  endif()
endforeach()
list(LENGTH outputs count)
if(differ)
  message(FATAL_ERROR "outputs differ between the two trees: ${differ}")
endif()
message(STATUS "determinism: ${count} outputs byte-identical across two build directories")
