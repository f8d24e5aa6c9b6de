# A loop carries every name its body rebinds, also names rebound only under
# a condition that reads another carried name which starts as a Python
# number (found by a helper: `x` was lost because the probe folded `i > 4`
# with i = 0).
# RUN: %kilnc compile %s -n while_if -s "out_ptr=*i32, N=i32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=WHILE
# RUN: %kilnc compile %s -n for_if -s "out_ptr=*i32, N=i32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=FOR
import triton
import triton.language as tl


# WHILE: scf.while (%[[I:.*]] = %c0_i32, %[[X:.*]] = %c0_i32) : (i32, i32) -> (i32, i32)
# WHILE: scf.if
# WHILE: kiln.store %arg0, %{{.*}}#1
@triton.jit
def while_if(out_ptr, N):
    i = 0
    x = 0
    while i < N:
        if i > 4:
            x = x + 1
        i += 1
    tl.store(out_ptr, x)


# FOR: scf.for {{.*}} iter_args(%{{.*}} = %c0_i32, %{{.*}} = %c0_i32) -> (i32, i32)
# FOR: scf.if
@triton.jit
def for_if(out_ptr, N):
    count = 0
    seen = 0
    for j in range(N):
        if count > 2:
            seen = seen + j
        count += 1
    tl.store(out_ptr, seen)
