# A tile converted to fp8 two elements a cvt keeps each pair whole: where a
# store packs the bytes into words, two pairs make a word with one mov.b32
# (lanes of a 2 x i8 view, Fp8CastsToLLVM's truncPairToFp8), not a cvt and
# a bfi for each byte past the first pair (torchao's fp8 quantizers: 160
# instructions a thread more than Triton's).
# RUN: %kilnc compile %s -n to_fp8 -s "*fp32:16, *fp8e4nv:16, False" --arch sm_90a --emit ptx -o - | FileCheck %s
# RUN: %kilnc compile %s -n to_fp8 -s "*fp32:16, *fp8e4nv:16, True" --arch sm_90a --emit ptx -o - | FileCheck %s
# CHECK-NOT: bfi.b32
# CHECK: cvt.rn.satfinite.e4m3x2.f32 [[LO:%rs[0-9]+]],
# CHECK-NEXT: // end inline asm
# CHECK-NEXT: // begin inline asm
# CHECK-NEXT: cvt.rn.satfinite.e4m3x2.f32 [[HI:%rs[0-9]+]],
# CHECK-NOT: bfi.b32
# CHECK: mov.b32 {{%r[0-9]+}}, {[[LO]], [[HI]]};
# CHECK-NOT: bfi.b32
# CHECK: st.global
import triton
import triton.language as tl


@triton.jit
def to_fp8(x_ptr, y_ptr, TRANSPOSED: tl.constexpr):
    rows = tl.arange(0, 64)
    cols = tl.arange(0, 64)
    x = tl.load(x_ptr + rows[:, None] * 64 + cols[None, :])
    y = tl.clamp(x * 2.0, -448.0, 448.0).to(y_ptr.dtype.element_ty)
    if TRANSPOSED:
        tl.store(y_ptr + cols[:, None] + rows[None, :] * 64, y.trans(1, 0))
    else:
        tl.store(y_ptr + rows[:, None] * 64 + cols[None, :], y)
