#!/usr/bin/env bash
# Runs the softmax demo on rows that pick each compiled config.
set -euo pipefail
for cols in 1000 3000 16384; do
  "$1" 257 "$cols"
done
