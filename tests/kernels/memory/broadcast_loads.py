# Loads whose addresses repeat along a dimension: a per-row scale read
# through a full tile of pointers (`rows[:, None] + cols[None, :] * 0`), and
# one whose repeats end where a mask cuts the tile. kilnc loads each run of
# equal addresses and masks once per thread.
#
# kiln-variant: -n row_broadcast -s "s_ptr=*fp32:16, x_ptr=*fp32:16, y_ptr=*fp32:16, M=i32, BM=64, BN=64"
# kiln-variant: -n row_broadcast -s "s_ptr=*fp16, x_ptr=*fp16, y_ptr=*fp16, M=i32, BM=32, BN=128"
# kiln-covers: row_broadcast: x[:, None]; x[None, :]; broadcasting; pointer arithmetic
import triton
import triton.language as tl


@triton.jit
def row_broadcast(s_ptr, x_ptr, y_ptr, M, BM: tl.constexpr, BN: tl.constexpr):
    # y = x * s[:, None] over the first M rows of a [*, BN] tile; s is read
    # through a tile of pointers, each row's repeated across the columns.
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    mask = (rows < M)[:, None] & (cols < BN)[None, :]
    s = tl.load(s_ptr + rows[:, None] + cols[None, :] * 0, mask=mask, other=0.0)
    x = tl.load(x_ptr + rows[:, None] * BN + cols[None, :], mask=mask, other=0.0)
    tl.store(y_ptr + rows[:, None] * BN + cols[None, :], x * s, mask=mask)
