# tl.sort along the last axis, ascending and descending, on floats and ints;
# tl.topk (the k largest of each row, in descending order).
#
# kiln-variant: -n sort_rows -s "x_ptr=*fp32, out_ptr=*fp32, DESCENDING=False, N=128"
# kiln-variant: -n sort_rows -s "x_ptr=*i32, out_ptr=*i32, DESCENDING=True, N=256"
# kiln-variant: -n sort_rows -s "x_ptr=*fp16, out_ptr=*fp16, DESCENDING=True, N=64"
# kiln-variant: -n sort_tile -s "x_ptr=*u32, out_ptr=*u32, BM=8, BN=32"
# kiln-variant: -n topk_rows -s "x_ptr=*fp32, out_ptr=*fp32, N=128, K=8"
# kiln-variant: -n topk_rows -s "x_ptr=*i32, out_ptr=*i32, N=64, K=64"
# kiln-variant: -n topk_rows -s "x_ptr=*fp16, out_ptr=*fp16, N=256, K=2"
# kiln-covers: sort_rows: tl.sort; bool literal
# kiln-covers: topk_rows: tl.topk
# kiln-covers: sort_tile: tl.sort; keyword argument
import triton
import triton.language as tl


@triton.jit
def sort_rows(x_ptr, out_ptr, DESCENDING: tl.constexpr, N: tl.constexpr):
    row = tl.program_id(0)
    offs = row * N + tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.sort(x, descending=DESCENDING))


@triton.jit
def sort_tile(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.arange(0, BM)[:, None]
    c = tl.arange(0, BN)[None, :]
    x = tl.load(x_ptr + r * BN + c)
    tl.store(out_ptr + r * BN + c, tl.sort(x, dim=1))


@triton.jit
def topk_rows(x_ptr, out_ptr, N: tl.constexpr, K: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * N + tl.arange(0, N))
    tl.store(out_ptr + row * K + tl.arange(0, K), tl.topk(x, K))
