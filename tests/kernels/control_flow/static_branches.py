# `if` on compile-time values is resolved while compiling: only the taken
# branch is emitted, so the others may even be ill-typed for this variant.
#
# kiln-variant: -n epilogue -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, MODE=0, BLOCK=256"
# kiln-variant: -n epilogue -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, MODE=1, BLOCK=256"
# kiln-variant: -n epilogue -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, MODE=2, BLOCK=256"
# kiln-variant: -n epilogue -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, MODE=3, BLOCK=256"
# kiln-variant: -n optional_bias -s "x_ptr=*fp32, bias_ptr=*fp32, out_ptr=*fp32, n=i32, HAS_BIAS=True, BLOCK=128"
# kiln-variant: -n optional_bias -s "x_ptr=*fp32, bias_ptr=*fp32, out_ptr=*fp32, n=i32, HAS_BIAS=False, BLOCK=128"
# kiln-variant: -n dtype_dispatch -s "x_ptr=*fp16, out_ptr=*fp16, n=i32, BLOCK=128"
# kiln-variant: -n dtype_dispatch -s "x_ptr=*i32, out_ptr=*i32, n=i32, BLOCK=128"
# kiln-covers: epilogue: if on constexpr; elif/else on constexpr; == on constexprs
# kiln-covers: optional_bias: if on constexpr; and/or/not on constexprs; bool literal
# kiln-covers: dtype_dispatch: .dtype; if on constexpr; elif/else on constexpr; tl.float16; tl.int32
import triton
import triton.language as tl


@triton.jit
def epilogue(x_ptr, out_ptr, n, MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if MODE == 0:
        y = x
    elif MODE == 1:
        y = tl.maximum(x, 0.0)
    elif MODE == 2:
        y = x * tl.sigmoid(x)
    else:
        y = -x
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def optional_bias(x_ptr, bias_ptr, out_ptr, n, HAS_BIAS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    y = tl.load(x_ptr + offs, mask=offs < n)
    if HAS_BIAS and BLOCK >= 64:
        y += tl.load(bias_ptr + offs, mask=offs < n)
    if not HAS_BIAS or BLOCK < 64:
        y = y * 2
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def dtype_dispatch(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if x.dtype == tl.float16:
        y = (x.to(tl.float32) * 0.5).to(tl.float16)
    elif x.dtype.is_int():
        y = x >> 1
    else:
        y = x
    tl.store(out_ptr + offs, y, mask=offs < n)
