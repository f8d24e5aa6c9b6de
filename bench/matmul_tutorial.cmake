# Upstream Triton's matmul tutorial (python/tutorials/03-matrix-multiplication.py,
# unchanged, fetched into .upstream/ as bench/README.md says) compiled by Kiln
# for bench/matmul.py: two builds of its matmul_kernel, ARCHS sm_90a (the
# wgmma path) and ARCHS sm_90 (the mma.sync path), each with the tutorial's
# @triton.autotune configs for fp16, bf16, fp8e5 and fp8e4nv A and B (C is
# fp16, as the tutorial writes it), and libkiln_matmul_bench.so, the C
# interface (matmul_bridge.cc) that bench/matmul.py calls through ctypes.
#
# Like triton_kernel(... AUTOTUNE), but a config kilnc rejects (too much
# shared memory, say) must not fail the build: each directory is compiled by
# compile_matmul_variants.sh (every config `kilnc configs` reads from the
# decorator, plus the EXTRA configs the bench measures that the list lacks,
# one kilnc each under a time limit), and a rejected config leaves its
# config<K>.error for the bench to report.

# fp8e4nv is the acceptance criterion's fp8; the tutorial itself uses fp8e5
# (float8_e5m2), which is one more entry here (and twice the fp8 build time:
# fp8 configs take kilnc 0.5 to several minutes each today).
set(KILN_MATMUL_TYPES fp16 bf16 fp8e4nv CACHE STRING
    "Element types of A and B that bench/matmul.py's kernels are compiled for (fp16 bf16 fp8e4nv fp8e5)")
# The launcher runs the aligned variant only when every integer argument is
# divisible by 16, which the tutorial's unit strides never are; `unit` is the
# aligned variant with those strides specialized to 1 (`:1`), which the
# launcher picks for the tutorial's row-major calls: the fast path. The
# general variant serves the rest (odd sizes).
set(KILN_MATMUL_VARIANTS general unit CACHE STRING
    "Which of the launcher's variants (general aligned unit) bench/matmul.py's kernels are compiled in")
# 128x128x64 with 4 warps and 4 stages, which the tutorial's list lacks.
set(KILN_MATMUL_EXTRA_CONFIGS
    "BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, num_stages=4, num_warps=4")
# kilnc takes up to 5 minutes per fp8 config of the tutorial today (LLVM and
# ptxas on code that spills tens of KB), so by default the fp8 builds have
# only the configs bench/matmul.py measures on an H100: 128x256x64 (the
# list's first), the extra 128x128x64, and the configs Triton 3.6's autotuner
# picks there for fp8e4nv (256x128x128 at 4096 and 8192, 128x128x128 at
# 1024; bench/results/*_matmul). ALL compiles the whole list for fp8 too.
set(KILN_MATMUL_FP8_CONFIGS BENCH CACHE STRING "BENCH or ALL: which fp8 configs to compile")
set(_kiln_matmul_bench_configs
    "BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, num_stages=3, num_warps=8"
    "BLOCK_SIZE_M=256, BLOCK_SIZE_N=128, BLOCK_SIZE_K=128, GROUP_SIZE_M=8, num_stages=3, num_warps=8"
    "BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=128, GROUP_SIZE_M=8, num_stages=4, num_warps=4")
string(REPLACE ";" "|" _kiln_matmul_bench_configs "${_kiln_matmul_bench_configs}")

# kiln_bench_matmul(NAME ARCH NAMESPACE): the static library NAME with the
# generated launchers bench/NAME.h in NAMESPACE, for one arch.
function(kiln_bench_matmul name arch namespace)
  set(pairs "")
  set(outputs "")
  foreach(type IN LISTS KILN_MATMUL_TYPES)
    set(tool_env "${CMAKE_COMMAND}" -E env)
    if(CUDA_HOME)
      list(APPEND tool_env "CUDA_HOME=${CUDA_HOME}")
    endif()
    if(type MATCHES "^fp8" AND KILN_MATMUL_FP8_CONFIGS STREQUAL "BENCH")
      list(APPEND tool_env "KILN_MATMUL_SUBSET=${_kiln_matmul_bench_configs}")
    endif()
    set(signature
        "a_ptr=*${type}, b_ptr=*${type}, c_ptr=*fp16, M=i32, N=i32, K=i32, stride_am=i32, stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_cm=i32, stride_cn=i32, ACTIVATION=''")
    foreach(variant IN LISTS KILN_MATMUL_VARIANTS)
      set(dir "${name}.kiln/${type}_${variant}")
      add_custom_command(
        OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/${dir}/configs.txt"
        COMMAND ${tool_env} "${CMAKE_CURRENT_SOURCE_DIR}/compile_matmul_variants.sh"
                "$<TARGET_FILE:kilnc>" "${KILN_MATMUL_TUTORIAL}" matmul_kernel "${signature}"
                ${arch} ${variant} "${dir}" ${KILN_MATMUL_EXTRA_CONFIGS}
        DEPENDS kilnc "${KILN_MATMUL_TUTORIAL}"
                "${CMAKE_CURRENT_SOURCE_DIR}/compile_matmul_variants.sh"
        WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}"
        COMMENT "Compiling upstream's matmul tutorial for ${arch}, ${type}, ${variant}: every autotune config"
        VERBATIM)
      list(APPEND outputs "${CMAKE_CURRENT_BINARY_DIR}/${dir}/configs.txt")
      list(APPEND pairs "${dir}=${dir}")
    endforeach()
  endforeach()

  # The target's own include root, as triton_kernel() has it.
  set(include_dir "${CMAKE_CURRENT_BINARY_DIR}/${name}.kiln/include")
  set(header "${include_dir}/bench/${name}.h")
  set(source "${include_dir}/bench/${name}.cc")
  file(GLOB_RECURSE templates CONFIGURE_DEPENDS "${KILN_TEMPLATES_DIR}/*.tmpl")
  add_custom_command(
    OUTPUT "${header}" "${source}"
    COMMAND "$<TARGET_FILE:kiln-codegen>" --name ${name} --namespace ${namespace}
            --include-path "bench/${name}.h" --templates "${KILN_TEMPLATES_DIR}"
            --out-header "${header}" --out-source "${source}" ${pairs}
    DEPENDS kiln-codegen ${outputs} ${templates}
    WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}"
    COMMENT "Generating launchers bench/${name}.h for upstream's matmul tutorial (${arch})"
    VERBATIM)
  add_library(${name} STATIC "${source}" "${header}")
  target_include_directories(${name} PUBLIC "${include_dir}")
  target_link_libraries(${name} PUBLIC kiln_runtime)
  # Linked into libkiln_matmul_bench.so.
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()

kiln_bench_matmul(matmul_tutorial_sm90a sm_90a bench::tutorial_sm90a)
kiln_bench_matmul(matmul_tutorial_sm90 sm_90 bench::tutorial_sm90)

add_library(kiln_matmul_bench SHARED matmul_bridge.cc)
target_link_libraries(kiln_matmul_bench PRIVATE matmul_tutorial_sm90a matmul_tutorial_sm90)
target_include_directories(kiln_matmul_bench PRIVATE "${PROJECT_SOURCE_DIR}")
foreach(type IN LISTS KILN_MATMUL_TYPES)
  target_compile_definitions(kiln_matmul_bench PRIVATE KILN_MATMUL_TYPE_${type})
endforeach()
