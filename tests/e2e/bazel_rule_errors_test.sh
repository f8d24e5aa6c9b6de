#!/usr/bin/env bash
# Builds each target of tests/e2e/bazel_rule_errors (all manual-tagged) and
# checks that it fails with an error naming the triton_kernel attribute, the
# specialization and the kernel parameter. scripts/test.sh runs it after
# `bazel test //...`; the kilnc_* cases need kilnc built, which that does.
#
#   tests/e2e/bazel_rule_errors_test.sh [--analysis-only]
#   BAZEL="bazel --output_base=..." to use another Bazel server.
set -uo pipefail
cd "$(dirname "$0")/../.."
bazel_cmd=${BAZEL:-bazel}
pkg=//tests/e2e/bazel_rule_errors
failures=0

# expect TARGET FLAGS SUBSTRING...: building TARGET fails, and its output
# holds every SUBSTRING.
expect() {
  local target=$1 flags=$2
  shift 2
  local out
  if out=$($bazel_cmd build $flags "$pkg:$target" 2>&1); then
    echo "FAIL $target: built, but should have failed"
    failures=$((failures + 1))
    return
  fi
  for want in "$@"; do
    if ! grep -qF -- "$want" <<<"$out"; then
      echo "FAIL $target: the output lacks: $want"
      grep -E "ERROR|error" <<<"$out" | head -5 | sed 's/^/    /'
      failures=$((failures + 1))
      return
    fi
  done
  echo "ok   $target: $(grep -m1 -oE "(attribute '[a-z]+'|error: ).*" <<<"$out" | cut -c1-150)"
}

# expect_actions TARGET FLAGS TEXT...: TARGET analyzes, and `bazel aquery` of
# its TritonCompile actions (those of $MNEMONIC when set) holds every TEXT,
# and no TEXT written !TEXT.
expect_actions() {
  local target=$1 flags=$2 mnemonic=${MNEMONIC:-TritonCompile}
  shift 2
  local out
  if ! out=$($bazel_cmd aquery $flags "mnemonic($mnemonic, $pkg:${target}_codegen)" 2>&1); then
    echo "FAIL $target: aquery failed"
    grep -E "ERROR|error" <<<"$out" | head -5 | sed 's/^/    /'
    failures=$((failures + 1))
    return
  fi
  # One argument per line in aquery's command lines: join them.
  out=$(sed 's/ \\$//' <<<"$out" | tr '\n' ' ' | tr -s ' ')
  for want in "$@"; do
    if [[ $want == !* ]]; then
      if grep -qF -- "${want#!}" <<<"$out"; then
        echo "FAIL $target: the actions hold: ${want#!}"
        failures=$((failures + 1))
        return
      fi
    elif ! grep -qF -- "$want" <<<"$out"; then
      echo "FAIL $target: the actions lack: $want"
      failures=$((failures + 1))
      return
    fi
  done
  echo "ok   $target: $(grep -o "Mnemonic: $mnemonic" <<<"$out" | wc -l) $mnemonic actions as expected"
}

a="--nobuild"
attr="triton_kernel(name = \"%s\"): attribute 'specializations'"
# What analysis checks: that each element can be written as a signature, and
# that no two are the same. The rest is kilnc's (below).
expect analysis_bad_value $a "$(printf "$attr" analysis_bad_value)" \
  "specializations[0]: parameter 'BLOCK' must map to a type string"
expect analysis_repeat $a "$(printf "$attr" analysis_repeat)" "specializations[1] repeats specializations[0]"
expect analysis_bad_arch $a "attribute 'archs': unknown arch \"sm90a\" (did you mean \"sm_90a\"?)"
expect analysis_arch_twice $a \
  "attribute 'archs': \"90a\" is listed twice (as \"sm_90a\", both meaning sm_90a)"
expect analysis_arch_virtual $a "attribute 'archs': unknown arch \"90-virtual\""
expect analysis_arch_ptxas_lacks $a "attribute 'archs': \"sm_101\": the toolkit's ptxas (@cuda) cannot assemble sm_101"
expect analysis_arch_native $a "attribute 'archs': 'native' would make the build depend on the GPUs"
expect ok_archs_from_setting $a \
  "triton_kernel(name = \"ok_archs_from_setting\"): attribute 'archs' is unset, so the build setting //rules:archs gives it (--//rules:archs=sm_80,sm_90a): must be a non-empty list"
expect ok_archs_from_setting "$a --//rules:archs=sm_80,sm91" \
  "attribute 'archs' is unset, so the build setting //rules:archs gives it" \
  "unknown arch \"sm91\""

