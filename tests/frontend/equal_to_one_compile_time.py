# A `:1` parameter where a compile-time value is required: Triton's JIT
# specializes an integer argument equal to 1 as the constexpr 1, so
# `tl.static_range(n)`, `tl.arange(0, 16 * n)` and `tl.static_assert(n == 1)`
# build upstream whenever the caller passes 1 (FastVideo's top-k index map);
# the `:1` variant folds them too. A run-time value is still an error.
# RUN: %kilnc compile %s -n heads -s "x_ptr=*fp32, n=i32:1, m=i32" --arch sm_90a --emit kiln -o - | FileCheck %s
# RUN: not %kilnc compile %s -n heads -s "x_ptr=*fp32, n=i32, m=i32" --arch sm_90a --emit kiln -o /dev/null 2>&1 | FileCheck %s --check-prefix=RUNTIME
# RUN: %kilnc compile %s -n widths -s "x_ptr=*fp32, n=i32:1" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=WIDTHS
# RUN: not %kilnc compile %s -n widths -s "x_ptr=*fp32, n=i32" --arch sm_90a --emit kiln -o /dev/null 2>&1 | FileCheck %s --check-prefix=WIDTHS-RUNTIME
import triton
import triton.language as tl


# CHECK-LABEL: func.func @heads
# CHECK-NOT: scf.for
# CHECK: kiln.store
# CHECK-NOT: kiln.store
# CHECK: return
# RUNTIME: equal_to_one_compile_time.py:[[# @LINE + 3]]:14: error: tl.static_range needs compile-time bounds
@triton.jit
def heads(x_ptr, n, m):
    for i in tl.static_range(n):
        tl.store(x_ptr + i * m, 1.0)


# WIDTHS-LABEL: func.func @widths
# WIDTHS: kiln.make_range {end = 16 : i32, start = 0 : i32}
# WIDTHS-RUNTIME: equal_to_one_compile_time.py:[[# @LINE + 3]]:22: error: argument 'cond' of tl.static_assert must be a compile-time condition, got a run-time scalar of type i1
@triton.jit
def widths(x_ptr, n):
    tl.static_assert(n * 2 - 1 == 1)
    offs = tl.arange(0, 16 * n)
    tl.store(x_ptr + offs, 1.0)
