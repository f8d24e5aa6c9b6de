#!/bin/sh
# A stand-in for nvidia-smi on a machine without a GPU (or driver).
echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver." >&2
exit 9