# Spellings become the sm_ form; ptxas and libdevice are inputs, passed by
# path, and the actions' environment has no CUDA_HOME, even with one given by
# --action_env (which an action using the shell environment would show as
# "Environment: [CUDA_HOME=...]"); kilnc_opts reach kilnc; the build setting
# gives archs where the target sets none.
expect_actions ok_arch_spellings "--action_env=CUDA_HOME=/usr/local/cuda" "--arch sm_80" "--arch sm_90a" "--arch sm_86" \
  "ok_arch_spellings.kiln/sm_90a/s0_general.cubin" "--ptxas" "--libdevice" \
  "external/cuda/bin/ptxas" "libdevice.10.bc" "--mlir-timing" \
  "ok_arch_spellings.kiln/sm_90a/s0_aligned_pointers.cubin" "--aligned-pointers" \
  "!CUDA_HOME" "!--arch 80" "!--arch 90a-real"
# An aligned-pointers variant only where a pointer and an integer carry no
# hint.
expect_actions ok_hinted_pointers "" "--aligned" "!--aligned-pointers" "!aligned_pointers"
# One kilnc check-spec of all the specializations, which every compile waits
# for (its stamp is their input).
MNEMONIC=TritonCheckSpec expect_actions ok_arch_spellings "" \
  "check-spec tests/e2e/bazel_rule_errors/scale.py -n scale_kernel --where" \
  "ok_arch_spellings.kiln/specializations.checked" \
  "x_ptr=*fp32, out_ptr=*fp32, n=i32, alpha=fp32, BLOCK=128" "!--arch" "!--autotune"
expect_actions ok_arch_spellings "" "Inputs: [" "ok_arch_spellings.kiln/specializations.checked"
expect_actions ok_archs_from_setting "--//rules:archs=80,sm_90a" "--arch sm_80" "--arch sm_90a" \
  "!--arch 80" "!CUDA_HOME"
expect_actions ok_all_major "" "--arch sm_80" "--arch sm_90 " "--arch sm_100 " "--arch sm_110 " \
  "--arch sm_120 " "ok_all_major.kiln/sm_120/s0_general.ptx" "!--arch sm_90a" "!sm_80/s0_general.ptx"
expect_actions ok_new_archs "" "--arch sm_100 " "--arch sm_100f" "--arch sm_103a" "--arch sm_120 " \
  "--arch sm_121f" "--arch sm_87" "ok_new_archs.kiln/sm_120/s0_general.ptx"
# The PTX fallback comes from the sm_86 compiles (the highest arch without
# a suffix), not from a second compile, and not for sm_80 or sm_90a.
expect_actions ok_ptx_fallback "" "--ptx-output" "ok_ptx_fallback.kiln/sm_86/s0_general.ptx" \
  "ok_ptx_fallback.kiln/sm_86/s0_aligned.ptx" "!sm_80/s0_general.ptx" "!sm_90a/s0_general.ptx" \
  "!--emit ptx"
expect_actions ok_no_ptx "" "--arch sm_86" "!--ptx-output"
# Classes' static methods: `kernel` names one as Python reaches it, its files
# where a plain kernel's go; `kernels` several, each compiled with every
# specialization into a directory named by its C++ name, each checked once.
expect_actions ok_kernel_method "" "-n Scale.forward" "ok_kernel_method.kiln/sm_80/s0_general.cubin"
expect_actions ok_kernels "" "-n Scale.forward" "-n Shift.forward" \
  "ok_kernels.kiln/sm_80/Scale_forward/s0_general.cubin" \
  "ok_kernels.kiln/sm_80/Shift_forward/s0_aligned.json" "ok_kernels.kiln/Shift_forward.specializations.checked"
MNEMONIC=TritonCheckSpec expect_actions ok_kernels "" "-n Scale.forward --where" "-n Shift.forward --where" \
  "ok_kernels.kiln/Scale_forward.specializations.checked"
MNEMONIC=TritonCodegen expect_actions ok_kernels "" "for Triton kernels Scale.forward, Shift.forward"
expect analysis_kernel_bad_name $a "triton_kernel(name = \"analysis_kernel_bad_name\"): attribute 'kernel': must be the name of a @triton.jit function (add_kernel, or Cls.method for a class's @staticmethod), got \"Scale..forward\""
expect analysis_kernel_and_kernels $a "attribute 'kernels': cannot be given with 'kernel'"
expect analysis_kernels_twice $a "attribute 'kernels': lists \"Scale.forward\" twice"
expect analysis_kernels_collide $a \
  "attribute 'kernels': \"A_B.forward\" and \"A.B_forward\" would both be named A_B_forward in C++ (launch_A_B_forward, A_B_forward_config, A_B_forward_info); build them in separate targets"

