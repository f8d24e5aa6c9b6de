#!/usr/bin/env bash
# On the GPU machine: compute-sanitizer's four tools (memcheck, racecheck,
# synccheck, initcheck) over every differential case's Kiln cubin, for each
# arch directory given (sm_90a: wgmma, TMA-free Hopper paths; sm_90: the
# ldmatrix/mma.sync/cp.async paths of sm_80-89, which is how they run on a
# Hopper GPU), and over the GPU tests and examples packed by
# tests/gpu/pack_gpu_tests.sh. A run is clean when the tool reports 0 errors (0
# hazards for racecheck) and the program exits 0.
#
#   tests/gpu/compute_sanitizer.sh OUT_DIR [BIN_DIR] ARCH=CUBIN_DIR...
#
# ARCH may also be `attention`, `attention_t06` or `attention_t06_host`, with
# a directory of bench/build_attention_cubins.sh's cubins (the bench
# kernel's, tutorial 06's with pointers or with host descriptors): they run
# Kiln-only through bench/attention_cubins.py --kiln-only; or
# `persistent_matmul` with bench/build_persistent_matmul_cubins.sh's
# (tutorial 09), through bench/persistent_matmul_cubins.py --kiln-only; or
# `attention_bwd` with bench/build_attention_bwd_cubins.sh's (tutorial 06's
# backward), through bench/attention_bwd_cubins.py --kiln-only; or
# `matmul_forms` with bench/matmul_forms_cubins.py --build's (real-world
# matmul forms), through its --kiln-only --small; or `matmul` with
# bench/build_matmul_cubins.sh's (tutorial 03's fixed configs), through
# bench/matmul_cubins.py --kiln-only at 512 and 768.
#
# e.g., after, here,
#   tests/gpu/build_differential.sh build/compiler/driver/kilnc .devbuild/diff_sm_90a sm_90a
#   tests/gpu/build_differential.sh build/compiler/driver/kilnc .devbuild/diff_sm_90 sm_90
#   tests/gpu/pack_gpu_tests.sh build .devbuild/bin
# run there:
#   tests/gpu/compute_sanitizer.sh $OUT/sanitize .devbuild/bin \
#     sm_90a=.devbuild/diff_sm_90a sm_90=.devbuild/diff_sm_90
#
# The differential cases run Kiln-only (tests/gpu/differential.py --kiln-only),
# so the reports are about Kiln's kernels, not Triton's. memcheck runs without
# its leak check there: PyTorch's caching allocator keeps its blocks to the
# end. OUT_DIR gets one log per (tool, target), results.json and results.md;
# the exit status is 1 unless every run is clean. PARALLEL (default 4) runs
# go at once.
set -uo pipefail
cd "$(dirname "$0")/../.."
[[ $# -ge 2 ]] || { sed -n '2,38p' "$0" >&2; exit 2; }
out=$1
shift
bin=""
if [[ $1 != *=* ]]; then
  bin=$(cd "$1" && pwd)
  shift
fi
mkdir -p "$out/logs"
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
tools=(memcheck racecheck synccheck initcheck)
export PYTHONUNBUFFERED=1
[[ -n $bin ]] && export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# One job per line: NAME|COMMAND (run with the tool's flags in front).
jobs=()
for pair in "$@"; do
  arch=${pair%%=*}
  dir=${pair#*=}
  case $arch in
    attention | attention_t06 | attention_t06_host) # bench/build_attention_cubins.sh's
      source=bench; [[ $arch == attention_t06* ]] && source=tutorial06${arch#attention_t06}
      jobs+=("${arch}|python3 bench/attention_cubins.py --kiln-only --source $source --cubins $dir --out $out/logs/$arch --batch 1 --heads 2 --sizes 384,1024") ;;
    attention_bwd) # bench/build_attention_bwd_cubins.sh's cubins
      jobs+=("${arch}|python3 bench/attention_bwd_cubins.py --kiln-only --cubins $dir --batch 1 --heads 2 --sizes 128,384") ;;
    matmul) # bench/build_matmul_cubins.sh's cubins
      jobs+=("${arch}|python3 bench/matmul_cubins.py --kiln-only --cubins $dir --out $out/logs/$arch --sizes 512,768") ;;
    matmul_forms) # bench/matmul_forms_cubins.py --build's cubins
      jobs+=("${arch}|python3 bench/matmul_forms_cubins.py --kiln-only --small --cubins $dir") ;;
    persistent_matmul) # bench/build_persistent_matmul_cubins.sh's cubins
      jobs+=("${arch}|python3 bench/persistent_matmul_cubins.py --kiln-only --cubins $dir --sizes 512") ;;
    *)
      jobs+=("differential_${arch}|python3 tests/gpu/differential.py --kiln-only --cubins $dir --out $out/logs/diff_${arch}") ;;
  esac
