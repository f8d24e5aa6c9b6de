# A dot operand tile too small for the function's 2-D layout (16 rows under
# a layout whose lanes and warps cover 32) has a layout of its own; its
# pointers, carried through the K loop, are carried in it too. They were
# carried in the function's layout and converted every iteration: 64-bit
# pointers through shared memory and two barriers, in the loop of a decode
# GEMM (M = 16: an int8-weight GEMM at 0.70 of Triton on the H200, 0.96
# without the conversion).
# RUN: %kilnc compile %s -n decode -s "a_ptr=*fp16:16, b_ptr=*i8:16, c_ptr=*fp16:16, K=i32:16, stride_am=i32:16, stride_bk=i32:16, stride_cm=i32:16, BM=16, BN=64, BK=128, num_warps=4, num_stages=4" --arch sm_90a --emit gpu -o - | FileCheck %s
import triton
import triton.language as tl

# CHECK: scf.for
# CHECK-NOT: kiln_gpu.convert_layout
# CHECK: kiln_gpu.shared_dot
# CHECK-NOT: kiln_gpu.convert_layout
# CHECK: scf.yield
@triton.jit
def decode(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, stride_cm,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b.to(tl.float16), acc)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.float16))
