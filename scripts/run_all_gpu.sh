#!/usr/bin/env bash
# Every GPU check and figure of a stop, in one call on the GPU machine (the
# device tool brings back at most 8 files, so the results come as one
# archive): the GPU tests and launch overhead, the differential check against
# Triton, device printf/assert, compile time per variant, and three runs of
# the vector-add and reduction benches with their median-of-3 tables.
#
# Here:  ninja -C build && (cd build && ctest -R consumer_package) &&
#        tests/gpu/pack_gpu_tests.sh build .devbuild &&
#        bench/pack_binary.sh build/launch_overhead .devbuild &&
#        bench/pack_binary.sh build/bench/reductions_bench .devbuild &&
#        tests/gpu/build_differential.sh && bench/pack_kilnc.sh
# There: scripts/run_all_gpu.sh "$OUT"   (carry .devbuild and .devbuild-kilnc)
# Gives OUT/summary.txt and OUT/results.tar.gz (unpack into the git-ignored
# bench/results/raw/; bench/results/README.md says what is kept in git).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-gpu-out}}
work=$(mktemp -d)
export LD_LIBRARY_PATH="$PWD/.devbuild/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$out"
summary="$out/summary.txt"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
  echo "== GPU tests"
  tests/gpu/run_gpu_tests.sh .devbuild "$work/gpu_tests" >"$work/gpu_tests.txt" 2>&1
  grep -E "PASSED|FAILED|RESULT|run_gpu_tests" "$work/gpu_tests.txt"
  echo "== launch overhead"
  .devbuild/launch_overhead --rounds=41 --batch=500 >"$work/launch_overhead.txt" 2>&1 ||
    echo "launch_overhead failed"
  grep RESULT "$work/launch_overhead.txt"
  echo "== differential"
  python3 tests/gpu/differential.py --cubins .devbuild/differential --out "$work/differential" \
    >"$work/differential.txt" 2>&1
  grep -E "^(MISMATCH|ERROR|NOT RUN)|passed" "$work/differential.txt"
  echo "== device printf / assert"
  python3 tests/gpu/debug_ops_check.py --cubins .devbuild/differential 2>&1 | tee "$work/debug_ops.txt"
  echo "== compile time"
  python3 bench/compile_time.py --out "$work/compile_time" 2>&1 | tail -5
  echo "== benches, three runs"
  for i in 1 2 3; do
    python3 bench/reductions.py --binary .devbuild/reductions_bench --out "$work/reductions_run$i" \
      >"$work/reductions_run$i.txt" 2>&1 || echo "reductions run $i failed"
    bench/run_gpu.sh .devbuild "$work/vector_add_run$i" >"$work/vector_add_run$i.txt" 2>&1 ||
      echo "vector_add run $i failed"
  done
  python3 bench/median_of_runs.py "$work"/vector_add_run*/vector_add.json
  python3 bench/median_of_runs.py "$work"/reductions_run*/reductions.json
} 2>&1 | tee "$summary"
cp "$summary" "$work/summary.txt"
tar -C "$work" -czf "$out/results.tar.gz" .
