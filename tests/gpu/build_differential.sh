#!/usr/bin/env bash
# Builds, here, the Kiln cubins tests/gpu/differential.py compares with upstream
# Triton on the GPU machine: one per case of its list (ID.cubin, with its
# metadata ID.json: num_warps, dynamic shared memory, parameters), for sm_90a
# (the H100), or for ARCH (sm_90: the mma.sync paths that sm_80-89 take, the
# arch tests/gpu/compute_sanitizer.sh checks beside sm_90a).
#
#   tests/gpu/build_differential.sh [KILNC] [DEST] [ARCH]
#     (defaults: build/compiler/driver/kilnc, .devbuild/differential, sm_90a)
#
# A case marked may-fail (a kernel kilnc does not compile yet) that fails
# prints `SKIPPED (does not compile)` and leaves no cubin: the runner reports
# it NOT RUN. Any other failure prints FAILED; the build goes on and exits 1.
set -uo pipefail
cd "$(dirname "$0")/../.."
kilnc=${1:-build/compiler/driver/kilnc}
dest=${2:-.devbuild/differential}
arch=${3:-sm_90a}
mkdir -p "$dest"
list=$(python3 tests/gpu/differential.py --list) || { echo "build_differential: --list failed" >&2; exit 1; }
built=0 skipped=0 failed=()
while IFS='|' read -r id file kernel sig flags; do
  rm -f "$dest/$id.cubin" "$dest/$id.json"
  if log=$("$kilnc" compile "tests/kernels/$file" -n "$kernel" -s "$sig" --arch "$arch" \
             -o "$dest/$id.cubin" --metadata "$dest/$id.json" 2>&1); then
    built=$((built + 1))
    continue
  fi
  rm -f "$dest/$id.cubin" "$dest/$id.json"
  first=$(printf '%s\n' "$log" | grep -m1 'error:' || printf '%s\n' "$log" | head -n1)
  if [[ $flags == *may-fail* ]]; then
    echo "build_differential: $id SKIPPED (does not compile): $first"
    skipped=$((skipped + 1))
  else
    echo "build_differential: $id FAILED: $first" >&2
    failed+=("$id")
  fi
done <<< "$list"
# For tests/gpu/debug_ops_check.py: device_print, and device_assert in a debug build.
checks=tests/kernels/control_flow/checks_and_printing.py
"$kilnc" compile "$checks" -n printing -s "x_ptr=*i32, n=i32, BLOCK=32" --arch "$arch" \
  -o "$dest/debug_print.cubin" || failed+=(debug_print)
"$kilnc" compile "$checks" -n checked_copy -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256" \
  --arch "$arch" --debug -o "$dest/debug_assert.cubin" || failed+=(debug_assert)
echo "build_differential: $built cubins in $dest, $skipped skipped, ${#failed[@]} failed"
[[ ${#failed[@]} -eq 0 ]] || { echo "build_differential: failed: ${failed[*]}" >&2; exit 1; }
