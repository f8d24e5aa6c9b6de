#!/usr/bin/env bash
# Remote execution / remote caching against BuildGrid (an REAPI server from
# PyPI), on loopback: proves the triton_kernel actions hermetic.
#
#   scripts/remote_build_test.sh [WORK_DIR]      (default: build/remote-exec)
#
# 1. pip-installs BuildGrid into WORK_DIR/venv and starts `bgd server` on
#    127.0.0.1:$PORT (default 50051) with a CAS, an action cache and, when a
#    worker is available, the Execution and Bots services.
# 2. Builds the examples' and tests/e2e's triton_kernel targets (their
#    cubins, PTX, metadata, generated sources and libraries) from a clean
#    output base, WORK_DIR/base1: remotely executed with --remote_executor
#    when a BuildBox worker (buildbox-worker + buildbox-run-hosttools) is on
#    PATH, else locally with --remote_cache, which uploads every result.
# 3. Builds the same from a second clean output base, WORK_DIR/base2, and
#    requires every action to be a remote cache hit (none executed) and every
#    output byte-identical to the first build's.
# Writes WORK_DIR/summary.txt. Exit status 0 when both hold.
#
# Environment: BAZEL (default bazel), PORT, JOBS (default 2), TARGETS (a
# query expression; default: the triton_kernel targets of //examples and
# //tests/e2e, without the manual ones).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mkdir -p "${1:-build/remote-exec}" && cd "${1:-build/remote-exec}" && pwd)
bazel_cmd=${BAZEL:-bazel}
port=${PORT:-50051}
jobs=${JOBS:-2}
summary=$work/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }

say "remote_build_test $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -n), $($bazel_cmd --version 2>/dev/null | head -1)"
if [[ ! -x $work/venv/bin/bgd ]]; then
  python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install --quiet buildgrid
fi
say "BuildGrid $("$work/venv/bin/pip" show buildgrid | awk '/^Version/ {print $2}') ($work/venv)"

# A worker: BuildBox's, the only kind BuildGrid ships none of since it dropped
# its Python bot. Neither PyPI nor Debian has BuildBox; a user with a build of
# it puts buildbox-worker and buildbox-run-hosttools on PATH.
mode=cache
if command -v buildbox-worker >/dev/null && command -v buildbox-run-hosttools >/dev/null; then
  mode=execution
fi

rm -rf "$work/cas" "$work/bgd.db"
mkdir -p "$work/cas"
{
  cat <<YAML
description: Kiln's remote build test (scripts/remote_build_test.sh)
server:
  - !channel
    address: "127.0.0.1:$port"
    insecure-mode: true
authorization:
  method: none
storages:
  - !disk-storage &cas-storage
    path: $work/cas
caches:
  - !lru-action-cache &action-cache
    storage: *cas-storage
    max-cached-refs: 100000
    allow-updates: true
    cache-failed-actions: false
YAML
  if [[ $mode == execution ]]; then
    cat <<YAML
connections:
  - !sql-connection &sql
    connection-string: sqlite:///$work/bgd.db
schedulers:
  - !sql-scheduler &scheduler
    sql: *sql
    action-cache: *action-cache
    storage: *cas-storage
YAML
  fi
  cat <<YAML
instances:
  - name: ""
    services:
      - !action-cache
        cache: *action-cache
      - !cas
        storage: *cas-storage
      - !bytestream
        storage: *cas-storage
YAML
  if [[ $mode == execution ]]; then
    cat <<YAML
      - !execution
        scheduler: *scheduler
YAML
  fi
} >"$work/bgd.yml"

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for base in base1 base2; do
    [[ -d $work/$base ]] && $bazel_cmd --output_base="$work/$base" shutdown 2>/dev/null || true
  done
}
trap cleanup EXIT
"$work/venv/bin/bgd" server start "$work/bgd.yml" >"$work/bgd.log" 2>&1 &
pids+=($!)
for _ in $(seq 60); do
  if "$work/venv/bin/bgd" capabilities --remote "http://127.0.0.1:$port" >/dev/null 2>&1; then break; fi
  sleep 1
done
if ! "$work/venv/bin/bgd" capabilities --remote "http://127.0.0.1:$port" >"$work/capabilities.txt" 2>&1; then
  say "FAIL: BuildGrid did not come up; see $work/bgd.log"
  tail -20 "$work/bgd.log"
  exit 1
