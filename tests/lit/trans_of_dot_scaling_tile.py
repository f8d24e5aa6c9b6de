# A square tile that scales one dot's result and whose transpose scales
# another's (lightning-attention's backward: diag_decay and
# tl.trans(diag_decay)) takes the accumulator's layout; the transpose
# cannot keep it on both sides. A square kiln.trans passes for elementwise
# (one shape in and out), and kiln-assign-layouts had recomputed it in the
# mma layout, operand and result alike ("move data between threads"). The
# tile is now computed in a blocked layout for the transpose, whose result
# is converted to the accumulator's.
# RUN: %kilnc compile %s -n scaled -s "A=*fp32, B=*fp32, O1=*fp32, O2=*fp32" --arch sm_90a --emit gpu -o - | FileCheck %s
# RUN: %kilnc compile %s -n scaled -s "A=*fp32, B=*fp32, O1=*fp32, O2=*fp32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# RUN: %kilnc compile %s -n scaled -s "A=*fp32, B=*fp32, O1=*fp32, O2=*fp32" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=PTX
import triton
import triton.language as tl

# CHECK: kiln.trans {{.*}} : tensor<64x64xf32, #kiln_gpu.blocked<{{.*}}>> -> tensor<64x64xf32, #kiln_gpu.blocked<
# CHECK: kiln_gpu.convert_layout {{.*}} : tensor<64x64xf32, #kiln_gpu.blocked<{{.*}}>> -> tensor<64x64xf32, #kiln_gpu.mma<
# PTX: .entry scaled


@triton.jit
def scaled(A, B, O1, O2, BLOCK: tl.constexpr = 64):
    r = tl.arange(0, BLOCK)
    idx = r.to(tl.float32)[:, None] - r.to(tl.float32)[None, :]
    decay = tl.exp(tl.where(idx >= 0, -idx, float("-inf")))
    decay_t = tl.trans(decay)
    a = tl.load(A + r[:, None] * BLOCK + r[None, :])
    b = tl.load(B + r[:, None] * BLOCK + r[None, :])
    x = tl.dot(a, b) * decay
    y = tl.dot(b, a) * decay_t
    tl.store(O1 + r[:, None] * BLOCK + r[None, :], x)
    tl.store(O2 + r[:, None] * BLOCK + r[None, :], y)
