#!/usr/bin/env bash
# Remote execution against BuildGrid (an REAPI server from PyPI), on
# loopback: proves the triton_kernel actions hermetic.
#
#   scripts/remote_build_test.sh [WORK_DIR]      (default: build/remote-exec)
#
# 1. pip-installs BuildGrid into WORK_DIR/venv and starts `bgd server` on
#    127.0.0.1:$PORT (default 50051) with a CAS, an action cache, the
#    Execution service and the Bots service (the Remote Workers API).
# 2. Starts $JOBS workers, tests/remote/reapi_worker.py (BuildGrid ships
#    none, and its usual one, BuildBox, is on neither PyPI nor Debian): each
#    pulls actions from BuildGrid, lays out their input root from the CAS in
#    a fresh directory, runs the command there with exactly the action's
#    environment, and uploads the outputs.
# 3. Builds the examples' and tests/e2e's triton_kernel targets (their
#    cubins, PTX, metadata, generated sources and libraries) from a clean
#    output base, WORK_DIR/base1, with --remote_executor and
#    --spawn_strategy=remote: every action runs on a worker, none locally
#    (no --remote_local_fallback).
# 4. Builds the same from a second clean output base, WORK_DIR/base2, and
#    requires every action to be a remote cache hit (none executed) and every
#    output byte-identical to the first build's.
# 5. Checks with `bazel aquery` that every TritonCompile action has ptxas and
#    libdevice among its inputs and no CUDA_HOME in its environment.
# Writes WORK_DIR/summary.txt and WORK_DIR/summary.json. Exit status 0 when
# all hold. Heavy: the first build compiles kilnc through the workers (23
# minutes on two shared cores, bench/results/2026-11-28_remote_build); not
# part of CI.
#
# Environment: BAZEL (default bazel), PORT, JOBS (default 2: workers and
# Bazel --jobs), TARGETS (a query expression; default: the triton_kernel
# targets of //examples and //tests/e2e, without the manual ones),
# REMOTE_MODE=cache (remote caching only, built locally: a quicker check).
set -euo pipefail
# The whole script is one function, so that bash has read all of it before
# it runs: editing the file during a run does not change that run.
main() {
  cd "$(dirname "$0")/.."
  root=$PWD
  work=$(mkdir -p "${1:-build/remote-exec}" && cd "${1:-build/remote-exec}" && pwd)
  bazel_cmd=${BAZEL:-bazel}
  port=${PORT:-50051}
  jobs=${JOBS:-2}
  summary=$work/summary.txt
  : >"$summary"
  say() { echo "$*" | tee -a "$summary"; }

  # Debian's Bazel says "no_version"; its package knows.
  bazel_version=$($bazel_cmd --version 2>/dev/null | awk '{print $2}')
  if [[ $bazel_version == no_version ]]; then
    bazel_version="$(dpkg-query -W -f='${Version}' bazel-bootstrap 2>/dev/null) (Debian bazel-bootstrap)"
  fi
  say "remote_build_test $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -n), Bazel $bazel_version"
  # BuildGrid pinned to the release this test passed with (the newest on PyPI
  # on 2026-11-28; it installs on Debian 12's Python 3.11).
  # Its scheduler needs PostgreSQL through psycopg2 (the "database" extra).
  if [[ ! -x $work/venv/bin/bgd ]] || ! "$work/venv/bin/python" -c 'import psycopg2' 2>/dev/null; then
    python3 -m venv "$work/venv"
    "$work/venv/bin/pip" install --quiet 'buildgrid[database]==0.4.4'
  fi
  say "BuildGrid $("$work/venv/bin/pip" show buildgrid | awk '/^Version/ {print $2}') ($work/venv)"

  mode=execution
  [[ ${REMOTE_MODE:-} == cache ]] && mode=cache
  pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  if [[ $mode == execution && -z $pg_bin ]]; then
    # Debian's server; the script starts a private cluster, not the system one.
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null
    pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  fi

  # Fresh state: server storage, worker caches and both output bases.
  for base in base1 base2; do
    [[ -d $work/$base ]] && $bazel_cmd --output_base="$work/$base" shutdown 2>/dev/null || true
  done
  chmod -R u+w "$work/base1" "$work/base2" "$work/worker" 2>/dev/null || true
  rm -rf "$work/cas" "$work/pg" "$work/base1" "$work/base2" "$work/worker"
  mkdir -p "$work/cas"
  {
    cat <<YAML
description: Kiln's remote build test (scripts/remote_build_test.sh)
# gRPC threads, which is also the server's limit on concurrent RPCs (default
# 5 per core): Bazel uploads inputs ~100 at a time, workers long-poll.
thread-pool-size: 400
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
    connection-string: postgresql+psycopg2://bgd@127.0.0.1:$((port + 1))/bgd
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
      - !bots
        scheduler: *scheduler
YAML
    fi
  } >"$work/bgd.yml"

  pids=()
  # PostgreSQL refuses to run as root: as root, the cluster belongs to Debian's
  # postgres user.
  as_pg() { if ((EUID == 0)); then runuser -u postgres -- "$@"; else "$@"; fi; }
  cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    [[ -f $work/pg/data/postmaster.pid ]] && as_pg "$pg_bin/pg_ctl" -D "$work/pg/data" -m fast stop >/dev/null 2>&1 || true
    for base in base1 base2; do
      [[ -d $work/$base ]] && $bazel_cmd --output_base="$work/$base" shutdown 2>/dev/null || true
    done
  }
  trap cleanup EXIT
  if [[ $mode == execution ]]; then
    # A private PostgreSQL cluster on 127.0.0.1:PORT+1 for the scheduler.
    mkdir -p "$work/pg"
    ((EUID == 0)) && chown postgres: "$work/pg"
    as_pg "$pg_bin/initdb" -D "$work/pg/data" -U bgd --auth=trust -E UTF8 >"$work/pg-init.log" 2>&1
    as_pg "$pg_bin/pg_ctl" -D "$work/pg/data" -l "$work/pg/server.log" -w \
      -o "-p $((port + 1)) -k $work/pg -c listen_addresses=127.0.0.1" start >>"$work/pg-init.log" 2>&1
    "$pg_bin/createdb" -h 127.0.0.1 -p $((port + 1)) -U bgd bgd
    "$work/venv/bin/bgd" migrate apply "postgresql+psycopg2://bgd@127.0.0.1:$((port + 1))/bgd" >>"$work/pg-init.log" 2>&1
  fi
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
  # One gRPC connection: up to ~100 concurrent RPCs, within the server's 400.
  remote_flags=(--remote_instance_name= --remote_timeout=600 --remote_max_connections=1)
  if [[ $mode == execution ]]; then
    # The workers share one blob cache (inputs are hard-linked from it) and
    # share nothing with the client but the CAS.
    for i in $(seq "$jobs"); do
      "$work/venv/bin/python" "$root/tests/remote/reapi_worker.py" --remote "127.0.0.1:$port" \
        --bot-id "kiln-worker-$i" --work-dir "$work/worker" --platform OSFamily=linux \
        >"$work/worker-$i.log" 2>&1 &
      pids+=($!)
    done
    remote_flags+=(--remote_executor="grpc://127.0.0.1:$port" --spawn_strategy=remote
                   --remote_default_exec_properties=OSFamily=linux)
    say "mode: remote execution (BuildGrid Execution + Bots, $jobs x tests/remote/reapi_worker.py; --spawn_strategy=remote, no local fallback)"
  else
    remote_flags+=(--remote_cache="grpc://127.0.0.1:$port")
    say "mode: remote cache only (REMOTE_MODE=cache): actions run locally, results uploaded"
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
        --symlink_prefix=/ "$groups" $targets >"$work/$base.log" 2>&1; then
      say "FAIL: the build in $base failed; the end of $work/$base.log:"
      tail -30 "$work/$base.log" | tee -a "$summary"
      exit 1
    fi
    end=$(date +%s)
    eval "${base}_seconds=$((end - start))"
    say "$base: $((end - start)) s; $(grep -E '^INFO: [0-9]+ processes' "$work/$base.log" | tail -1)"
    # Every output file of the targets, with its digest.
    (cd "$($bazel_cmd --output_base="$work/$base" info "${remote_flags[@]}" bazel-bin 2>/dev/null)" &&
       find . -path ./external -prune -o -type f \( -path './examples/*' -o -path './tests/e2e/*' \) \
         -newer "$work/bgd.yml" -print0 | sort -z | xargs -0 sha256sum) >"$work/$base.sha256"
  }

  # A count of processes with the given strategy names ("12 remote", not
  # "12 remote cache hit") in a build's "INFO: N processes: ..." line.
  count() {
    { grep -oE "[0-9]+ ($2)(,|\.|\$)" <<<"$1" || true; } | awk '{n += $1} END {print n + 0}'
  }
  local_strategies='linux-sandbox|local|processwrapper-sandbox|sandbox|worker'

  build base1
  base1_processes=$(grep -E '^INFO: [0-9]+ processes' "$work/base1.log" | tail -1)
  failures=0
  executed1=$(count "$base1_processes" remote)
  local1=$(count "$base1_processes" "$local_strategies")
  if [[ $mode == execution ]]; then
    worker_done=$(cat "$work"/worker-*.log | grep -c ' done in ' || true)
    if ((local1 > 0 || executed1 == 0)); then
      say "FAIL: the first build ran $local1 actions locally and $executed1 remotely: $base1_processes"
      failures=$((failures + 1))
    else
      say "first build: $executed1 actions executed remotely (the workers completed $worker_done leases), none locally"
    fi
  fi
  build base2
  base2_processes=$(grep -E '^INFO: [0-9]+ processes' "$work/base2.log" | tail -1)
  hits=$(grep -oE '[0-9]+ remote cache hit' <<<"$base2_processes" | cut -d' ' -f1)
  executed2=$(count "$base2_processes" "remote|$local_strategies")
  if ((executed2 > 0)) || [[ -z $hits ]]; then
    say "FAIL: the second build executed $executed2 actions: $base2_processes"
    failures=$((failures + 1))
  else
    say "second build: $hits remote cache hits, nothing executed (100 %)"
  fi
  if cmp -s "$work/base1.sha256" "$work/base2.sha256"; then
    say "outputs: $(wc -l <"$work/base1.sha256") files byte-identical between the two output bases"
  else
    say "FAIL: outputs differ between the two output bases:"
    diff "$work/base1.sha256" "$work/base2.sha256" | head -20 | tee -a "$summary"
    failures=$((failures + 1))
  fi
  # The compile actions' inputs and environment, as the remote worker saw them.
  # --action_env=CUDA_HOME on purpose: an action using the shell environment
  # would then show it.
  $bazel_cmd --output_base="$work/base2" aquery "${remote_flags[@]}" --action_env=CUDA_HOME=/usr/local/cuda \
    "mnemonic(TritonCompile, set($targets))" >"$work/aquery.txt" 2>"$work/aquery.log" || true
  compiles=$(grep -c 'Mnemonic: TritonCompile' "$work/aquery.txt" || true)
  with_tools=$(grep -cE 'Inputs: .*external/cuda/bin/ptxas.*external/cuda/nvvm/libdevice/libdevice.10.bc' "$work/aquery.txt" || true)
  env_lines=$(grep -cE 'Environment|CUDA_HOME' "$work/aquery.txt" || true)
  say "aquery: $compiles TritonCompile actions, $with_tools with ptxas and libdevice among their inputs, $env_lines with an environment or CUDA_HOME"
  if ((compiles == 0 || with_tools != compiles || env_lines != 0)); then
    say "FAIL: the compile actions are not hermetic (see $work/aquery.txt)"
    failures=$((failures + 1))
  fi
  identical=$(cmp -s "$work/base1.sha256" "$work/base2.sha256" && echo true || echo false)
  cat >"$work/summary.json" <<JSON
{
  "date": "$(date -u +%Y-%m-%dT%H:%MZ)",
  "bazel": "$bazel_version",
  "buildgrid": "$("$work/venv/bin/pip" show buildgrid | awk '/^Version/ {print $2}')",
  "mode": "$mode",
  "workers": $jobs,
  "targets": $(wc -w <<<"$targets"),
  "base1": {"seconds": $base1_seconds, "processes": "${base1_processes#INFO: }", "executed_remotely": $executed1, "executed_locally": $local1},
  "base2": {"seconds": $base2_seconds, "processes": "${base2_processes#INFO: }", "remote_cache_hits": ${hits:-0}, "executed": $executed2},
  "outputs": {"files": $(wc -l <"$work/base1.sha256"), "byte_identical": $identical},
  "aquery": {"triton_compile_actions": $compiles, "with_ptxas_and_libdevice": $with_tools, "environment_or_cuda_home": $env_lines},
  "pass": $( ((failures == 0)) && echo true || echo false)
}
JSON
  ((failures == 0)) && say "PASS" || say "FAILED ($failures)"
  exit $((failures > 0))
}
main "$@"
