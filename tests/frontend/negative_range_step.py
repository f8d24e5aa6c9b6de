# A compile-time negative step counts down, with run-time bounds too (found
# in torchao's int8 GEMM, `for k in range(K, 0, -BLOCK_K)`, which kilnc used
# to compile to no loop at all): the loop runs over [stop, start) by the
# step's magnitude and the body sees start + stop - iv. A zero step is an
# error, as in Python.
# RUN: %kilnc compile %s -n countdown -s "out_ptr=*i32, K=i32, BLOCK=64" --arch sm_90a --emit kiln -o - | FileCheck %s
# RUN: not %kilnc compile %s -n zero_step -s "out_ptr=*i32, K=i32" --arch sm_90a --emit kiln -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO
import triton
import triton.language as tl


# CHECK: scf.for %[[IV:.*]] = %c0_i32 to %arg1 step %c64_i32
# CHECK-NEXT: %[[K:.*]] = arith.subi %arg1, %[[IV]] : i32
# CHECK: scf.for %[[J:.*]] = %c-4_i32 to %c3_i32 step %c3_i32
# CHECK: arith.subi %c-1_i32, %[[J]] : i32
@triton.jit
def countdown(out_ptr, K, BLOCK: tl.constexpr):
    acc = 0
    for k in range(K, 0, -BLOCK):
        acc += k
    for j in range(3, -4, -3):
        acc += j
    tl.store(out_ptr, acc)


# ZERO: negative_range_step.py:[[@LINE+3]]:26: error: range() step must not be zero
@triton.jit
def zero_step(out_ptr, K):
    for k in range(K, 0, 0):
        tl.store(out_ptr, k)
