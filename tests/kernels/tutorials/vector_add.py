# Tutorial (our version): element-wise sum of two vectors, one tile per program.
#
# kiln-variant: -n vector_add -s "a_ptr=*fp32, b_ptr=*fp32, c_ptr=*fp32, numel=i32, TILE=1024"
# kiln-variant: -n vector_add -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp16, numel=i32, TILE=2048, num_warps=8"
# kiln-variant: -n vector_add -s "a_ptr=*bf16, b_ptr=*bf16, c_ptr=*bf16, numel=i64, TILE=512"
# kiln-covers: vector_add: import triton; import triton.language as tl; assignment; tl.program_id; tl.arange; tl.load(mask=); tl.store(mask=); + - * /; keyword argument; tl.float16; tl.bfloat16; tl.float32
import triton
import triton.language as tl


@triton.jit
def vector_add(a_ptr, b_ptr, c_ptr, numel, TILE: tl.constexpr):
    first = tl.program_id(axis=0) * TILE
    idx = first + tl.arange(0, TILE)
    inside = idx < numel
    a = tl.load(a_ptr + idx, mask=inside)
    b = tl.load(b_ptr + idx, mask=inside)
    tl.store(c_ptr + idx, a + b, mask=inside)
