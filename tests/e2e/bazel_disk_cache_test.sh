#!/usr/bin/env bash
# Shows that a Kiln build is fully cacheable: builds TARGETS (default: the
# vector_add example, kilnc included) with a fresh --disk_cache in one output
# base, then again from scratch in a second output base (another directory,
# as on another machine or after `bazel clean`), and requires that the second
# build executes no action: every one must be a disk cache hit. Prints both
# builds' process summaries.
#
#   tests/e2e/bazel_disk_cache_test.sh [TARGET...]
#   WORK_DIR=/tmp/x keeps the output bases and cache there (default: mktemp).
set -uo pipefail
cd "$(dirname "$0")/../.."
targets=("$@")
((${#targets[@]})) || targets=(//examples/vector_add:vector_add)
work=${WORK_DIR:-$(mktemp -d /tmp/kiln-disk-cache.XXXXXX)}
mkdir -p "$work"
cache="$work/disk_cache"
flags=(--disk_cache="$cache" --jobs="${JOBS:-2}" --noshow_progress)

build() {  # build NAME: a build in output base $work/NAME; prints its summary
  local log="$work/$1.log"
  bazel --output_base="$work/$1" build "${flags[@]}" "${targets[@]}" >"$log" 2>&1
  local status=$?
  bazel --output_base="$work/$1" shutdown >/dev/null 2>&1
  summary=$(grep -E "^INFO: [0-9]+ processes?:" "$log" | tail -1)
  echo "$1 build: exit $status; ${summary:-no process summary}"
  if ((status != 0)); then
    tail -20 "$log"
    exit 1
  fi
}

echo "targets: ${targets[*]}; disk cache: $cache"
build first
build second
# "N processes: A disk cache hit, B internal." and nothing else: any
# "linux-sandbox", "local", "processwrapper-sandbox" or "worker" count is an
# action that ran.
executed=$(sed -E 's/^INFO: [0-9]+ processes?: //; s/\.$//' <<<"$summary" | tr ',' '\n' |
           grep -vE "^ *[0-9]+ (disk cache hit|remote cache hit|internal)$" | grep -v '^ *$')
if [[ -n $executed ]]; then
  echo "FAIL: the second build executed actions: $executed"
  exit 1
fi
echo "ok: the second build in another output base was fully served by the disk cache"
[[ -n ${WORK_DIR:-} ]] || rm -rf "$work"
