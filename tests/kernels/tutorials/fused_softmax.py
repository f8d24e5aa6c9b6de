# Tutorial (our version): numerically stable softmax of each row, the whole row
# in registers. Programs stride over the rows so that a grid of "one program
# per SM" covers any number of rows.
#
# kiln-variant: -n softmax_rows -s "out_ptr=*fp32, in_ptr=*fp32, in_row_stride=i32, out_row_stride=i32, n_rows=i32, n_cols=i32, BLOCK=1024, STAGES=2"
# kiln-variant: -n softmax_rows -s "out_ptr=*fp16, in_ptr=*fp16, in_row_stride=i32, out_row_stride=i32, n_rows=i32, n_cols=i32, BLOCK=4096, STAGES=3, num_warps=16"
# kiln-variant: -n softmax_one_row -s "out_ptr=*fp32, in_ptr=*fp32, row_stride=i64, n_cols=i32, BLOCK=256"
# kiln-covers: softmax_rows: tl.num_programs; tl.range(num_stages=, loop_unroll_factor=); for over tl.range; tl.load(mask=, other=); float("inf"); unary - +; tl.max; tl.sum; tl.exp; .to(dtype); ptr.dtype.element_ty
# kiln-covers: softmax_one_row: tl.max; tl.sum; tl.exp; float("inf"); tl.int64
import triton
import triton.language as tl


@triton.jit
def softmax_rows(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols,
                 BLOCK: tl.constexpr, STAGES: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    in_row = cols < n_cols
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=STAGES):
        x = tl.load(in_ptr + row * in_row_stride + cols, mask=in_row, other=-float("inf"))
        x = x.to(tl.float32)
        shifted = x - tl.max(x, axis=0)
        num = tl.exp(shifted)
        den = tl.sum(num, axis=0)
        y = num / den
        tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=in_row)


@triton.jit
def softmax_one_row(out_ptr, in_ptr, row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * row_stride + cols, mask=cols < n_cols, other=float("-inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(out_ptr + row * row_stride + cols, e / tl.sum(e, 0), mask=cols < n_cols)
