#!/usr/bin/env bash
# Builds, here, the Kiln cubins bench/differential.py compares with upstream
# Triton on the GPU machine: one per case of its list, for sm_90a (the H100).
#
#   bench/build_differential.sh [KILNC] [DEST]   (defaults: build/compiler/driver/kilnc,
#                                                  .devbuild/differential)
set -euo pipefail
cd "$(dirname "$0")/.."
kilnc=${1:-build/compiler/driver/kilnc}
dest=${2:-.devbuild/differential}
mkdir -p "$dest"
python3 bench/differential.py --list | while IFS='|' read -r id file kernel sig; do
  "$kilnc" compile "tests/kernels/$file" -n "$kernel" -s "$sig" --arch sm_90a \
    -o "$dest/$id.cubin"
done
echo "build_differential: $(ls "$dest"/*.cubin | wc -l) cubins in $dest"
