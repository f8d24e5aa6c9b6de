# Python keeps a loop's variable after the loop. Of a tl.static_range loop
# (unrolled) it is the last value, as upstream's; of a run-time loop upstream
# leaves an undefined value (ub.poison), so Kiln says why the name has none.
# RUN: %kilnc compile %s -n after_static -s "x_ptr=*fp32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=STATIC
# RUN: not %kilnc compile %s -n after_runtime -s "x_ptr=*fp32, n=i32" --arch sm_90a --emit kiln -o /dev/null 2>&1 | FileCheck %s --check-prefix=RUNTIME
# STATIC-LABEL: func.func @after_static
# STATIC: %[[TWO:.*]] = arith.constant 2 : i32
# STATIC: kiln.addptr %{{.*}}, %[[TWO]]
# RUNTIME: loop_variable_after_loop.py:[[#@LINE+17]]:22: error: name 'i' is the induction variable of a run-time loop that has ended: it has no value after the loop (upstream Triton leaves it undefined); keep the value in another name inside the loop
# RUNTIME: loop_variable_after_loop.py:[[#@LINE+14]]:5: note: the loop is here
import triton
import triton.language as tl


@triton.jit
def after_static(x_ptr):
    for i in tl.static_range(3):
        tl.store(x_ptr + i, 1.0)
    tl.store(x_ptr + i + 8, 2.0)


@triton.jit
def after_runtime(x_ptr, n):
    for i in range(n):
        tl.store(x_ptr + i, 1.0)
    tl.store(x_ptr + i, 2.0)
