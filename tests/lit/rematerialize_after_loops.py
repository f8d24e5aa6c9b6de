# A tile's offsets and bounds mask, computed before a loop for a load and
# needed again after it for a store, are recomputed after the loop from
# %tid/%ctaid and the arguments (compiler/target/RematerializeAfterLoops.cpp)
# rather than kept alive through it: the special registers are read again
# after the loop, and the store's addresses and predicates come from them.
# RUN: %kilnc compile %s -n rows_after_loop -s "x_ptr=*fp32:16, y_ptr=*fp32:16, n=i32, steps=i32, BLOCK=512" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=AFTER
import triton
import triton.language as tl


# AFTER: mov.u32 %r{{[0-9]+}}, %ctaid.x;
# AFTER: ld.global
# AFTER: fma.rn.f32
# AFTER: mov.u32 %r{{[0-9]+}}, %ctaid.x;
# AFTER: mov.u32 [[TID:%r[0-9]+]], %tid.x;
# AFTER: shl.b32 {{%r[0-9]+}}, [[TID]], 2;
# AFTER: setp.lt.s32 [[P:%p[0-9]+]]
# AFTER: @[[P]] st.global
@triton.jit
def rows_after_loop(x_ptr, y_ptr, n, steps, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    acc = x
    for i in range(steps):
        acc = acc * 0.5 + x
    tl.store(y_ptr + offs, acc, mask=mask)
