# Tuple kernel parameters (upstream 3.x: a tensor's strides passed as one
# argument, `x.stride()`): indexing (negative too), len, unpacking, passing
# the tuple to a helper; a `:1` element is the constant 1.
#
# kiln-variant: -n strided_transpose -s "x_ptr=*fp32, out_ptr=*fp32, M=i32, N=i32, x_strides=(i32, i32:1), out_strides=(i32, i32), BM=32, BN=32"
# kiln-variant: -n strided_transpose -s "*fp32, *fp32, i32, i32, (i32:16, i32), (i32, i32:1), 16, 64"
# kiln-covers: strided_transpose: tuple parameter
import triton
import triton.language as tl


@triton.jit
def _tile_offsets(strides, rows, cols):
    return rows[:, None] * strides[0] + cols[None, :] * strides[-1]


@triton.jit
def strided_transpose(x_ptr, out_ptr, M, N, x_strides, out_strides,
                      BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + _tile_offsets(x_strides, rows, cols), mask=mask)
    tl.static_assert(len(out_strides) == 2)
    out_row, out_col = out_strides
    tl.store(out_ptr + cols[None, :] * out_row + rows[:, None] * out_col, x,
             mask=mask)
