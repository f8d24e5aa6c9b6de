# triton_kernel(): compile Triton-language kernels ahead of time into a C++ library.
#
#   triton_kernel(
#     NAME add                         # library target; generated add.h / add.cc
#     SRCS add.py                      # the kernel's file first, then files it imports
#     [ARCHS sm_80 90a]                # default: CMAKE_CUDA_ARCHITECTURES (80, 90a, ...);
#                                      #   also native (this machine's GPUs) or all-major
#     SPECIALIZATIONS                  # one compiled configuration each, named or positional
#       "x_ptr=*fp32, y_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=1024"
#       "x_ptr=*fp16, y_ptr=*fp16, out_ptr=*fp16, n=i32, BLOCK=2048, num_warps=8"
#       # or "*fp32, *fp32, *fp32, i32, 1024"
#     [KERNEL add_kernel]              # the @triton.jit function; optional if the file has one;
#                                      #   Cls.method for a class's @staticmethod (launch_Cls_method)
#     [KERNELS GELU.forward ReLU.forward]  # or several, each compiled with every specialization
#     [NAMESPACE kernels]              # C++ namespace of the launchers (default: kernels)
#     [NO_PTX]                         # no PTX fallback (default: PTX of the highest arch
#                                      #   without a suffix, JIT-compiled only where no cubin fits)
#     [COMPRESS zstd]                  # store the images zstd-compressed, inflated at first load
#     [EMBED incbin|hex]               # how images reach the binary (default incbin: the assembler)
#     [AUTOTUNE]                       # cross SPECIALIZATIONS with the @triton.autotune configs
#     [TUNING_TABLES tuning/h100.json] # with AUTOTUNE: tables NAME_tune wrote (docs/usage.md, "Tuning")
#     [DEBUG]                          # keep tl.device_assert (kilnc --debug)
#     [KILNC_OPTIONS --mlir-timing])   # extra flags of every `kilnc compile`
#   target_link_libraries(app PRIVATE add)   # #include "<dir>/add.h", <dir> relative to the project root
#
# Every specialization x arch is compiled at least twice by `kilnc compile`: a general
# variant and an `--aligned` one (every pointer and integer argument divisible
# by 16); the launcher picks at run time. A specialization with a pointer and
# an integer (or descriptor) that carry no hint gets an `--aligned-pointers`
# variant too (pointers 16-byte aligned, integers anything: a batch of 1, 12
# heads, 1000 tokens). A named specialization that gives an
# integer type to a parameter with "stride" in its name gets a third,
# `--unit-strides` variant: the aligned one with the strides of the kernel's
# contiguous (last) axes taken equal to 1 (docs/usage.md). With AUTOTUNE, each specialization
# names the parameter types only, and one `kilnc compile --autotune` command
# compiles it with every config of the kernel's @triton.autotune into a
# directory (the number of configs is in the source, not known here). The compiles for
# the highest arch without a suffix also write the variant's PTX (kilnc --ptx-output),
# unless NO_PTX. kiln-codegen then writes NAME.kiln/include/<dir>/NAME.{h,cc}
# (with any TUNING_TABLES) and, with EMBED incbin (the default), the image sources
# NAME.kiln/images_<k>.cc whose `.incbin` directives embed the cubins and PTX: the C++
# compiler parses no image bytes, and the shards compile in parallel (KILN_IMAGE_SHARDS,
# default 4); with AUTOTUNE, also the main() of the tuner NAME_tune (kiln-tune).
# NAME.kiln (in CMAKE_CURRENT_BINARY_DIR) is the target's own: its include/
# is on the include path of NAME and its users only, so that, as with Bazel,
# a source sees the generated headers of the kernel libraries it links and
# no others.
# docs/usage.md documents the arguments; the tools' contract is
# docs/architecture.md; the Bazel twin is triton_kernel.bzl.
#
# The arguments are checked when CMake configures, and errors name the
# argument. The SPECIALIZATIONS are checked by kilnc itself (`kilnc
# check-spec`, the parser `kilnc compile` uses), in the first command of the
# target's build, before anything compiles: its errors name the element and
# the kernel parameter (missing, unknown or misspelled ones, a type that is
# not one, a value for a parameter that is not tl.constexpr, a type for one
# that is), and a syntax error in the kernel's file shows with its line.
#
# The tool and library targets can be renamed before the first call (for a
# consumer that imports them under a namespace): KILN_KILNC_TARGET,
# KILN_CODEGEN_TARGET, KILN_RUNTIME_TARGET, and KILN_TEMPLATES_DIR.
#
# kilnc gets ptxas and libdevice by path (--ptxas, --libdevice), and both are
# in every compile command's DEPENDS, so a toolkit upgrade recompiles: the
# cache variables KILN_PTXAS and KILN_LIBDEVICE, by default from
# CUDAToolkit_BIN_DIR / CUDAToolkit_LIBRARY_ROOT (find_package(CUDAToolkit))
# when set, else from CUDA_HOME, else /usr/local/cuda.
include_guard(GLOBAL)

