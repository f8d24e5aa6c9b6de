#!/usr/bin/env bash
# On the GPU machine: builds the torch extension from a directory packed by
# examples/torch_extension/pack.sh against this machine's torch, and runs its
# checks (test_add_op.py). The log goes to OUT_DIR/torch_extension.log.
#
#   examples/torch_extension/run_gpu.sh PACK_DIR [OUT_DIR]    # OUT_DIR: $OUT, else gpu-out
set -uo pipefail
pack=$(cd "$1" && pwd)
out=${2:-${OUT:-gpu-out}}
mkdir -p "$out"
# The extension's rpath finds its direct libraries; Abseil's libraries also
# need each other, which only the loader's search path finds for them.
export LD_LIBRARY_PATH="$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
python3 "$pack/test_add_op.py" "$pack" 2>&1 | tee "$out/torch_extension.log"
status=${PIPESTATUS[0]}
grep -E '^check |all checks ok' "$out/torch_extension.log" | tail -20
exit "$status"
