#!/usr/bin/env python3
"""Upstream Triton's TTGIR, LLVM IR, PTX and cubin of real-world cases,
compiled on this machine (no GPU): what Kiln's cubins are compared with,
without spending device time.

    bench/triton_venv.sh                      # once: Triton 3.6 and CPU torch in .triton-venv
    .triton-venv/bin/python bench/triton_asm.py --filter fla_chunk_fwd_h --out /tmp/triton
    /usr/local/cuda/bin/ptxas -arch=sm_90a -v /tmp/triton/CASE.ptx -o /dev/null   # registers

Each case of bench/realworld_cases.py whose id contains a --filter word is
loaded as bench/realworld_cubins.py loads it (stubs, packages) and compiled
by Triton for sm_90a (CUDA capability 9.0) with the same hints --list gives
Kiln: `:16` as tt.divisibility, `:1` as the constant 1. The cases' grids and
inputs play no part. Writes CASE.ttgir, CASE.ll, CASE.ptx and CASE.cubin.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--filter", required=True, help="case ids containing one of these (comma-separated)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--capability", type=int, default=90)
    opts = parser.parse_args()

    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    target = GPUTarget("cuda", opts.capability, 32)

    class NoGpuDriver:
        """What the samples ask the driver at import (tutorials' DEVICE)."""

        def get_active_torch_device(self):
            return "cpu"

        def get_current_target(self):
            return target

    triton.runtime.driver.set_active(NoGpuDriver())
    sys.path.insert(0, HERE)
    import realworld_cubins as rc

    os.makedirs(opts.out, exist_ok=True)
    words = opts.filter.split(",")
    for case in rc.CASES:
        if not any(w in case["id"] for w in words):
            continue
        fn = rc.load_kernel(case)
        params, options = rc.diff.parse_signature(case["sig"])
        signature, constants, attributes = {}, {}, {}
        # Constants and attributes are keyed by the parameter's position in
        # the function, which a signature written out of order does not give.
        index = {name: i for i, name in enumerate(fn.arg_names)}
        for name, type_, const in params:
            if type_ is None:
                constants[(index[name],)] = rc.diff.constexpr_value(const, tl)
        types = {name: type_ for name, type_, _ in params}
        for i, name in enumerate(fn.arg_names):
            signature[name] = types.get(name) or "constexpr"
            if name not in types:  # a defaulted constexpr the case leaves out
                constants[(i,)] = fn.params[i].default
        for entry in rc.diff.split_top_level(rc.hinted_signature(case)):
            name, _, value = entry.partition("=")
            if name.strip() not in index:  # num_warps and the like
                continue
            i = index[name.strip()]
            if value.strip().endswith(":16"):
                attributes[(i,)] = [["tt.divisibility", 16]]
            elif value.strip().endswith(":1"):
                signature[name.strip()] = "constexpr"
                constants[(i,)] = 1
        compiled = triton.compile(
            triton.compiler.ASTSource(fn, signature, constants, attributes), target=target,
            options=dict(num_warps=options.get("num_warps", 4), num_stages=options.get("num_stages", 3)))
        base = os.path.join(opts.out, case["id"])
        for key, suffix in (("ttgir", ".ttgir"), ("llir", ".ll"), ("ptx", ".ptx")):
            with open(base + suffix, "w") as f:
                f.write(compiled.asm[key])
        with open(base + ".cubin", "wb") as f:
            f.write(compiled.asm["cubin"])
        print(f"{case['id']}: {base}.{{ttgir,ll,ptx,cubin}} (shared {compiled.metadata.shared} bytes)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
