# Joins, splits and reshapes that keep every element in its thread rename
# registers instead of going through shared memory: `unpack` joins an
# int4 weight's low and high halves, transposes and merges them into rows
# (torchao's HQQ unpacking) with no conversion and no barrier; `pairs`
# splits pairs off its rows (`split(reshape(x, (M, N // 2, 2)))`,
# interleaved real and imaginary parts) the same way.
# RUN: %kilnc compile %s -n unpack -s "*u8:16, *bf16:16, 16, 256" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=JOIN
# JOIN-NOT: kiln_gpu.convert_layout
# JOIN: kiln.join {{.*}} -> tensor<16x256x2xbf16, #kiln_gpu.blocked<{sizePerThread = [1, 8, 2], threadsPerWarp = [1, 32, 1], warpsPerCTA = [4, 1, 1], order = [2, 1, 0]}>>
# JOIN: kiln.reshape {{.*}} -> tensor<32x256xbf16, #kiln_gpu.blocked<{sizePerThread = [2, 8], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1]
# JOIN-NOT: kiln_gpu.convert_layout
# RUN: %kilnc compile %s -n unpack -s "*u8:16, *bf16:16, 16, 256" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=JOIN-PTX
# JOIN-PTX-NOT: bar.sync
# JOIN-PTX-NOT: st.shared
# RUN: %kilnc compile %s -n pairs -s "*fp32:16, *fp32:16, 64, 128" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=SPLIT
# SPLIT-NOT: bar.sync
# SPLIT-NOT: st.shared
import triton
import triton.language as tl


@triton.jit
def unpack(q_ptr, out_ptr, BK: tl.constexpr, BN: tl.constexpr):
    rk = tl.arange(0, BK)
    rn = tl.arange(0, BN)
    q = tl.load(q_ptr + rk[:, None] * BN + rn[None, :])
    lo = (q & 15).to(tl.float16).to(tl.bfloat16)
    hi = (q >> 4).to(tl.float16).to(tl.bfloat16)
    w = tl.join(lo, hi).permute(0, 2, 1).reshape(2 * BK, BN)
    rw = tl.arange(0, 2 * BK)
    tl.store(out_ptr + rw[:, None] * BN + rn[None, :], w)


@triton.jit
def pairs(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :])
    re, im = tl.split(tl.reshape(x, (BM, BN // 2, 2)))
    rh = tl.arange(0, BN // 2)
    tl.store(out_ptr + rm[:, None] * (BN // 2) + rh[None, :], re * re + im * im)
