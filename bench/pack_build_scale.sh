#!/usr/bin/env bash
# Packs what bench/build_scale.sh needs on a machine without LLVM or Abseil
# (the GPU machine, whose 16 cores show the serial share better than 2):
# kilnc and kiln-codegen with the shared libraries they load, and Debian's
# Abseil (headers, libraries, CMake package) as a prefix. Writes
# DEST/build_scale.tar.xz (under the device tool's 64 MiB carry limit);
# bench/run_build_scale_packed.sh unpacks and runs it there.
#
#   bench/pack_build_scale.sh [BUILD] [DEST]   (defaults: build, .devbuild-scale)
#
# KILNC and KILN_CODEGEN override the tools' paths (default: BUILD's kilnc,
# and BUILD's kiln-codegen relinked against LLVM's static Support library).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
dest=${2:-.devbuild-scale}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/pack/bin" "$stage/pack/lib" "$dest"
kilnc=${KILNC:-$build/compiler/driver/kilnc}
codegen=${KILN_CODEGEN:-}
if [[ -z $codegen ]]; then
  # kiln-codegen needs only LLVM's Support library: relink it (the build's
  # own link command) against the static one, so that the pack leaves out
  # libLLVM.so (150 MB) and stays under the carry limit.
  codegen=$stage/kiln-codegen
  link=$(cd "$build" && ninja -t commands compiler/codegen/kiln-codegen | tail -1)
  llvm_dir=$(llvm-config-22 --libdir 2>/dev/null || echo /usr/lib/llvm-22/lib)
  zlib=$(ls /usr/lib/x86_64-linux-gnu/libz.so.1* | head -1)
  zstd=$(ls /usr/lib/x86_64-linux-gnu/libzstd.so.1* | head -1)
  link=$(echo "$link" | sed -E "s# -o compiler/codegen/kiln-codegen # -o $codegen #; s#[^ ]*/libLLVM[^ ]*\.so[^ ]*#$llvm_dir/libLLVMSupport.a $llvm_dir/libLLVMDemangle.a $zlib $zstd -lpthread#")
  (cd "$build" && eval "$link")
fi
for pair in "$kilnc=kilnc" "$codegen=kiln-codegen"; do
  tool=${pair%=*} name=${pair##*=}
  [[ -x $tool ]] || { echo "pack_build_scale: no $tool" >&2; exit 1; }
  cp -L "$tool" "$stage/pack/bin/$name"
  strip --strip-unneeded "$stage/pack/bin/$name"
  ldd "$tool" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*|libstdc++.so*|libgcc_s.so*|libz.so*|libzstd.so*) ;;
      *) cp -Ln "$lib" "$stage/pack/lib/" ;;
    esac
  done
done
# Abseil as a relocatable prefix: its CMake package finds the libraries
# relative to itself.
mkdir -p "$stage/pack/absl/include" "$stage/pack/absl/lib/x86_64-linux-gnu"
cp -r /usr/include/absl "$stage/pack/absl/include/"
cp -a /usr/lib/x86_64-linux-gnu/libabsl_* "$stage/pack/absl/lib/x86_64-linux-gnu/"
mkdir -p "$stage/pack/absl/lib/x86_64-linux-gnu/cmake"
cp -r /usr/lib/x86_64-linux-gnu/cmake/absl "$stage/pack/absl/lib/x86_64-linux-gnu/cmake/"
# xz: kilnc (static LLVM) and the libraries kiln-codegen loads are 270 MB
# unpacked; gzip left them over the carry limit.
tar -C "$stage" -cf - pack | xz -T2 -6 >"$dest/build_scale.tar.xz"
echo "pack_build_scale: $dest/build_scale.tar.xz ($(du -h "$dest/build_scale.tar.xz" | cut -f1))"
