# A scan of a row sum of a tl.dot result (issue 13, reduced from mamba's
# Mamba-3 backward dqkv kernel). Used by tests/lit/scan_of_row_sum.test.
import triton
import triton.language as tl


@triton.jit
def scan_of_row_sum(a_ptr, b_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a = tl.load(a_ptr + offs_m[:, None] * BK + offs_k[None, :])
    b = tl.load(b_ptr + offs_k[:, None] * BN + offs_n[None, :])
    rows = tl.sum(tl.dot(a, b), axis=1)
    tl.store(out_ptr + offs_m, tl.cumsum(rows))
