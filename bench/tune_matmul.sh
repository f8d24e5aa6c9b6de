#!/usr/bin/env bash
# Offline autotuning, end to end (docs/usage.md, "Tuning"; issue 16's
# acceptance): upstream Triton's tutorial 03 matmul, its file unchanged (its
# own @triton.autotune config list and key; M=N=K 256..8192 and M=16/64,
# N=K=4096), and a memory-bound layer norm (kernels/layernorm_autotuned.py,
# BLOCK/num_warps configs; 4096 rows, N 512..16384).
#
#   bench/tune_matmul.sh fetch                      # here: the tutorial, into .devbuild/.upstream/
#   bench/tune_matmul.sh build [BUILD_DIR] [DEST]   # here: fetch, build and pack
#   bench/tune_matmul.sh pack [BUILD_DIR] [DEST]    # here: pack what `build` built
#   bench/tune_matmul.sh run DEST [OUT]             # on the GPU machine, one command
#
# `fetch` puts upstream's python/tutorials/03-matrix-multiplication.py
# (commit 6cc4505, sha256 f88a9506...) into the git-ignored
# .devbuild/.upstream/ (never into the tree): from a copy already there or in
# .upstream/, else `git show` in $KILN_TRITON_GIT_DIR (a clone of
# triton-lang/triton or triton-lang/Triton-to-tile-IR), else by curl.
#
# `build` configures BUILD_DIR (default build) with -DKILN_TUNE_BENCH=ON,
# builds the tuners tune_matmul_tune and tune_layernorm_tune and
# libkiln_tune_bench.so (bench/tune_bridge.cc), and packs them with their
# libraries, the tutorial and the list of embedded tables into DEST (default
# .devbuild/tune). Tables under bench/tuning/ (<gpu>_matmul.json,
# <gpu>_layernorm.json) are embedded. JOBS (default 2) build jobs.
#
# `run` (about 5 minutes of an H100; no network needed):
#   1. both tuners over bench/tuning/*_spec.json, three rounds per shape
#      (--rounds 3: the configs timed in turn, each ranked by the median of
#      its rounds): OUT/tuning/<gpu>_matmul.json and <gpu>_layernorm.json
#      (<gpu>: h100, h200, ... from nvidia-smi), progress in OUT/logs/;
#   2. bench/tune_compare.py: per shape, upstream Triton autotuning the same
#      unchanged file, the launcher's default overload and every compiled
#      config, checked against PyTorch and then timed as do_bench times,
#      interleaved in one process. Where no embedded table covers this GPU,
#      the default overload tunes at run time on its first call (the first
#      pass); otherwise the table decides (the acceptance run);
#   3. OUT/results/<date>_<gpu>_tune/results.{json,md}: every figure and the
#      acceptance (default within 3% of the best config, >= 0.97x Triton).
#   TUNE_SKIP=1 skips step 1 (the second run below).
# Then, here: cp OUT/tuning/*.json bench/tuning/; cp -r OUT/results/* bench/results/;
# commit; `build` again (the new tables embedded) and `TUNE_SKIP=1 ... run`
# again: the second run's results are the acceptance with the committed tables.
set -euo pipefail
cd "$(dirname "$0")/.."

TUTORIAL_COMMIT=6cc4505027d7b39fe18a44a7f89085b8babb7400
TUTORIAL_SHA256=f88a9506694c58d483ad3cdb4aa672c23df0300803bcfaca13b9396184825008
TUTORIAL_PATH=python/tutorials/03-matrix-multiplication.py
tutorial=.devbuild/.upstream/03-matrix-multiplication.py