# The archs kilnc compiles for (LLVM 22's NVPTX archs from sm_80 on; what
# `kilnc archs --all` prints), in order.
set(_KILN_COMPILER_ARCHS sm_80 sm_86 sm_87 sm_88 sm_89 sm_90 sm_90a sm_100 sm_100a sm_100f
    sm_101 sm_101a sm_101f sm_103 sm_103a sm_103f sm_110 sm_110a sm_110f sm_120 sm_120a
    sm_120f sm_121 sm_121a sm_121f)

# Sets OUT to the sm_ form of one arch spelling (sm_90a, 90a, 90a-real), or
# to "" when it names no supported arch.
function(_kiln_normalize_arch arch out)
  set(sm "${arch}")
  if(NOT sm MATCHES "^sm_")
    string(REGEX REPLACE "-real$" "" sm "${sm}")
    set(sm "sm_${sm}")
  endif()
  if(NOT sm IN_LIST KILN_SUPPORTED_ARCHS)
    set(sm "")
  endif()
  set(${out} "${sm}" PARENT_SCOPE)
endfunction()

# The CUDA toolkit files kilnc reads, by path.
if(NOT DEFINED KILN_PTXAS OR NOT DEFINED KILN_LIBDEVICE)
  if(DEFINED CUDAToolkit_BIN_DIR AND EXISTS "${CUDAToolkit_BIN_DIR}/ptxas")
    set(_kiln_cuda_bin "${CUDAToolkit_BIN_DIR}")
    # CMake sets CUDAToolkit_LIBRARY_ROOT (where nvvm/ is) only when it finds
    # the toolkit's version file; without one, nvvm/ is beside bin/.
    set(_kiln_cuda_root "${CUDAToolkit_LIBRARY_ROOT}")
    if(NOT EXISTS "${_kiln_cuda_root}/nvvm")
      get_filename_component(_kiln_cuda_root "${CUDAToolkit_BIN_DIR}" DIRECTORY)
    endif()
  elseif(CUDA_HOME)
    set(_kiln_cuda_bin "${CUDA_HOME}/bin")
    set(_kiln_cuda_root "${CUDA_HOME}")
  elseif(DEFINED ENV{CUDA_HOME})
    set(_kiln_cuda_bin "$ENV{CUDA_HOME}/bin")
    set(_kiln_cuda_root "$ENV{CUDA_HOME}")
  else()
    set(_kiln_cuda_bin "/usr/local/cuda/bin")
    set(_kiln_cuda_root "/usr/local/cuda")
  endif()
  set(KILN_PTXAS "${_kiln_cuda_bin}/ptxas" CACHE FILEPATH "ptxas that kilnc runs (kilnc --ptxas)")
  set(KILN_LIBDEVICE "${_kiln_cuda_root}/nvvm/libdevice/libdevice.10.bc" CACHE FILEPATH
      "libdevice that kilnc links (kilnc --libdevice)")
endif()
# KILN_SUPPORTED_ARCHS: those of the compiler's archs that the toolkit's
# ptxas assembles (its --gpu-name values), so that a toolkit upgrade brings
# new archs and an old one refuses those it cannot assemble at configure time.
if(NOT DEFINED KILN_SUPPORTED_ARCHS)
  execute_process(COMMAND "${KILN_PTXAS}" --help OUTPUT_VARIABLE _kiln_ptxas_help
                  RESULT_VARIABLE _kiln_ptxas_result ERROR_QUIET)
  string(REGEX MATCHALL "'sm_[0-9]+[af]?'" _kiln_ptxas_archs "${_kiln_ptxas_help}")
  string(REPLACE "'" "" _kiln_ptxas_archs "${_kiln_ptxas_archs}")
  set(KILN_SUPPORTED_ARCHS "")
  foreach(_kiln_arch IN LISTS _KILN_COMPILER_ARCHS)
    if(_kiln_arch IN_LIST _kiln_ptxas_archs)
      list(APPEND KILN_SUPPORTED_ARCHS ${_kiln_arch})
    endif()
  endforeach()
  if(NOT KILN_SUPPORTED_ARCHS)
    message(WARNING "triton_kernel: cannot list the archs of ${KILN_PTXAS} (--help exited "
                    "${_kiln_ptxas_result}); allowing every arch kilnc compiles for")
    set(KILN_SUPPORTED_ARCHS ${_KILN_COMPILER_ARCHS})
  endif()
endif()

# The archs `all-major` names: each major's first arch without a suffix.
set(KILN_ALL_MAJOR_ARCHS "")
foreach(_kiln_arch IN LISTS KILN_SUPPORTED_ARCHS)
  if(_kiln_arch MATCHES "^sm_[0-9]+0$")
    list(APPEND KILN_ALL_MAJOR_ARCHS ${_kiln_arch})
  endif()
endforeach()

