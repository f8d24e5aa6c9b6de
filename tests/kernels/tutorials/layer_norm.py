# Tutorial (our version): layer normalization, forward and backward.
#   forward:   y = (x - mean) * rstd * w + b, saving mean and rstd per row
#   backward:  dx per row; dw and db summed first into GROUPS partial rows
#              (serialized by a spin lock per group), then reduced by column.
#
# kiln-variant: -n layer_norm_fwd -s "x_ptr=*fp16, y_ptr=*fp16, w_ptr=*fp16, b_ptr=*fp16, mean_ptr=*fp32, rstd_ptr=*fp32, row_stride=i32, N=i32, eps=fp32, BLOCK=1024"
# kiln-variant: -n layer_norm_fwd -s "x_ptr=*fp32, y_ptr=*fp32, w_ptr=*fp32, b_ptr=*fp32, mean_ptr=*fp32, rstd_ptr=*fp32, row_stride=i32, N=i32, eps=fp32, BLOCK=4096, num_warps=8"
# kiln-variant: -n layer_norm_bwd_dx -s "dx_ptr=*fp16, dy_ptr=*fp16, dw_part_ptr=*fp32, db_part_ptr=*fp32, x_ptr=*fp16, w_ptr=*fp16, mean_ptr=*fp32, rstd_ptr=*fp32, lock_ptr=*i32, row_stride=i32, N=i32, GROUPS=64, BLOCK=1024"
# kiln-variant: -n layer_norm_bwd_dwdb -s "dw_part_ptr=*fp32, db_part_ptr=*fp32, dw_ptr=*fp16, db_ptr=*fp16, G=i32, N=i32, BLOCK_G=32, BLOCK_N=128"
# kiln-covers: layer_norm_fwd: for over range; tl.sum; tl.sqrt; tl.where; augmented assignment; tl.zeros; .to(dtype)
# kiln-covers: layer_norm_bwd_dx: tl.atomic_cas; tl.atomic_xchg; while; pass; if on run-time scalar; elif/else on run-time scalar; tl.debug_barrier; // and % on signed ints
# kiln-covers: layer_norm_bwd_dwdb: x[:, None]; x[None, :]; tl.sum
import triton
import triton.language as tl


@triton.jit
def layer_norm_fwd(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, row_stride, N, eps,
                   BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * row_stride
    y_row = y_ptr + row * row_stride
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        total += tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(total, axis=0) / N
    sq = tl.zeros([BLOCK], dtype=tl.float32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        v = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        d = tl.where(cols < N, v - mean, 0.0)
        sq += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(sq, axis=0) / N + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        inside = cols < N
        w = tl.load(w_ptr + cols, mask=inside)
        b = tl.load(b_ptr + cols, mask=inside)
        v = tl.load(x_row + cols, mask=inside, other=0.0).to(tl.float32)
        y = (v - mean) * rstd * w + b
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=inside)


@triton.jit
def layer_norm_bwd_dx(dx_ptr, dy_ptr, dw_part_ptr, db_part_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr,
                      lock_ptr, row_stride, N, GROUPS: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    inside = cols < N
    x = tl.load(x_ptr + row * row_stride + cols, mask=inside, other=0).to(tl.float32)
    dy = tl.load(dy_ptr + row * row_stride + cols, mask=inside, other=0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=inside).to(tl.float32)
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    xhat = tl.where(inside, (x - mean) * rstd, 0.0)
    wdy = tl.where(inside, w * dy, 0.0)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(dx_ptr + row * row_stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=inside)

    # Add this row's contribution to partial row `group` of dw and db.
    group = row % GROUPS
    lock = lock_ptr + group
    first_flag = lock_ptr + GROUPS + group
    dw = dy * xhat
    db = dy
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    if tl.load(first_flag) == 0:
        tl.atomic_xchg(first_flag, 1)
    else:
        dw += tl.load(dw_part_ptr + group * N + cols, mask=inside)
        db += tl.load(db_part_ptr + group * N + cols, mask=inside)
    tl.store(dw_part_ptr + group * N + cols, dw, mask=inside)
    tl.store(db_part_ptr + group * N + cols, db, mask=inside)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


@triton.jit
def layer_norm_bwd_dwdb(dw_part_ptr, db_part_ptr, dw_ptr, db_ptr, G, N,
                        BLOCK_G: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    dw = tl.zeros((BLOCK_G, BLOCK_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_G, BLOCK_N), dtype=tl.float32)
    for g0 in range(0, G, BLOCK_G):
        rows = g0 + tl.arange(0, BLOCK_G)
        inside = (rows[:, None] < G) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(dw_part_ptr + offs, mask=inside, other=0.0)
        db += tl.load(db_part_ptr + offs, mask=inside, other=0.0)
    tl.store(dw_ptr + cols, tl.sum(dw, axis=0).to(tl.float16), mask=cols < N)
    tl.store(db_ptr + cols, tl.sum(db, axis=0).to(tl.float16), mask=cols < N)
