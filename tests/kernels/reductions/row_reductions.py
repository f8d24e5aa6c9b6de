# Reductions along one axis of a 2-D tile: sum, max, min with keep_dims, and
# the whole-block forms (axis=None); tl.softmax along rows; max and min of
# negated integers down the columns of a strided tile.
#
# kiln-variant: -n row_stats -s "x_ptr=*fp32, sum_ptr=*fp32, max_ptr=*fp32, min_ptr=*fp32, M=i32, N=i32, stride=i32, BM=16, BN=128"
# kiln-variant: -n row_stats -s "x_ptr=*fp16, sum_ptr=*fp32, max_ptr=*fp16, min_ptr=*fp16, M=i32, N=i32, stride=i32, BM=32, BN=64"
# kiln-variant: -n row_stats -s "x_ptr=*i32, sum_ptr=*i32, max_ptr=*i32, min_ptr=*i32, M=i32, N=i32, stride=i32, BM=8, BN=256"
# kiln-variant: -n column_sum_keepdims -s "x_ptr=*fp32, out_ptr=*fp32, M=i32, N=i32, BM=64, BN=32"
# kiln-variant: -n block_total -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=1024"
# kiln-variant: -n row_softmax -s "x_ptr=*fp32, out_ptr=*fp32, M=i32, N=i32, stride=i32, BM=16, BN=128"
# kiln-variant: -n row_softmax -s "x_ptr=*fp16, out_ptr=*fp32, M=i32, N=i32, stride=i32, BM=8, BN=256"
# kiln-variant: -n negated_extrema -s "x_ptr=*i32, max_ptr=*i32, min_ptr=*i32, K=i32, stride=i32, BK=64, BN=32"
# kiln-covers: row_stats: tl.sum; tl.max; tl.min; x[:, None]; x[None, :]; tl.int32
# kiln-covers: column_sum_keepdims: tl.sum; reductions (keep_dims=); broadcasting
# kiln-covers: block_total: tl.sum; tl.max; tl.min; tl.atomic_add
# kiln-covers: row_softmax: tl.softmax; reductions (keep_dims=)
# kiln-covers: negated_extrema: tl.max; tl.min
import triton
import triton.language as tl


@triton.jit
def row_stats(x_ptr, sum_ptr, max_ptr, min_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=inside, other=0)
    tl.store(sum_ptr + rows, tl.sum(x, axis=1), mask=rows < M)
    tl.store(max_ptr + rows, tl.max(x, axis=1), mask=rows < M)
    tl.store(min_ptr + rows, tl.min(x, axis=1), mask=rows < M)


@triton.jit
def column_sum_keepdims(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=inside, other=0.0)
    col_sums = tl.sum(x, axis=0, keep_dims=True)        # shape [1, BN]
    centered = x - col_sums / M                         # broadcast back to [BM, BN]
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], centered, mask=inside)


@triton.jit
def block_total(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    total = tl.sum(x)
    spread = tl.max(x) - tl.min(x)
    tl.atomic_add(out_ptr, total + spread * 0.0)


@triton.jit
def row_softmax(x_ptr, out_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * stride + cols[None, :]
    x = tl.load(x_ptr + offs, mask=inside, other=-float("inf"))
    y = tl.softmax(x, dim=1, keep_dims=True)
    tl.store(out_ptr + offs, y, mask=inside)


@triton.jit
def negated_extrema(x_ptr, max_ptr, min_ptr, K, stride, BK: tl.constexpr, BN: tl.constexpr):
    # max(-x) and min(-x) down each column (fuzz case f116: ptxas dropped
    # negations inside its fused three-input max; ReduceOfNegation.cpp).
    k = tl.arange(0, BK)[:, None]
    n = tl.arange(0, BN)[None, :]
    x = tl.load(x_ptr + k + n * stride, mask=k < K, other=3)
    tl.store(max_ptr + tl.arange(0, BN), tl.max(-x, axis=0))
    tl.store(min_ptr + tl.arange(0, BN), tl.min(-x, axis=0))
