#!/usr/bin/env bash
# CTest's and Bazel's entry to the differential checks (README.md): builds
# the cubins with KILNC into a scratch directory, then runs differential.py
# and debug_ops_check.py on them. They need torch, Triton and a GPU; without
# them the test is skipped, exiting SKIP_CODE (default 77, CTest's
# SKIP_RETURN_CODE; Bazel passes 0), so that CI without a GPU stays quick.
#
#   tests/gpu/differential_gpu_test.sh KILNC [SKIP_CODE]
set -uo pipefail
kilnc=$(realpath "$1")
cd "$(dirname "$0")/../.."
if ! python3 -c "import torch, triton; assert torch.cuda.is_available()" 2>/dev/null; then
  echo "differential_gpu_test: SKIPPED (needs torch, triton and a GPU)"
  exit "${2:-77}"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
tests/gpu/build_differential.sh "$kilnc" "$work/cubins" || status=1
python3 tests/gpu/differential.py --cubins "$work/cubins" --out "$work/out" || status=1
python3 tests/gpu/debug_ops_check.py --cubins "$work/cubins" || status=1
exit "$status"
