#!/usr/bin/env bash
# Compiles, here, the cubins bench/realworld_cubins.py times beside upstream
# Triton on the GPU machine: one per case of bench/realworld_cases.py
# (ID.cubin and its metadata ID.json), with the hints Triton's JIT would
# specialize on for the case's arguments, and the case's other source files
# (its `srcs`) as --src.
#
#   bench/build_realworld_cubins.sh KILNC DEST [ARCH]   (ARCH: sm_90a)
set -uo pipefail
cd "$(dirname "$0")/.."
kilnc=$1 dest=$2 arch=${3:-sm_90a}
mkdir -p "$dest"
list=$(python3 bench/realworld_cubins.py --list) || exit 1
failed=0
while IFS='|' read -r id file kernel sig srcs; do
  # shellcheck disable=SC2086  # srcs: --src FILE words
  if ! "$kilnc" compile "$file" -n "$kernel" -s "$sig" $srcs --arch "$arch" \
       -o "$dest/$id.cubin" --metadata "$dest/$id.json"; then
    echo "build_realworld_cubins: $id FAILED" >&2
    failed=$((failed + 1))
  fi
done <<< "$list"
echo "build_realworld_cubins: $(ls "$dest"/*.cubin 2>/dev/null | wc -l) cubins in $dest, $failed failed"
[[ $failed -eq 0 ]]
