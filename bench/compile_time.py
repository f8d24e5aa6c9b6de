#!/usr/bin/env python3
"""Compile time per variant: kilnc against upstream Triton, on one machine.

Runs on the GPU machine (torch + triton installed), with kilnc carried over
by bench/pack_kilnc.sh (it unpacks .devbuild-kilnc/kilnc.tar.xz). kilnc uses
Triton's own ptxas and libdevice there, through a CUDA_HOME made of links.

For each kernel variant below:
  - Triton: the variant compiled in a warm process (Triton and torch
    imported, the kernel compiled once before), with a fresh cache directory
    each time so that every compile is a real one: `JITFunction.warmup`
    from source to cubin, the median of --repeat compiles.
  - kilnc: one `kilnc compile` process per variant, as the build rules run
    it (process start-up included), source to cubin: the median wall time
    of --repeat runs.

    python3 bench/compile_time.py --pack .devbuild-kilnc/kilnc.tar.xz --out DIR

Prints a table and `RESULT compile ...` lines; writes compile_time.json.
"""

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (id, file, kernel, kilnc signature, Triton launch arguments (a function of
# torch), constexprs, num_warps).
def _variants(torch):
    n = 1 << 20
    x = torch.randn(n, device="cuda")
    xs = torch.randn(4096, 1024, device="cuda")
    xh = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    w = torch.rand(4096, device="cuda", dtype=torch.float16)
    return [
        ("vector_add_fp32", "examples/vector_add/add.py", "add_kernel",
         "x_ptr=*fp32:16, y_ptr=*fp32:16, out_ptr=*fp32:16, n=i32:16, BLOCK=1024",
         (x, x, torch.empty_like(x), n), dict(BLOCK=1024), 4),
        ("softmax_fp32", "examples/softmax/softmax.py", "softmax_kernel",
         "out_ptr=*fp32:16, in_ptr=*fp32:16, in_stride=i32:16, out_stride=i32:16, n_cols=i32:16, BLOCK=1024",
         (torch.empty_like(xs), xs, xs.stride(0), xs.stride(0), 1024), dict(BLOCK=1024), 4),
        ("layernorm_fp16", "bench/kernels/layernorm.py", "layernorm_kernel",
         "x_ptr=*fp16:16, y_ptr=*fp16:16, w_ptr=*fp16:16, b_ptr=*fp16:16, stride=i32:16, N=i32:16, eps=fp32, BLOCK=4096",
         (xh, torch.empty_like(xh), w, w, xh.stride(0), 4096, 1e-5), dict(BLOCK=4096), 8),
    ]


def load(path, name):
    spec = importlib.util.spec_from_file_location("compile_time_" + name, os.path.join(REPO, path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # Triton's JIT looks the module up by name
    spec.loader.exec_module(module)
    return getattr(module, name)


def triton_compile_seconds(kernel, args, constexprs, num_warps, repeat, scratch):
    import triton
    times = []
    for i in range(repeat + 1):
        cache = os.path.join(scratch, f"triton-cache-{kernel.__name__}-{i}")
        os.environ["TRITON_CACHE_DIR"] = cache
        try:
            triton.knobs.cache.dir = cache
        except AttributeError:
            pass
        for caches in (getattr(kernel, "device_caches", None), getattr(kernel, "cache", None)):
            if hasattr(caches, "clear"):
                caches.clear()
        start = time.perf_counter()
        kernel.warmup(*args, grid=(1,), num_warps=num_warps, **constexprs)
        elapsed = time.perf_counter() - start
        if not os.listdir(cache):
            raise RuntimeError("Triton did not compile (cache hit?)")
        if i > 0:  # the first also warms up Triton's own imports
            times.append(elapsed)
    return statistics.median(times)


def kilnc_compile_seconds(kilnc, env, path, kernel, signature, num_warps, repeat, scratch):
    times = []
    for i in range(repeat + 1):
        command = [kilnc, "compile", os.path.join(REPO, path), "-n", kernel, "-s",
                   f"{signature}, num_warps={num_warps}", "--arch", "sm_90a",
                   "-o", os.path.join(scratch, f"{kernel}.cubin")]
        start = time.perf_counter()
        subprocess.run(command, env=env, check=True)
        elapsed = time.perf_counter() - start
        if i > 0:  # the first pages the binary and libraries in
            times.append(elapsed)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pack", default=os.path.join(REPO, ".devbuild-kilnc", "kilnc.tar.xz"))
    parser.add_argument("--out", default=os.environ.get("OUT", "bench-out"))
    parser.add_argument("--repeat", type=int, default=11)
    opts = parser.parse_args()

    import torch
    import triton

    scratch = tempfile.mkdtemp(prefix="compile-time-")
    with tarfile.open(opts.pack) as pack:
        pack.extractall(scratch)
    kilnc = os.path.join(scratch, "kilnc", "kilnc")
    # A CUDA_HOME of links to the ptxas and libdevice Triton ships.
    nvidia = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia")
    cuda_home = os.path.join(scratch, "cuda")
    os.makedirs(os.path.join(cuda_home, "bin"))
    os.makedirs(os.path.join(cuda_home, "nvvm", "libdevice"))
    os.symlink(os.path.join(nvidia, "bin", "ptxas"), os.path.join(cuda_home, "bin", "ptxas"))
    os.symlink(os.path.join(nvidia, "lib", "libdevice.10.bc"),
               os.path.join(cuda_home, "nvvm", "libdevice", "libdevice.10.bc"))
    env = dict(os.environ, CUDA_HOME=cuda_home,
               LD_LIBRARY_PATH=os.path.join(scratch, "kilnc", "lib"))
    ptxas_version = subprocess.run([os.path.join(cuda_home, "bin", "ptxas"), "--version"],
                                   capture_output=True, text=True).stdout.strip().splitlines()[-1]

    rows = []
    for vid, path, name, signature, args, constexprs, warps in _variants(torch):
        kernel = load(path, name)
        t = triton_compile_seconds(kernel, args, constexprs, warps, opts.repeat, scratch)
        k = kilnc_compile_seconds(kilnc, env, path, name, signature, warps, opts.repeat, scratch)
        rows.append(dict(variant=vid, triton_s=t, kilnc_s=k, ratio=t / k))
        print(f"RESULT compile {vid} triton_s={t:.4f} kilnc_s={k:.4f} ratio={t / k:.3f}", flush=True)

    print(f"compile time per variant on {torch.cuda.get_device_name()} host, "
          f"Triton {triton.__version__}, ptxas {ptxas_version}, median of {opts.repeat}")
    print(f"{'variant':18} {'Triton s':>9} {'kilnc s':>9} {'Triton/kilnc':>13}")
    for r in rows:
        print(f"{r['variant']:18} {r['triton_s']:9.4f} {r['kilnc_s']:9.4f} {r['ratio']:13.3f}")
    os.makedirs(opts.out, exist_ok=True)
    with open(os.path.join(opts.out, "compile_time.json"), "w") as f:
        json.dump(dict(triton=triton.__version__, ptxas=ptxas_version, repeat=opts.repeat,
                       rows=rows), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
