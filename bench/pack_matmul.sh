#!/usr/bin/env bash
# Packs what bench/matmul.py needs on the GPU machine (which cannot build
# Kiln): libkiln_matmul_bench.so with the shared libraries it needs there
# (bench/pack_binary.sh), and configs/<arch>/<type>_<variant>/ with each
# compiled directory's configs.txt and config<K>.error files, so that the
# bench can say why a config is missing from a build.
#
#   cmake --build build --target kiln_matmul_bench
#   bench/pack_matmul.sh build .devbuild-matmul
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR DEST_DIR" >&2
  exit 2
fi
build=$1
dest=$2
here=$(dirname "$0")
rm -rf "$dest"
"$here/pack_binary.sh" "$build/bench/libkiln_matmul_bench.so" "$dest"
for arch in sm_90a sm_90; do
  for dir in "$build/bench/matmul_tutorial_${arch/sm_/sm}.kiln"/*/; do
    to="$dest/configs/$arch/$(basename "$dir")"
    mkdir -p "$to"
    cp "$dir/configs.txt" "$to/"
    cp "$dir"/*.error "$to/" 2>/dev/null || true
  done
done
echo "pack_matmul: $(find "$dest/configs" -name '*.error' | wc -l) configs without a cubin recorded in $dest/configs"
