# A small 1-D load in a loop with a dot, read in a slice of the accumulator's
# layout, is loaded in that slice when it has fewer elements than the kernel
# has threads (as Triton rematerializes such loads), even where that is more
# than 8 registers a thread: an attention backward's lse and delta read
# along the columns of a [4, 1] accumulator, 64 values, 16 registers a
# thread. Converted, each went through shared memory with two barriers every
# iteration (ring-attention-pytorch's backward at d128, Mamba-3's SISO
# backward).
# RUN: %kilnc compile %s -n column_statistics -s "q_ptr=*bf16:16, k_ptr=*bf16:16, l_ptr=*fp32:16, o_ptr=*fp32:16, n=i32" --arch sm_90a --emit gpu -o - | FileCheck %s
import triton
import triton.language as tl


# CHECK: scf.for
# CHECK-NOT: kiln_gpu.convert_layout
# CHECK: kiln.load {{.*}} -> tensor<64xf32, #kiln_gpu.slice<{dim = 0, parent = #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>}>>
# CHECK-NOT: kiln_gpu.convert_layout
# CHECK: scf.yield
@triton.jit
def column_statistics(q_ptr, k_ptr, l_ptr, o_ptr, n):
    r = tl.arange(0, 64)
    q = tl.load(q_ptr + r[:, None] * 64 + r[None, :])
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for start in range(0, n, 64):
        k = tl.load(k_ptr + (start + r[None, :]) * 64 + r[:, None])
        s = tl.dot(q, k)
        lse = tl.load(l_ptr + start + r)
        acc += tl.exp2(s - lse[None, :])
    tl.store(o_ptr + r[:, None] * 64 + r[None, :], acc)


# Up to 16 registers a thread: a bias row of 128 floats along the columns of
# an [8, 1] accumulator (32 registers a thread; ring-attention-pytorch's
# forward with a bias, 1.03 of Triton converted, 1.005 loaded so) is loaded
# coalesced and converted.
# RUN: %kilnc compile %s -n column_bias -s "q_ptr=*bf16:16, k_ptr=*bf16:16, b_ptr=*fp32:16, o_ptr=*fp32:16, n=i32, num_warps=8" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=WIDE
# WIDE: scf.for
# WIDE: kiln_gpu.convert_layout {{.*}} -> tensor<128xf32, #kiln_gpu.slice<{dim = 0, parent = #kiln_gpu.mma<{warpsPerCTA = [8, 1]}>}>>
# WIDE: kiln.load {{.*}} -> tensor<128xf32, #kiln_gpu.slice<{dim = 0, parent = #kiln_gpu.blocked
# WIDE: scf.yield
@triton.jit
def column_bias(q_ptr, k_ptr, b_ptr, o_ptr, n):
    r = tl.arange(0, 128)
    q = tl.load(q_ptr + r[:, None] * 128 + r[None, :])
    acc = tl.zeros((128, 128), dtype=tl.float32)
    for start in range(0, n, 128):
        k = tl.load(k_ptr + (start + r[None, :]) * 128 + r[:, None])
        s = tl.dot(q, k)
        bias = tl.load(b_ptr + start + r)
        acc += tl.exp2(s + bias[None, :])
    tl.store(o_ptr + r[:, None] * 128 + r[None, :], acc)