# Sets OUT to the archs of this machine's GPUs (CMAKE_CUDA_ARCHITECTURES
# native): sm_XY for compute capability X.Y, sm_90a on Hopper (Kiln's
# tensor-core path there needs it); fails naming WHERE when none is found.
function(_kiln_native_archs where out)
  if(NOT KILN_NVIDIA_SMI)
    find_program(KILN_NVIDIA_SMI nvidia-smi)
  endif()
  set(found "")
  if(KILN_NVIDIA_SMI)
    execute_process(COMMAND "${KILN_NVIDIA_SMI}" --query-gpu=compute_cap --format=csv,noheader
                    OUTPUT_VARIABLE caps RESULT_VARIABLE result ERROR_QUIET)
    if(result EQUAL 0)
      string(REGEX MATCHALL "[0-9]+\\.[0-9]+" caps "${caps}")
      foreach(cap IN LISTS caps)
        string(REPLACE "." "" cc "${cap}")
        set(arch "sm_${cc}")
        if(cc STREQUAL "90")
          set(arch sm_90a)
        endif()
        if(NOT arch IN_LIST found)
          list(APPEND found ${arch})
        endif()
      endforeach()
    endif()
  endif()
  if(NOT found)
    message(FATAL_ERROR "${where}: 'native' needs a GPU on this machine, and nvidia-smi "
                        "reports none; list the archs instead (80, 90a, ...)")
  endif()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

if(NOT DEFINED KILN_KILNC_TARGET)
  set(KILN_KILNC_TARGET kilnc)
endif()
if(NOT DEFINED KILN_CODEGEN_TARGET)
  set(KILN_CODEGEN_TARGET kiln-codegen)
endif()
if(NOT DEFINED KILN_RUNTIME_TARGET)
  set(KILN_RUNTIME_TARGET kiln_runtime)
endif()
if(NOT DEFINED KILN_TUNE_MAIN_TARGET)
  set(KILN_TUNE_MAIN_TARGET kiln_tune_main)
endif()
if(NOT DEFINED KILN_TEMPLATES_DIR)
  get_filename_component(KILN_TEMPLATES_DIR "${CMAKE_CURRENT_LIST_DIR}/../codegen_templates" ABSOLUTE)
endif()

# The integer types, for the unit-stride variant's rule (below).
set(_KILN_INTEGER_TYPES i8 i16 i32 i64 u8 u16 u32 u64)

# Sets OUT to the Levenshtein distance of A and B (for "did you mean" hints).
function(_kiln_edit_distance a b out)
  string(TOLOWER "${a}" a)
  string(TOLOWER "${b}" b)
  string(LENGTH "${a}" la)
  string(LENGTH "${b}" lb)
  set(previous "")
  foreach(j RANGE 0 ${lb})
    list(APPEND previous ${j})
  endforeach()
  if(la EQUAL 0)
    set(${out} ${lb} PARENT_SCOPE)
    return()
  endif()
  foreach(i RANGE 1 ${la})
    math(EXPR im1 "${i} - 1")
    string(SUBSTRING "${a}" ${im1} 1 ca)
    set(current ${i})
    if(lb GREATER 0)
      foreach(j RANGE 1 ${lb})
        math(EXPR jm1 "${j} - 1")
        string(SUBSTRING "${b}" ${jm1} 1 cb)
        list(GET previous ${j} up)
        list(GET previous ${jm1} diag)
        list(GET current ${jm1} left)
        set(cost 1)
        if(ca STREQUAL cb)
          set(cost 0)
        endif()
        math(EXPR best "${up} + 1")
        math(EXPR v "${left} + 1")
        if(v LESS best)
          set(best ${v})
        endif()
        math(EXPR v "${diag} + ${cost}")
        if(v LESS best)
          set(best ${v})
        endif()
        list(APPEND current ${best})
      endforeach()
    endif()
    set(previous "${current}")
  endforeach()
  list(GET previous ${lb} d)
  set(${out} ${d} PARENT_SCOPE)
endfunction()

# Sets OUT to " (did you mean 'X'?)" for the closest of CANDIDATES to WORD
# within edit distance 2 (1 for words of 3 letters or fewer), else "".
function(_kiln_did_you_mean word candidates out)
  string(LENGTH "${word}" length)
  set(limit 3)
  if(length LESS 4)
    set(limit 2)
  endif()
  set(best "")
  foreach(candidate IN LISTS candidates)
    _kiln_edit_distance("${word}" "${candidate}" d)
    if(d LESS limit)
      set(limit ${d})
      set(best "${candidate}")
    endif()
  endforeach()
  if(best STREQUAL "")
    set(${out} "" PARENT_SCOPE)
  else()
    set(${out} " (did you mean '${best}'?)" PARENT_SCOPE)
  endif()
endfunction()

# The arch whose PTX a target embeds: the highest in ARCHS (sm_ names)
# without a suffix, since PTX for sm_XY JIT-compiles for any later GPU and
# that of sm_XYa/sm_XYf only for X.Y / its family; "" when all have one.
function(_kiln_ptx_fallback_arch archs out)
  set(best "")
  set(best_number -1)
  foreach(arch IN LISTS archs)
    if(arch MATCHES "^sm_([0-9]+)$" AND CMAKE_MATCH_1 GREATER best_number)
      set(best "${arch}")
      set(best_number ${CMAKE_MATCH_1})
    endif()
  endforeach()
  set(${out} "${best}" PARENT_SCOPE)
endfunction()

if(NOT DEFINED KILN_IMAGE_SHARDS)
  set(KILN_IMAGE_SHARDS 4)
endif()

