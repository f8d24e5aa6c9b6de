#!/usr/bin/env bash
# The one command to run on the GPU machine for the matmul bench: upstream's
# tutorial 03 under Triton, Kiln (sm_90a and sm_90 builds) and cuBLAS, then
# compute-sanitizer on the Kiln builds (bench/README.md, "Matmul").
#
#   bench/run_matmul_gpu.sh PACKED_DIR [OUT_DIR] [matmul.py arguments...]
#
# PACKED_DIR is what bench/pack_matmul.sh wrote; the tutorial is read from
# .upstream/03-matrix-multiplication.py (carry .upstream too).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -lt 1 ]]; then
  echo "usage: $0 PACKED_DIR [OUT_DIR] [matmul.py arguments...]" >&2
  exit 2
fi
packed=$1
out_dir=${2:-${OUT:-bench-out}}
shift $(( $# >= 2 ? 2 : 1 ))
lib="$packed/libkiln_matmul_bench.so"
[[ -f $lib ]] || { echo "run_matmul_gpu: no $lib; build and pack it first (bench/README.md)" >&2; exit 1; }
export LD_LIBRARY_PATH="$(cd "$packed" && pwd)/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ldd "$lib" | grep -q "not found"; then
  echo "run_matmul_gpu: $lib is missing shared libraries:" >&2
  ldd "$lib" | grep "not found" >&2
  exit 1
fi
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv || true
export PATH="$PATH:/usr/local/cuda/bin"
PYTHONUNBUFFERED=1 python3 bench/matmul.py --build "$packed" --out "$out_dir" "$@"
