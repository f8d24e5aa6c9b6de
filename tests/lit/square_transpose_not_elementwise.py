# A transpose of a square tile moves its elements, though its shape in and out
# is one: layout assignment must not take it for an element-wise op. FLASHNN's
# int4 MoE GEMM unpacks a [64, 64] int8 weight tile row by row (a shift per
# row), then takes `tl.trans(b)` as the dot's b. Walking back from b through
# the transpose as if it kept every element in place, kiln-assign-layouts gave
# the load the layout meant for b (K fastest in the thread) unpermuted, and the
# loop converted the transposed tile back through shared memory every
# iteration (0.41 of Triton on an H100). Now the load keeps its rows' layout,
# the transpose permutes it, and b is written to its staging tile from there,
# as Triton does: no conversion in the loop.
# RUN: %kilnc compile %s -n unpacked_square -s "*fp16:16, *i8:16, *fp32:16, i32:16, 16, 64, 64" -w 4 --ns=2 --arch sm_90a --emit gpu -o - | FileCheck %s
# RUN: %kilnc compile %s -n unpacked_square -s "*fp16:16, *i8:16, *fp32:16, i32:16, 16, 64, 64" -w 4 --ns=2 --arch sm_80 --emit gpu -o - | FileCheck %s
import triton
import triton.language as tl

# CHECK-LABEL: func.func @unpacked_square
# CHECK: scf.for
# CHECK-NOT: kiln_gpu.convert_layout
# CHECK: kiln.trans %{{.*}}, [1, 0] : tensor<64x64xi8, #kiln_gpu.blocked<{sizePerThread = [1, 16], {{.*}} order = [1, 0]}>> -> tensor<64x64xi8, #kiln_gpu.blocked<{sizePerThread = [16, 1], {{.*}} order = [0, 1]}>>
# CHECK-NOT: kiln_gpu.convert_layout
# CHECK: kiln_gpu.local_store %{{.*}} : tensor<64x64xf16, #kiln_gpu.blocked<{sizePerThread = [16, 1]
# CHECK-NOT: kiln_gpu.convert_layout
# CHECK: kiln_gpu.shared_dot
# CHECK: scf.yield


@triton.jit
def unpacked_square(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + (rn // 2)[:, None] * K + rk[None, :]
    shift = (1 - rn % 2) * 4
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        b = (b << shift[:, None]).to(tl.int8) >> 4
        acc += tl.dot(a, tl.trans(b).to(tl.float16))
        a_ptrs += BK
        b_ptrs += BK
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)
