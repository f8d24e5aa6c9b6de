#!/usr/bin/env bash
# Builds, here, the cubins bench/attention_bwd_cubins.py times beside Triton:
# upstream's tutorial 06 backward (tests/realworld's unchanged copy), its two
# kernels as `_attention.backward` launches them: `_attn_bwd_preprocess`
# (PRE_BLOCK 128, Triton's default 4 warps and 3 stages; one per head dim,
# causality does not enter it) and `_attn_bwd` (BLOCK_M1/N1/M2/N2 32, 128,
# 128, 32, BLK_SLICE_FACTOR 2, 4 warps, 5 stages), for the head dims and
# causality of the tutorial's backward bench, for sm_90a.
#
# Signatures: pointers 16-byte aligned; the strides and N_CTX divisible by 16
# (contiguous (Z, H, N_CTX, HEAD_DIM) tensors, HEAD_DIM 64 or 128, N_CTX a
# multiple of 128 as the tutorial asserts); stride_d equal to 1 (`:1`: the
# kernel sees the constant, the launcher checks the argument); Z and H
# unhinted, since the tutorial's own tests use H = 2 and 48.
#
# Writes DEST/NAME.cubin and NAME.json per kernel, and DEST/list.txt with one
# line per backward config: bwd name|preprocess name|arch|HEAD_DIM|causal|warps|stages.
#
#   bench/build_attention_bwd_cubins.sh [KILNC] [DEST]
#     (defaults: build/compiler/driver/kilnc, .devbuild/attention_bwd_cubins)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
kilnc=${1:-build/compiler/driver/kilnc}
dest=${2:-.devbuild/attention_bwd_cubins}
src=tests/realworld/tutorials/python/tutorials/06-fused-attention.py
mkdir -p "$dest"
: >"$dest/list.txt"
status=0
built=" "  # the preprocess cubins this run has made (one per arch and head dim)

# compile NAME KERNEL ARCH SIGNATURE: one cubin and its metadata.
compile() {
  "$kilnc" compile "$src" -n "$2" --arch "$3" -o "$dest/$1.cubin" --metadata "$dest/$1.json" -s "$4" \
    --resource-usage
}

# arch|HEAD_DIM|CAUSAL|warps|stages
while IFS='|' read -r arch d causal warps stages; do
  pre="${arch}_pre_d${d}"
  if [[ $built != *" $pre "* ]]; then
    if ! compile "$pre" _attn_bwd_preprocess "$arch" \
        "O=*fp16:16, DO=*fp16:16, Delta=*fp32:16, Z=i32, H=i32, N_CTX=i32:16, BLOCK_M=128, HEAD_DIM=$d, num_warps=4, num_stages=3"; then
      echo "build_attention_bwd_cubins: $pre FAILED" >&2; status=1; continue
    fi
    built+="$pre "
  fi
  name="${arch}_bwd_d${d}_c${causal}_w${warps}s${stages}"
  c=False; [[ $causal == 1 ]] && c=True
  sig="Q=*fp16:16, K=*fp16:16, V=*fp16:16, sm_scale=fp32, DO=*fp16:16, DQ=*fp16:16, DK=*fp16:16, DV=*fp16:16, M=*fp32:16, D=*fp32:16, stride_z=i32:16, stride_h=i32:16, stride_tok=i32:16, stride_d=i32:1, H=i32, N_CTX=i32:16, BLOCK_M1=32, BLOCK_N1=128, BLOCK_M2=128, BLOCK_N2=32, BLK_SLICE_FACTOR=2, HEAD_DIM=$d, CAUSAL=$c, num_warps=$warps, num_stages=$stages"
  if compile "$name" _attn_bwd "$arch" "$sig"; then
    echo "$name|$pre|$arch|$d|$causal|$warps|$stages" >>"$dest/list.txt"
  else
    echo "build_attention_bwd_cubins: $name FAILED" >&2; status=1
  fi
done <<'LIST'
sm_90a|64|0|4|5
sm_90a|64|1|4|5
sm_90a|128|0|4|5
sm_90a|128|1|4|5
LIST
echo "build_attention_bwd_cubins: $(wc -l <"$dest/list.txt") backward configs in $dest"
exit $status
