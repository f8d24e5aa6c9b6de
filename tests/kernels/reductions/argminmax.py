# Arg-reductions: tl.argmax/argmin and tl.max/min(return_indices=True), with
# and without tie-breaking to the left.
#
# kiln-variant: -n row_argmax -s "x_ptr=*fp32, idx_ptr=*i32, val_ptr=*fp32, N=i32, BLOCK=1024"
# kiln-variant: -n row_argmax -s "x_ptr=*fp16, idx_ptr=*i32, val_ptr=*fp16, N=i32, BLOCK=512"
# kiln-variant: -n row_argmin -s "x_ptr=*i32, idx_ptr=*i64, val_ptr=*i32, N=i32, BLOCK=256"
# kiln-variant: -n tile_extremes -s "x_ptr=*fp32, out_ptr=*i32, BM=32, BN=32"
# kiln-covers: row_argmax: tl.argmax; tl.max(return_indices=True); float("inf")
# kiln-covers: row_argmin: tl.argmin; tl.min(return_indices=True)
# kiln-covers: tile_extremes: tl.argmax; tl.argmin; reductions (keep_dims=)
import triton
import triton.language as tl


@triton.jit
def row_argmax(x_ptr, idx_ptr, val_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=-float("inf"))
    first = tl.argmax(x, axis=0)
    best, where_best = tl.max(x, axis=0, return_indices=True, return_indices_tie_break_left=False)
    tl.store(idx_ptr + row, first + where_best * 0)
    tl.store(val_ptr + row, best)


@triton.jit
def row_argmin(x_ptr, idx_ptr, val_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=2147483647)
    lowest, at = tl.min(x, 0, return_indices=True)
    also = tl.argmin(x, 0, tie_break_left=True)
    tl.store(idx_ptr + row, at + also - also)
    tl.store(val_ptr + row, lowest)


@triton.jit
def tile_extremes(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.arange(0, BM)
    c = tl.arange(0, BN)
    x = tl.load(x_ptr + r[:, None] * BN + c[None, :])
    per_row = tl.argmax(x, axis=1, keep_dims=True)     # [BM, 1]
    per_col = tl.argmin(x, axis=0)                     # [BN]
    tl.store(out_ptr + r[:, None] + c[None, :] * 0, per_row + per_col[None, :])
