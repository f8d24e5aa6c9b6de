# Idioms of the thirteenth real-world sample that kilnc rejected and upstream
# Triton 3.6 compiles: a tensor's operator methods called by name (FLASHNN's
# int4 unpacking `b.__lshift__(4).to(tl.int8).__rshift__(4)`), reflected ones
# taking the receiver as the right operand, and `num_stages=0` (FLASHNN's
# paged-attention configs), which upstream takes as no pipelining, as 1.
# RUN: %kilnc compile %s -n unpack -s "b_ptr=*u8, out_ptr=*fp16, BLOCK=64" --arch sm_90a --emit kiln -o - | FileCheck %s
# RUN: %kilnc compile %s -n reflected -s "x_ptr=*i32, out_ptr=*i32, BLOCK=64" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=REFLECTED
# RUN: %kilnc compile %s -n compares -s "x_ptr=*fp16, out_ptr=*i1, BLOCK=64" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=COMPARE
# RUN: %kilnc compile %s -n unpack -s "b_ptr=*u8, out_ptr=*fp16, BLOCK=64, num_stages=0" --arch sm_90a --emit kiln -o - | FileCheck %s
# RUN: not %kilnc compile %s -n unpack -s "b_ptr=*u8, out_ptr=*fp16, BLOCK=64, num_warps=0" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=WARPS
# RUN: not %kilnc compile %s -n bad_arity -s "x_ptr=*i32, BLOCK=64" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=ARITY
import triton
import triton.language as tl

# The low nibble sign-extended from int8 (shift left logically, then right
# arithmetically), the high one shifted logically in uint8.
# CHECK-LABEL: func.func @unpack
# CHECK: %[[B:.*]] = kiln.load
# CHECK: %[[L:.*]] = arith.shli %[[B]], %{{.*}} : tensor<64xi8>
# CHECK: %[[S:.*]] = arith.shrsi %[[L]], %{{.*}} : tensor<64xi8>
# CHECK: arith.sitofp %[[S]]
# CHECK: %[[H:.*]] = arith.shrui %[[B]], %{{.*}} : tensor<64xi8>
# CHECK: arith.uitofp %[[H]]


@triton.jit
def unpack(b_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    b = tl.load(b_ptr + offs)
    low = b.__lshift__(4).to(tl.int8).__rshift__(4).to(tl.float16)
    high = b.__rshift__(4).to(tl.float16)
    tl.store(out_ptr + offs, low + high)


# `x.__rsub__(1)` is 1 - x; `x.__neg__()` is -x; `x.__rfloordiv__(7)` is 7 // x.
# REFLECTED-LABEL: func.func @reflected
# REFLECTED-DAG: %[[SEVEN:.*]] = arith.constant dense<7> : tensor<64xi32>
# REFLECTED-DAG: %[[ZERO:.*]] = arith.constant dense<0> : tensor<64xi32>
# REFLECTED-DAG: %[[ONE:.*]] = arith.constant dense<1> : tensor<64xi32>
# REFLECTED: %[[X:.*]] = kiln.load
# REFLECTED: arith.subi %[[ONE]], %[[X]]
# REFLECTED: arith.subi %[[ZERO]], %[[X]]
# REFLECTED: arith.divsi %[[SEVEN]], %[[X]]


@triton.jit
def reflected(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = x.__rsub__(1) + x.__neg__() + x.__rfloordiv__(7)
    tl.store(out_ptr + offs, y)


# A compare's python number takes the compared value's type as `x > 0.5`
# does: fp16 against 0.5 compares in fp32.
# COMPARE-LABEL: func.func @compares
# COMPARE: arith.extf
# COMPARE: arith.cmpf ogt
# COMPARE: arith.cmpf ole


@triton.jit
def compares(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x.__gt__(0.5) & x.__le__(2.0))


# WARPS: option 'num_warps' needs a positive integer, got '0'


# ARITY: thirteenth_sample_idioms.py:[[@LINE+5]]:9: error: __add__ takes one value
@triton.jit
def bad_arity(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = x.__add__()
    tl.store(x_ptr + offs, y)
