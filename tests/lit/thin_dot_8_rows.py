# A decode step's GEMM of 8 rows (GPT-QModel's GGUF dequantizing GEMM at 8
# tokens) stays an 8-row dot: its mma.sync tiles hold the 8 rows twice, a
# is copied ahead into an 8-row ring and read with ldmatrix (rows 8-15 of
# each fragment are rows 0-7 again), and nothing pads it through registers.
# The per-column scale, broadcast over the weight tile it scales, is loaded
# in the layout that reads it (kiln-assign-layouts), not converted there
# every iteration, so the pipeliner copies it ahead too.
# RUN: %kilnc compile %s -n dequant_decode -s "x_ptr=*fp16:16, w_ptr=*u8:16, s_ptr=*fp16:16, out_ptr=*fp32:16, K=i32:16, N=i32:16, BM=8, BN=32, BK=32, num_warps=2, num_stages=2" --arch sm_90a --emit gpu -o - | FileCheck %s
# RUN: %kilnc compile %s -n dequant_decode -s "x_ptr=*fp16:16, w_ptr=*u8:16, s_ptr=*fp16:16, out_ptr=*fp32:16, K=i32:16, N=i32:16, BM=8, BN=32, BK=32, num_warps=2, num_stages=2" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=PTX
import triton
import triton.language as tl

# CHECK-NOT: kiln.reshape
# CHECK: scf.for
# CHECK-DAG: kiln_gpu.async_copy {{.*}} : tensor<8x32x!kiln.ptr<f16>
# CHECK-DAG: kiln_gpu.async_copy {{.*}} : tensor<32x32x!kiln.ptr<i8>
# CHECK-DAG: kiln_gpu.async_copy {{.*}} : tensor<1x32x!kiln.ptr<f16>
# CHECK-NOT: kiln_gpu.convert_layout
# CHECK: kiln_gpu.shared_dot {{.*}} !kiln_gpu.memdesc<8x32xf16, {{.*}} -> tensor<8x32xf32, #kiln_gpu.mma
# CHECK-NOT: kiln_gpu.convert_layout
# CHECK: scf.yield
# PTX: cp.async
# PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32


@triton.jit
def dequant_decode(x_ptr, w_ptr, s_ptr, out_ptr, K, N,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(x_ptr + rm[:, None] * K + k + rk[None, :])
        w = tl.load(w_ptr + (k + rk[:, None]) * N + rn[None, :])
        s = tl.load(s_ptr + (k // BK) * N + rn)
        acc += tl.dot(x, w.to(tl.float16) * s[None, :])
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], acc)
