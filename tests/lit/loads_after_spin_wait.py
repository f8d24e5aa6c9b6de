# A loop of volatile loads spins on a flag another block sets once it has
# written what follows: the dot operands loaded after the loop are copied
# (cp.async) after it, never issued ahead of it. A volatile load outside
# such a loop writes nothing and keeps no load from going ahead
# (tests/lit/prefetch_loads.py, rows_volatile).
# RUN: %kilnc compile %s -n after_spin -s "flag_ptr=*i32:16, a_ptr=*bf16:16, b_ptr=*bf16:16, c_ptr=*fp32:16" --arch sm_90a --emit gpu -o - | FileCheck %s
import triton
import triton.language as tl

# CHECK-NOT: kiln_gpu.async_copy
# CHECK: scf.while
# CHECK: kiln.load %arg0 volatile
# CHECK: scf.condition
# CHECK: kiln_gpu.async_copy
# CHECK: kiln_gpu.async_copy
# CHECK: kiln_gpu.shared_dot


@triton.jit
def after_spin(flag_ptr, a_ptr, b_ptr, c_ptr):
    r = tl.arange(0, 64)
    while tl.load(flag_ptr, volatile=True) == 0:
        pass
    a = tl.load(a_ptr + r[:, None] * 64 + r[None, :])
    b = tl.load(b_ptr + r[:, None] * 64 + r[None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + r[:, None] * 64 + r[None, :], c)