# The settings above are variables of the directory that included this file.
# When that is Kiln's own top directory inside another project
# (add_subdirectory, FetchContent), triton_kernel() is called from
# directories that do not see them, so they are kept as global properties
# too and read back where the caller has not set its own.
set(_KILN_RULE_SETTINGS _KILN_COMPILER_ARCHS KILN_SUPPORTED_ARCHS KILN_ALL_MAJOR_ARCHS
    KILN_KILNC_TARGET KILN_CODEGEN_TARGET KILN_RUNTIME_TARGET KILN_TUNE_MAIN_TARGET
    KILN_TEMPLATES_DIR _KILN_INTEGER_TYPES KILN_IMAGE_SHARDS)
foreach(_kiln_setting IN LISTS _KILN_RULE_SETTINGS)
  set_property(GLOBAL PROPERTY _KILN_RULE_${_kiln_setting} "${${_kiln_setting}}")
endforeach()
set_property(GLOBAL PROPERTY _KILN_RULE_SETTINGS "${_KILN_RULE_SETTINGS}")

# Defines, in the calling function, each setting that its caller's
# directory lacks.
macro(_kiln_load_rule_settings)
  get_property(_kiln_settings GLOBAL PROPERTY _KILN_RULE_SETTINGS)
  foreach(_kiln_setting IN LISTS _kiln_settings)
    if(NOT DEFINED ${_kiln_setting})
      get_property(${_kiln_setting} GLOBAL PROPERTY _KILN_RULE_${_kiln_setting})
    endif()
  endforeach()
endmacro()

