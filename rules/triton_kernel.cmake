# triton_kernel(): compile Triton-language kernels ahead of time into a C++ library.
#
#   triton_kernel(
#     NAME add                         # library target; generated add.h / add.cc
#     SRCS add.py                      # the kernel's file first, then files it imports
#     ARCHS sm_80 sm_90a
#     SPECIALIZATIONS                  # one compiled configuration each, named or positional
#       "x_ptr=*fp32, y_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=1024"
#       "x_ptr=*fp16, y_ptr=*fp16, out_ptr=*fp16, n=i32, BLOCK=2048, num_warps=8"
#       # or "*fp32:16, *fp32:16, *fp32:16, i32, 1024"
#     [KERNEL add_kernel]              # the @triton.jit function; optional if the file has one
#     [NAMESPACE kernels])             # C++ namespace of the launchers (default: kernels)
#   target_link_libraries(app PRIVATE add)   # #include "<dir>/add.h", <dir> relative to the source root
#
# Every specialization x arch is compiled twice by `kilnc compile`: a general
# variant and an `--aligned` one (every pointer and integer argument divisible
# by 16); the launcher picks at run time. kiln-codegen then writes
# ${CMAKE_BINARY_DIR}/kiln_gen/<dir>/NAME.{h,cc} with the cubins embedded.
# The tools' contract is docs/architecture.md; the Bazel twin is triton_kernel.bzl.
#
# The tool and library targets can be renamed before the first call (for a
# consumer that imports them under a namespace): KILN_KILNC_TARGET,
# KILN_CODEGEN_TARGET, KILN_RUNTIME_TARGET, and KILN_TEMPLATES_DIR.
include_guard(GLOBAL)

set(KILN_SUPPORTED_ARCHS sm_80 sm_86 sm_89 sm_90 sm_90a sm_100a sm_120a)
if(NOT DEFINED KILN_KILNC_TARGET)
  set(KILN_KILNC_TARGET kilnc)
endif()
if(NOT DEFINED KILN_CODEGEN_TARGET)
  set(KILN_CODEGEN_TARGET kiln-codegen)
endif()
if(NOT DEFINED KILN_RUNTIME_TARGET)
  set(KILN_RUNTIME_TARGET kiln_runtime)
endif()
if(NOT DEFINED KILN_TEMPLATES_DIR)
  get_filename_component(KILN_TEMPLATES_DIR "${CMAKE_CURRENT_LIST_DIR}/../codegen_templates" ABSOLUTE)
endif()

