#!/usr/bin/env bash
# Builds, here, the cubins bench/persistent_matmul_cubins.py times beside
# Triton: upstream Triton's tutorial 09 (persistent matmul; the file unchanged
# in tests/realworld/tutorials/python/tutorials/09-persistent-matmul.py), its
# five kernels compiled by kilnc for sm_90a, fp16 and fp8 e4m3 (C in the
# operands' type, as the tutorial makes it), at one fixed config each (the
# tutorial autotunes; 128x256x64, group 8, 8 warps, 3 stages for fp16 and
# BLOCK_SIZE_K 128 for fp8). NUM_SMS is 132, the H100 SXM's and H200's SM
# count: the bench passes the same to Triton and launches min(132, tiles)
# programs of the persistent kernels.
#
# Pointers and every size and stride are 16-divisible (M, N, K multiples of
# 16), the unit strides are `:1`: A row-major (M x K), B as the tutorial
# passes it to the pointer kernels, b.T of an N x K row-major tensor, and C
# row-major. Descriptors are `:16` (extents multiples of 16, as the
# aligned variant a build makes assumes and its launcher checks).
#
# The last rows are warp-specialized (WARP_SPECIALIZE=True; NAME ends in
# _ws): a producer warpgroup issues the TMA copies (compiler/transforms/
# WarpSpecialize.cpp).
#
# Writes DEST/NAME.{cubin,json}, DEST/list.txt (the cubins that compiled, one
# `name|kernel|dtype|BM|BN|BK|GROUP|warps|stages|NUM_SMS` a line),
# DEST/resource_usage.txt (kilnc --resource-usage per cubin) and, for a
# kernel kilnc rejects, DEST/NAME.log with its diagnostics.
#
#   bench/build_persistent_matmul_cubins.sh [KILNC] [DEST]
#       (defaults: build/compiler/driver/kilnc, .devbuild/persistent_matmul_cubins)
set -uo pipefail
cd "$(dirname "$0")/.."
kilnc=${1:-build/compiler/driver/kilnc}
dest=${2:-.devbuild/persistent_matmul_cubins}
src=tests/realworld/tutorials/python/tutorials/09-persistent-matmul.py
num_sms=132
[[ -f $src ]] || { echo "build_persistent_matmul_cubins: $src missing" >&2; exit 1; }
mkdir -p "$dest"
: >"$dest/list.txt"
: >"$dest/resource_usage.txt"
status=0

# The signature of KERNEL for element type T and one config.
signature() {
  local kernel=$1 t=$2 bm=$3 bn=$4 bk=$5 group=$6 warps=$7 stages=$8 subtile=${9:-False} ws=${10:-False}
  local fp8=False; [[ $t == fp8e4nv ]] && fp8=True
  local sizes="M=i32:16, N=i32:16, K=i32:16"
  local blocks="BLOCK_SIZE_M=$bm, BLOCK_SIZE_N=$bn, BLOCK_SIZE_K=$bk, GROUP_SIZE_M=$group"
  local launch="num_warps=$warps, num_stages=$stages"
  local pointers="a_ptr=*$t:16, b_ptr=*$t:16, c_ptr=*$t:16"
  local strides="stride_am=i32:16, stride_ak=i32:1, stride_bk=i32:1, stride_bn=i32:16, stride_cm=i32:16, stride_cn=i32:1"
  # EPILOGUE_SUBTILE stores c in two halves (the tutorial's pre_hook halves
  # its descriptor's block).
  local cbn=$bn; [[ $subtile == True ]] && cbn=$((bn / 2))
  local descs="a_desc=tensordesc<$t[$bm,$bk]>:16, b_desc=tensordesc<$t[$bn,$bk]>:16, c_desc=tensordesc<$t[$bm,$cbn]>:16"
  case $kernel in
    matmul_kernel) echo "$pointers, $sizes, $strides, $blocks, $launch" ;;
    matmul_kernel_persistent) echo "$pointers, $sizes, $strides, $blocks, NUM_SMS=$num_sms, $launch" ;;
    matmul_kernel_tma) echo "$descs, $sizes, $blocks, FP8_OUTPUT=$fp8, WARP_SPECIALIZE=$ws, $launch" ;;
    matmul_kernel_tma_persistent)
      echo "$descs, $sizes, $blocks, FP8_OUTPUT=$fp8, EPILOGUE_SUBTILE=$subtile, NUM_SMS=$num_sms, WARP_SPECIALIZE=$ws, $launch" ;;
    # FLATTEN=True: what the tutorial passes without warp specialization;
    # with it, FLATTEN=False (the tutorial's Hopper form).
    matmul_kernel_descriptor_persistent)
      local flatten=True; [[ $ws == True ]] && flatten=False
      echo "$pointers, $sizes, $blocks, EPILOGUE_SUBTILE=False, NUM_SMS=$num_sms, WARP_SPECIALIZE=$ws, FLATTEN=$flatten, $launch" ;;
  esac
}

