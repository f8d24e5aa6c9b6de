#!/usr/bin/env bash
# Kiln under sanitizers (CMakePresets.json's "asan" and "tsan"):
# - build-asan (clang 22, ASan + UBSan on every target): kilnc, kiln-opt,
#   kiln-codegen and the unit tests; then, under them, the lit and front-end
#   suites, the kernel corpus through cubins, a short whole-pipeline fuzz run
#   (tests/fuzz/pipeline_fuzz.py) and the unit tests (kiln-codegen runs
#   inside kiln_codegen_test's build, on every parameter type).
# - build-tsan (clang 22, TSan; the runtime only): the runtime's tests, the
#   concurrent module-cache and fault-injection ones among them.
# Any sanitizer report fails the run, also one from a process that was
# expected to fail (a lit `not %kilnc ...`, a known corpus failure): reports
# go to files under build-{asan,tsan}/sanitizer-reports, which must stay
# empty.
#
#   scripts/sanitize.sh
#   JOBS=N                 build and test jobs (default: all cores)
#   SANITIZE_CORPUS=subset the corpus for sm_90a and sm_80 only (wgmma and
#                          mma.sync, every kernel; a third of the time)
#                          instead of all six archs; =hopper: sm_90a only
#
# Cost: see docs/reliability.md (scripts/test.sh, CI, runs it with
# SANITIZE_CORPUS=subset).
#
# Exits non-zero if a build, a test or a sanitizer fails.
set -uo pipefail
cd "$(dirname "$0")/.."
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
jobs="${JOBS:-$(nproc)}"
lit=/usr/lib/llvm-22/bin/lit
failed=()
start=$SECONDS
# CPU seconds (user + system) of every finished child so far: on a shared
# machine wall time says little, so each line gives both.
cpu() { times | tail -n 1 | awk '{ split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2] }'; }
say() { echo "sanitize.sh: [$((SECONDS - start)) s wall, $(cpu) CPU-s] $*"; }

build() { # PRESET
  say "configure and build $1"
  mkdir -p "build-$1"
  cmake --preset "$1" >"build-$1/configure.log" 2>&1 ||
    { cat "build-$1/configure.log"; failed+=("$1 configure"); return 1; }
  cmake --build --preset "$1" -j "$jobs" || { failed+=("$1 build"); return 1; }
}

# Reports go to files, one per process; LeakSanitizer runs at exit.
# allow_user_poisoning=0: LLVM's allocators poison their slabs from inline
# code that is instrumented here, and the prebuilt MLIR code that allocates
# from them never unpoisons (see tests/fuzz/frontend_fuzzer.cpp): those
# use-after-poison reports are artifacts of the mixed build.
reports_in() { # DIR
  rm -rf "$1" && mkdir -p "$1"
  export ASAN_OPTIONS="log_path=$1/asan:detect_leaks=1:allow_user_poisoning=0:strict_string_checks=1:check_initialization_order=1"
  export UBSAN_OPTIONS="log_path=$1/ubsan:print_stacktrace=1:halt_on_error=1"
  export TSAN_OPTIONS="log_path=$1/tsan:halt_on_error=0:second_deadlock_stack=1"
}

check_reports() { # DIR NAME
  local files
  files=$(find "$1" -type f 2>/dev/null | sort)
  if [[ -n $files ]]; then
    failed+=("$2 sanitizer reports")
    say "$2: $(wc -l <<<"$files") sanitizer report(s):"
    for f in $files; do
      echo "--- $f"
      head -c 4000 "$f"
    done
  fi
}

if build asan; then
  reports=$PWD/build-asan/sanitizer-reports
  reports_in "$reports"
  bin=$PWD/build-asan/compiler/driver

  say "lit (tests/lit, tests/frontend) under ASan + UBSan"
  "$lit" -q -j "$jobs" --param kiln_bin_dir="$bin" tests/lit tests/frontend ||
    failed+=("lit")
  rm -rf tests/lit/Output tests/frontend/Output

  archs=sm_80,sm_86,sm_89,sm_90a,sm_100a,sm_120a
  [[ ${SANITIZE_CORPUS:-} == subset ]] && archs=sm_90a,sm_80
  [[ ${SANITIZE_CORPUS:-} == hopper ]] && archs=sm_90a
  say "kernel corpus through cubin ($archs) under ASan + UBSan"
  python3 tests/kernels/check_corpus.py --kilnc "$bin/kilnc" --emit cubin \
    --archs "$archs" --jobs "$jobs" --timeout 600 --quiet || failed+=("corpus")

  # Generated kernels (tests/fuzz/kernelgen.py) and mutated corpus variants
  # through every stage to cubins, under the sanitizers.
  say "whole-pipeline fuzz run (8 kernels, sm_90a/sm_90/sm_80) under ASan + UBSan"
  python3 tests/fuzz/pipeline_fuzz.py --kilnc "$bin/kilnc" --count 8 --seed 1 --mutate 0.25 \
    --out build-asan/pipeline-fuzz --timeout 600 || failed+=("pipeline fuzz")

  say "unit tests under ASan + UBSan"
  for t in runtime codegen signature axis_info linear_layout warp_shuffle shared_swizzle \
    nvmma_shared; do
    build-asan/tests/unit/kiln_${t}_test --gtest_brief=1 >"build-asan/kiln_${t}_test.log" 2>&1 ||
      { failed+=("kiln_${t}_test"); tail -n 30 "build-asan/kiln_${t}_test.log"; }
  done
  check_reports "$reports" asan
fi

if build tsan; then
  reports=$PWD/build-tsan/sanitizer-reports
  reports_in "$reports"
  say "runtime tests under TSan"
  build-tsan/tests/unit/kiln_runtime_test --gtest_brief=1 >build-tsan/kiln_runtime_test.log 2>&1 ||
    { failed+=("kiln_runtime_test (tsan)"); tail -n 30 build-tsan/kiln_runtime_test.log; }
  check_reports "$reports" tsan
fi

say "done"
if ((${#failed[@]})); then
  say "FAILED: ${failed[*]}"
  exit 1
fi
say "clean: ASan + UBSan (lit, corpus, pipeline fuzz, unit tests) and TSan (runtime tests)"
