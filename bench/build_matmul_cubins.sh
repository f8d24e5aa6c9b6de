#!/usr/bin/env bash
# Builds, here, the cubins bench/matmul_cubins.py times beside Triton: upstream
# Triton's tutorial 03 (.upstream/03-matrix-multiplication.py, unchanged, as
# bench/README.md says how to fetch it), its matmul_kernel compiled by kilnc
# for the acceptance configs (and for fp32 operands: tf32 on the tensor
# cores), with the tutorial's unit strides as `:1` and everything else
# 16-divisible (what the generated launcher's `unit` variant is), for sm_90a
# (wgmma) and sm_90 (mma.sync).
#
#   bench/build_matmul_cubins.sh [KILNC] [DEST]   (defaults: build/compiler/driver/kilnc,
#                                                   .devbuild/matmul_cubins)
set -uo pipefail
cd "$(dirname "$0")/.."
kilnc=${1:-build/compiler/driver/kilnc}
dest=${2:-.devbuild/matmul_cubins}
src=.upstream/03-matrix-multiplication.py
[[ -f $src ]] || { echo "build_matmul_cubins: $src missing (bench/README.md, Matmul)" >&2; exit 1; }
mkdir -p "$dest"
: >"$dest/list.txt"
status=0
# name|dtype|arch|BM|BN|BK|GROUP|warps|stages
while IFS='|' read -r dtype arch bm bn bk group warps stages; do
  # DTYPE:bt: b stored N x K (`x @ w.T`, a linear layer's weight), as fp8's.
  bt=""; [[ $dtype == *:bt ]] && { dtype=${dtype%:bt}; bt=_bt; }
  if [[ $dtype == fp8e4nv || -n $bt ]]; then units="stride_ak stride_bk stride_cn"; else units="stride_ak stride_bn stride_cn"; fi
  sig=""
  for p in stride_am stride_ak stride_bk stride_bn stride_cm stride_cn; do
    d=":16"; [[ " $units " == *" $p "* ]] && d=":1"
    sig+=", $p=i32$d"
  done
  name="${dtype}${bt}_${arch}_${bm}x${bn}x${bk}_w${warps}s${stages}"
  if "$kilnc" compile "$src" -n matmul_kernel --arch "$arch" -o "$dest/$name.cubin" --metadata "$dest/$name.json" \
      -s "a_ptr=*$dtype:16, b_ptr=*$dtype:16, c_ptr=*fp16:16, M=i32:16, N=i32:16, K=i32:16$sig, BLOCK_SIZE_M=$bm, BLOCK_SIZE_N=$bn, BLOCK_SIZE_K=$bk, GROUP_SIZE_M=$group, ACTIVATION='', num_warps=$warps, num_stages=$stages"; then
    echo "$name|$dtype|$arch|$bm|$bn|$bk|$group|$warps|$stages" >>"$dest/list.txt"
  else
    echo "build_matmul_cubins: $name FAILED" >&2; status=1
  fi
done <<'LIST'
fp16|sm_90a|128|256|64|8|8|3
fp16|sm_90a|128|128|64|8|4|4
bf16|sm_90a|128|256|64|8|8|3
bf16|sm_90a|128|128|64|8|4|4
fp8e4nv|sm_90a|128|256|128|8|8|3
fp16|sm_90|128|256|64|8|8|3
fp16|sm_90|128|128|64|8|4|4
fp32|sm_90a|128|128|32|8|4|3
fp32|sm_90a|128|256|32|8|8|3
fp16:bt|sm_90a|128|256|64|8|8|3
fp16:bt|sm_90a|128|128|64|8|4|4
fp16:bt|sm_90|128|128|64|8|4|4
LIST
# The tutorial's whole @triton.autotune list for sm_90a, per dtype, for the
# acceptance's third config (the one Triton's autotuner picks):
# matmul_cubins.py --autotuned DEST/autotuned. Configs too big for sm_90a
# are skipped, as the autotuner skips them. AUTOTUNE_ARCH=sm_90 compiles the
# lists for the mma.sync path instead (time them with matmul_cubins.py
# --autotuned-arch sm_90 --triton-mma-v2).
autotune_arch=${AUTOTUNE_ARCH:-sm_90a}
for dtype in fp16 bf16 fp8e4nv; do
  if [[ $dtype == fp8e4nv ]]; then units="stride_ak stride_bk stride_cn"; else units="stride_ak stride_bn stride_cn"; fi
  sig=""
  for p in stride_am stride_ak stride_bk stride_bn stride_cm stride_cn; do
    d=":16"; [[ " $units " == *" $p "* ]] && d=":1"
    sig+=", $p=i32$d"
  done
  if ! "$kilnc" compile "$src" -n matmul_kernel --arch "$autotune_arch" --autotune -o "$dest/autotuned/$dtype" \
      -s "a_ptr=*$dtype:16, b_ptr=*$dtype:16, c_ptr=*fp16:16, M=i32:16, N=i32:16, K=i32:16$sig, ACTIVATION=''" 2>"$dest/autotuned_$dtype.log"; then
    echo "build_matmul_cubins: autotuned/$dtype FAILED (see $dest/autotuned_$dtype.log)" >&2; status=1
  fi
done
echo "build_matmul_cubins: $(wc -l <"$dest/list.txt") cubins in $dest, autotune lists in $dest/autotuned"
exit $status
