#!/usr/bin/env bash
# Builds, here, the cubins bench/grouped_gemm_cubins.py times beside Triton:
# upstream Triton's tutorial 08 (grouped GEMM; the file unchanged in
# tests/realworld/tutorials/python/tutorials/08-grouped-gemm.py), its two
# kernels compiled by kilnc for sm_90a at fixed configs from the tutorial's
# autotune lists: grouped_matmul_kernel (pointers the kernel loads from the
# group's pointer array) and grouped_matmul_tma_kernel (tensor descriptors
# made in the kernel from those loaded pointers, fp16 and fp8). NUM_SM is
# 132, the H100 SXM's and H200's SM count; the bench launches that many
# programs for Kiln and Triton.
#
# The group arrays (pointers as i64, sizes and leading dimensions as i32)
# are 16-byte aligned torch tensors (`:16`); group_size is any i32.
#
# Writes DEST/NAME.{cubin,json}, DEST/list.txt (the cubins that compiled,
# one `name|kernel|dtype|BM|BN|BK|warps|stages|NUM_SM` a line),
# DEST/resource_usage.txt and, for a kernel kilnc rejects, DEST/NAME.log.
#
#   bench/build_grouped_gemm_cubins.sh [KILNC] [DEST]
#       (defaults: build/compiler/driver/kilnc, .devbuild/grouped_gemm_cubins)
set -uo pipefail
cd "$(dirname "$0")/.."
kilnc=${1:-build/compiler/driver/kilnc}
dest=${2:-.devbuild/grouped_gemm_cubins}
src=tests/realworld/tutorials/python/tutorials/08-grouped-gemm.py
num_sm=132
[[ -f $src ]] || { echo "build_grouped_gemm_cubins: $src missing" >&2; exit 1; }
mkdir -p "$dest"
: >"$dest/list.txt"
: >"$dest/resource_usage.txt"
status=0
count=0
groups="group_a_ptrs=*i64:16, group_b_ptrs=*i64:16, group_c_ptrs=*i64:16, group_gemm_sizes=*i32:16, g_lds=*i32:16, group_size=i32"
while IFS='|' read -r kernel dtype bm bn bk warps stages; do
  count=$((count + 1))
  short=${kernel#grouped_matmul_}; short=${short%_kernel}; [[ $short == kernel ]] && short=pointers
  name="${short}_${dtype}_${bm}x${bn}x${bk}_w${warps}s${stages}"
  sig="$groups, NUM_SM=$num_sm, BLOCK_SIZE_M=$bm, BLOCK_SIZE_N=$bn, BLOCK_SIZE_K=$bk"
  if [[ $kernel == grouped_matmul_tma_kernel ]]; then
    fp8=False; [[ $dtype == fp8e4nv ]] && fp8=True
    sig="$sig, FP8=$fp8"
  fi
  sig="$sig, num_warps=$warps, num_stages=$stages"
  echo "build_grouped_gemm_cubins: $name" >&2
  if nice -n 10 "$kilnc" compile "$src" -n "$kernel" --arch sm_90a -o "$dest/$name.cubin" \
      --metadata "$dest/$name.json" --resource-usage -s "$sig" >"$dest/$name.log" 2>&1; then
    echo "$name|$kernel|$dtype|$bm|$bn|$bk|$warps|$stages|$num_sm" >>"$dest/list.txt"
    usage=$(grep -E "registers" "$dest/$name.log" | tail -1)
    echo "$name: ${usage##*]: }" | tee -a "$dest/resource_usage.txt"
    rm -f "$dest/$name.log"
  else
    echo "build_grouped_gemm_cubins: $name FAILED:" >&2
    grep -iE "error" "$dest/$name.log" | head -5 >&2
    status=1
  fi
done <<'LIST'
grouped_matmul_kernel|fp16|128|128|64|4|3
grouped_matmul_kernel|fp16|64|128|64|4|3
grouped_matmul_tma_kernel|fp16|128|128|64|4|3
grouped_matmul_tma_kernel|fp16|128|128|64|8|4
grouped_matmul_tma_kernel|fp16|128|256|64|8|3
grouped_matmul_tma_kernel|fp16|128|128|128|8|3
grouped_matmul_tma_kernel|fp8e4nv|128|128|128|8|3
LIST
echo "build_grouped_gemm_cubins: $(wc -l <"$dest/list.txt") of $count cubins in $dest"
exit $status
