# A loop carries every name its body rebinds, however many rounds of probing
# it takes to find them. Here each name is rebound only under a condition on
# the next one, which reads as a Python number until that one is found to be
# carried: one new name per round, eleven in all. Inference used to stop
# after a fixed number of rounds and emit the loop without a8 and a9, so the
# store after it wrote the constant 0.
# RUN: %kilnc compile %s -n chain -s "out_ptr=*i32, N=i32" --arch sm_90a --emit kiln -o - | FileCheck %s
# RUN: %kilnc compile %s -n chain_for -s "out_ptr=*i32, N=i32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=FOR
# RUN: not %kilnc compile %s -n flip -s "out_ptr=*fp32, N=i32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=FLIP
import triton
import triton.language as tl


# CHECK-LABEL: func.func @chain
# CHECK: %[[W:.*]]:11 = scf.while
# CHECK-SAME: -> (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32)
# CHECK: kiln.store %arg0, %[[W]]#9
# CHECK-NOT: kiln.store
@triton.jit
def chain(out_ptr, N):
    i = 0
    a0 = 0
    a1 = 0
    a2 = 0
    a3 = 0
    a4 = 0
    a5 = 0
    a6 = 0
    a7 = 0
    a8 = 0
    a9 = 0
    while i < N:
        if a8 > 0:
            a9 = a9 + 1
        if a7 > 0:
            a8 = a8 + 1
        if a6 > 0:
            a7 = a7 + 1
        if a5 > 0:
            a6 = a6 + 1
        if a4 > 0:
            a5 = a5 + 1
        if a3 > 0:
            a4 = a4 + 1
        if a2 > 0:
            a3 = a3 + 1
        if a1 > 0:
            a2 = a2 + 1
        if a0 > 0:
            a1 = a1 + 1
        if i > 0:
            a0 = a0 + 1
        i += 1
    tl.store(out_ptr, a9)


# The same chain in a for loop (the induction variable starts it).
# FOR-LABEL: func.func @chain_for
# FOR: %[[F:.*]]:10 = scf.for
# FOR: kiln.store %arg0, %[[F]]#9
@triton.jit
def chain_for(out_ptr, N):
    a0 = 0
    a1 = 0
    a2 = 0
    a3 = 0
    a4 = 0
    a5 = 0
    a6 = 0
    a7 = 0
    a8 = 0
    a9 = 0
    for j in range(N):
        if a8 > 0:
            a9 = a9 + 1
        if a7 > 0:
            a8 = a8 + 1
        if a6 > 0:
            a7 = a7 + 1
        if a5 > 0:
            a6 = a6 + 1
        if a4 > 0:
            a5 = a5 + 1
        if a3 > 0:
            a4 = a4 + 1
        if a2 > 0:
            a3 = a3 + 1
        if a1 > 0:
            a2 = a2 + 1
        if a0 > 0:
            a1 = a1 + 1
        if j > 0:
            a0 = a0 + 1
    tl.store(out_ptr, a9)


# A carried type that never settles: x, a Python number before the loop,
# becomes fp32 if it was i32 and i32 if it was fp32. Reported at the loop,
# naming the value and the types it swings between.
# FLIP: loop_carried_fixed_point.py:[[@LINE+7]]:5: error: cannot tell which values this loop carries: after {{[0-9]+}} rounds of inference their types still change: 'x' ({{(i32 then fp32|fp32 then i32)}})
# FLIP-NEXT: while i < N:
# FLIP-NEXT: ^
@triton.jit
def flip(out_ptr, N):
    i = 0
    x = 0
    while i < N:
        t = N * 0 + x
        if t.dtype == tl.int32:
            x = t.to(tl.float32)
        else:
            x = t.to(tl.int32)
        i += 1
    tl.store(out_ptr, x)
