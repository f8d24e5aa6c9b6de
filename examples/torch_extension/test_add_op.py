#!/usr/bin/env python3
"""Builds add_op.cc against this machine's torch and checks the operator.

Run by run_gpu.sh on the GPU machine, from a directory packed by pack.sh
(headers: the generated add.h, Kiln's runtime, Abseil's; libraries: the
kernel's and the runtime's static archives, Abseil's shared ones):

    python3 test_add_op.py PACK_DIR

torch.utils.cpp_extension compiles add_op.cc with this torch's flags and
links the archives; torch.ops.kiln_example.add then runs Kiln's kernel on
torch tensors, on torch's current stream. Prints one "check ...: ok" line
per check and exits 1 on the first wrong result.
"""

import glob
import os
import sys

import torch
from torch.utils import cpp_extension


def build(pack):
    lib = os.path.join(pack, "lib")
    archives = [os.path.join(lib, name) for name in ("libadd.a", "libkiln_runtime.a", "libkiln_tuning_table.a")]
    shared = sorted(glob.glob(os.path.join(lib, "*.so*")))
    build_dir = os.path.join(pack, "torch_build")
    os.makedirs(build_dir, exist_ok=True)
    cpp_extension.load(
        name="kiln_torch_add",
        sources=[os.path.join(pack, "add_op.cc")],
        extra_include_paths=[os.path.join(pack, "include")],
        extra_cflags=["-O2"],
        with_cuda=True,  # CUDA's include directory, for ATen/cuda/CUDAContext.h
        # Archives in dependency order, then Abseil's shared libraries (found
        # at run time through the rpath), then dlopen for the CUDA driver.
        extra_ldflags=archives + shared + [f"-Wl,-rpath,{lib}", "-ldl"],
        build_directory=build_dir,
        is_python_module=False,  # a TORCH_LIBRARY: loaded into torch.ops
        verbose=True,
    )


def check(name, ok):
    print(f"check {name}: {'ok' if ok else 'WRONG'}", flush=True)
    if not ok:
        sys.exit(1)


def main():
    pack = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__))
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"{torch.cuda.get_device_name() if torch.cuda.is_available() else 'no GPU'}", flush=True)
    if not torch.cuda.is_available():
        print("no GPU found: torch.cuda.is_available() is False")
        sys.exit(1)
    build(pack)
    add = torch.ops.kiln_example.add
    gen = torch.Generator(device="cuda").manual_seed(0)
    for dtype in (torch.float32, torch.float16):
        for n in (1, 1000, (1 << 20) + 3):
            x = torch.rand(n, device="cuda", dtype=dtype, generator=gen)
            y = torch.rand(n, device="cuda", dtype=dtype, generator=gen)
            check(f"{dtype} n={n}", torch.equal(add(x, y), x + y))
        # One element past an aligned address: the general (unaligned) variant.
        base = torch.rand(4097, device="cuda", dtype=dtype, generator=gen)
        x, y = base[1:], base[:-1]
        check(f"{dtype} unaligned", torch.equal(add(x, y), x + y))
        # A side stream: the launch goes to torch's current stream.
        stream = torch.cuda.Stream()
        x = torch.rand(1 << 16, device="cuda", dtype=dtype, generator=gen)
        with torch.cuda.stream(stream):
            out = add(x, x)
        stream.synchronize()
        check(f"{dtype} side stream", torch.equal(out, x + x))
    try:
        add(torch.ones(4, device="cuda", dtype=torch.int32), torch.ones(4, device="cuda", dtype=torch.int32))
        check("int32 refused", False)
    except RuntimeError as e:
        check("int32 refused", "no variant" in str(e))
    try:
        add(torch.ones(4), torch.ones(4))
        check("CPU tensors refused", False)
    except (RuntimeError, NotImplementedError):
        check("CPU tensors refused", True)
    print("torch extension: all checks ok")


if __name__ == "__main__":
    main()
