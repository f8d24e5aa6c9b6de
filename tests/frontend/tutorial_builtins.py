# Builtins upstream's tutorials use: tl.assume (a hint, checked and dropped)
# and Python's min/max on run-time values (upstream's builtin_min/builtin_max:
# a chain of tl.minimum/tl.maximum, as in tutorial 03's
# `group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)`).
# RUN: %kilnc compile %s -n grouped -s "*i32, i32, i32, 8" --arch sm_90a --emit kiln -o - | FileCheck %s
# RUN: not %kilnc compile %s -n bad_assume -s "*i32, i32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=BAD
import triton
import triton.language as tl


# CHECK-LABEL: func.func @grouped
# CHECK-NOT: assume
# CHECK: arith.minsi
# CHECK: arith.minsi
# CHECK: arith.maxsi
# CHECK: arith.maxsi
@triton.jit
def grouped(out_ptr, m, n, GROUP: tl.constexpr):
    pid = tl.program_id(0)
    tl.assume(pid >= 0)
    tl.assume(m > 0)
    first = (pid // GROUP) * GROUP
    rows = min(m - first, GROUP, n)
    cols = max(n - pid, 0, m + 1)
    tl.store(out_ptr + pid, rows * cols + min(4, GROUP))


@triton.jit
def bad_assume(out_ptr, m):
    # BAD: tutorial_builtins.py:[[@LINE+1]]:15: error: argument 'cond' of tl.assume must be a boolean scalar, got a run-time scalar of type i32
    tl.assume(m)
    tl.store(out_ptr, m)
