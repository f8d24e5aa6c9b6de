#!/usr/bin/env bash
# Packs every GPU test binary of a CMake build tree for the GPU machine
# (which cannot build Kiln), with the shared libraries it lacks:
# tests/gpu/run_gpu_tests.sh runs them there.
#
#   tests/gpu/pack_gpu_tests.sh BUILD_DIR DEST_DIR      # e.g. build .devbuild
#
# Build first: cmake --build BUILD_DIR --target kiln_runtime_gpu_test
#   kiln_launch_gpu_test kiln_descriptor_gpu_test kiln_tutorials_gpu_test
#   kiln_dot_flavours_gpu_test
#   vector_add softmax_demo,
#   and run
#   `ctest -R consumer_package` for the consumer (tests/e2e/consumer).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR DEST_DIR" >&2
  exit 2
fi
build=$1
dest=$2
binaries=(
  "$build/tests/unit/kiln_runtime_gpu_test"
  "$build/tests/e2e/kiln_launch_gpu_test"
  "$build/tests/e2e/kiln_descriptor_gpu_test"
  "$build/tests/e2e/kiln_tutorials_gpu_test"
  "$build/tests/e2e/kiln_dot_flavours_gpu_test"
  "$build/examples/vector_add/vector_add"
  "$build/examples/softmax/softmax_demo"
  "$build/tests/e2e/consumer/one/consumer"
)
rm -rf "$dest"
for binary in "${binaries[@]}"; do
  if [[ ! -x $binary ]]; then
    echo "pack_gpu_tests: missing $binary (see the usage above)" >&2
    exit 1
  fi
  bench/pack_binary.sh "$binary" "$dest" >/dev/null
done
# zstd-compressed test images (add_ptx: COMPRESS zstd) are inflated through
# a dlopen'ed libzstd.so.1, which ldd does not show: packed too, in case the
# GPU machine's image lacks it.
zstd=$(ldconfig -p 2>/dev/null | awk '$1 == "libzstd.so.1" && $NF ~ /^\// {print $NF; exit}')
if [[ -n $zstd ]]; then
  cp -L "$zstd" "$dest/lib/"
else
  echo "pack_gpu_tests: warning: no libzstd.so.1 here; the GPU machine must have it" >&2
fi
echo "pack_gpu_tests: $(ls "$dest" | grep -vc '^lib$') binaries, $(ls "$dest/lib" | wc -l) libraries in $dest ($(du -sh "$dest" | cut -f1))"
