# Pointer arithmetic: 2-D strided tiles, transposes through strides and .T,
# gathers through loaded indices, 64-bit offsets, and the compiler hints
# multiple_of / max_contiguous / max_constancy.
#
# kiln-variant: -n transpose_tile -s "src_ptr=*fp32, dst_ptr=*fp32, M=i32, N=i32, src_stride=i32, dst_stride=i32, BM=32, BN=32"
# kiln-variant: -n transpose_tile -s "src_ptr=*fp16, dst_ptr=*fp16, M=i32, N=i32, src_stride=i32, dst_stride=i32, BM=64, BN=64"
# kiln-variant: -n column_major_read -s "src_ptr=*fp32:16, dst_ptr=*fp32:16, M=i32, N=i32, src_stride=i32:16, dst_stride=i32:16, BM=64, BN=64"
# kiln-variant: -n column_major_write -s "src_ptr=*bf16:16, dst_ptr=*bf16:16, M=i32, N=i32, src_stride=i32:16, dst_stride=i32:16, BM=128, BN=32"
# kiln-variant: -n gather_rows -s "table_ptr=*fp32, idx_ptr=*i64, out_ptr=*fp32, n_idx=i32, D=i32, BLOCK_I=16, BLOCK_D=64"
# kiln-variant: -n hinted_copy -s "src_ptr=*fp32, dst_ptr=*fp32, n=i32, BLOCK=1024"
# kiln-variant: -n big_offsets -s "src_ptr=*fp32, dst_ptr=*fp32, row=i64, row_len=i64, BLOCK=256"
# kiln-covers: transpose_tile: .T; x[:, None]; x[None, :]; pointer arithmetic; broadcasting
# kiln-covers: column_major_read: pointer arithmetic; x[:, None]; x[None, :]
# kiln-covers: column_major_write: pointer arithmetic; x[:, None]; x[None, :]
# kiln-covers: gather_rows: pointer arithmetic; x[:, None]; x[None, :]; tl.int64
# kiln-covers: hinted_copy: tl.multiple_of; tl.max_contiguous; tl.max_constancy
# kiln-covers: big_offsets: pointer arithmetic; tl.int64
import triton
import triton.language as tl


@triton.jit
def transpose_tile(src_ptr, dst_ptr, M, N, src_stride, dst_stride, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    tile = tl.load(src_ptr + rm[:, None] * src_stride + rn[None, :],
                   mask=(rm[:, None] < M) & (rn[None, :] < N))
    flipped = tile.T
    tl.store(dst_ptr + rn[:, None] * dst_stride + rm[None, :], flipped,
             mask=(rn[:, None] < N) & (rm[None, :] < M))


# A column-major source (rows adjacent in memory) copied to a row-major
# destination: each side is accessed in a layout with its contiguous
# dimension fastest, the tile converted between them.
@triton.jit
def column_major_read(src_ptr, dst_ptr, M, N, src_stride, dst_stride, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(src_ptr + rm[:, None] + rn[None, :] * src_stride, mask=mask)
    tl.store(dst_ptr + rm[:, None] * dst_stride + rn[None, :], tile * 2.0, mask=mask)


# Row-major in, column-major out with per-column scales (torchao's fp8
# quantization writes its activations so): the store runs down the columns.
@triton.jit
def column_major_write(src_ptr, dst_ptr, M, N, src_stride, dst_stride, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(src_ptr + rm[:, None] * src_stride + rn[None, :], mask=mask, other=0.0).to(tl.float32)
    scale = 1.0 / tl.maximum(tl.max(tl.abs(x), axis=0), 1e-6)
    tl.store(dst_ptr + rm[:, None] + rn[None, :] * dst_stride, (x * scale[None, :]).to(tl.bfloat16), mask=mask)


@triton.jit
def gather_rows(table_ptr, idx_ptr, out_ptr, n_idx, D, BLOCK_I: tl.constexpr, BLOCK_D: tl.constexpr):
    i = tl.program_id(0) * BLOCK_I + tl.arange(0, BLOCK_I)
    d = tl.arange(0, BLOCK_D)
    rows = tl.load(idx_ptr + i, mask=i < n_idx, other=0)
    m = (i[:, None] < n_idx) & (d[None, :] < D)
    vals = tl.load(table_ptr + rows[:, None] * D + d[None, :], mask=m, other=0.0)
    tl.store(out_ptr + i[:, None] * D + d[None, :], vals, mask=m)


@triton.jit
def hinted_copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    start = tl.multiple_of(tl.program_id(0) * BLOCK, BLOCK)
    offs = tl.max_contiguous(start + tl.arange(0, BLOCK), BLOCK)
    same = tl.max_constancy(offs // 16, 16)
    x = tl.load(src_ptr + offs, mask=offs < n)
    tl.store(dst_ptr + offs, x + same.to(tl.float32) * 0.0, mask=offs < n)


@triton.jit
def big_offsets(src_ptr, dst_ptr, row, row_len, BLOCK: tl.constexpr):
    base = row * row_len            # i64: rows beyond 2**31 elements
    offs = tl.arange(0, BLOCK)
    x = tl.load(src_ptr + base + offs, mask=offs < row_len)
    tl.store(dst_ptr + base + offs, x, mask=offs < row_len)