# kernel|dtype|BM|BN|BK|GROUP|warps|stages[|EPILOGUE_SUBTILE[|WARP_SPECIALIZE]]
count=0
while IFS='|' read -r kernel dtype bm bn bk group warps stages subtile ws; do
  count=$((count + 1))
  name="${kernel#matmul_kernel}"; name="${name#_}"; name="${name:-naive}_${dtype}_${bm}x${bn}x${bk}_w${warps}s${stages}"
  [[ $subtile == True ]] && name="${name}_subtile"
  [[ $ws == True ]] && name="${name}_ws"
  sig=$(signature "$kernel" "$dtype" "$bm" "$bn" "$bk" "$group" "$warps" "$stages" "${subtile:-False}" "${ws:-False}")
  echo "build_persistent_matmul_cubins: $name" >&2
  if nice -n 10 "$kilnc" compile "$src" -n "$kernel" --arch sm_90a -o "$dest/$name.cubin" \
      --metadata "$dest/$name.json" --resource-usage -s "$sig" >"$dest/$name.log" 2>&1; then
    echo "$name|$kernel|$dtype|$bm|$bn|$bk|$group|$warps|$stages|$num_sms" >>"$dest/list.txt"
    usage=$(grep -E "registers" "$dest/$name.log" | tail -1)
    echo "$name: ${usage##*]: }" | tee -a "$dest/resource_usage.txt"
    rm -f "$dest/$name.log"
  else
    echo "build_persistent_matmul_cubins: $name FAILED:" >&2
    grep -iE "error" "$dest/$name.log" | head -5 >&2
    status=1
  fi
done <<'LIST'
matmul_kernel|fp16|128|256|64|8|8|3
matmul_kernel_persistent|fp16|128|256|64|8|8|3
matmul_kernel_tma|fp16|128|256|64|8|8|3
matmul_kernel_tma_persistent|fp16|128|256|64|8|8|3
matmul_kernel_descriptor_persistent|fp16|128|256|64|8|8|3
matmul_kernel|fp8e4nv|128|256|128|8|8|3
matmul_kernel_persistent|fp8e4nv|128|256|128|8|8|3
matmul_kernel_tma|fp8e4nv|128|256|128|8|8|3
matmul_kernel_tma_persistent|fp8e4nv|128|256|128|8|8|3
matmul_kernel_descriptor_persistent|fp8e4nv|128|256|128|8|8|3
matmul_kernel_tma_persistent|fp16|128|256|64|8|8|3|True
matmul_kernel_descriptor_persistent|fp16|128|256|64|8|8|3|False|True
matmul_kernel_descriptor_persistent|fp8e4nv|128|256|128|8|8|3|False|True
matmul_kernel_tma|fp16|128|256|64|8|8|3|False|True
LIST
echo "build_persistent_matmul_cubins: $(wc -l <"$dest/list.txt") of $count cubins in $dest"
exit $status
