# Scans: tl.cumsum and tl.cumprod (forward and reverse, along either axis of a
# 2-D tile) and tl.associative_scan with a jit combine function, including a
# two-block (tuple) scan that computes a segmented sum.
#
# kiln-variant: -n prefix_sums -s "x_ptr=*fp32, sum_ptr=*fp32, prod_ptr=*fp32, n=i32, BLOCK=1024"
# kiln-variant: -n prefix_sums -s "x_ptr=*i32, sum_ptr=*i32, prod_ptr=*i32, n=i32, BLOCK=256"
# kiln-variant: -n tile_scans -s "x_ptr=*fp32, out_ptr=*fp32, BM=16, BN=64"
# kiln-variant: -n tile_scans -s "x_ptr=*fp32, out_ptr=*fp32, BM=128, BN=8"
# kiln-variant: -n tile_scans -s "x_ptr=*fp32, out_ptr=*fp32, BM=2, BN=1024, num_warps=8"
# kiln-variant: -n tile_int_cumsum -s "x_ptr=*i32, out_ptr=*i32, BM=64, BN=32, num_warps=8"
# kiln-variant: -n tile_running_argmax -s "x_ptr=*fp32, val_ptr=*fp32, idx_ptr=*i32, AXIS=0, BM=64, BN=16"
# kiln-variant: -n tile_running_argmax -s "x_ptr=*fp32, val_ptr=*fp32, idx_ptr=*i32, AXIS=1, BM=8, BN=256"
# kiln-variant: -n running_max -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=512"
# kiln-variant: -n segmented_sum -s "x_ptr=*fp32, flag_ptr=*i32, out_ptr=*fp32, n=i32, BLOCK=512"
# kiln-variant: -n scan_of_dot -s "a_ptr=*bf16:16, b_ptr=*bf16:16, out_ptr=*fp32:16, n=i32:16, BM=32, BN=32, BK=64"
# kiln-variant: -n widened_cumsum -s "x_ptr=*bf16:16, out_ptr=*fp32:16, REVERSE=False, BM=64, BN=64"
# kiln-variant: -n widened_cumsum -s "x_ptr=*bf16:16, out_ptr=*fp32:16, REVERSE=True, BM=64, BN=64, num_warps=8"
# kiln-covers: prefix_sums: tl.cumsum; tl.cumprod
# kiln-covers: widened_cumsum: tl.cumsum; scans (reverse=)
# kiln-covers: scan_of_dot: tl.cumsum; tl.dot
# kiln-covers: tile_scans: tl.cumsum; tl.cumprod; scans (reverse=)
# kiln-covers: running_max: tl.associative_scan; tl.maximum
# kiln-covers: tile_int_cumsum: tl.cumsum; scans (reverse=)
# kiln-covers: tile_running_argmax: tl.associative_scan; helper returning a tuple
# kiln-covers: segmented_sum: tl.associative_scan; helper returning a tuple; tuple unpacking
import triton
import triton.language as tl


@triton.jit
def prefix_sums(x_ptr, sum_ptr, prod_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(sum_ptr + offs, tl.cumsum(x, axis=0), mask=offs < n)
    ones = tl.where(offs < n, x, 1)
    tl.store(prod_ptr + offs, tl.cumprod(ones, 0), mask=offs < n)


@triton.jit
def tile_scans(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.arange(0, BM)[:, None]
    c = tl.arange(0, BN)[None, :]
    x = tl.load(x_ptr + r * BN + c)
    along_rows = tl.cumsum(x, axis=1)
    down_cols = tl.cumsum(x, axis=0, reverse=True)
    prods = tl.cumprod(x * 0.5, axis=1, reverse=True)
    tl.store(out_ptr + r * BN + c, along_rows + down_cols + prods)


@triton.jit
def tile_int_cumsum(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    # Integer sums: exact, so any order of combining gives the same bits.
    r = tl.arange(0, BM)[:, None]
    c = tl.arange(0, BN)[None, :]
    x = tl.load(x_ptr + r * BN + c)
    down = tl.cumsum(x, axis=0)
    back = tl.cumsum(x, axis=1, reverse=True)
    tl.store(out_ptr + r * BN + c, down * 3 + back)


@triton.jit
def _running_argmax(v1, i1, v2, i2):
    take = v2 > v1
    return tl.where(take, v2, v1), tl.where(take, i2, i1)


@triton.jit
def tile_running_argmax(x_ptr, val_ptr, idx_ptr, AXIS: tl.constexpr, BM: tl.constexpr,
                        BN: tl.constexpr):
    # A two-operand scan along either axis: the running maximum and where it is.
    r = tl.arange(0, BM)[:, None]
    c = tl.arange(0, BN)[None, :]
    x = tl.load(x_ptr + r * BN + c)
    v, i = tl.associative_scan((x, r * BN + c), AXIS, _running_argmax)
    tl.store(val_ptr + r * BN + c, v)
    tl.store(idx_ptr + r * BN + c, i)


@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@triton.jit
def running_max(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=float("-inf"))
    tl.store(out_ptr + offs, tl.associative_scan(x, 0, _max_combine), mask=offs < n)


@triton.jit
def _segment_combine(v_left, f_left, v_right, f_right):
    # A flag starts a new segment: the sum restarts at that element.
    return tl.where(f_right != 0, v_right, v_left + v_right), f_left | f_right


@triton.jit
def segmented_sum(x_ptr, flag_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    f = tl.load(flag_ptr + offs, mask=offs < n, other=0)
    sums, flags = tl.associative_scan((x, f), axis=0, combine_fn=_segment_combine)
    tl.store(out_ptr + offs, sums, mask=offs < n)


@triton.jit
def scan_of_dot(a_ptr, b_ptr, out_ptr, n, BM: tl.constexpr, BN: tl.constexpr,
                BK: tl.constexpr):
    # A dot's result summed along its rows and scanned along them, with the
    # running row sum carried across the loop (Mamba-2's ddA_cumsum
    # backward): the tile's column sums of the masked running prefix.
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    rowsum = tl.zeros((BM,), dtype=tl.float32)
    for start in range(0, n, BN):
        b = tl.load(b_ptr + rk[:, None] * n + start + rn[None, :])
        acc = tl.dot(a, b)
        mask = rm[:, None] >= start + rn[None, :]
        acc = tl.where(mask, acc, 0.0)
        rowsum_new = rowsum + tl.sum(acc, axis=1)
        acc = rowsum[:, None] + tl.cumsum(acc, axis=1)
        rowsum = rowsum_new
        acc = tl.where(mask, acc, 0.0)
        tl.store(out_ptr + start + rn, tl.sum(acc, axis=0))


@triton.jit
def widened_cumsum(x_ptr, out_ptr, REVERSE: tl.constexpr, BM: tl.constexpr,
                   BN: tl.constexpr):
    # bf16 in, fp32 out, scanned down the columns (FLA's chunk-local gate
    # cumsums): each thread holds one 16-byte fp32 store of a row, so the
    # scan has 2 lanes along the rows, not the 4 of 16-byte bf16 loads.
    r = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    c = tl.arange(0, BN)[None, :]
    x = tl.load(x_ptr + r * BN + c).to(tl.float32)
    tl.store(out_ptr + r * BN + c, tl.cumsum(x, axis=0, reverse=REVERSE))
