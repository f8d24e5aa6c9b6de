#!/usr/bin/env bash
# On the GPU machine: every GPU test binary, from a directory packed by
# tests/gpu/pack_gpu_tests.sh. A test that skips (no GPU seen) counts as a
# failure here. Logs go to OUT_DIR.
#
#   tests/gpu/run_gpu_tests.sh BIN_DIR [OUT_DIR]     # OUT_DIR: $OUT, else gpu-out
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=$(cd "$1" && pwd)
out=${2:-${OUT:-gpu-out}}
mkdir -p "$out"
export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader || true
failed=()

run() {  # run NAME COMMAND...: logs to OUT_DIR/NAME.log
  local name=$1
  shift
  echo "=== $name: $*"
  "$@" >"$out/$name.log" 2>&1
  local status=$?
  grep -E "^\[  (PASSED|FAILED|  OK|SKIPPED) |RESULT|check |device|ok$|: ok|error|FAILED" \
    "$out/$name.log" | grep -v "^\[       OK" | tail -40
  if ((status != 0)); then
    failed+=("$name (exit $status)")
  elif grep -qE "SKIPPED|no GPU found" "$out/$name.log"; then
    failed+=("$name (skipped: no GPU seen)")
  fi
}

run runtime_gpu_test "$bin/kiln_runtime_gpu_test"
run launch_gpu_test "$bin/kiln_launch_gpu_test"
run descriptor_gpu_test "$bin/kiln_descriptor_gpu_test"
run tutorials_gpu_test "$bin/kiln_tutorials_gpu_test"
run dot_flavours_gpu_test "$bin/kiln_dot_flavours_gpu_test"
run vector_add_smoke "$bin/vector_add" --sizes=1,1000,1048579 --bench-n=0
run softmax_demo "$bin/softmax_demo" 257 3000
run consumer "$bin/consumer"

if ((${#failed[@]})); then
  echo "run_gpu_tests: FAILED: ${failed[*]}"
  exit 1
fi
echo "run_gpu_tests: all passed"