if [[ ${1:-} != --analysis-only ]]; then
  # kilnc check-spec, in the target's TritonCheckSpec action, before any
  # compile: the attribute, the element and the kernel parameter.
  element="triton_kernel(name = \"%s\"): attribute 'specializations': element"
  expect kilnc_missing "" "$(printf "$element" kilnc_missing) 0 (\"x_ptr=*fp32, out_ptr=*fp32, alpha=fp32, BLOCK=128\")" \
    "bad signature for 'scale_kernel': parameter 'n' is missing from the signature" \
    "Checking the specializations of Triton kernel scale_kernel, //tests/e2e/bazel_rule_errors:kilnc_missing_codegen"
  expect kilnc_value_for_type "" "$(printf "$element" kilnc_value_for_type) 1 (" \
    "parameter 'n' is not tl.constexpr, so it needs a type"
  expect kilnc_extra "" "$(printf "$element" kilnc_extra) 0 (" "the kernel has no parameter 'gamma'"
  expect kilnc_bad_type "" "$(printf "$element" kilnc_bad_type) 0 (" \
    "parameter 'x_ptr': unknown type '*fp33' (did you mean '*fp32'?)"
  expect kilnc_misspelled "" "$(printf "$element" kilnc_misspelled) 1 (" \
    "the kernel has no parameter 'm' (did you mean 'n'?)"
  expect kilnc_equal_to_1_pointer "" "$(printf "$element" kilnc_equal_to_1_pointer) 0 (" \
    "parameter 'x_ptr': ':1' (the argument equals 1) applies to integer types i8..i64 and u8..u64 only, got '*fp32:1'; pointers take ':16'"
  expect kilnc_equal_to_1_float "" "$(printf "$element" kilnc_equal_to_1_float) 0 (" \
    "parameter 'alpha': ':1' (the argument equals 1) applies to integer types i8..i64 and u8..u64 only, got 'fp32:1'"
  expect kilnc_num_warps "" "$(printf "$element" kilnc_num_warps) 0 (" \
    "num_warps must be a power of 2 up to 32, got 3"
  expect kilnc_num_ctas "" "$(printf "$element" kilnc_num_ctas) 0 (" \
    "num_ctas=2 is not supported (Kiln does not compile thread-block clusters yet)"
  expect kilnc_only_options "" "$(printf "$element" kilnc_only_options) 0 (\"num_warps=4\")" \
    "parameter 'x_ptr' is missing from the signature"
  expect kilnc_positional_length "" "$(printf "$element" kilnc_positional_length) 1 (" \
    "the signature has 4 entries but the kernel has 5 parameters"
  expect kilnc_autotune_positional "" "$(printf "$element" kilnc_autotune_positional) 0 (" \
    "it is positional, but with autotune the @triton.autotune configs supply the constexpr values"
  expect kilnc_autotune_num_warps "" "$(printf "$element" kilnc_autotune_num_warps) 0 (" \
    "it sets num_warps, but with autotune each @triton.autotune config sets the launch options"
  expect kilnc_syntax_error "" \
    "tests/e2e/bazel_rule_errors/syntax_error.py:7:31: error: unmatched ')'" \
    "    offs = tl.arange(0, BLOCK))" \
    "                              ^"
  # With `kernels`, each kernel's check names it. Both kernels' checks fail
  # here, in whichever order Bazel runs them: --keep_going reports both.
  expect kilnc_kernels_missing "--keep_going" "$(printf "$element" kilnc_kernels_missing) 0 (" \
    "bad signature for 'Scale.forward': parameter 'n' is missing from the signature" \
    "Checking the specializations of Triton kernel Scale.forward"
  # Only compiling finds that the kernel has no configs to cross with.
  expect kilnc_autotune_no_decorator "" "scale_kernel's @triton.autotune configs for sm_80" \
    "error: --autotune: 'scale_kernel' has no @triton.autotune(configs=[...]) decorator"
  # tl's dtype names (float32) are types to kilnc, so this one builds.
  if out=$($bazel_cmd build "$pkg:ok_type_alias_codegen" 2>&1); then
    echo "ok   ok_type_alias: built"
  else
    echo "FAIL ok_type_alias: did not build"
    grep -E "ERROR|error" <<<"$out" | head -5 | sed 's/^/    /'
    failures=$((failures + 1))
  fi
fi

if ((failures)); then
  echo "bazel_rule_errors_test: $failures FAILED"
  exit 1
fi
echo "bazel_rule_errors_test: all passed"