usage() {
  sed -n '2,42p' "$0" >&2
  exit 2
}
[[ $# -ge 1 ]] || usage
mode=$1
shift

sha_ok() { [[ -f $1 ]] && [[ $(sha256sum "$1" | cut -d' ' -f1) == "$TUTORIAL_SHA256" ]]; }

fetch() {
  mkdir -p "$(dirname "$tutorial")"
  if sha_ok "$tutorial"; then
    return 0
  fi
  local tmp="$tutorial.part"
  if sha_ok .upstream/03-matrix-multiplication.py; then
    cp .upstream/03-matrix-multiplication.py "$tmp"
  elif [[ -n ${KILN_TRITON_GIT_DIR:-} ]] &&
    git --git-dir="$KILN_TRITON_GIT_DIR" show "$TUTORIAL_COMMIT:$TUTORIAL_PATH" >"$tmp" 2>/dev/null; then
    :
  else
    curl -fsSL -o "$tmp" \
      "https://raw.githubusercontent.com/triton-lang/Triton-to-tile-IR/$TUTORIAL_COMMIT/$TUTORIAL_PATH" || true
  fi
  if ! sha_ok "$tmp"; then
    rm -f "$tmp"
    echo "tune_matmul: cannot get upstream's tutorial 03 (commit ${TUTORIAL_COMMIT:0:7}, sha256 ${TUTORIAL_SHA256:0:8}...):" \
      "put it at $tutorial, or set KILN_TRITON_GIT_DIR to a clone's git directory" >&2
    exit 1
  fi
  mv "$tmp" "$tutorial"
  echo "tune_matmul: fetched $tutorial"
}

case "$mode" in
  fetch)
    fetch
    ;;
  build)
    build=${1:-build}
    dest=${2:-.devbuild/tune}
    fetch
    export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_TUNE_BENCH=ON \
      -DKILN_TUNE_MATMUL_TUTORIAL="$PWD/$tutorial" >/dev/null
    cmake --build "$build" -j"${JOBS:-2}" --target tune_matmul_tune tune_layernorm_tune kiln_tune_bench
    exec "$0" pack "$build" "$dest"
    ;;
  pack)
    build=${1:-build}
    dest=${2:-.devbuild/tune}
    fetch
    rm -rf "$dest"
    for binary in bench/tune_matmul_tune bench/tune_layernorm_tune bench/libkiln_tune_bench.so; do
      bench/pack_binary.sh "$build/$binary" "$dest"
    done
    mkdir -p "$dest/upstream"
    cp "$tutorial" "$dest/upstream/"
    # What each config directory compiled and skipped (config<K>.error: too
    # much shared memory for sm_90a, as Triton's autotuner skips it).
    for dir in "$build"/bench/tune_matmul.kiln/sm_90a/*_autotune; do
      to="$dest/configs/$(basename "$dir")"
      mkdir -p "$to"
      cp "$dir/configs.txt" "$to/"
      cp "$dir"/*.error "$to/" 2>/dev/null || true
    done
    (ls bench/tuning/*_matmul.json bench/tuning/*_layernorm.json 2>/dev/null || true) >"$dest/embedded_tables.txt"
    # Standalone: with DEST/lib on the path, every library resolves, and those
    # from outside DEST are the C/C++ runtime the GPU machine has.
    libs="$(cd "$dest" && pwd)/lib"
    for binary in tune_matmul_tune tune_layernorm_tune libkiln_tune_bench.so; do
      foreign=$(LD_LIBRARY_PATH="$libs" ldd "$dest/$binary" | awk -v libs="$libs/" '
        /not found/ {print; next}
        $2 == "=>" && $3 !~ /\/lib(c|m|dl|rt|pthread|stdc\+\+|gcc_s)\.so|ld-linux/ && index($3, libs) != 1 {print}')
      if [[ -n $foreign ]]; then
        echo "tune_matmul: $dest/$binary is not standalone:" >&2
        echo "$foreign" >&2
        exit 1
      fi
    done
    echo "tune_matmul: packed into $dest ($(du -sh "$dest" | cut -f1)); embedded tables: $(wc -l <"$dest/embedded_tables.txt")"
    ;;
  run)
    [[ $# -ge 1 ]] || usage
    dest=$1
    out=${2:-${OUT:-bench-out}}
    mkdir -p "$out/logs" "$out/tuning"
    export LD_LIBRARY_PATH="$(cd "$dest" && pwd)/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    for binary in tune_matmul_tune tune_layernorm_tune libkiln_tune_bench.so upstream/03-matrix-multiplication.py; do
      [[ -e $dest/$binary ]] || { echo "tune_matmul: no $dest/$binary; run '$0 build' first" >&2; exit 1; }
    done
    name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv |
      tee "$out/logs/nvidia-smi.txt" || true
    gpu=$(echo "$name" | tr 'A-Z' 'a-z' | grep -o '[a-z][0-9]\{2,4\}' | head -1)
    gpu=${gpu:-gpu}
    # TUNE_QUICK=1: 5 ms of warm-up and 20 ms of timed launches per
    # measurement instead of do_bench's 25 and 100, one tuner round.
    tune_flags=(--rounds "${TUNE_ROUNDS:-3}")
    compare_flags=()
    if [[ ${TUNE_QUICK:-0} == 1 ]]; then
      tune_flags=(--warmup-ms 5 --rep-ms 20 --rounds 1)
      compare_flags=(--quick)
    fi
    start=$(date +%s)
    status=0
    # TUNE_SKIP=1: no tuner, only the comparison (the acceptance run, with
    # the tables a first run measured now embedded).
    kernels=(matmul layernorm)
    [[ ${TUNE_SKIP:-0} == 1 ]] && kernels=()
    summaries=()
    for kernel in "${kernels[@]}"; do
      "$dest/tune_${kernel}_tune" --spec "bench/tuning/${kernel}_spec.json" --out "$out/tuning/${gpu}_${kernel}.json" \
        "${tune_flags[@]}" 2>"$out/logs/${gpu}_${kernel}_tune.log" | tee "$out/logs/${gpu}_${kernel}_tune.txt" ||
        { status=1; echo "tune_matmul: the $kernel tuner failed:"; tail -5 "$out/logs/${gpu}_${kernel}_tune.log"; }
      echo "tune_matmul: tuned $kernel at $(( $(date +%s) - start )) s"
      summaries+=(--tuner-summary "$out/logs/${gpu}_${kernel}_tune.txt")
    done
    result_dir="$out/results/$(date +%Y-%m-%d)_${gpu}_tune"
    mkdir -p "$result_dir"
    PYTHONUNBUFFERED=1 python3 bench/tune_compare.py --lib "$dest/libkiln_tune_bench.so" \
      --tutorial "$dest/upstream/03-matrix-multiplication.py" --out "$result_dir" \
      --runtime-tuning-without-table "${compare_flags[@]}" "${summaries[@]}" \
      2>&1 | tee "$out/logs/tune_compare.txt" || status=$?
    cp "$dest/embedded_tables.txt" "$out/logs/" 2>/dev/null || true
    echo "tune_matmul: done in $(( $(date +%s) - start )) s; tables: $out/tuning/, results: $result_dir"
    exit $status
    ;;
  *)
    usage
    ;;
esac
