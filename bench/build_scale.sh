#!/usr/bin/env bash
# Build scale: builds one triton_kernel target of N variants of the matmul
# tutorial kernel (tests/kernels/tutorials/matmul.py) with the CMake rule,
# as a user's project would, and reports the wall time, each phase, the
# longest step that runs after the last kilnc compile (which nothing can
# overlap: the serial part of the build), and the binary's size. Then, on the
# same cubins, what the old embedding (hex arrays in one C++ file) costs.
#
#   bench/build_scale.sh [N ...]          (default: 64 512)
#
# N = 8 * S: 4 archs (80 86 89 90a) x S specializations x general/aligned.
# Environment: BUILD (Kiln's CMake build dir with kilnc and kiln-codegen;
# default build), JOBS (ninja -j; default nproc), EMBED (incbin, default, or
# hex), COMPRESS (zstd or empty), PTX (1, default: the PTX fallback; 0:
# NO_PTX), OUT (default /tmp/kiln-build-scale), CMAKE_ARGS (extra configure
# flags, e.g. -Dabsl_DIR=...). Needs cmake, ninja, a C++ compiler and Abseil
# (find_package(absl)), as Kiln's own build does; bench/pack_build_scale.sh
# and run_build_scale_packed.sh carry them to a machine without them.
# Results: OUT/N/report.json and a table on stdout.
set -euo pipefail
kiln=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${BUILD:-$kiln/build}" && pwd)
jobs=${JOBS:-$(nproc)}
embed=${EMBED:-incbin}
compress=${COMPRESS:-}
ptx=${PTX:-1}
out=${OUT:-/tmp/kiln-build-scale}
cuda=${CUDA_HOME:-/usr/local/cuda}
counts=("$@")
[[ ${#counts[@]} -gt 0 ]] || counts=(64 512)
for tool in compiler/driver/kilnc compiler/codegen/kiln-codegen; do
  [[ -x $build/$tool ]] || { echo "build_scale: no $build/$tool (build it first)" >&2; exit 1; }
done

# S distinct specializations: dtype x tile shape x BK x GROUP x ACTIVATION,
# in the positional form (no unit-stride variant: general and aligned only).
specializations() {
  local s=$1 n=0
  for act in "''" "'relu'" "'leaky_relu'" "'none'"; do
    for group in 8 4; do
      for bk in 32 64; do
        for tile in "64, 64" "128, 64" "64, 128" "128, 128"; do
          for t in fp16 bf16; do
            ((n < s)) || return 0
            echo "    \"*$t, *$t, *$t, i32, i32, i32, i32, i32, i32, i32, i32, i32, $tile, $bk, $group, $act\""
            n=$((n + 1))
          done
        done
      done
    done
  done
}

for count in "${counts[@]}"; do
  if ((count % 8 != 0 || count < 8 || count > 1024)); then
    echo "build_scale: N must be a multiple of 8 in [8, 1024], got $count" >&2
    exit 2
  fi
  s=$((count / 8))
  project=$out/$count
  rm -rf "$project"
  mkdir -p "$project/src"
  options=""
  [[ $ptx == 0 ]] && options+=" NO_PTX"
  [[ -n $compress ]] && options+=" COMPRESS $compress"
  cat >"$project/src/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(kiln_build_scale CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(absl REQUIRED)
set(CUDA_HOME "$cuda")
add_subdirectory("$kiln/runtime" kiln_runtime)
add_executable(kilnc IMPORTED)
set_target_properties(kilnc PROPERTIES IMPORTED_LOCATION "$build/compiler/driver/kilnc")
add_executable(kiln-codegen IMPORTED)
set_target_properties(kiln-codegen PROPERTIES IMPORTED_LOCATION "$build/compiler/codegen/kiln-codegen")
include("$kiln/rules/triton_kernel.cmake")
triton_kernel(
  NAME mm
  SRCS "$kiln/tests/kernels/tutorials/matmul.py"
  KERNEL matmul_kernel
  ARCHS 80 86 89 90a
  EMBED $embed$options
  SPECIALIZATIONS
$(specializations "$s")
)
add_executable(mm_demo main.cc)
target_link_libraries(mm_demo PRIVATE mm)
CMAKE
  cat >"$project/src/main.cc" <<'CC'
#include <cstdio>

#include "mm.h"

int main() {
  const kiln::KernelInfo& info = kernels::matmul_kernel_info();
  int images = 0;
  for (int v = 0; v < info.num_variants; ++v) images += info.variants[v].num_images;
  std::printf("%s: %d variants, %d images\n", info.name, info.num_variants, images);
  return 0;
}
CC
  echo "== $count variants ($s specializations x 4 archs x 2), EMBED=$embed COMPRESS=${compress:-none} PTX=$ptx, -j$jobs"
  # shellcheck disable=SC2086
  cmake -S "$project/src" -B "$project/build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} \
    >"$project/configure.log"
  # The runtime is not part of what is measured.
  ninja -C "$project/build" kiln_runtime >"$project/runtime.log"
  start=$(date +%s.%N)
  ninja -C "$project/build" -j"$jobs" mm_demo >"$project/build.log"
  end=$(date +%s.%N)
  "$project/build/mm_demo"

  # The old embedding on the same cubins: kiln-codegen --embed hex, and the
  # compile of its one source with the flags of mm.cc.
  hex=$project/hex
  mkdir -p "$hex"
  # Into a file first: `grep -m1` on the pipe would stop ninja with SIGPIPE
  # once its output outgrows the pipe (512 variants), failing the pipeline.
  ninja -C "$project/build" -t commands mm >"$project/commands.txt"
  codegen=$(grep -m1 'kiln-codegen' "$project/commands.txt" | sed 's/^.*&& //')
  hex_codegen=$(echo "$codegen" | sed -E "s# --embed [a-z]+ --asm-prefix [^ ]+ --asm-shards [0-9]+##; s# --compress [a-z]+##; s#--out-header [^ ]+#--out-header $hex/mm.h#; s#--out-source [^ ]+#--out-source $hex/mm.cc#")
  compile=$(grep -m1 -E '(-c|-o) .*mm\.kiln/include/mm\.cc|mm\.kiln/include/mm\.cc.* -c' "$project/commands.txt" | sed 's/^.*&& //')
  t0=$(date +%s.%N)
  (cd "$project/build" && eval "$hex_codegen --embed hex")
  t1=$(date +%s.%N)
  hex_compile=$(echo "$compile" | sed -E "s#-o [^ ]+#-o $hex/mm.cc.o#; s#-MF [^ ]+#-MF $hex/mm.cc.o.d#; s#-c [^ ]+mm\.kiln/include/mm\.cc#-c $hex/mm.cc#; s#-I[^ ]*mm\.kiln/include#-I$hex#")
  (cd "$project/build" && eval "$hex_compile")
  t2=$(date +%s.%N)

  python3 - "$project" "$start" "$end" "$t0" "$t1" "$t2" "$count" "$jobs" "$embed" "${compress:-none}" "$ptx" <<'PY'
import json, os, re, subprocess, sys
project, start, end, t0, t1, t2 = sys.argv[1], *map(float, sys.argv[2:7])
count, jobs, embed, compress, ptx = int(sys.argv[7]), int(sys.argv[8]), *sys.argv[9:]
build = os.path.join(project, "build")
# .ninja_log: start end mtime output hash, one line per output; this
# build's edges are those ending after the runtime build.
edges = {}
with open(os.path.join(build, ".ninja_log")) as log:
    for line in log:
        if line.startswith("#"):
            continue
        s, e, _, output, h = line.split("\t")
        edges.setdefault((int(s), int(e), h.strip()), []).append(output)
def kind(outputs):
    if any(o.endswith((".cubin", "configs.txt")) for o in outputs): return "kilnc"
    if any(o.endswith("mm.kiln/include/mm.h") for o in outputs): return "codegen"
    if any(re.search(r"images_\d+\.cc\.o$", o) for o in outputs): return "shard"
    if any(o.endswith("mm.kiln/include/mm.cc.o") for o in outputs): return "source"
    if any(o.endswith("libmm.a") for o in outputs): return "archive"
    if any(o.endswith("mm_demo") for o in outputs): return "link"
    if any(o.endswith("main.cc.o") for o in outputs): return "main"
    return "other"
steps = [(kind(o), s / 1000, e / 1000) for (s, e, _), o in edges.items()]
build_steps = [st for st in steps if st[0] != "other"]
kilnc = [st for st in build_steps if st[0] == "kilnc"]
last_kilnc = max(e for _, _, e in kilnc)
serial = [st for st in build_steps if st[0] in ("codegen", "source", "shard", "archive", "link")]
longest = max(serial, key=lambda st: st[2] - st[1])
wall = end - start
def dur(k):
    d = [e - s for kk, s, e in build_steps if kk == k]
    return max(d) if d else 0.0
binary = os.path.join(build, "mm_demo")
size = subprocess.run(["size", "-A", binary], capture_output=True, text=True).stdout
rodata = sum(int(l.split()[1]) for l in size.splitlines() if l.startswith(".rodata"))
images = 0
for root, _, files in os.walk(os.path.join(build, "mm.kiln")):
    for f in files:
        if f.endswith((".cubin", ".ptx")):
            images += os.path.getsize(os.path.join(root, f))
report = {
    "variants": count, "jobs": jobs, "embed": embed, "compress": compress, "ptx": ptx == "1",
    "wall_s": round(wall, 2),
    "kilnc_steps": len(kilnc),
    "kilnc_longest_s": round(dur("kilnc"), 2),
    "kilnc_sum_s": round(sum(e - s for _, s, e in kilnc), 1),
    # Everything after the last kilnc compile: codegen, then the compiles of
    # the source and the image shards in parallel, the archive, the link.
    "after_last_kilnc_s": round(max(e for _, _, e in build_steps) - last_kilnc, 2),
    "codegen_s": round(dur("codegen"), 2),
    "source_compile_s": round(dur("source"), 2),
    "shard_compile_longest_s": round(dur("shard"), 2),
    "link_s": round(dur("link"), 2),
    "longest_serial_step": longest[0],
    "longest_serial_step_s": round(longest[2] - longest[1], 2),
    "serial_share_pct": round(100 * (longest[2] - longest[1]) / wall, 2),
    "image_bytes": images,
    "binary_bytes": os.path.getsize(binary),
    "binary_rodata_bytes": rodata,
    "hex_codegen_s": round(t1 - t0, 2),
    "hex_source_bytes": os.path.getsize(os.path.join(project, "hex", "mm.cc")),
    "hex_compile_s": round(t2 - t1, 2),
}
json.dump(report, open(os.path.join(project, "report.json"), "w"), indent=1)
for k, v in report.items():
    print(f"  {k:28} {v}")
PY
done