function(triton_kernel)
  cmake_parse_arguments(PARSE_ARGV 0 TK "PTX;NO_PTX;AUTOTUNE;DEBUG"
                        "NAME;KERNEL;NAMESPACE;COMPRESS;EMBED"
                        "SRCS;ARCHS;SPECIALIZATIONS;KERNELS;KILNC_OPTIONS;TUNING_TABLES")
  _kiln_load_rule_settings()

  # --- arguments -------------------------------------------------------------
  if(NOT TK_NAME)
    message(FATAL_ERROR "triton_kernel: NAME is required (the library target and generated NAME.h)")
  endif()
  set(name "${TK_NAME}")
  set(where "triton_kernel(NAME ${name})")
  if(TK_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${where}: unexpected arguments: ${TK_UNPARSED_ARGUMENTS} "
                        "(expected NAME SRCS [ARCHS] SPECIALIZATIONS [KERNEL | KERNELS] [NAMESPACE] [NO_PTX] "
                        "[COMPRESS zstd] [EMBED incbin|hex] [AUTOTUNE] [DEBUG] [KILNC_OPTIONS] "
                        "[TUNING_TABLES])")
  endif()
  if(TK_PTX AND TK_NO_PTX)
    message(FATAL_ERROR "${where}: PTX and NO_PTX contradict each other (PTX is the default)")
  endif()
  if(DEFINED TK_COMPRESS AND NOT TK_COMPRESS STREQUAL "zstd")
    message(FATAL_ERROR "${where}: COMPRESS must be zstd, got '${TK_COMPRESS}'")
  endif()
  set(embed incbin)
  if(DEFINED TK_EMBED)
    if(NOT TK_EMBED MATCHES "^(incbin|hex)$")
      message(FATAL_ERROR "${where}: EMBED must be incbin or hex, got '${TK_EMBED}'")
    endif()
    set(embed "${TK_EMBED}")
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

  # ARCHS, else the project's CMAKE_CUDA_ARCHITECTURES; each spelling (sm_90a,
  # 90a, 90a-real) becomes the sm_ one.
  string(REPLACE ";" " " supported "${KILN_SUPPORTED_ARCHS}")
  set(spellings "(sm_80 or 80, sm_90a or 90a, ...)")
  if(DEFINED TK_ARCHS)
    set(arch_list ${TK_ARCHS})
    set(arch_where "${where}: ARCHS")
  elseif(DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT CMAKE_CUDA_ARCHITECTURES STREQUAL "")
    set(arch_list ${CMAKE_CUDA_ARCHITECTURES})
    set(arch_where "${where}: ARCHS is not given, so CMAKE_CUDA_ARCHITECTURES (${CMAKE_CUDA_ARCHITECTURES}) gives it")
    if(CMAKE_CUDA_ARCHITECTURES MATCHES "^(all|OFF|FALSE|NO|0)$")
      message(FATAL_ERROR "${arch_where}, but triton_kernel needs the architectures listed "
                          "(or native, all-major), from: ${supported} ${spellings}; give ARCHS")
    endif()
  else()
    message(FATAL_ERROR "${where}: ARCHS is required when CMAKE_CUDA_ARCHITECTURES is not set; "
                        "supported: ${supported} ${spellings}")
  endif()
  # native: this machine's GPUs; all-major: sm_80, sm_90, sm_100, ...
  if(arch_list STREQUAL "native")
    _kiln_native_archs("${arch_where}" arch_list)
  elseif(arch_list STREQUAL "all-major")
    set(arch_list ${KILN_ALL_MAJOR_ARCHS})
  endif()
  set(archs "")
  set(arch_spellings "")
  foreach(arch IN LISTS arch_list)
    _kiln_normalize_arch("${arch}" sm)
    if(sm STREQUAL "")
      string(REGEX REPLACE "-real$" "" bare "${arch}")
      string(REGEX REPLACE "^([0-9])" "sm_\\1" bare "${bare}")
      if(bare IN_LIST _KILN_COMPILER_ARCHS)
        message(FATAL_ERROR "${arch_where}: '${arch}': the toolkit's ptxas (KILN_PTXAS "
                            "${KILN_PTXAS}) cannot assemble ${bare}; it takes: ${supported}")
      endif()
      set(candidates ${KILN_SUPPORTED_ARCHS})
      foreach(a IN LISTS KILN_SUPPORTED_ARCHS)
        string(REGEX REPLACE "^sm_" "" short "${a}")
        list(APPEND candidates "${short}")
      endforeach()
      _kiln_did_you_mean("${arch}" "${candidates}" hint)
      set(virtual "")
      if(arch MATCHES "-virtual$")
        set(virtual " (triton_kernel compiles cubins for real architectures, and embeds the PTX of the highest by default)")
      endif()
      message(FATAL_ERROR "${arch_where}: unknown arch '${arch}'${hint}${virtual}; supported: "
                          "${supported} ${spellings}")
    endif()
    list(FIND archs "${sm}" earlier)
    if(NOT earlier EQUAL -1)
      list(GET arch_spellings ${earlier} first)
      if(first STREQUAL arch)
        message(FATAL_ERROR "${arch_where}: '${arch}' is listed twice")
      endif()
      message(FATAL_ERROR "${arch_where}: '${arch}' is listed twice (as '${first}', both meaning ${sm})")
    endif()
    list(APPEND archs "${sm}")
    list(APPEND arch_spellings "${arch}")
  endforeach()

  foreach(option IN LISTS TK_KILNC_OPTIONS)
    if(NOT option MATCHES "^-")
      message(FATAL_ERROR "${where}: KILNC_OPTIONS: '${option}' is not a flag; give kilnc compile "
                          "flags such as --mlir-timing (a flag's value goes with it: --flag=value)")
    endif()
  endforeach()

  # KERNEL names the kernel (`kilnc -n`: add_kernel, or GELU.forward for a
  # class's static method); KERNELS several, each compiled with every
  # specialization; neither, the file's only one. Every generated C++ name
  # starts with a kernel's C++ name, its dots made underscores
  # (launch_GELU_forward), so those must differ.
  if(DEFINED TK_KERNEL AND DEFINED TK_KERNELS)
    message(FATAL_ERROR "${where}: KERNEL and KERNELS are exclusive: KERNEL names one kernel, "
                        "KERNELS several")
  endif()
  set(kernels "")
  set(kernels_attr "")
  if(DEFINED TK_KERNEL)
    set(kernels "${TK_KERNEL}")
    set(kernels_attr KERNEL)
  elseif(DEFINED TK_KERNELS)
    set(kernels ${TK_KERNELS})
    set(kernels_attr KERNELS)
  endif()
  set(kernel_cpp_names "")
  foreach(kernel IN LISTS kernels)
    if(NOT kernel MATCHES "^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*$")
      message(FATAL_ERROR "${where}: ${kernels_attr}: '${kernel}' is not the name of a @triton.jit "
                          "function (add_kernel, or Cls.method for a class's @staticmethod)")
    endif()
    string(REPLACE "." "_" cpp "${kernel}")
    list(FIND kernel_cpp_names "${cpp}" earlier)
    if(NOT earlier EQUAL -1)
      list(GET kernels ${earlier} first)
      if(first STREQUAL kernel)
        message(FATAL_ERROR "${where}: KERNELS lists '${kernel}' twice")
      endif()
      message(FATAL_ERROR "${where}: KERNELS: '${first}' and '${kernel}' would both be named "
                          "${cpp} in C++ (launch_${cpp}, ${cpp}_config, ${cpp}_info); build them "
                          "in separate targets")
    endif()
    list(APPEND kernel_cpp_names "${cpp}")
  endforeach()
  list(LENGTH kernels kernel_count)
  set(kernel_word kernel)
  if(kernel_count GREATER 1)
    set(kernel_word kernels)
  endif()
  set(kernel_desc "${TK_SRCS}")
  list(GET kernel_desc 0 kernel_desc)
  if(kernels)
    list(JOIN kernels ", " kernel_desc)
  endif()
  # The other SRCS are modules the kernel's file may import.
  set(src_args "")
  set(other_srcs ${srcs})
  list(REMOVE_AT other_srcs 0)
  foreach(other IN LISTS other_srcs)
    list(APPEND src_args --src "${other}")
  endforeach()

  if(NOT TK_SPECIALIZATIONS)
    message(FATAL_ERROR "${where}: SPECIALIZATIONS is required: one signature string per variant, "
                        "e.g. \"x_ptr=*fp32, n=i32, BLOCK=1024\" or \"*fp32, i32, 1024\"")
  endif()
  # What the specializations say is kilnc's to check (check-spec, below);
  # here only that each is a new one.
  set(specs "")
  set(index 0)
  foreach(spec IN LISTS TK_SPECIALIZATIONS)
    string(STRIP "${spec}" spec)
    if(spec IN_LIST specs)
      message(FATAL_ERROR "${where}: SPECIALIZATIONS element ${index} repeats an earlier one: ${spec}")
    endif()
    list(APPEND specs "${spec}")
    math(EXPR index "${index} + 1")
  endforeach()

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
                          "(kilnc needs KILN_BUILD_COMPILER=ON or KILN_KILNC), or use find_package(Kiln)")
    endif()
  endforeach()

  # --- one kilnc action per arch x specialization x variant ---------------------
  # Named from the calling project's source root (#include "<dir>/NAME.h"),
  # and generated into the target's own include root in its work directory:
  # a library puts its header on the include path, not its neighbours'.
  set(work_dir "${name}.kiln")  # relative to CMAKE_CURRENT_BINARY_DIR
  file(RELATIVE_PATH rel_dir "${PROJECT_SOURCE_DIR}" "${CMAKE_CURRENT_SOURCE_DIR}")
  set(gen_root "${CMAKE_CURRENT_BINARY_DIR}/${work_dir}/include")
  if(rel_dir STREQUAL "")
    set(include_path "${name}.h")
  else()
    set(include_path "${rel_dir}/${name}.h")
  endif()
  set(out_header "${gen_root}/${include_path}")
  string(REGEX REPLACE "\\.h$" ".cc" out_source "${out_header}")

  # ptxas and libdevice by path and in DEPENDS: no CUDA_HOME in the
  # commands' environment, and a new toolkit recompiles.
  foreach(file IN ITEMS KILN_PTXAS KILN_LIBDEVICE)
    if(NOT EXISTS "${${file}}")
      message(FATAL_ERROR "${where}: ${file} (${${file}}) does not exist; point CUDA_HOME, "
                          "find_package(CUDAToolkit) or ${file} at the CUDA toolkit")
    endif()
  endforeach()
  set(toolkit_args --ptxas "${KILN_PTXAS}" --libdevice "${KILN_LIBDEVICE}" ${TK_KILNC_OPTIONS})
  set(toolkit_files "${KILN_PTXAS}" "${KILN_LIBDEVICE}")

  set(ptx_arch "")
  if(NOT TK_NO_PTX)
    _kiln_ptx_fallback_arch("${archs}" ptx_arch)
  endif()

  # Per kernel: its `kilnc -n` arguments, where its files go (with KERNELS,
  # a directory named by its C++ name under each arch) and its check.
  # kilnc checks every specialization against the kernel first, so that a
  # mistake fails once, naming the element, rather than in each compile.
  set(check_args "")
  if(TK_AUTOTUNE)
    list(APPEND check_args --autotune)
  endif()
  set(kernel_indices 0)
  if(kernel_count GREATER 1)
    math(EXPR last_kernel "${kernel_count} - 1")
    set(kernel_indices "")
    foreach(k RANGE ${last_kernel})
      list(APPEND kernel_indices ${k})
    endforeach()
  endif()
  foreach(k IN LISTS kernel_indices)
    set(kernel_name_args_${k} "")
    set(kernel_dir_${k} "")
    set(kernel_desc_${k} "${kernel_desc}")
    set(spec_check_${k} "${CMAKE_CURRENT_BINARY_DIR}/${work_dir}/specializations.checked")
    if(kernels)
      list(GET kernels ${k} kernel)
      list(GET kernel_cpp_names ${k} cpp)
      set(kernel_name_args_${k} -n "${kernel}")
      set(kernel_desc_${k} "${kernel}")
      if(DEFINED TK_KERNELS)
        set(kernel_dir_${k} "/${cpp}")
        set(spec_check_${k} "${CMAKE_CURRENT_BINARY_DIR}/${work_dir}/${cpp}.specializations.checked")
      endif()
    endif()
    add_custom_command(
      OUTPUT "${spec_check_${k}}"
      COMMAND "$<TARGET_FILE:${KILN_KILNC_TARGET}>" check-spec "${main_src}" ${kernel_name_args_${k}}
              ${check_args} --where "${where}: SPECIALIZATIONS element" -o "${spec_check_${k}}"
              ${specs}
      DEPENDS ${KILN_KILNC_TARGET} ${srcs}
      WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}"
      COMMENT "Checking the specializations of Triton kernel ${kernel_desc_${k}} (${name})"
      VERBATIM)
  endforeach()
  set(variant_outputs "")
  set(variant_pairs "")
  set(image_count 0)
  foreach(arch IN LISTS archs)
    file(MAKE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/${work_dir}/${arch}")
    set(index 0)
    foreach(spec IN LISTS specs)
      # The unit-stride variant, for a named specialization that gives an
      # integer type (no hint) to a parameter with "stride" in its name.
      set(variants general aligned)
      string(TOLOWER "${spec}" lower_spec)
      # (A tensordesc<fp16[128,64]> splits in two; its tail ends with "]>".
      # A tuple's elements split apart, the parentheses kept at its ends.)
      string(REPLACE "," ";" lower_entries "${lower_spec}")
      set(unhinted_pointer FALSE)
      set(unhinted_integer FALSE)
      foreach(entry IN LISTS lower_entries)
        if(entry MATCHES "^[ ]*([a-z0-9_]+[ ]*=[ ]*)?[( ]*\\*[a-z0-9]+[) ]*$")
          set(unhinted_pointer TRUE)
        elseif(entry MATCHES "^[ ]*([a-z0-9_]+[ ]*=[ ]*)?[( ]*([a-z0-9]+)[) ]*$"
               AND CMAKE_MATCH_2 IN_LIST _KILN_INTEGER_TYPES)
          set(unhinted_integer TRUE)
        elseif(entry MATCHES "\\]>[ ]*$")
          set(unhinted_integer TRUE) # a descriptor's extents
        endif()
      endforeach()
      # The aligned-pointers variant, for a specialization with a pointer
      # and an integer (or descriptor) that carry no hint: without both it
      # is the general or the aligned variant.
      if(unhinted_pointer AND unhinted_integer)
        list(APPEND variants aligned_pointers)
      endif()
      foreach(entry IN LISTS lower_entries)
        if(entry MATCHES "^[ ]*[a-z0-9_]*stride[a-z0-9_]*[ ]*=[ ]*([a-z0-9]+)[ ]*$"
           AND CMAKE_MATCH_1 IN_LIST _KILN_INTEGER_TYPES)
          list(APPEND variants unit_stride)
          break()
        endif()
      endforeach()
      foreach(k IN LISTS kernel_indices)
        if(NOT kernel_dir_${k} STREQUAL "")
          file(MAKE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/${work_dir}/${arch}${kernel_dir_${k}}")
        endif()
        foreach(variant IN LISTS variants)
          set(stem "${work_dir}/${arch}${kernel_dir_${k}}/s${index}_${variant}")
          set(aligned_flag "")
          if(variant STREQUAL "aligned")
            set(aligned_flag --aligned)
          elseif(variant STREQUAL "aligned_pointers")
            set(aligned_flag --aligned-pointers)
          elseif(variant STREQUAL "unit_stride")
            set(aligned_flag --unit-strides)
          endif()
          if(TK_DEBUG)
            list(APPEND aligned_flag --debug)
          endif()
          set(what "${where} SPECIALIZATIONS element ${index} (${variant}): ${spec}")
          set(ptx_args "")
          set(ptx_what "")
          if(arch STREQUAL ptx_arch)
            set(ptx_what " and PTX")
          endif()
          if(TK_AUTOTUNE)
            # The directory's configs.txt stands for every config<K> file.
            set(dir "${stem}_autotune")
            if(arch STREQUAL ptx_arch)
              set(ptx_args --ptx-output "config<K>.ptx")
            endif()
            add_custom_command(
              OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/${dir}/configs.txt"
              COMMAND "$<TARGET_FILE:${KILN_KILNC_TARGET}>" compile "${main_src}"
                      ${kernel_name_args_${k}} ${src_args} -s "${spec}" --arch ${arch} ${aligned_flag} --autotune ${ptx_args} -o "${dir}"
                      ${toolkit_args}
              DEPENDS ${KILN_KILNC_TARGET} ${srcs} ${toolkit_files} "${spec_check_${k}}"
              WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}"
              COMMENT "Compiling Triton kernel ${kernel_desc_${k}}'s @triton.autotune configs for ${arch} to cubins${ptx_what}, ${what}"
              VERBATIM)
            list(APPEND variant_outputs "${CMAKE_CURRENT_BINARY_DIR}/${dir}/configs.txt")
            list(APPEND variant_pairs "${dir}=${dir}")
            math(EXPR image_count "${image_count} + 1")
            continue()
          endif()
          set(outputs "${CMAKE_CURRENT_BINARY_DIR}/${stem}.cubin" "${CMAKE_CURRENT_BINARY_DIR}/${stem}.json")
          if(arch STREQUAL ptx_arch)
            set(ptx_args --ptx-output "${stem}.ptx")
            list(APPEND outputs "${CMAKE_CURRENT_BINARY_DIR}/${stem}.ptx")
          endif()
          add_custom_command(
            OUTPUT ${outputs}
            COMMAND "$<TARGET_FILE:${KILN_KILNC_TARGET}>" compile "${main_src}"
                    ${kernel_name_args_${k}} ${src_args} -s "${spec}" --arch ${arch} ${aligned_flag}
                    -o "${stem}.cubin" --metadata "${stem}.json" ${ptx_args} ${toolkit_args}
            DEPENDS ${KILN_KILNC_TARGET} ${srcs} ${toolkit_files} "${spec_check_${k}}"
            WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}"
            COMMENT "Compiling Triton kernel ${kernel_desc_${k}} for ${arch} to a cubin${ptx_what}, ${what}"
            VERBATIM)
          list(APPEND variant_outputs ${outputs})
          # Relative variant paths keep the generated bytes free of build paths.
          list(APPEND variant_pairs "${stem}.json=${stem}.cubin")
          math(EXPR image_count "${image_count} + 1")
          if(arch STREQUAL ptx_arch)
            list(APPEND variant_pairs "${stem}.json=${stem}.ptx")
            math(EXPR image_count "${image_count} + 1")
          endif()
        endforeach()
      endforeach()
      math(EXPR index "${index} + 1")
    endforeach()
  endforeach()

  set(image_kind images)
  if(TK_AUTOTUNE)
    set(image_kind "directories of autotune configs")
  endif()

  # --- tuning tables and the tuner ------------------------------------------
  set(table_args "")
  set(table_files "")
  if(TK_TUNING_TABLES AND NOT TK_AUTOTUNE)
    message(FATAL_ERROR "${where}: TUNING_TABLES needs AUTOTUNE: tables rank the kernel's "
                        "@triton.autotune configs")
  endif()
  foreach(table IN LISTS TK_TUNING_TABLES)
    get_filename_component(table_path "${table}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${table_path}")
      message(FATAL_ERROR "${where}: TUNING_TABLES: ${table} does not exist (${table_path})")
    endif()
    # Named relative to the project's source root in errors and the generated code.
    file(RELATIVE_PATH table_name "${PROJECT_SOURCE_DIR}" "${table_path}")
    list(APPEND table_args --tuning-table "${table_name}=${table_path}")
    list(APPEND table_files "${table_path}")
  endforeach()
  set(tuner_args "")
  set(tuner_outputs "")
  if(TK_AUTOTUNE)
    string(REGEX REPLACE "\\.h$" "_tune_main.cc" tuner_main "${out_header}")
    set(tuner_args --out-tuner-main "${tuner_main}")
    set(tuner_outputs "${tuner_main}")
  endif()
  list(LENGTH table_files table_count)
  set(table_note "")
  if(table_count GREATER 0)
    set(table_note ", ${table_count} tuning tables")
  endif()

  # --- one kiln-codegen action -----------------------------------------------
  file(GLOB_RECURSE template_files CONFIGURE_DEPENDS "${KILN_TEMPLATES_DIR}/*.tmpl")
  set(embed_args --embed ${embed})
  set(shard_sources "")
  set(embed_outputs "")
  if(embed STREQUAL "incbin")
    # The shards' .incbin paths are relative to where their compiler runs:
    # the top build directory with Ninja, the target's with Makefiles; so
    # the generated bytes hold no build path.
    if(CMAKE_GENERATOR MATCHES "Ninja")
      file(RELATIVE_PATH incbin_dir "${CMAKE_BINARY_DIR}" "${CMAKE_CURRENT_BINARY_DIR}")
      if(incbin_dir STREQUAL "")
        set(incbin_dir .)
      endif()
    elseif(CMAKE_GENERATOR MATCHES "Makefiles")
      set(incbin_dir .)
    else()
      set(incbin_dir "${CMAKE_CURRENT_BINARY_DIR}")
    endif()
    set(shard_prefix "${CMAKE_CURRENT_BINARY_DIR}/${work_dir}/images_")
    list(APPEND embed_args --asm-prefix "${work_dir}/images_" --asm-shards ${KILN_IMAGE_SHARDS}
         --incbin-dir "${incbin_dir}")
    math(EXPR last_shard "${KILN_IMAGE_SHARDS} - 1")
    foreach(k RANGE ${last_shard})
      list(APPEND shard_sources "${shard_prefix}${k}.cc")
      if(DEFINED TK_COMPRESS)
        list(APPEND embed_outputs "${shard_prefix}${k}.bin")
      endif()
    endforeach()
  endif()
  if(DEFINED TK_COMPRESS)
    list(APPEND embed_args --compress ${TK_COMPRESS})
  endif()
  add_custom_command(
    OUTPUT "${out_header}" "${out_source}" ${shard_sources} ${embed_outputs} ${tuner_outputs}
    COMMAND "$<TARGET_FILE:${KILN_CODEGEN_TARGET}>"
            --name "${name}" --namespace "${namespace}" --include-path "${include_path}"
            --templates "${KILN_TEMPLATES_DIR}"
            --out-header "${out_header}" --out-source "${out_source}" ${embed_args}
            ${tuner_args} ${table_args}
            ${variant_pairs}
    DEPENDS ${KILN_CODEGEN_TARGET} ${variant_outputs} ${template_files} ${table_files}
    # Relative variant paths keep the generated bytes free of build paths.
    WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}"
    COMMENT "Generating launchers ${include_path} for Triton ${kernel_word} ${kernel_desc} (${image_count} ${image_kind}${table_note})"
    VERBATIM)
  if(shard_sources)
    # A new image with an unchanged shard text must still re-assemble.
    set_source_files_properties(${shard_sources} PROPERTIES
      OBJECT_DEPENDS "${variant_outputs};${embed_outputs}")
  endif()

  add_library(${name} STATIC "${out_source}" "${out_header}" ${shard_sources})
  target_include_directories(${name} PUBLIC "$<BUILD_INTERFACE:${gen_root}>")
  target_link_libraries(${name} PUBLIC ${KILN_RUNTIME_TARGET})
  # Linkable into shared libraries (a torch extension, a plugin) too.
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_compile_features(${name} PUBLIC cxx_std_17)

  # The tuner: NAME_tune --spec S.json --out T.json (docs/usage.md, "Tuning").
  if(TK_AUTOTUNE AND TARGET "${KILN_TUNE_MAIN_TARGET}")
    add_executable(${name}_tune "${tuner_main}")
    target_link_libraries(${name}_tune PRIVATE ${name} ${KILN_TUNE_MAIN_TARGET})
  endif()
endfunction()
