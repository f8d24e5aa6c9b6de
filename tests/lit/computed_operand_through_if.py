# A dot operand computed from two packed byte tiles, one of them through an
# `if` (GGUF's Q6_K dequantizer: the low bits of a byte or its high bits,
# by the sub-block, or'ed with two more bits from a second tile): both
# tiles take one row layout (kiln-assign-layouts follows the `if` to what
# its branches yield, and loads alike in element and vector width decide
# together), so nothing converts between them in the loop.
# RUN: %kilnc compile %s -n two_tile_dequant -s "x_ptr=*fp16:16, ql_ptr=*u8:16, qh_ptr=*u8:16, out_ptr=*fp32:16, N=i32:16, BM=32, BN=64, num_warps=8, num_stages=2" --arch sm_90a --emit gpu -o - | FileCheck %s
import triton
import triton.language as tl

# CHECK: scf.for
# CHECK: scf.for
# CHECK-NOT: kiln_gpu.convert_layout {{.*}} : tensor<16x64xi8
# CHECK: kiln_gpu.shared_dot
# CHECK: scf.yield


@triton.jit
def two_tile_dequant(x_ptr, ql_ptr, qh_ptr, out_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for block in range(0, 4):
        for sub in range(0, 16):
            rk = block * 256 + sub * 16 + tl.arange(0, 16)
            x = tl.load(x_ptr + rm[:, None] * 1024 + rk[None, :])
            pos = (sub % 2) * 16 + tl.arange(0, 16)
            ql = tl.load(ql_ptr + block * 64 * N + pos[:, None] * N + rn[None, :])
            if (sub // 2) % 2 == 0:
                low = ql & 0x0F
            else:
                low = ql >> 4
            qh = tl.load(qh_ptr + block * 32 * N + pos[:, None] * N + rn[None, :])
            high = (qh >> ((sub // 2) % 4 * 2)) & 0x03
            q = tl.cast(low | (high << 4), tl.int16) - 32
            acc += tl.dot(x, q.to(tl.float16))
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], acc)
