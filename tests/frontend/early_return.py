# `return` under run-time conditions anywhere outside loops, as upstream
# allows: each returning `if` becomes an scf.if whose paths that fall through
# run the rest of the function.

# Two early exits in sequence: the second is inside the first's else branch,
# and the store runs only there.
# RUN: %kilnc compile %s -n two_exits -s "x_ptr=*fp32, n=i32, m=i32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=TWO
# TWO-LABEL: func.func @two_exits
# TWO: scf.if %{{.*}} {
# TWO-NEXT: } else {
# TWO: scf.if %{{.*}} {
# TWO-NEXT: } else {
# TWO: kiln.store
# TWO: }
# TWO: }
# TWO-NEXT: return

import triton
import triton.language as tl


@triton.jit
def two_exits(x_ptr, n, m):
    pid = tl.program_id(0)
    if pid >= n:
        return
    if pid >= m:
        return
    tl.store(x_ptr + pid, 1.0)

# An early exit inside a compile-time branch: what follows the branch still
# runs on the path that does not return (both stores are emitted).
# RUN: %kilnc compile %s -n nested_exit -s "x_ptr=*fp32, n=i32, CHECK=True" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=NESTED
# NESTED-LABEL: func.func @nested_exit
# NESTED: scf.if %{{.*}} {
# NESTED-NEXT: } else {
# NESTED: kiln.store
# NESTED: kiln.store
# NESTED: }
# NESTED-NEXT: return


@triton.jit
def nested_exit(x_ptr, n, CHECK: tl.constexpr):
    pid = tl.program_id(0)
    if CHECK:
        if pid >= n:
            return
        tl.store(x_ptr + pid, 1.0)
    tl.store(x_ptr + pid + n, 2.0)

# A helper returning different values on run-time paths: the scf.if yields
# them (the numbers are materialized, the block value passes through).
# RUN: %kilnc compile %s -n helper_returns -s "x_ptr=*fp32, n=i32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=HELPER
# HELPER-LABEL: func.func @helper_returns
# HELPER: %[[R:.*]]:2 = scf.if %{{.*}} -> (f32, i32) {
# HELPER: scf.yield %{{.*}}, %{{.*}} : f32, i32
# HELPER: } else {
# HELPER: scf.yield %{{.*}}, %{{.*}} : f32, i32
# HELPER: arith.addf %[[R]]#0


@triton.jit
def pick(x_ptr, i, n):
    if i >= n:
        return 0.0, 0
    v = tl.load(x_ptr + i)
    if v > 0:
        return v, 1
    return -v, 2


@triton.jit
def helper_returns(x_ptr, n):
    v, which = pick(x_ptr, tl.program_id(0), n)
    tl.store(x_ptr, v + which)

# A pointer as a condition is whether it is not null (upstream converts it to
# int1 so).
# RUN: %kilnc compile %s -n pointer_condition -s "x_ptr=*fp32, w_ptr=*fp32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=PTR
# PTR: %[[A:.*]] = kiln.ptr_to_int %arg1
# PTR: %[[C:.*]] = arith.cmpi ne, %[[A]], %{{.*}} : i64
# PTR: scf.if %[[C]] {


@triton.jit
def pointer_condition(x_ptr, w_ptr):
    if w_ptr:
        tl.store(w_ptr, 1.0)
    tl.store(x_ptr, 2.0)

# A return inside a loop stays an error (as upstream), and paths that return
# different compile-time values are one.
# RUN: not %kilnc compile %s -n loop_return -s "x_ptr=*fp32, n=i32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=LOOP
# LOOP: early_return.py:[[# @LINE + 6]]:9: error: 'return' inside a loop is not supported


@triton.jit
def loop_return(x_ptr, n):
    for i in range(n):
        if i == 3:
            return
        tl.store(x_ptr + i, 1.0)

# RUN: not %kilnc compile %s -n mixed_returns -s "x_ptr=*fp32, n=i32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=MIXED
# MIXED: early_return.py:[[# @LINE + 7]]:5: error: the paths through this 'if' on a run-time condition return different compile-time values
# MIXED-NEXT: if i >= n:
# MIXED-NEXT: ^


@triton.jit
def mode(i, n):
    if i >= n:
        return "low"
    return "high"


@triton.jit
def mixed_returns(x_ptr, n):
    if mode(tl.program_id(0), n) == "low":
        tl.store(x_ptr, 1.0)
