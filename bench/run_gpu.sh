#!/usr/bin/env bash
# The one command to run on the GPU machine: compares our vector_add binary
# with upstream Triton on the same kernel source. Kiln cannot be built there
# (no LLVM), so the binary is built here and carried over, packed by
# bench/pack_binary.sh (see bench/README.md).
#
#   bench/run_gpu.sh BIN_DIR [OUT_DIR]
#
# BIN_DIR holds vector_add and lib/ (its Abseil libraries); OUT_DIR (default
# $OUT, else bench-out) receives vector_add.json.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -lt 1 ]]; then
  echo "usage: $0 BIN_DIR [OUT_DIR]" >&2
  exit 2
fi
bin_dir=$1
out_dir=${2:-${OUT:-bench-out}}
binary="$bin_dir/vector_add"
[[ -x $binary ]] || { echo "run_gpu: no executable $binary; build and pack it first (bench/README.md)" >&2; exit 1; }

export LD_LIBRARY_PATH="$(cd "$bin_dir" && pwd)/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ldd "$binary" | grep -q "not found"; then
  echo "run_gpu: $binary is missing shared libraries:" >&2
  ldd "$binary" | grep "not found" >&2
  exit 1
fi
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv || true
PYTHONUNBUFFERED=1 python3 bench/vector_add.py --binary "$binary" --out "$out_dir"
