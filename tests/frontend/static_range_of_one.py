# tl.static_range over a `:1` parameter: Triton's JIT specializes an integer
# argument equal to 1 as the constexpr 1, so `for i in tl.static_range(n)`
# builds upstream whenever the caller passes 1; the `:1` variant unrolls it
# too. A run-time bound is still an error.
# RUN: %kilnc compile %s -n heads -s "x_ptr=*fp32, n=i32:1, m=i32" --arch sm_90a --emit kiln -o - | FileCheck %s
# RUN: not %kilnc compile %s -n heads -s "x_ptr=*fp32, n=i32, m=i32" --arch sm_90a --emit kiln -o /dev/null 2>&1 | FileCheck %s --check-prefix=RUNTIME
import triton
import triton.language as tl


# CHECK-LABEL: func.func @heads
# CHECK-NOT: scf.for
# CHECK: kiln.store
# CHECK-NOT: kiln.store
# CHECK: return
# RUNTIME: static_range_of_one.py:[[# @LINE + 3]]:14: error: tl.static_range needs compile-time bounds
@triton.jit
def heads(x_ptr, n, m):
    for i in tl.static_range(n):
        tl.store(x_ptr + i * m, 1.0)
