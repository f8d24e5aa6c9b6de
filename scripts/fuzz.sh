#!/usr/bin/env bash
# Builds one libFuzzer target of tests/fuzz (clang, libFuzzer +
# AddressSanitizer) in build-fuzz/ and fuzzes it for SECONDS:
#   FUZZER=frontend   (default) lexer, parser and IR generation, seeded from
#                     the kernel corpus (tests/kernels/**.py);
#   FUZZER=signature  kilnc's -s parser and its round trips, seeded from the
#                     corpus variants' signatures (tests/fuzz/make_seeds.py);
#   FUZZER=codegen    kiln-codegen's metadata input through the launcher
#                     templates, seeded from tests/unit/testdata/**.json.
# Exits non-zero on a crash, a leak, an input slower than 10 s, a property
# the target checks (IR that fails to verify, a signature that does not
# round-trip, ...), or a build failure.
#   scripts/fuzz.sh SECONDS [extra libFuzzer flags...]
#   JOBS=N       build jobs (default 1)
#   FUZZ_DIR=D   where the growing corpus and crash files go (default build-fuzz/run-FUZZER)
# A crash leaves FUZZ_DIR/crash-*; reproduce with
#   build-fuzz/tests/fuzz/FUZZER_fuzzer FUZZ_DIR/crash-...
# and turn it into a regression test (tests/frontend/fuzz_*.py for the front
# end; tests/fuzz/regressions/ for the others, run by CTest).
# The whole pipeline (kernels through kilnc to cubins) has its own fuzzer:
# tests/fuzz/pipeline_fuzz.py.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:?usage: scripts/fuzz.sh SECONDS [libFuzzer flags...]}"
shift
jobs="${JOBS:-1}"
build=build-fuzz
fuzzer="${FUZZER:-frontend}"
case $fuzzer in frontend | signature | codegen) ;; *)
  echo "fuzz.sh: FUZZER=$fuzzer: expected frontend, signature or codegen"
  exit 2
  ;;
esac
run_dir="${FUZZ_DIR:-$build/run-$fuzzer}"
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DKILN_BUILD_FUZZER=ON >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; echo "fuzz.sh: configure failed"; exit 1; }
ninja -C "$build" -j "$jobs" "${fuzzer}_fuzzer"

# The seeds are read, never written: new inputs go to $run_dir/corpus.
# Findings of earlier runs move to $run_dir/previous, so that every artifact
# left beside the corpus afterwards is this run's.
mkdir -p "$run_dir/corpus" "$run_dir/seeds" "$run_dir/previous"
find "$run_dir" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
  -o -name 'oom-*' \) -exec mv {} "$run_dir/previous/" \;
case $fuzzer in
frontend)
  find tests/kernels -name '*.py' ! -name check_corpus.py ! -name run_upstream.py \
    -exec cp {} "$run_dir/seeds/" \;
  max_len=16384
  ;;
*)
  python3 tests/fuzz/make_seeds.py "$fuzzer" "$run_dir/seeds" >/dev/null
  max_len=4096
  ;;
esac

# detect_leaks: LeakSanitizer at exit and per input (-detect_leaks=1).
# allow_user_poisoning=0: see __asan_default_options in frontend_fuzzer.cpp.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1:allow_user_poisoning=0}"
run_fuzzer() {
  "$build/tests/fuzz/${fuzzer}_fuzzer" "$run_dir/corpus" "$run_dir/seeds" \
    -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix="$run_dir/" -print_final_stats=1 "$@" >"$run_dir/fuzz.log" 2>&1
}
status=0
run_fuzzer -detect_leaks=1 "$@" || status=$?
# LeakSanitizer stops the world with ptrace, which some sandboxes forbid: there
# it dies before the first input. Fuzz on without leak checks, and say so.
if ((status != 0)) && grep -q "LeakSanitizer has encountered a fatal error" "$run_dir/fuzz.log"; then
  echo "fuzz.sh: WARNING: LeakSanitizer cannot run on this machine (ptrace); fuzzing without leak checks"
  grep -m3 "LeakSanitizer" "$run_dir/fuzz.log" || true
  rm -f "$run_dir"/leak-* "$run_dir"/crash-*
  export ASAN_OPTIONS="${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0}"
  status=0
  run_fuzzer -detect_leaks=0 "$@" || status=$?
fi
tail -n 12 "$run_dir/fuzz.log"
# With -fork=N -ignore_crashes=1 libFuzzer exits 0 after findings: look.
artifacts=$(ls "$run_dir"/crash-* "$run_dir"/leak-* "$run_dir"/timeout-* "$run_dir"/oom-* \
  2>/dev/null || true)
[[ -z $artifacts ]] || status=${status/#0/1}
if ((status != 0)); then
  # What went wrong and the input that did it, readable in a CI log.
  echo "fuzz.sh: FAILED (exit $status)"
  grep -m8 -E "ERROR:|SUMMARY:|#[0-9]+ 0x[0-9a-f]+ in kiln|produced IR that fails|_fuzzer: |out-of-memory|timeout after" \
    "$run_dir/fuzz.log" || true
  for artifact in $artifacts; do
    echo "fuzz.sh: $artifact ($(wc -c <"$artifact") bytes; base64 -d to reproduce):"
    head -c 3000 "$artifact" | base64 -w 100
  done
  exit 1
fi
echo "fuzz.sh: $fuzzer: $seconds s without crash, leak or hang"
