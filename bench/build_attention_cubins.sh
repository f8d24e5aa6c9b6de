#!/usr/bin/env bash
# Builds, here, the cubins bench/attention_cubins.py times beside Triton:
# bench/kernels/attention_fwd.py's attn_fwd for each listed head dim,
# causality and config, strides 16-divisible, for sm_90a (wgmma) and sm_90
# (mma.sync). With SOURCE=tutorial06: upstream's tutorial 06 `_attn_fwd`
# instead (tests/realworld's unchanged copy), its descriptors made in the
# kernel from pointers (the `desc_*=*fp16` form), STAGE 3 when causal;
# SOURCE=tutorial06_host: the same with host descriptors (`tensordesc<...>:16`),
# the form the tutorial uses on Hopper. SOURCE=bench_block_ptr: the bench
# kernel's block-pointer twin (attn_fwd_block_ptr, Triton 2.x's form). WS=1 (tutorial06 sources): each
# sm_90a cubin is also built with warp_specialize=True, named ..._ws (a
# producer warpgroup issues the k and v copies). VARIANT=aligned_pointers or
# VARIANT=general (tutorial06 source): the signature without hints, compiled
# as the build's aligned-pointers variant (`--aligned-pointers`) or its
# general one: what the launcher runs for a batch of 1 or 12 heads, or for
# misaligned tensors (run attention_cubins.py with --batch 1 --heads 12).
# FP8=1 (tutorial06 source) builds the tutorial's fp8 forward instead
# (attention_cubins.py runs cubins named *_fp8 with fp8e5 q, k, v and out).
# CONFIGS=FILE reads the configs from FILE (lines as in the list below:
# arch|HEAD_DIM|causal|BLOCK_M|BLOCK_N|warps|stages) instead, e.g. the
# tutorial's autotune list.
#
#   bench/build_attention_cubins.sh [KILNC] [DEST] [SOURCE]
#     (defaults: build/compiler/driver/kilnc, .devbuild/attention_cubins, bench)
set -uo pipefail
cd "$(dirname "$0")/.."
kilnc=${1:-build/compiler/driver/kilnc}
dest=${2:-.devbuild/attention_cubins}
source=${3:-bench}
src=bench/kernels/attention_fwd.py
[[ $source == tutorial06* ]] && src=tests/realworld/tutorials/python/tutorials/06-fused-attention.py
mkdir -p "$dest"
: >"$dest/list.txt"
status=0
# arch|HEAD_DIM|CAUSAL|BM|BN|warps|stages
while IFS='|' read -r arch d causal bm bn warps stages; do
  name="${arch}_d${d}_c${causal}_${bm}x${bn}_w${warps}s${stages}"
  c=False; [[ $causal == 1 ]] && c=True
  if [[ $source == tutorial06* ]]; then
    stage=1; [[ $causal == 1 ]] && stage=3
    hopper=False; [[ $arch == sm_90* ]] && hopper=True
    kernel=_attn_fwd
    descs="desc_q=*fp16:16, desc_k=*fp16:16, desc_v=*fp16:16, desc_o=*fp16:16"
    # tutorial06_host: host descriptors, as the tutorial passes them on
    # Hopper; their extents are multiples of 16 (the aligned variant's `:16`).
    [[ $source == tutorial06_host ]] &&
      descs="desc_q=tensordesc<fp16[$bm,$d]>:16, desc_k=tensordesc<fp16[$bn,$d]>:16, desc_v=tensordesc<fp16[$bn,$d]>:16, desc_o=tensordesc<fp16[$bm,$d]>:16"
    sig="sm_scale=fp32, M=*fp32:16, Z=i32, H=i32, $descs, N_CTX=i32:16, HEAD_DIM=$d, BLOCK_M=$bm, BLOCK_N=$bn, FP8_OUTPUT=False, STAGE=$stage, warp_specialize=False, IS_HOPPER=$hopper, num_warps=$warps, num_stages=$stages"
  else
    kernel=attn_fwd
    [[ $source == bench_block_ptr ]] && kernel=attn_fwd_block_ptr
    sig="Q=*fp16:16, K=*fp16:16, V=*fp16:16, Out=*fp16:16, sm_scale=fp32, stride_h=i32:16, stride_m=i32:16, N_CTX=i32:16, HEAD_DIM=$d, BM=$bm, BN=$bn, CAUSAL=$c, num_warps=$warps, num_stages=$stages"
  fi
  # FP8=1 (tutorial06 source): the tutorial's fp8 forward (q, k and a
  # transposed v in fp8e5, FP8_OUTPUT=True), cubins named *_fp8.
  if [[ ${FP8:-0} == 1 && $source == tutorial06 ]]; then
    sig=${sig//\*fp16:16/*fp8e5:16}
    sig=${sig/FP8_OUTPUT=False/FP8_OUTPUT=True}
    name+=_fp8
  fi
  flags=()
  if [[ -n ${VARIANT:-} && $source == tutorial06 ]]; then
    sig=${sig//:16/}
    [[ $VARIANT == aligned_pointers ]] && flags=(--aligned-pointers)
  fi
  forms=("$name|$sig")
  [[ ${WS:-0} == 1 && $source == tutorial06* && $arch == sm_90a ]] &&
    forms+=("${name}_ws|${sig/warp_specialize=False/warp_specialize=True}")
  for form in "${forms[@]}"; do
    n=${form%%|*} s=${form#*|}
    if "$kilnc" compile "$src" -n "$kernel" --arch "$arch" ${flags[@]+"${flags[@]}"} -o "$dest/$n.cubin" \
      --metadata "$dest/$n.json" -s "$s"; then
      echo "$n|$arch|$d|$causal|$bm|$bn|$warps|$stages" >>"$dest/list.txt"
    else
      echo "build_attention_cubins: $n FAILED" >&2; status=1
    fi
  done
done < <(if [[ -n ${CONFIGS:-} ]]; then cat "$CONFIGS"; else cat <<'LIST'
sm_90a|64|0|128|64|4|3
sm_90a|64|1|128|64|4|3
sm_90a|128|0|128|64|8|3
sm_90a|128|1|128|64|8|3
sm_90a|128|0|128|128|8|2
sm_90|128|0|128|64|8|3
LIST
fi)
echo "build_attention_cubins: $(wc -l <"$dest/list.txt") cubins in $dest"
exit $status
