# An integer element-wise result that repeats along the last dimension (axis
# info's constancy) is computed once per run of registers, as upstream does:
# with n a multiple of 16 and 4 contiguous elements per thread, `offs < n`
# is one compare per thread, not four. Without the divisibility, four.
# RUN: %kilnc compile %s -n masked_scale -s "x_ptr=*fp32:16, n=i32:16, BLOCK=512" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=ALIGNED
# RUN: %kilnc compile %s -n masked_scale -s "x_ptr=*fp32:16, n=i32, BLOCK=512" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=GENERAL
import triton
import triton.language as tl


# ALIGNED-COUNT-1: setp.lt.s32
# ALIGNED-NOT: setp.lt.s32
# ALIGNED: st.global.v4.b32
# GENERAL-COUNT-4: setp.lt.s32
@triton.jit
def masked_scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, tl.where(offs < n, x * 2, 0.0))
