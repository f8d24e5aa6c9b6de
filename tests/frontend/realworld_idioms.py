# Idioms of the second real-world sample (issue 13) that the front end took
# as errors: Python's math on module-level constants, tl.cast of a number,
# `.to` of a number a loop then carries, a cast to the same type with a
# rounding mode (no conversion, as in Triton), tl.range(..., step=...), and
# libdevice.fast_tanhf.
# RUN: %kilnc compile %s -n idioms -s "x_ptr=*fp32, y_ptr=*fp32, n=i32, NT=4, BLOCK=64" --arch sm_90a --emit kiln -o - | FileCheck %s
# RUN: %kilnc compile %s -n idioms -s "x_ptr=*fp32, y_ptr=*fp32, n=i32, NT=4, BLOCK=64" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=NOTRUNC
# RUN: not %kilnc compile %s -n bad_math -s "x_ptr=*fp32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=BAD
import math

import triton
import triton.language as tl
from triton.language.extra import libdevice

ALPHA = tl.constexpr(math.sqrt(2.0 / math.pi))
FLOOR = tl.constexpr(math.floor(math.log2(1000.0)))


# sqrt(2/pi) and floor(log2(1000)) = 9 folded at compile time; tl.cast(0,
# tl.int64) an i64 zero; no conversion for fp32 to fp32 with a rounding mode;
# i_t carried as i32 after starting as the int 0; the step by keyword.
# CHECK-LABEL: func.func @idioms
# CHECK-DAG: %c0_i64 = arith.constant 0 : i64
# CHECK-DAG: %[[TWO:.*]] = arith.constant 2 : i32
# CHECK-DAG: arith.constant dense<9.000000e+00> : tensor<64xf32>
# CHECK-DAG: arith.constant dense<0.797884583> : tensor<64xf32>
# CHECK: kiln.extern_elementwise "__nv_fast_tanhf"
# CHECK: scf.for {{.*}} iter_args({{.*}}) -> (i32, tensor<64xf32>)
# CHECK: arith.extsi {{.*}} : i32 to i64
# CHECK: scf.for %{{.*}} = %{{.*}} to %arg2 step %[[TWO]]
# CHECK: kiln.addptr %arg1, %c0_i64
# NOTRUNC-NOT: arith.truncf
@triton.jit
def idioms(x_ptr, y_ptr, n, NT: tl.constexpr, BLOCK: tl.constexpr):
    # sqrt(2/pi) = 0.797884583
    # floor(log2(1000)) = 9
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = x * ALPHA + FLOOR
    # tl.cast(0, tl.int64): an i64 zero
    start = tl.cast(0, dtype=tl.int64)
    # The same type with a rounding mode: no conversion at all.
    y = y.to(tl.float32, fp_downcast_rounding="rtne")
    y = libdevice.fast_tanhf(y)
    # i_t starts as the int 0; the loop carries it as i32.
    i_t = 0
    for _ in range(NT):
        y += i_t.to(tl.int64).to(tl.float32)
        i_t += 1
    for i in tl.range(0, n, step=2, num_stages=2):
        y += i
    tl.store(y_ptr + start + offs, y, mask=offs < n)


@triton.jit
def bad_math(x_ptr):
    x = tl.load(x_ptr)
    # BAD: realworld_idioms.py:[[@LINE+1]]:31: error: math.sqrt needs a compile-time number, got a run-time scalar of type fp32; on run-time values use the tl. function
    tl.store(x_ptr, math.sqrt(x))
