# Tuples through run-time control flow, leaf by leaf: a loop carries only the
# leaves its body rebinds (a Python-number leaf becomes a run-time value, an
# unchanged leaf stays compile-time); an `if` on a run-time condition yields
# the leaves its paths bind differently. A body that changes a tuple's
# structure is an error naming it. And a @triton.jit function Kiln cannot
# parse fails only the kernels that use it, with its own syntax error.
#
# RUN: %kilnc compile %s -n carry_leaves -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=LOOP
# LOOP-LABEL: func.func @carry_leaves
# LOOP: scf.for {{.*}} iter_args({{.*}} = %c0_i32, {{.*}} = %cst{{.*}}) -> (i32, tensor<32xf32>)
# LOOP: scf.while ({{.*}}) : (tensor<32xf32>, i32) -> (tensor<32xf32>, i32)
# RUN: %kilnc compile %s -n rebind_under_if -s "x_ptr=*fp32, out_ptr=*fp32, flag=i32, BLOCK=32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=IF
# IF-LABEL: func.func @rebind_under_if
# IF: arith.select %{{.*}}, %c2_i32, %c1_i32 : i32
# IF: scf.if {{.*}} -> (tensor<32xf32>)
# RUN: not %kilnc compile %s -n reshaped_in_loop -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=SHAPE
# SHAPE: tuple_control_flow.py:[[@LINE+41]]:9: error: 't' holds a tuple of 2 before the loop and a tuple of 3 after its body; a loop must keep a tuple's structure
# RUN: not %kilnc compile %s -n mixed_paths -s "x_ptr=*fp32, out_ptr=*fp32, flag=i32, BLOCK=32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=PATHS
# PATHS: tuple_control_flow.py:[[@LINE+48]]:5: error: 't' holds a tuple of 3 on one path of this 'if' on a run-time condition and a tuple of 2 on the other
# RUN: %kilnc compile %s -n beside_unparsed -s "x_ptr=*fp32, BLOCK=32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=BESIDE
# BESIDE-LABEL: func.func @beside_unparsed
# RUN: not %kilnc compile %s -n unparsed -s "x_ptr=*fp32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=UNPARSED
# UNPARSED: tuple_control_flow.py:[[@LINE+57]]:15: error: expected an expression, found '*'
# RUN: not %kilnc compile %s -n calls_unparsed -s "x_ptr=*fp32, BLOCK=32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=CALLS
# CALLS: tuple_control_flow.py:[[@LINE+55]]:15: error: expected an expression, found '*'
# CALLS: tuple_control_flow.py:[[@LINE+60]]:28: note: in 'unparsed', used here
import triton
import triton.language as tl


@triton.jit
def carry_leaves(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    state = (0, tl.zeros([BLOCK], tl.float32), BLOCK)
    for i in range(n):
        state = (state[0] + 1, state[1] + tl.load(x_ptr + i * BLOCK + offs), state[2])
    pair = (state[1], state[0])
    while pair[1] > 0:
        pair = (pair[0] * 0.5, pair[1] - 1)
    tl.store(out_ptr + offs + state[2], pair[0])


@triton.jit
def rebind_under_if(x_ptr, out_ptr, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    t = (x, 1, BLOCK)
    if flag > 0:
        t = (x * 2.0, 2, BLOCK)
    tl.store(out_ptr + offs, t[0] + t[1] + t[2])


@triton.jit
def reshaped_in_loop(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    t = (tl.load(x_ptr + offs), 0)
    for i in range(n):
        t = (t[0], t[1], 1)
    tl.store(out_ptr + offs, t[0])


@triton.jit
def mixed_paths(x_ptr, out_ptr, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    t = (x, 1)
    if flag > 0:
        t = (x, 1, 2)
    tl.store(out_ptr + offs, t[0])


@triton.jit
def beside_unparsed(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, offs.to(tl.float32))


@triton.jit
def unparsed(x):
    return x +* 2


@triton.jit
def calls_unparsed(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, unparsed(offs).to(tl.float32))
