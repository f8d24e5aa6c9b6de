#!/usr/bin/env bash
# Runs bench/build_scale.sh with the tools packed by bench/pack_build_scale.sh
# (on a machine without LLVM or Abseil, such as the GPU machine).
#
#   bench/run_build_scale_packed.sh PACK.tar.xz OUT_DIR [N ...]
#
# Environment as for build_scale.sh (JOBS, EMBED, COMPRESS, PTX).
set -euo pipefail
cd "$(dirname "$0")/.."
pack=$1 out=$2
shift 2
work=$(mktemp -d)
tar -C "$work" -xf "$pack"  # .tar.xz (or .tar.gz): tar detects it
lib="$work/pack/lib:$work/pack/absl/lib/x86_64-linux-gnu"
# build_scale.sh wants BUILD/compiler/{driver/kilnc,codegen/kiln-codegen}.
mkdir -p "$work/build/compiler/driver" "$work/build/compiler/codegen"
for tool in driver/kilnc codegen/kiln-codegen; do
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$lib" "$work/pack/bin/$(basename "$tool")" \
    >"$work/build/compiler/$tool"
  chmod +x "$work/build/compiler/$tool"
done
"$work/build/compiler/driver/kilnc" --version
export LD_LIBRARY_PATH="$work/pack/absl/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
BUILD="$work/build" OUT="$out" CMAKE_ARGS="-Dabsl_DIR=$work/pack/absl/lib/x86_64-linux-gnu/cmake/absl" \
  bench/build_scale.sh "$@"
