# dtype predicates are methods (x.dtype.is_int()), evaluated at compile time
# so that `if` on them is static; int1 counts as unsigned, as in Triton.
# tl.constexpr(value) wraps a compile-time value (module-level globals).
# RUN: %kilnc compile %s -n dispatch -s "*fp16, *fp16" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=HALF
# RUN: %kilnc compile %s -n dispatch -s "*i32, *i32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=INT
# RUN: %kilnc compile %s -n predicates -s "*i1, *u8, *fp8e5" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=PRED
import triton
import triton.language as tl

SCALE = tl.constexpr(3)
HALF = triton.language.constexpr(0.5)


# HALF-LABEL: func.func @dispatch
# HALF: arith.extf
# HALF: arith.mulf
# HALF-NOT: arith.shrsi
# INT-LABEL: func.func @dispatch
# INT: arith.shrsi
# INT: arith.muli
@triton.jit
def dispatch(x_ptr, out_ptr):
    r = tl.arange(0, 64)
    x = tl.load(x_ptr + r)
    if x.dtype.is_fp16():
        y = (x.to(tl.float32) * HALF).to(tl.float16)
    elif x.dtype.is_int():
        y = (x >> 1) * SCALE
    else:
        y = x
    tl.store(out_ptr + r, y)


# PRED-LABEL: func.func @predicates
@triton.jit
def predicates(b_ptr, u_ptr, f_ptr):
    tl.static_assert(b_ptr.dtype.element_ty.is_int_unsigned())
    tl.static_assert(not b_ptr.dtype.element_ty.is_int_signed())
    tl.static_assert(b_ptr.dtype.element_ty.is_bool())
    tl.static_assert(u_ptr.dtype.element_ty.is_uint8())
    tl.static_assert(f_ptr.dtype.element_ty.is_fp8())
    tl.static_assert(not f_ptr.dtype.element_ty.is_standard_floating())
    tl.static_assert(f_ptr.dtype.is_ptr())