done
if [[ -n $bin ]]; then
  jobs+=("runtime_gpu_test|$bin/kiln_runtime_gpu_test")
  jobs+=("launch_gpu_test|$bin/kiln_launch_gpu_test")
  jobs+=("descriptor_gpu_test|$bin/kiln_descriptor_gpu_test")
  jobs+=("tutorials_gpu_test|$bin/kiln_tutorials_gpu_test")
  jobs+=("dot_flavours_gpu_test|$bin/kiln_dot_flavours_gpu_test")
  jobs+=("vector_add_example|$bin/vector_add --sizes=1,1000,1048579 --bench-n=0")
  jobs+=("softmax_example|$bin/softmax_demo 257 3000")
  jobs+=("consumer_example|$bin/consumer")
fi

run_one() {  # TOOL NAME COMMAND: one sanitizer run, its log, one summary line
  local tool=$1 name=$2 cmd=$3
  local log="$out/logs/${tool}-${name}.log"
  local flags=(--tool "$tool" --target-processes all --error-exitcode 97 --print-limit 100)
  [[ $tool == racecheck ]] && flags+=(--racecheck-report all)
  local start=$SECONDS
  # shellcheck disable=SC2086 # the command is a word list on purpose
  timeout 900 "$sanitizer" "${flags[@]}" $cmd >"$log" 2>&1
  local code=$?
  local errors
  errors=$(grep -oE "(ERROR SUMMARY: [0-9]+ error|RACECHECK SUMMARY: [0-9]+ hazard)" "$log" |
    grep -oE "[0-9]+" | awk '{s += $1} END {print s + 0}')
  local summaries
  summaries=$(grep -cE "ERROR SUMMARY|RACECHECK SUMMARY" "$log")
  local status=clean
  ((code != 0 || errors != 0 || summaries == 0)) && status="NOT CLEAN"
  local passed
  passed=$(grep -oE "^[0-9]+ passed, [0-9]+ failed|\[  PASSED  \] [0-9]+ tests?" "$log" | tail -1)
  printf '%s|%s|%s|%s|%s|%s|%s\n' "$tool" "$name" "$status" "$errors" "$code" \
    "$((SECONDS - start))" "${passed:-}"
}
export -f run_one
export out sanitizer

: >"$out/summary.txt"
for tool in "${tools[@]}"; do
  for job in "${jobs[@]}"; do
    printf '%s\0%s\0%s\0' "$tool" "${job%%|*}" "${job#*|}"
  done
done | xargs -0 -n 3 -P "${PARALLEL:-4}" bash -c 'run_one "$@"' _ >>"$out/summary.txt"
sort -t'|' -k2,2 -k1,1 -o "$out/summary.txt" "$out/summary.txt"

device=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
version=$("$sanitizer" --version 2>/dev/null | grep -oE "[0-9]{4}\.[0-9.]+" | head -1)
python3 - "$out" "$device" "$version" <<'EOF'
import datetime, json, sys
out, device, version = sys.argv[1:4]
runs = []
for line in open(f"{out}/summary.txt"):
    tool, name, status, errors, code, secs, passed = line.rstrip("\n").split("|")
    runs.append(dict(tool=tool, target=name, status=status, errors=int(errors), exit=int(code),
                     seconds=int(secs), passed=passed))
clean = all(r["status"] == "clean" for r in runs)
date = datetime.date.today().isoformat()
json.dump(dict(date=date, device=device, compute_sanitizer=version, clean=clean, runs=runs),
          open(f"{out}/results.json", "w"), indent=1)
with open(f"{out}/results.md", "w") as f:
    f.write(f"# compute-sanitizer over Kiln's GPU code ({device}, {date})\n\n"
             f"compute-sanitizer {version}; tests/gpu/compute_sanitizer.sh. "
             f"{'All clean.' if clean else 'NOT all clean.'}\n\n"
             "| target | tool | result | errors/hazards | exit | seconds | passed |\n|---|---|---|---|---|---|---|\n")
    for r in runs:
        f.write(f"| {r['target']} | {r['tool']} | {r['status']} | {r['errors']} | {r['exit']} | "
                f"{r['seconds']} | {r['passed']} |\n")
print(open(f"{out}/results.md").read())
sys.exit(0 if clean else 1)
EOF
