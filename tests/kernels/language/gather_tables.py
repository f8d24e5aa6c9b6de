# tl.gather from tables too large for a one-hot comparison (index elements
# times the axis's length past 8192): through shared memory, src written
# once and each output element read at its index; along rows and down
# columns, of 2-D tiles and of a 1-D permutation, with index types narrower
# and wider than 32 bits.
#
# kiln-variant: -n gather_tile -s "src_ptr=*fp32, idx_ptr=*i32, out_ptr=*fp32, BM=64, BN=64, BI=64, AXIS=1"
# kiln-variant: -n gather_tile -s "src_ptr=*fp16, idx_ptr=*i64, out_ptr=*fp16, BM=128, BN=32, BI=64, AXIS=0"
# kiln-variant: -n gather_tile -s "src_ptr=*i8, idx_ptr=*u8, out_ptr=*i8, BM=32, BN=256, BI=128, AXIS=1"
# kiln-variant: -n permute_vector -s "src_ptr=*bf16, perm_ptr=*i32, out_ptr=*bf16, N=1024"
# kiln-covers: gather_tile: tl.gather
# kiln-covers: permute_vector: tl.gather
import triton
import triton.language as tl


@triton.jit
def gather_tile(src_ptr, idx_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr, BI: tl.constexpr,
                AXIS: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    ri = tl.arange(0, BI)
    src = tl.load(src_ptr + rm[:, None] * BN + rn[None, :])
    if AXIS == 1:
        idx = tl.load(idx_ptr + rm[:, None] * BI + ri[None, :])
        out = tl.gather(src, idx, axis=1)
        tl.store(out_ptr + rm[:, None] * BI + ri[None, :], out)
    else:
        idx = tl.load(idx_ptr + ri[:, None] * BN + rn[None, :])
        out = tl.gather(src, idx, axis=0)
        tl.store(out_ptr + ri[:, None] * BN + rn[None, :], out)


@triton.jit
def permute_vector(src_ptr, perm_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(src_ptr + offs)
    perm = tl.load(perm_ptr + offs)
    tl.store(out_ptr + offs, tl.gather(x, perm, axis=0) * 2)
