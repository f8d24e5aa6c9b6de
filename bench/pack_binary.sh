#!/usr/bin/env bash
# Packs a built Kiln binary for the GPU machine, which has no LLVM, Abseil or
# build tools: copies BINARY into DEST and the shared libraries it needs that
# the GPU machine's image lacks (Abseil's) into DEST/lib. bench/run_gpu.sh
# puts DEST/lib on LD_LIBRARY_PATH.
#
#   bench/pack_binary.sh build/examples/vector_add/vector_add .devbuild
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 BINARY DEST_DIR" >&2
  exit 2
fi
binary=$1
dest=$2
[[ -x $binary ]] || { echo "pack_binary: $binary is not an executable file" >&2; exit 1; }
mkdir -p "$dest/lib"
cp -L "$binary" "$dest/"
# The C/C++ runtime and the CUDA driver come from the GPU machine itself.
ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*|libstdc++.so*|libgcc_s.so*|libcuda.so*) ;;
    *) cp -L "$lib" "$dest/lib/" ;;
  esac
done
echo "pack_binary: $dest/$(basename "$binary") with $(ls "$dest/lib" | wc -l) libraries in $dest/lib"
