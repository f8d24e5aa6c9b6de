# A tensor-core accumulator converted to 16-bit and stored through pointers
# goes through shared memory to the blocked layout of the store. From sm_90
# on, the exchange array is written with stmatrix: each instruction stores
# four 8x8 matrices, lane 8m+i naming the address of matrix m's row i (16
# contiguous bytes), and every thread reads its 8 contiguous elements back
# with one 16-byte load. A 64x128 fp16 tile over 4 warps is 64 elements per
# thread: 8 stmatrix.x4, 8 ld.shared.v4.
# - sm_90a: the wgmma accumulator; sm_90: the mma.sync one. Both hold, per
#   8x8 block, the pair stmatrix takes (row lane/4, columns 2(lane%4)).
# - sm_80 has no stmatrix: 32 scalar 32-bit stores of element pairs.
# - A 32-bit tile (fp32 output) is no b16 matrix: scalar stores there too.
# - A store through a pointer not known aligned (`*fp16`, any `ldc`) takes
#   one element per thread along a row, each thread's registers running
#   down the rows: the array is written with stmatrix .trans (each matrix's
#   columns contiguous), so those 8 rows are again one 16-byte load.
# Shared addresses are 32-bit registers (the data layout's p3:32:32).
# RUN: %kilnc compile %s -n epilogue -s "*fp16:16, *fp16:16, *fp16:16, 64, 128, 64" -w 4 --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=STMATRIX
# RUN: %kilnc compile %s -n epilogue -s "*bf16:16, *bf16:16, *bf16:16, 64, 128, 64" -w 4 --arch sm_90 --emit ptx -o - | FileCheck %s --check-prefix=STMATRIX
# RUN: %kilnc compile %s -n epilogue -s "*fp16:16, *fp16:16, *fp16:16, 64, 128, 64" -w 4 --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=SCALAR
# RUN: %kilnc compile %s -n epilogue -s "*fp16:16, *fp16:16, *fp32:16, 64, 128, 64" -w 4 --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=FP32
# RUN: %kilnc compile %s -n epilogue_strided -s "*fp16:16, *fp16:16, *fp16, i32, 64, 128, 64" -w 4 --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=TRANS
# RUN: %kilnc compile %s -n epilogue_strided -s "*fp16:16, *fp16:16, *fp16, i32, 64, 128, 64" -w 4 --arch sm_90 --emit ptx -o - | FileCheck %s --check-prefix=TRANS
import triton
import triton.language as tl

# STMATRIX: .target sm_90
# STMATRIX-COUNT-8: stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r{{[0-9]+}}], {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
# STMATRIX-NOT: stmatrix
# STMATRIX-NOT: st.shared
# STMATRIX: bar.sync 0
# STMATRIX-COUNT-8: ld.shared.v4.b32 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%r{{[0-9]+}}
# STMATRIX-COUNT-8: st.global.v4.b32

# SCALAR-NOT: stmatrix
# SCALAR-COUNT-32: st.shared.b32 [%r{{[0-9]+}}
# SCALAR: bar.sync 0
# SCALAR-NOT: stmatrix

# FP32-NOT: stmatrix
# FP32: st.shared
# FP32-NOT: stmatrix

# TRANS-COUNT-8: stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%r{{[0-9]+}}], {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
# TRANS-NOT: st.shared
# TRANS: bar.sync 0
# TRANS-COUNT-8: ld.shared.v4.b32
# TRANS-NOT: ld.shared
# TRANS-COUNT-64: st.global.b16


@triton.jit
def epilogue(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.dot(tl.load(a + rm[:, None] * BK + rk[None, :]), tl.load(b + rk[:, None] * BN + rn[None, :]))
    tl.store(c + rm[:, None] * BN + rn[None, :], acc.to(c.dtype.element_ty))


@triton.jit
def epilogue_strided(a, b, c, ldc, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.dot(tl.load(a + rm[:, None] * BK + rk[None, :]), tl.load(b + rk[:, None] * BN + rn[None, :]))
    tl.store(c + rm[:, None] * ldc + rn[None, :], acc.to(c.dtype.element_ty))
