#!/usr/bin/env bash
# Installs exactly the Debian packages Kiln needs and checks the CUDA toolkit.
# Idempotent: packages already present are left alone. This is the only
# install step in the project.
set -euo pipefail

PACKAGES=(
  # Compiler: LLVM/MLIR 22 with mlir-tblgen, FileCheck and lit.
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  # Runtime and tests.
  libabsl-dev googletest libgtest-dev libgmock-dev
  # Build systems.
  cmake ninja-build ccache g++ lld
  bazel-bootstrap bazel-rules-cc bazel-rules-java bazel-rules-proto
  bazel-skylib bazel-platforms
  # The libFuzzer target and its runtime.
  clang-22 libclang-rt-22-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
if [[ ! -x "$CUDA_HOME/bin/ptxas" || ! -f "$CUDA_HOME/include/cuda.h" ]]; then
  echo "setup: error: the CUDA 13 toolkit was not found at CUDA_HOME=$CUDA_HOME" >&2
  echo "setup: Kiln needs \$CUDA_HOME/bin/ptxas and \$CUDA_HOME/include/cuda.h at build time;" >&2
  echo "setup: install the toolkit or point CUDA_HOME at it." >&2
  exit 1
fi
echo "setup: ok (LLVM/MLIR 22 at /usr/lib/llvm-22, CUDA at $CUDA_HOME: $("$CUDA_HOME/bin/ptxas" --version | tail -1))"
