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
  echo "ok   $target: $(grep -m1 -oE "(attribute '[a-z]+'|error: bad signature).*" <<<"$out" | cut -c1-150)"
}

# expect_actions TARGET FLAGS TEXT...: TARGET analyzes, and `bazel aquery` of
# its TritonCompile actions holds every TEXT, and no TEXT written !TEXT.
expect_actions() {
  local target=$1 flags=$2
  shift 2
  local out
  if ! out=$($bazel_cmd aquery $flags "mnemonic(TritonCompile, $pkg:${target}_codegen)" 2>&1); then
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
  echo "ok   $target: $(grep -o "Mnemonic: TritonCompile" <<<"$out" | wc -l) TritonCompile actions as expected"
}

a="--nobuild"
attr="triton_kernel(name = \"%s\"): attribute 'specializations'"
expect analysis_bad_type $a "$(printf "$attr" analysis_bad_type)" \
  "specializations[0]: parameter 'x_ptr': unknown type '*fp33' (did you mean '*fp32'?)"
expect analysis_type_alias $a "parameter 'alpha': unknown type 'float32' (did you mean 'fp32'?)"
expect analysis_missing $a "$(printf "$attr" analysis_missing)" \
  "specializations[1] lacks parameter 'n' (of type i32 in specializations[0])"
expect analysis_misspelled $a \
  "specializations[1] names parameter 'm', which specializations[0] calls 'n'; one is misspelled"
expect analysis_value_for_type $a \
  "parameter 'n' is given the type i32 in specializations[0] but the value 16 in specializations[1]"
expect analysis_equal_to_1_pointer $a "$(printf "$attr" analysis_equal_to_1_pointer)" \
  "specializations[0]: parameter 'x_ptr': ':1' (the argument equals 1, which the variant folds in) applies to the integer types i8 i16 i32 i64 u8 u16 u32 u64 only, not '*fp32'; a pointer takes ':16'"
expect analysis_equal_to_1_float $a \
  "specializations[0]: parameter '#3 (positional)': ':1' (the argument equals 1, which the variant folds in) applies to the integer types i8 i16 i32 i64 u8 u16 u32 u64 only, not 'fp32'"
expect analysis_num_warps $a "specializations[0]: num_warps must be a power of 2 up to 32, got 3"
expect analysis_num_ctas $a "$(printf "$attr" analysis_num_ctas)" \
  "specializations[0]: num_ctas=2 is not supported (Kiln does not compile thread-block clusters yet)"
expect analysis_only_options $a "specializations[0] names only launch options, no kernel parameters"
expect analysis_bad_value $a "specializations[0]: parameter 'BLOCK' must map to a type string"
expect analysis_positional_length $a \
  "specializations[1] has 4 positional entries but specializations[0] has 5"
expect analysis_repeat $a "specializations[1] repeats specializations[0]"
expect analysis_autotune_positional $a "$(printf "$attr" analysis_autotune_positional)" \
  "specializations[0] is positional, but with autotune = True the @triton.autotune configs supply the constexpr values"
expect analysis_autotune_num_warps $a \
  "specializations[0] sets num_warps, but with autotune = True each @triton.autotune config sets the launch options"
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
  "!CUDA_HOME" "!--arch 80" "!--arch 90a-real"
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

if [[ ${1:-} != --analysis-only ]]; then
  expect kilnc_missing "" "specializations[0]" "bad signature for 'scale_kernel'" \
    "parameter 'n' is missing from the signature"
  expect kilnc_value_for_type "" "specializations[0]" \
    "parameter 'n' is not tl.constexpr, so it needs a type"
  expect kilnc_extra "" "specializations[0]" "the kernel has no parameter 'gamma'"
  expect kilnc_autotune_no_decorator "" "scale_kernel's @triton.autotune configs for sm_80" \
    "error: --autotune: 'scale_kernel' has no @triton.autotune(configs=[...]) decorator"
  expect kilnc_syntax_error "" \
    "tests/e2e/bazel_rule_errors/syntax_error.py:7:31: error: unmatched ')'" \
    "    offs = tl.arange(0, BLOCK))" \
    "                              ^"
fi

if ((failures)); then
  echo "bazel_rule_errors_test: $failures FAILED"
  exit 1
fi
echo "bazel_rule_errors_test: all passed"
