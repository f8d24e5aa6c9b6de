#!/bin/sh
# A stand-in for `nvidia-smi --query-gpu=compute_cap --format=csv,noheader`
# on a machine with a Hopper and two Ampere GPUs.
printf '9.0\n8.6\n8.6\n'
