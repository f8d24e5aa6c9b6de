# A thread's consecutive offsets (x | 1, x | 2, x | 3: InstCombine's
# disjoint ors) multiplied by a constant whose high half is also taken
# (Philox's rounds): one mul.lo and adds of multiples of the constant, as
# Triton's LLVM emits them, not a mul.lo per element. The NVPTX back end's
# strength reduction sees adds only (compiler/target/DisjointOrsAsAdds.h),
# and mul.hi goes through NVVM's intrinsic.
# RUN: %kilnc compile %s -n hashed_offsets -s "*u32:16, i32:16, 512" --arch sm_90a --emit ptx -o - | FileCheck %s
# CHECK-COUNT-4: mul.hi.u32
# CHECK-NOT: mul.hi
# CHECK: mul.lo.s32 [[BASE:%r[0-9]+]], {{%r[0-9]+}}, -1640531535;
# CHECK-NEXT: add.s32 {{%r[0-9]+}}, [[BASE]], -1640531535;
# CHECK-NOT: mul.lo
# CHECK: st.global.v4.b32
import triton
import triton.language as tl


@triton.jit
def hashed_offsets(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    u = offs.to(tl.uint32, bitcast=True)
    h = tl.umulhi(u, 2654435761) ^ (u * 2654435761)
    tl.store(out_ptr + offs, h, mask=offs < n)
