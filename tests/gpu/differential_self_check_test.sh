#!/usr/bin/env bash
# Bazel's differential_self_check: every case's arguments, outputs and
# signature against its corpus kernel (no GPU needed).
set -euo pipefail
cd "$(dirname "$0")/../.."
exec python3 tests/gpu/differential.py --self-check
