#!/usr/bin/env bash
# Builds tests/fuzz/frontend_fuzzer (clang, libFuzzer + AddressSanitizer) in
# build-fuzz/ and fuzzes the front end for SECONDS, seeded from the kernel
# corpus (tests/kernels/**.py). Exits non-zero on a crash, a leak, an input
# slower than 10 s, IR that fails to verify, or a build failure.
#   scripts/fuzz.sh SECONDS [extra libFuzzer flags...]
#   JOBS=N       build jobs (default 1)
#   FUZZ_DIR=D   where the growing corpus and crash files go (default build-fuzz/run)
# A crash leaves FUZZ_DIR/crash-*; reproduce with
#   build-fuzz/tests/fuzz/frontend_fuzzer FUZZ_DIR/crash-...
# and turn it into a tests/frontend/fuzz_*.py lit test.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:?usage: scripts/fuzz.sh SECONDS [libFuzzer flags...]}"
shift
jobs="${JOBS:-1}"
build=build-fuzz
run_dir="${FUZZ_DIR:-$build/run}"
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DKILN_BUILD_FUZZER=ON >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; echo "fuzz.sh: configure failed"; exit 1; }
ninja -C "$build" -j "$jobs" frontend_fuzzer

# The seeds are read, never written: new inputs go to $run_dir/corpus.
# Findings of earlier runs move to $run_dir/previous, so that every artifact
# left beside the corpus afterwards is this run's.
mkdir -p "$run_dir/corpus" "$run_dir/seeds" "$run_dir/previous"
find "$run_dir" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
  -o -name 'oom-*' \) -exec mv {} "$run_dir/previous/" \;
find tests/kernels -name '*.py' ! -name check_corpus.py ! -name run_upstream.py \
  -exec cp {} "$run_dir/seeds/" \;

# detect_leaks: LeakSanitizer at exit and per input (-detect_leaks=1).
# allow_user_poisoning=0: see __asan_default_options in frontend_fuzzer.cpp.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1:allow_user_poisoning=0}"
status=0
"$build/tests/fuzz/frontend_fuzzer" "$run_dir/corpus" "$run_dir/seeds" \
  -max_total_time="$seconds" -max_len=16384 -timeout=10 -rss_limit_mb=4096 \
  -detect_leaks=1 -artifact_prefix="$run_dir/" -print_final_stats=1 "$@" \
  >"$run_dir/fuzz.log" 2>&1 || status=$?
tail -n 40 "$run_dir/fuzz.log"
# With -fork=N -ignore_crashes=1 libFuzzer exits 0 after findings: look.
if compgen -G "$run_dir/crash-*" >/dev/null || compgen -G "$run_dir/leak-*" >/dev/null ||
   compgen -G "$run_dir/timeout-*" >/dev/null || compgen -G "$run_dir/oom-*" >/dev/null; then
  status=${status/#0/1}
fi
if ((status != 0)); then
  echo "fuzz.sh: FAILED (exit $status); artifacts:" $(ls "$run_dir"/crash-* "$run_dir"/leak-* \
    "$run_dir"/timeout-* "$run_dir"/oom-* 2>/dev/null)
  exit 1
fi
echo "fuzz.sh: $seconds s without crash, leak or hang"
