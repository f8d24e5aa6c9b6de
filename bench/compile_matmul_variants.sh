#!/usr/bin/env bash
# Compiles one (arch, specialization, general/aligned) of upstream's matmul
# tutorial for bench/matmul.py into DIR, laid out as `kilnc compile
# --autotune` lays out a directory (config<K>.cubin, config<K>.json,
# configs.txt), which kiln-codegen reads: every config of the tutorial's
# @triton.autotune (as `kilnc configs --arch ARCH` evaluates the decorator),
# then each EXTRA config fragment the list lacks, as config<100+J>.
#
# Unlike `kilnc compile --autotune`, a config that does not compile, or takes
# more than KILN_MATMUL_CONFIG_TIMEOUT seconds (default 900) to, does not
# stop the others: it leaves config<K>.error (kilnc's diagnostics) instead
# of its cubin and metadata, for the bench to report as an error cell. The
# run fails only if no config compiles. configs.txt lists every config.
#
# With KILN_MATMUL_SUBSET set (fragments separated by '|'), only the list's
# configs among them are compiled (the EXTRA ones always are); the others get
# a config<K>.error that says they were left out of this build.
#
#   bench/compile_matmul_variants.sh KILNC SOURCE KERNEL SIGNATURE ARCH \
#       general|aligned|unit DIR [EXTRA_FRAGMENT ...]
#
# `unit` is the aligned variant with the tutorial's unit strides as `:1`
# (equal to 1, folded): stride_ak and stride_cn, and stride_bn for fp16/bf16
# (B row-major) or stride_bk for fp8 (B transposed, as the tutorial passes
# it). The generated launcher picks it when the arguments are those.
set -uo pipefail
if [[ $# -lt 7 ]]; then
  echo "usage: $0 KILNC SOURCE KERNEL SIGNATURE ARCH general|aligned DIR [EXTRA ...]" >&2
  exit 2
fi
kilnc=$1 source=$2 kernel=$3 signature=$4 arch=$5 variant=$6 dir=$7
shift 7
timeout_s=${KILN_MATMUL_CONFIG_TIMEOUT:-900}
aligned=()
[[ $variant == aligned || $variant == unit ]] && aligned=(--aligned)
if [[ $variant == unit ]]; then
  unit_b=stride_bn
  [[ $signature == *"a_ptr=*fp8"* ]] && unit_b=stride_bk
  for p in stride_ak "$unit_b" stride_cn; do
    signature=${signature/"$p=i32"/"$p=i32:1"}
  done
fi

configs=$("$kilnc" configs "$source" -n "$kernel" --arch "$arch") || exit 1
rm -rf "$dir"
mkdir -p "$dir"

compiled=0
# compile INDEX FRAGMENT
compile() {
  local stem="$dir/config$1"
  echo "config$1: $2" >>"$dir/configs.txt"
  # timeout(1) signals its whole process group: kilnc and its ptxas.
  timeout --kill-after=10 "$timeout_s" "$kilnc" compile "$source" -n "$kernel" \
    -s "$signature, $2" --arch "$arch" "${aligned[@]}" \
    -o "$stem.cubin" --metadata "$stem.json" 2>"$stem.error"
  local status=$?
  if [[ $status -eq 0 ]]; then
    rm -f "$stem.error"
    compiled=$((compiled + 1))
    return
  fi
  if [[ $status -eq 124 || $status -eq 137 ]]; then
    echo "kilnc: error: compiling config $1 ($2) took more than ${timeout_s} s; stopped" >>"$stem.error"
  fi
  echo "compile_matmul_variants: $arch $variant config$1 ($2) did not compile:" >&2
  cat "$stem.error" >&2
  rm -f "$stem.cubin" "$stem.json"
}

index=0
while IFS= read -r fragment; do
  if [[ -z $fragment ]]; then
    continue
  elif [[ -n ${KILN_MATMUL_SUBSET:-} ]] && ! tr '|' '\n' <<<"$KILN_MATMUL_SUBSET" | grep -qxF "$fragment"; then
    echo "config$index: $fragment" >>"$dir/configs.txt"
    echo "kilnc: error: not compiled: left out of this build (KILN_MATMUL_SUBSET)" >"$dir/config$index.error"
  else
    compile "$index" "$fragment"
  fi
  index=$((index + 1))
done <<<"$configs"

index=100
for fragment in "$@"; do
  # A fragment the decorator's list has is compiled already.
  grep -qxF "$fragment" <<<"$configs" || compile "$index" "$fragment"
  index=$((index + 1))
done
[[ $compiled -gt 0 ]]
