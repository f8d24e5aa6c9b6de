#!/usr/bin/env bash
# Builds, here, the Kiln cubins bench/layernorm_stats.py compares with
# upstream Triton on the GPU machine: bench/kernels/layernorm_stats.py for
# sm_90a, fp16, BLOCK = N and num_warps = min(N/256, 8) (the tutorial's
# choice), aligned (16-byte pointers, N and the stride divisible by 16), one
# cubin per N with its metadata (layernorm_stats_<N>.cubin, .json).
#
#   bench/build_layernorm_stats.sh [KILNC] [DEST]   (defaults: build/compiler/driver/kilnc,
#                                                     .devbuild/layernorm_stats)
set -euo pipefail
cd "$(dirname "$0")/.."
kilnc=${1:-build/compiler/driver/kilnc}
dest=${2:-.devbuild/layernorm_stats}
mkdir -p "$dest"
for n in 1024 4096 8192; do
  warps=$((n / 256)); ((warps > 8)) && warps=8; ((warps < 1)) && warps=1
  "$kilnc" compile bench/kernels/layernorm_stats.py -n layernorm_stats_kernel \
    -s "x_ptr=*fp16:16, y_ptr=*fp16:16, w_ptr=*fp16:16, b_ptr=*fp16:16, mean_ptr=*fp32:16, rstd_ptr=*fp32:16, stride=i32:16, N=i32:16, eps=fp32, BLOCK=$n, num_warps=$warps" \
    --arch sm_90a -o "$dest/layernorm_stats_$n.cubin" --metadata "$dest/layernorm_stats_$n.json"
done
echo "build_layernorm_stats: cubins in $dest"
