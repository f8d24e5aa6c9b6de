#!/usr/bin/env bash
# Packs kilnc with every shared library it loads (LLVM, MLIR and theirs) into
# DEST/kilnc.tar.xz, for bench/compile_time.py on the GPU machine, which has
# no LLVM. xz keeps the pack under the device tool's 64 MiB carry limit.
#
#   bench/pack_kilnc.sh [KILNC] [DEST]    (defaults: build/compiler/driver/kilnc, .devbuild-kilnc)
set -euo pipefail
cd "$(dirname "$0")/.."
kilnc=${1:-build/compiler/driver/kilnc}
dest=${2:-.devbuild-kilnc}
[[ -x $kilnc ]] || { echo "pack_kilnc: no executable $kilnc" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/kilnc/lib" "$dest"
cp -L "$kilnc" "$stage/kilnc/"
strip --strip-unneeded "$stage/kilnc/kilnc"
# The C/C++ runtime comes from the GPU machine itself.
ldd "$kilnc" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;
    *) cp -L "$lib" "$stage/kilnc/lib/" ;;
  esac
done
tar -C "$stage" -cf - kilnc | xz -9 -T"$(nproc)" >"$dest/kilnc.tar.xz"
echo "pack_kilnc: $dest/kilnc.tar.xz ($(du -h "$dest/kilnc.tar.xz" | cut -f1)), $(ls "$stage/kilnc/lib" | wc -l) libraries"
