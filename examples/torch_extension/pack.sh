#!/usr/bin/env bash
# Packs what examples/torch_extension needs on the GPU machine, which has
# torch, a compiler and CUDA but cannot build Kiln: the extension's source
# and test, the generated add.h with Kiln's runtime headers and Abseil's, the
# kernel's and runtime's static archives, and Abseil's shared libraries.
#
#   examples/torch_extension/pack.sh BUILD_DIR DEST_DIR     # e.g. build .devbuild/torch_ext
#
# Build first: cmake --build BUILD_DIR --target vector_add
# Then, on the GPU machine: examples/torch_extension/run_gpu.sh DEST_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR DEST_DIR" >&2
  exit 2
fi
build=$1
dest=$2
need() { [[ -f $1 ]] || { echo "pack: missing $1 (cmake --build $build --target vector_add)" >&2; exit 1; }; }
header=$(find "$build" -path '*/examples/vector_add/add.h' -print -quit)
[[ -n $header ]] || { echo "pack: no generated examples/vector_add/add.h under $build" >&2; exit 1; }
archives=("$build/examples/vector_add/libadd.a" "$build/runtime/libkiln_runtime.a"
          "$build/runtime/libkiln_tuning_table.a")
for f in "${archives[@]}" "$build/examples/vector_add/vector_add"; do need "$f"; done

rm -rf "$dest"
mkdir -p "$dest/include/examples/vector_add" "$dest/include/kiln" "$dest/lib"
dest=$(cd "$dest" && pwd) # the runtime's headers are copied from inside runtime/
cp examples/torch_extension/add_op.cc examples/torch_extension/test_add_op.py "$dest/"
cp "$header" "$dest/include/examples/vector_add/"
(cd runtime && find kiln -name '*.h' -exec cp --parents {} "$dest/include/" \;)
cp -r /usr/include/absl "$dest/include/"
cp "${archives[@]}" "$dest/lib/"
# Abseil's shared libraries, as the vector_add binary (same archives) needs them.
bench/pack_binary.sh "$build/examples/vector_add/vector_add" "$dest" >/dev/null
rm "$dest/vector_add"
echo "pack: $dest ($(du -sh "$dest" | cut -f1)): add_op.cc, headers, $(ls "$dest/lib" | wc -l) libraries"