fi
remote_flags=(--remote_instance_name= --remote_timeout=600)
if [[ $mode == execution ]]; then
  buildbox-casd --bind "127.0.0.1:$((port + 1))" --cas-remote "http://127.0.0.1:$port" \
    "$work/worker-cache" >"$work/casd.log" 2>&1 &
  pids+=($!)
  buildbox-worker --bots-remote "http://127.0.0.1:$port" --cas-remote "http://127.0.0.1:$((port + 1))" \
    --buildbox-run buildbox-run-hosttools --platform OSFamily=linux kiln-worker >"$work/worker.log" 2>&1 &
  pids+=($!)
  remote_flags+=(--remote_executor="grpc://127.0.0.1:$port" --spawn_strategy=remote
                 --remote_default_exec_properties=OSFamily=linux)
  say "mode: remote execution (BuildGrid Execution + buildbox-worker with buildbox-run-hosttools)"
else
  remote_flags+=(--remote_cache="grpc://127.0.0.1:$port")
  say "mode: remote cache only. No worker: BuildGrid $("$work/venv/bin/pip" show buildgrid | awk '/^Version/ {print $2}')'s CLI has no bot ($("$work/venv/bin/bgd" --help | awk '/^Commands:/ {p=1; next} p && NF {printf "%s ", $1}')), and buildbox-worker/buildbox-run-hosttools are on neither PyPI nor Debian ($(. /etc/os-release; echo "$PRETTY_NAME"): 'apt-cache search buildbox' finds $(apt-cache search buildbox 2>/dev/null | wc -l) packages)"
fi

query=${TARGETS:-"kind('triton_kernel_codegen|cc_library', attr(generator_function, triton_kernel, //examples/... + //tests/e2e/...)) except attr(tags, manual, //tests/e2e/...)"}
targets=$($bazel_cmd --output_base="$work/base1" query "$query" 2>"$work/query.log" | sort)
if [[ -z $targets ]]; then
  say "FAIL: no targets from query: $query"
  cat "$work/query.log"
  exit 1
fi
say "targets ($(wc -w <<<"$targets")): $(tr '\n' ' ' <<<"$targets")"
groups=--output_groups=+cubins,+ptx,+metadata,+embedded

build() {
  local base=$1
  rm -rf "$work/$base/execroot" 2>/dev/null || true
  local start end
  start=$(date +%s)
  if ! nice -n 19 $bazel_cmd --output_base="$work/$base" build --jobs="$jobs" "${remote_flags[@]}" \
      "$groups" $targets >"$work/$base.log" 2>&1; then
    say "FAIL: the build in $base failed; the end of $work/$base.log:"
    tail -30 "$work/$base.log" | tee -a "$summary"
    exit 1
  fi
  end=$(date +%s)
  say "$base: $((end - start)) s; $(grep -E '^INFO: [0-9]+ processes' "$work/$base.log" | tail -1)"
  # Every output file of the targets, with its digest.
  (cd "$($bazel_cmd --output_base="$work/$base" info "${remote_flags[@]}" bazel-bin 2>/dev/null)" &&
     find . -path ./external -prune -o -type f \( -path './examples/*' -o -path './tests/e2e/*' \) \
       -newer "$work/bgd.yml" -print0 | sort -z | xargs -0 sha256sum) >"$work/$base.sha256"
}

build base1
build base2
failures=0
processes=$(grep -E '^INFO: [0-9]+ processes' "$work/base2.log" | tail -1)
# Executed processes are named by strategy (linux-sandbox, local, remote,
# worker, processwrapper-sandbox); cache hits and internal ones are not.
if grep -qE '[0-9]+ (linux-sandbox|local|remote|processwrapper-sandbox|sandbox|worker)\b' <<<"$processes"; then
  say "FAIL: the second build executed actions: $processes"
  failures=$((failures + 1))
else
  hits=$(grep -oE '[0-9]+ remote cache hit' <<<"$processes" | cut -d' ' -f1)
  say "second build: ${hits:-0} remote cache hits, nothing executed (100 %)"
fi
if cmp -s "$work/base1.sha256" "$work/base2.sha256"; then
  say "outputs: $(wc -l <"$work/base1.sha256") files byte-identical between the two output bases"
else
  say "FAIL: outputs differ between the two output bases:"
  diff "$work/base1.sha256" "$work/base2.sha256" | head -20 | tee -a "$summary"
  failures=$((failures + 1))
fi
# The compile actions' inputs and environment, as the remote worker saw them.
$bazel_cmd --output_base="$work/base2" aquery "${remote_flags[@]}" \
  "mnemonic(TritonCompile, set($targets))" >"$work/aquery.txt" 2>/dev/null || true
compiles=$(grep -c 'Mnemonic: TritonCompile' "$work/aquery.txt" || true)
with_tools=$(grep -c 'Inputs: .*external/cuda/bin/ptxas.*libdevice.10.bc' "$work/aquery.txt" || true)
say "aquery: $compiles TritonCompile actions, $with_tools with ptxas and libdevice among their inputs, $(grep -c CUDA_HOME "$work/aquery.txt" || true) mentions of CUDA_HOME"
((failures == 0)) && say "PASS" || say "FAILED ($failures)"
exit $((failures > 0))
