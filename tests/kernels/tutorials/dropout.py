# Tutorial (our version): dropout. The first kernel reads a keep-mask from
# memory; the second regenerates it from a seed and each element's offset with
# the Philox generator, so the backward pass needs only the seed.
#
# kiln-variant: -n masked_dropout -s "x_ptr=*fp32, keep_ptr=*i8, out_ptr=*fp32, n=i32, p=fp32, BLOCK=1024"
# kiln-variant: -n seeded_dropout -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, p=fp32, seed=i32, BLOCK=1024"
# kiln-variant: -n seeded_dropout -s "x_ptr=*fp16, out_ptr=*fp16, n=i32, p=fp32, seed=i64, BLOCK=2048"
# kiln-covers: masked_dropout: tl.where; tl.int8; scalar vs tensor
# kiln-covers: seeded_dropout: tl.rand; tl.where; tl.float16
import triton
import triton.language as tl


@triton.jit
def masked_dropout(x_ptr, keep_ptr, out_ptr, n, p, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    valid = offs < n
    x = tl.load(x_ptr + offs, mask=valid)
    keep = tl.load(keep_ptr + offs, mask=valid)
    scale = 1.0 / (1.0 - p)
    tl.store(out_ptr + offs, tl.where(keep != 0, x * scale, 0.0), mask=valid)


@triton.jit
def seeded_dropout(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    valid = offs < n
    x = tl.load(x_ptr + offs, mask=valid)
    # Uniform in [0, 1): the same (seed, offset) gives the same number.
    u = tl.rand(seed, offs)
    kept = u >= p
    y = tl.where(kept, x / (1 - p), 0.0)
    tl.store(out_ptr + offs, y.to(x.dtype), mask=valid)
