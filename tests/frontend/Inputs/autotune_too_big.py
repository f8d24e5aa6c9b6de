import triton
import triton.language as tl

# Config 1's ring of operand tiles needs more shared memory than sm_90a has:
# as Triton's autotuner does, the build skips it and keeps the others.
@triton.autotune(configs=[
        triton.Config({"BM": 64, "BN": 64, "BK": 32}, num_warps=4, num_stages=3),
        triton.Config({"BM": 256, "BN": 256, "BK": 128}, num_warps=8, num_stages=4),
        triton.Config({"BM": 64, "BN": 128, "BK": 32}, num_warps=4, num_stages=2),
    ], key=["K"])
@triton.jit
def mm(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


# Every config too big: nothing to build.
@triton.autotune(configs=[
        triton.Config({"BM": 256, "BN": 256, "BK": 128}, num_warps=8, num_stages=4),
    ], key=["K"])
@triton.jit
def mm_none_fits(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)
