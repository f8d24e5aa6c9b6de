# Forms the third real-world sample needed (tests/realworld): tl.gather from
# a small lookup table (gemlite's fp4 GEMV), tl.dot with N = 1 (mamba's
# Mamba-3 step kernel: a state times a query column), and tl.rand with
# 64-bit offsets (FlagAttention's dropout mask).
#
# kiln-variant: -n lookup -s "table_ptr=*fp16, codes_ptr=*u8, out_ptr=*fp16, K=32"
# kiln-variant: -n matvec -s "a_ptr=*bf16, x_ptr=*bf16, out_ptr=*fp32, M=64, K=128"
# kiln-variant: -n rand_wide -s "out_ptr=*fp32, n=i32, seed=i64, base=i64, BLOCK=256"
# kiln-covers: lookup: tl.gather
# kiln-covers: matvec: tl.dot with M or N under 16
# kiln-covers: rand_wide: tl.rand
import triton
import triton.language as tl


@triton.jit
def lookup(table_ptr, codes_ptr, out_ptr, K: tl.constexpr):
    table = tl.load(table_ptr + tl.arange(0, 16))[None, :].broadcast_to((K, 16))
    rk = tl.arange(0, K)
    rn = tl.arange(0, 8)
    codes = tl.load(codes_ptr + rk[:, None] * 8 + rn[None, :]) & 15
    values = tl.gather(table, codes, axis=1)
    tl.store(out_ptr + rk[:, None] * 8 + rn[None, :], values)


@triton.jit
def matvec(a_ptr, x_ptr, out_ptr, M: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    x = tl.load(x_ptr + rk).reshape([K, 1])
    y = tl.dot(a, x)
    tl.store(out_ptr + rm, y.reshape([M]))


@triton.jit
def rand_wide(out_ptr, n, seed, base, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    local = pid * BLOCK + tl.arange(0, BLOCK)
    offs = base + local.to(tl.int64)
    tl.store(out_ptr + local, tl.rand(seed, offs), mask=local < n)
