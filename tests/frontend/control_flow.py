# Control flow on run-time values becomes scf ops; names rebound inside are
# carried as results. Control flow on compile-time values is evaluated.
# RUN: %kilnc compile %s -n loops -s "*fp32, i32, True" --arch sm_90a --emit kiln -o - | FileCheck %s
# CHECK-LABEL: func.func @loops
# A while loop carries i and s (python numbers become i32 and fp32).
# CHECK: %[[W:.*]]:2 = scf.while (%[[I:.*]] = %{{.*}}, %[[S:.*]] = %{{.*}}) : (i32, f32) -> (i32, f32) {
# CHECK: arith.cmpi slt, %[[I]], %arg1 : i32
# CHECK: scf.condition
# CHECK: scf.yield %{{.*}}, %{{.*}} : i32, f32
# A for loop over range(0, n, 4) carries acc; the induction variable is i32.
# CHECK: %[[F:.*]] = scf.for %[[IV:.*]] = %{{.*}} to %arg1 step %{{.*}} iter_args(%[[ACC:.*]] = %[[W]]#1) -> (f32) : i32 {
# CHECK: scf.yield
# An if on a run-time condition yields the value both branches rebind.
# CHECK: scf.if %{{.*}} -> (f32) {
# CHECK: arith.mulf
# CHECK: } else {
# CHECK: arith.addf
# The constexpr if and the static range are gone: FLAG is True.
# CHECK-NOT: scf.if
# CHECK: kiln.store
import triton
import triton.language as tl


@triton.jit
def loops(x_ptr, n, FLAG: tl.constexpr):
    i = 0
    s = 0.0
    while i < n:
        s += tl.load(x_ptr + i)
        i += 1
    acc = s
    for k in range(0, n, 4):
        acc += tl.load(x_ptr + k)
    if n > 4:
        acc = acc * 2
    else:
        acc = acc + 1
    if FLAG:
        for j in tl.static_range(3):
            acc = acc - j
    tl.store(x_ptr, acc)

# A name whose type changes in a loop is an error naming it.
# RUN: not %kilnc compile %s -n type_change -s "*fp32, i32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=TYPE
# TYPE: error: 'v' has type fp32 here but i32 where the control flow began; convert it explicitly with .to()


@triton.jit
def type_change(x_ptr, n):
    v = tl.load(x_ptr).to(tl.int32)
    for k in range(n):
        v = tl.load(x_ptr + k)
    tl.store(x_ptr, v)

# `if cond: return` on a run-time condition: the rest of the kernel becomes
# the else branch.
# RUN: %kilnc compile %s -n early_exit -s "*fp32, i32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=EARLY
# EARLY: scf.if %{{.*}} {
# EARLY-NEXT: } else {
# EARLY: kiln.store
# EARLY: }
# EARLY-NEXT: return


@triton.jit
def early_exit(x_ptr, n):
    if tl.program_id(0) >= n:
        return
    tl.store(x_ptr + tl.program_id(0), 1.0)

# A conditional expression and and/or on run-time scalars; None for a pointer
# specializes it away.
# RUN: %kilnc compile %s -n scalar_exprs -s "x_ptr=*fp32, bias_ptr=None, a=i32, b=i32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=EXPR
# EXPR-LABEL: func.func @scalar_exprs(%arg0: !kiln.ptr<f32>, %arg1: i32, %arg2: i32)
# EXPR: %[[C:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
# The scf.if of two constants canonicalizes to a select.
# EXPR: arith.select %[[C]], %{{.*}}, %{{.*}} : f32
# EXPR-NOT: kiln.load


@triton.jit
def scalar_exprs(x_ptr, bias_ptr, a, b):
    value = 2.0 if (a > 0 and b > 0) else 0.5
    if bias_ptr is not None:
        value += tl.load(bias_ptr)
    tl.store(x_ptr, value)
