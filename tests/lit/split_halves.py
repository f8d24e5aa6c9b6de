# An accumulator split into the halves of its columns the way upstream's
# tutorial 09 subtiles its epilogue, split(permute(reshape(acc, (M, 2, N/2)),
# (0, 2, 1))), becomes two kiln.extract of it (canonicalization). On sm_90a
# (wgmma: the warps split only M) the halves keep the accumulator's mma
# layout and the lowering renames registers: no exchange through shared
# memory before the stores. On sm_80 the warps split N too: the halves are
# extracted from a blocked layout that tiles them.
# RUN: %kilnc compile %s -n halves -s "*fp16, *fp16, *fp16, 64, 128, 64" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=KILN
# RUN: %kilnc compile %s -n halves -s "*fp16, *fp16, *fp16, 64, 128, 64" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=WGMMA
# RUN: %kilnc compile %s -n halves -s "*fp16, *fp16, *fp16, 64, 128, 64" --arch sm_80 --emit gpu -o - | FileCheck %s --check-prefix=SM80
import triton
import triton.language as tl

# KILN-NOT: kiln.split
# KILN: %[[ACC:.*]] = kiln.dot
# KILN: kiln.extract %[[ACC]] [0, 0] : tensor<64x128xf32> -> tensor<64x64xf32>
# KILN: kiln.extract %[[ACC]] [0, 64] : tensor<64x128xf32> -> tensor<64x64xf32>
# KILN-NOT: kiln.split

# WGMMA: kiln.extract %{{.*}} [0, 0] : tensor<64x128xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>> -> tensor<64x64xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>>
# WGMMA: kiln.extract %{{.*}} [0, 64] : tensor<64x128xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>> -> tensor<64x64xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 1]}>>

# SM80: kiln_gpu.convert_layout %{{.*}} : tensor<64x128xf32, #kiln_gpu.mma<{warpsPerCTA = [1, 4]}>> -> tensor<64x128xf32, #kiln_gpu.blocked<
# SM80: kiln.extract %{{.*}} [0, 0] : tensor<64x128xf32, #kiln_gpu.blocked<


@triton.jit
def halves(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)[:, None]
    rk = tl.arange(0, K)
    acc = tl.dot(tl.load(a_ptr + rm * K + rk[None, :]), tl.load(b_ptr + rk[:, None] * N + tl.arange(0, N)[None, :]))
    lo, hi = tl.split(tl.permute(tl.reshape(acc, (M, 2, N // 2)), (0, 2, 1)))
    cols = tl.arange(0, N // 2)[None, :]
    tl.store(c_ptr + rm * N + cols, lo.to(tl.float16))
    tl.store(c_ptr + rm * N + N // 2 + cols, hi.to(tl.float16))
