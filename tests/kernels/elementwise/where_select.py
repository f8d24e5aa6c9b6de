# Selection: tl.where with block and scalar branches, minimum/maximum with
# NaN propagation, masks of every shape, and `other` cast to the element type.
#
# kiln-variant: -n select_kernel -s "c_ptr=*i1, x_ptr=*fp32, y_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=512"
# kiln-variant: -n nan_aware -s "x_ptr=*fp32, y_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=512"
# kiln-variant: -n other_casting -s "x_ptr=*fp16, out_ptr=*fp16, i_ptr=*u8, iout_ptr=*i32, n=i32, BLOCK=256"
# kiln-covers: select_kernel: tl.where; tl.int1; scalar vs tensor; broadcasting
# kiln-covers: nan_aware: tl.minimum; tl.maximum; tl.clamp
# kiln-covers: other_casting: mask and other casting; tl.load(mask=, other=)
import triton
import triton.language as tl


@triton.jit
def select_kernel(c_ptr, x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    c = tl.load(c_ptr + offs, mask=m, other=0)
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    r = tl.where(c, x, y)
    r = tl.where(r > 0, r, 0)          # scalar branch
    r = tl.where(offs % 2 == 0, r, -1.0)
    tl.store(out_ptr + offs, r, mask=m)


@triton.jit
def nan_aware(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    a = tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL)
    b = tl.minimum(x, y, propagate_nan=tl.PropagateNan.NONE)
    c = tl.clamp(x, -1.0, 1.0)
    tl.store(out_ptr + offs, a + b + c, mask=m)


@triton.jit
def other_casting(x_ptr, out_ptr, i_ptr, iout_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=float("inf"))   # float → fp16
    i = tl.load(i_ptr + offs, mask=offs < n, other=255)            # int → uint8
    tl.store(out_ptr + offs, x, mask=offs < n)
    tl.store(iout_ptr + offs, i, mask=offs < n)                    # uint8 → int32 on store
