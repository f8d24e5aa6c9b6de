#!/usr/bin/env python3
"""Device printf and assert on the GPU: Kiln's cubins, checked by what they do.

Runs on the GPU machine with the cubins tests/gpu/build_differential.sh builds
from tests/kernels/control_flow/checks_and_printing.py:
  - debug_print.cubin (`printing`): every element is printed once, as
    "pid (0, 0, 0) idx (i) x = v", and `hex=True` prints the bits;
  - debug_assert.cubin (`checked_copy`, kilnc --debug): with a NaN in the
    input the launch fails with CUDA_ERROR_ASSERT (710) and the driver
    prints the assertion's message; without one it copies.
Each launch runs in a child process (a failed assert ends its context).

    python3 tests/gpu/debug_ops_check.py --cubins .devbuild/differential

Prints one line per check and `N passed, N failed`; exit status 1 on a failure.
"""
import argparse
import ctypes
import os
import re
import subprocess
import sys


def launch(cubin, kernel, x_values, n, block, out_len):
    """Child: launches `kernel` on x (float32 or int32 list) and prints out."""
    import struct
    cuda = ctypes.CDLL("libcuda.so.1")

    def check(status, what):
        if status != 0:
            print(f"RESULT {what} {status}", flush=True)
            sys.exit(3)

    check(cuda.cuInit(0), "cuInit")
    device, context = ctypes.c_int(), ctypes.c_void_p()
    check(cuda.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet")
    check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "retain")
    check(cuda.cuCtxSetCurrent(context), "cuCtxSetCurrent")
    module, function = ctypes.c_void_p(), ctypes.c_void_p()
    with open(cubin, "rb") as f:
        check(cuda.cuModuleLoadData(ctypes.byref(module), f.read()), "cuModuleLoadData")
    check(cuda.cuModuleGetFunction(ctypes.byref(function), module, kernel.encode()),
          "cuModuleGetFunction")
    fmt = "f" if isinstance(x_values[0], float) else "i"
    data = struct.pack(f"{len(x_values)}{fmt}", *x_values)
    x, out = ctypes.c_uint64(), ctypes.c_uint64()
    check(cuda.cuMemAlloc_v2(ctypes.byref(x), len(data)), "cuMemAlloc")
    check(cuda.cuMemAlloc_v2(ctypes.byref(out), 4 * max(out_len, 1)), "cuMemAlloc")
    check(cuda.cuMemcpyHtoD_v2(x, data, len(data)), "cuMemcpyHtoD")
    holders = [x] + ([out] if out_len else []) + [ctypes.c_int32(n)]
    params = (ctypes.c_void_p * len(holders))(
        *[ctypes.cast(ctypes.byref(h), ctypes.c_void_p) for h in holders])
    check(cuda.cuLaunchKernel(function, 1, 1, 1, 128, 1, 1, 0, None, params, None),
          "cuLaunchKernel")
    status = cuda.cuCtxSynchronize()
    print(f"RESULT sync {status}", flush=True)
    if status == 0 and out_len:
        buffer = ctypes.create_string_buffer(4 * out_len)
        check(cuda.cuMemcpyDtoH_v2(buffer, out, 4 * out_len), "cuMemcpyDtoH")
        print("RESULT out " + " ".join(repr(v) for v in struct.unpack(f"{out_len}f", buffer.raw)))
    return 0


def child(args):
    run = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"] + args,
                         capture_output=True, text=True, timeout=120)
    return run.stdout + run.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cubins", default=".devbuild/differential")
    parser.add_argument("--child", nargs="*")
    opts, rest = parser.parse_known_args()
    if opts.child is not None:
        cubin, kernel, kind, n, out_len = opts.child
        n, out_len = int(n), int(out_len)
        if kind == "int":
            values = list(range(n))
        else:
            values = [float(i) for i in range(n)]
            if kind == "nan":
                values[5] = float("nan")
        return launch(cubin, kernel, values, n, 32, out_len)

    results = []

    def expect(name, ok, detail):
        results.append(ok)
        print(f"{'ok' if ok else 'FAILED':8} {name}: {detail}")

    printed = child([os.path.join(opts.cubins, "debug_print.cubin"), "printing", "int", "20", "0"])
    lines = [l for l in printed.splitlines() if l.startswith("pid (")]
    values = sorted(int(m.group(1)) for l in lines
                    if (m := re.match(r"pid \(0, 0, 0\) idx \((\d+)\) x = (-?\d+)$", l)))
    hexes = [l for l in lines if re.match(r"pid \(0, 0, 0\) idx \(\d+\) x hex 0x[0-9a-f]+$", l)]
    expect("device_print values", values == list(range(32)),
           f"{len(values)} 'x = ' lines for the 32 elements (x[i] = i for i < 20, 0 after)")
    expect("device_print hex", len(hexes) == 32, f"{len(hexes)} hex lines")
    expect("device_print scalar", any(re.match(r"pid \(0, 0, 0\) pid 0$", l) for l in lines),
           "the program id printed once per thread")

    fired = child([os.path.join(opts.cubins, "debug_assert.cubin"), "checked_copy", "nan", "200", "200"])
    expect("device_assert fires", "RESULT sync 710" in fired and "NaN in input" in fired,
           "CUDA_ERROR_ASSERT (710) and the message: " + " | ".join(
               l for l in fired.splitlines() if "Assertion" in l or "RESULT" in l)[:300])
    clean = child([os.path.join(opts.cubins, "debug_assert.cubin"), "checked_copy", "float", "200", "200"])
    m = re.search(r"RESULT out (.*)", clean)
    copied = m is not None and [float(v) for v in m.group(1).split()] == [float(i) for i in range(200)]
    expect("device_assert passes", "RESULT sync 0" in clean and copied,
           "no NaN: the kernel copies its input")

    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
