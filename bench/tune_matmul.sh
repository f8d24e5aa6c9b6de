#!/usr/bin/env bash
# Offline autotuning, end to end (docs/usage.md, "Tuning"): a tutorial-03-style
# matmul (kernels/matmul_autotuned.py, M=N=K 256..8192 and M=16/64, N=K=4096)
# and a memory-bound layer norm (kernels/layernorm_autotuned.py, 4096 rows,
# N 512..16384), both with @triton.autotune config lists.
#
#   bench/tune_matmul.sh build [BUILD_DIR] [DEST]   # here: build and pack
#   bench/tune_matmul.sh run DEST [OUT]             # on the GPU machine
#
# `build` configures BUILD_DIR (default build) with -DKILN_TUNE_BENCH=ON,
# builds the tuners tune_matmul_tune and tune_layernorm_tune and tune_bench,
# and packs them with their libraries into DEST (default .devbuild/tune).
# Tables under bench/tuning/ (*_matmul.json, *_layernorm.json) are embedded.
#
# `run` (about 2-3 minutes of GPU time on an H100):
#   1. runs both tuners over bench/tuning/*_spec.json, writing
#      OUT/<gpu>_matmul.json and OUT/<gpu>_layernorm.json (<gpu>: h100, h200),
#      their progress into OUT/<gpu>_*_tune.log, summaries into *_tune.txt;
#   2. runs bench/tune_compare.py: the launchers' default overload, every
#      config, and upstream Triton autotuning the same files; the default
#      overload uses the embedded table for this GPU when the build has one,
#      else (--runtime-tuning) measures on its first call, the same choice;
#   3. prints the table and whether the acceptance holds; OUT/tune_compare.json.
# Then, here: copy OUT/<gpu>_*.json to bench/tuning/, commit, run `build`
# again, and `run` once more to see the embedded tables at work.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  sed -n '2,25p' "$0" >&2
  exit 2
}
[[ $# -ge 1 ]] || usage
mode=$1
shift

case "$mode" in
  build)
    build=${1:-build}
    dest=${2:-.devbuild/tune}
    export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_TUNE_BENCH=ON >/dev/null
    nice -n 19 cmake --build "$build" -j2 --target tune_matmul_tune tune_layernorm_tune tune_bench
    rm -rf "$dest"
    for binary in bench/tune_matmul_tune bench/tune_layernorm_tune bench/tune_bench; do
      bench/pack_binary.sh "$build/$binary" "$dest"
    done
    ls bench/tuning/*_matmul.json bench/tuning/*_layernorm.json 2>/dev/null \
      > "$dest/embedded_tables.txt" || true
    echo "tune_matmul: packed into $dest; embedded tables: $(wc -l < "$dest/embedded_tables.txt")"
    ;;
  run)
    [[ $# -ge 1 ]] || usage
    dest=$1
    out=${2:-${OUT:-bench-out}}
    mkdir -p "$out"
    export LD_LIBRARY_PATH="$(cd "$dest" && pwd)/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    for binary in tune_matmul_tune tune_layernorm_tune tune_bench; do
      [[ -x $dest/$binary ]] || { echo "tune_matmul: no $dest/$binary; run '$0 build' first" >&2; exit 1; }
    done
    name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv || true
    gpu=$(echo "$name" | tr 'A-Z' 'a-z' | grep -o '[a-z][0-9]\{2,4\}' | head -1)
    gpu=${gpu:-gpu}
    # TUNE_QUICK=1: 5 ms of warm-up and 20 ms of timed launches per
    # measurement instead of do_bench's 25 and 100 (about half the GPU time).
    tune_flags=()
    compare_flags=()
    if [[ ${TUNE_QUICK:-0} == 1 ]]; then
      tune_flags=(--warmup-ms 5 --rep-ms 20)
      compare_flags=(--quick)
    fi
    start=$(date +%s)
    "$dest/tune_matmul_tune" --spec bench/tuning/matmul_spec.json --out "$out/${gpu}_matmul.json" \
      "${tune_flags[@]}" 2> >(tee "$out/${gpu}_matmul_tune.log" >&2) | tee "$out/${gpu}_matmul_tune.txt"
    "$dest/tune_layernorm_tune" --spec bench/tuning/layernorm_spec.json --out "$out/${gpu}_layernorm.json" \
      "${tune_flags[@]}" 2> >(tee "$out/${gpu}_layernorm_tune.log" >&2) | tee "$out/${gpu}_layernorm_tune.txt"
    echo "tune_matmul: tuning took $(( $(date +%s) - start )) s"
    flags=("${compare_flags[@]}")
    if ! grep -q "${gpu}_" "$dest/embedded_tables.txt" 2>/dev/null; then
      echo "tune_matmul: no table for $gpu is embedded; the default overload tunes at run time"
      flags+=(--runtime-tuning)
    fi
    PYTHONUNBUFFERED=1 python3 bench/tune_compare.py --bench "$dest/tune_bench" --out "$out" "${flags[@]}" \
      | tee "$out/tune_compare.txt"
    echo "tune_matmul: done in $(( $(date +%s) - start )) s"
    ;;
  *)
    usage
    ;;
esac
