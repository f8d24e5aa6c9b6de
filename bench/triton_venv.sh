#!/usr/bin/env bash
# Once, on the build machine: upstream Triton 3.6 and a CPU build of
# PyTorch (the samples import torch) in .triton-venv (git-ignored), for
# bench/triton_asm.py. A development tool, not part of the build or CI.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .triton-venv
.triton-venv/bin/pip install -q --index-url https://download.pytorch.org/whl/cpu torch
.triton-venv/bin/pip install -q triton==3.6.0 numpy tabulate
