#!/usr/bin/env bash
# The one command to run on the GPU machine for differential fuzzing
# (tests/gpu/fuzz_differential.py): compiles whatever cubins the prepared set
# lacks (with the kilnc packed by bench/pack_kilnc.sh, if carried), runs
# every kernel through Kiln and Triton, then compute-sanitizer's four tools
# over the subset's sm_90 and sm_90a cubins.
#
#   tests/gpu/run_fuzz_differential_gpu.sh [DEST] [OUT]
#       DEST: the prepared set (default .devbuild/fuzzdiff); OUT: default $OUT
#   WORKERS=N   differential worker processes (default 14)
#   DEADLINE=S  no differential case starts after S seconds (default 150);
#               the sanitizer runs take at most 240 s more, all at once
#
# Here, before (see docs/reliability.md):
#   python3 tests/gpu/fuzz_differential.py prepare --count 520 --dest .devbuild/fuzzdiff
#   python3 tests/gpu/fuzz_differential.py compile --kilnc build/compiler/driver/kilnc --jobs 2
#   bench/pack_kilnc.sh   # only if some cubins are left to compile there
# and carry .devbuild/fuzzdiff (and .devbuild-kilnc).
#
# OUT receives report.txt, report.json, repros.tar.gz (failures only),
# sanitize.txt, compile.txt and sanitize-logs.tar.gz. Exits non-zero when a
# case is not ok or a sanitizer is not clean.
set -uo pipefail
cd "$(dirname "$0")/../.."
dest=${1:-.devbuild/fuzzdiff}
out=${2:-${OUT:-fuzzdiff-out}}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
status=0

if [[ -f .devbuild-kilnc/kilnc.tar.xz ]]; then
  mkdir -p /tmp/kiln-kilnc && tar -C /tmp/kiln-kilnc -xJf .devbuild-kilnc/kilnc.tar.xz
  export LD_LIBRARY_PATH=/tmp/kiln-kilnc/kilnc/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  python3 tests/gpu/fuzz_differential.py compile --kilnc /tmp/kiln-kilnc/kilnc/kilnc --dest "$dest" \
    --jobs "$(nproc)" >"$out/compile.txt" 2>&1 || status=1
  tail -n 3 "$out/compile.txt"
fi
echo "run_fuzz_differential_gpu: [$((SECONDS - start)) s] differential run"
python3 tests/gpu/fuzz_differential.py run --dest "$dest" --out "$out" --workers "${WORKERS:-14}" \
  --deadline "${DEADLINE:-150}" \
  >"$out/run.txt" 2>&1 || status=1
head -n 4 "$out/run.txt"
grep -E "^(MISMATCH|ERROR|TRITON-ERROR|NOT BUILT|SKIPPED) " "$out/run.txt" | head -n 40
echo "run_fuzz_differential_gpu: [$((SECONDS - start)) s] compute-sanitizer"
python3 tests/gpu/fuzz_differential.py sanitize --dest "$dest" --out "$out" || status=1
tar -C "$out/work" -czf "$out/sanitize-logs.tar.gz" $(cd "$out/work" && ls sanitize-*.log 2>/dev/null) 2>/dev/null
rm -rf "$out/work"
echo "run_fuzz_differential_gpu: [$((SECONDS - start)) s] done (exit $status)"
exit $status
