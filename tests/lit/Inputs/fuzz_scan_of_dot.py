# A scan of a tl.dot result, found by whole-pipeline fuzzing
# (tests/fuzz/kernelgen.py, tests/gpu/fuzz_differential.py seed 154; reduced).
# Used by tests/lit/fuzz_scan_of_dot*.test.
import triton
import triton.language as tl


@triton.jit
def scan_of_dot(a_ptr, b_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                AXIS: tl.constexpr):
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a = tl.load(a_ptr + offs_m[:, None] * BK + offs_k[None, :])
    b = tl.load(b_ptr + offs_k[:, None] * BN + offs_n[None, :])
    c = tl.cumsum(tl.dot(a, b), axis=AXIS)
    tl.store(out_ptr + offs_m[:, None] * BN + offs_n[None, :], c)