# Checks one SPECIALIZATIONS element; fails naming NAME and the element.
function(_kiln_check_specialization name index spec)
  set(where "triton_kernel(NAME ${name}): SPECIALIZATIONS element ${index} (\"${spec}\")")
  string(STRIP "${spec}" spec)
  if(spec STREQUAL "")
    message(FATAL_ERROR "${where} is empty")
  endif()
  string(REPLACE "," ";" entries "${spec}")
  set(named 0)
  set(positional 0)
  set(params 0)
  set(keys "")
  foreach(entry IN LISTS entries)
    string(STRIP "${entry}" entry)
    if(entry STREQUAL "")
      message(FATAL_ERROR "${where} has an empty entry (two commas in a row?)")
    endif()
    if(entry MATCHES "^([^=]*)=(.*)$")
      math(EXPR named "${named} + 1")
      string(STRIP "${CMAKE_MATCH_1}" key)
      string(STRIP "${CMAKE_MATCH_2}" value)
      if(NOT key MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
        message(FATAL_ERROR "${where}: '${key}' is not a parameter name")
      endif()
      if(key IN_LIST keys)
        message(FATAL_ERROR "${where}: '${key}' is given twice")
      endif()
      list(APPEND keys "${key}")
      if(value STREQUAL "")
        message(FATAL_ERROR "${where}: '${key}' has no value")
      endif()
      if(key MATCHES "^num_(warps|stages|ctas)$")
        if(NOT value MATCHES "^[1-9][0-9]*$")
          message(FATAL_ERROR "${where}: ${key} must be a positive integer, got '${value}'")
        endif()
        if(key STREQUAL "num_warps" AND NOT value MATCHES "^(1|2|4|8|16|32)$")
          message(FATAL_ERROR "${where}: num_warps must be a power of 2 up to 32, got '${value}'")
        endif()
      else()
        math(EXPR params "${params} + 1")
      endif()
    else()
      math(EXPR positional "${positional} + 1")
    endif()
  endforeach()
  if(named GREATER 0 AND positional GREATER 0)
    message(FATAL_ERROR "${where} mixes named (k=v) and positional entries; use one form")
  endif()
  if(named GREATER 0 AND params EQUAL 0)
    message(FATAL_ERROR "${where} names only launch options, no kernel parameters")
  endif()
endfunction()

function(triton_kernel)
  cmake_parse_arguments(PARSE_ARGV 0 TK "" "NAME;KERNEL;NAMESPACE" "SRCS;ARCHS;SPECIALIZATIONS")

  # --- arguments -------------------------------------------------------------
  if(NOT TK_NAME)
    message(FATAL_ERROR "triton_kernel: NAME is required (the library target and generated NAME.h)")
  endif()
  set(name "${TK_NAME}")
  set(where "triton_kernel(NAME ${name})")
  if(TK_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${where}: unexpected arguments: ${TK_UNPARSED_ARGUMENTS} "
                        "(expected NAME SRCS ARCHS SPECIALIZATIONS [KERNEL] [NAMESPACE])")
  endif()
  if(TK_KEYWORDS_MISSING_VALUES)
    message(FATAL_ERROR "${where}: no value given for ${TK_KEYWORDS_MISSING_VALUES}")
  endif()
  if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "${where}: NAME must be a C identifier (it names NAME.h and C++ symbols)")
  endif()
  if(TARGET "${name}")
    message(FATAL_ERROR "${where}: NAME: a target named '${name}' already exists")
  endif()

  if(NOT TK_SRCS)
    message(FATAL_ERROR "${where}: SRCS is required: the .py file that defines the kernel")
  endif()
  set(srcs "")
  foreach(src IN LISTS TK_SRCS)
    get_filename_component(src_abs "${src}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT src MATCHES "\\.py$")
      message(FATAL_ERROR "${where}: SRCS: '${src}' is not a .py file")
    endif()
    if(NOT EXISTS "${src_abs}")
      message(FATAL_ERROR "${where}: SRCS: '${src}' does not exist (looked for ${src_abs})")
    endif()
    list(APPEND srcs "${src_abs}")
  endforeach()
  list(GET srcs 0 main_src)

  if(NOT TK_ARCHS)
    message(FATAL_ERROR "${where}: ARCHS is required; supported: ${KILN_SUPPORTED_ARCHS}")
  endif()
  set(seen_archs "")
  foreach(arch IN LISTS TK_ARCHS)
    if(NOT arch IN_LIST KILN_SUPPORTED_ARCHS)
      string(REPLACE ";" " " supported "${KILN_SUPPORTED_ARCHS}")
      message(FATAL_ERROR "${where}: ARCHS: unknown arch '${arch}'; supported: ${supported}")
    endif()
    if(arch IN_LIST seen_archs)
      message(FATAL_ERROR "${where}: ARCHS: '${arch}' is listed twice")
    endif()
    list(APPEND seen_archs "${arch}")
  endforeach()

  if(NOT TK_SPECIALIZATIONS)
    message(FATAL_ERROR "${where}: SPECIALIZATIONS is required: one signature string per variant, "
                        "e.g. \"x_ptr=*fp32, n=i32, BLOCK=1024\" or \"*fp32:16, i32, 1024\"")
  endif()
  set(specs "")
  set(index 0)
  foreach(spec IN LISTS TK_SPECIALIZATIONS)
    _kiln_check_specialization("${name}" ${index} "${spec}")
    string(STRIP "${spec}" spec)
    if(spec IN_LIST specs)
      message(FATAL_ERROR "${where}: SPECIALIZATIONS element ${index} repeats an earlier one: ${spec}")
    endif()
    list(APPEND specs "${spec}")
    math(EXPR index "${index} + 1")
  endforeach()

  set(kernel_args "")
  set(kernel_desc "${TK_SRCS}")
  list(GET kernel_desc 0 kernel_desc)
  if(DEFINED TK_KERNEL)
    if(NOT TK_KERNEL MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
      message(FATAL_ERROR "${where}: KERNEL must be the name of a @triton.jit function, got '${TK_KERNEL}'")
    endif()
    set(kernel_args -n "${TK_KERNEL}")
    set(kernel_desc "${TK_KERNEL}")
  endif()

  set(namespace kernels)
  if(DEFINED TK_NAMESPACE)
    if(NOT TK_NAMESPACE MATCHES "^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*$")
      message(FATAL_ERROR "${where}: NAMESPACE must be a C++ namespace (identifiers joined by ::), "
                          "got '${TK_NAMESPACE}'")
    endif()
    set(namespace "${TK_NAMESPACE}")
  endif()

  foreach(tool IN ITEMS KILN_KILNC_TARGET KILN_CODEGEN_TARGET KILN_RUNTIME_TARGET)
    if(NOT TARGET "${${tool}}")
      message(FATAL_ERROR "${where}: the target '${${tool}}' (${tool}) does not exist; "
                          "include rules/triton_kernel.cmake after the Kiln targets are defined "
                          "(kilnc needs KILN_BUILD_COMPILER=ON)")
    endif()
  endforeach()

  # --- one kilnc action per arch x specialization x variant ---------------------
  file(RELATIVE_PATH rel_dir "${CMAKE_SOURCE_DIR}" "${CMAKE_CURRENT_SOURCE_DIR}")
  set(gen_root "${CMAKE_BINARY_DIR}/kiln_gen")
  if(rel_dir STREQUAL "")
    set(include_path "${name}.h")
  else()
    set(include_path "${rel_dir}/${name}.h")
  endif()
  set(out_header "${gen_root}/${include_path}")
  string(REGEX REPLACE "\\.h$" ".cc" out_source "${out_header}")

  # kilnc runs ptxas from the toolkit this tree was configured with.
  set(tool_env "")
  if(CUDA_HOME)
    set(tool_env "${CMAKE_COMMAND}" -E env "CUDA_HOME=${CUDA_HOME}")
  endif()

  set(work_dir "${name}.kiln")  # relative to CMAKE_CURRENT_BINARY_DIR
  set(variant_outputs "")
  set(variant_pairs "")
  foreach(arch IN LISTS TK_ARCHS)
    file(MAKE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/${work_dir}/${arch}")
    set(index 0)
    foreach(spec IN LISTS specs)
      foreach(variant IN ITEMS general aligned)
        set(stem "${work_dir}/${arch}/s${index}_${variant}")
        set(aligned_flag "")
        if(variant STREQUAL "aligned")
          set(aligned_flag --aligned)
        endif()
        add_custom_command(
          OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/${stem}.cubin" "${CMAKE_CURRENT_BINARY_DIR}/${stem}.json"
          COMMAND ${tool_env} "$<TARGET_FILE:${KILN_KILNC_TARGET}>" compile "${main_src}" ${kernel_args}
                  -s "${spec}" --arch ${arch} ${aligned_flag}
                  -o "${stem}.cubin" --metadata "${stem}.json"
          DEPENDS ${KILN_KILNC_TARGET} ${srcs}
          WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}"
          COMMENT "Compiling Triton kernel ${kernel_desc} for ${arch} (variant s${index} ${variant})"
          VERBATIM)
        list(APPEND variant_outputs "${CMAKE_CURRENT_BINARY_DIR}/${stem}.json"
                                    "${CMAKE_CURRENT_BINARY_DIR}/${stem}.cubin")
        list(APPEND variant_pairs "${stem}.json=${stem}.cubin")
      endforeach()
      math(EXPR index "${index} + 1")
    endforeach()
  endforeach()

  # --- one kiln-codegen action -----------------------------------------------
  file(GLOB_RECURSE template_files CONFIGURE_DEPENDS "${KILN_TEMPLATES_DIR}/*")
  list(LENGTH variant_pairs variant_count)
  add_custom_command(
    OUTPUT "${out_header}" "${out_source}"
    COMMAND "$<TARGET_FILE:${KILN_CODEGEN_TARGET}>"
            --name "${name}" --namespace "${namespace}" --include-path "${include_path}"
            --templates "${KILN_TEMPLATES_DIR}"
            --out-header "${out_header}" --out-source "${out_source}"
            ${variant_pairs}
    DEPENDS ${KILN_CODEGEN_TARGET} ${variant_outputs} ${template_files}
    # Relative variant paths keep the generated bytes free of build paths.
    WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}"
    COMMENT "Generating launchers ${include_path} for Triton kernel ${kernel_desc} (${variant_count} variants)"
    VERBATIM)

  add_library(${name} STATIC "${out_source}" "${out_header}")
  target_include_directories(${name} PUBLIC "$<BUILD_INTERFACE:${gen_root}>")
  target_link_libraries(${name} PUBLIC ${KILN_RUNTIME_TARGET})
endfunction()
