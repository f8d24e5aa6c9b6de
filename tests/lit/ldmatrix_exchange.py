# A 16-bit tile loaded in a blocked layout and added to a tensor-core
# accumulator (vLLM's LoRA expand adding its input, Mamba-3's reloaded
# states) is converted to the accumulator's layout through shared memory.
# The array is read back with ldmatrix (sm_75 on): each instruction loads
# four 8x8 matrices, lane 8m+i naming the address of matrix m's row i (16
# contiguous bytes), every thread receiving its pairs (row lane/4, columns
# 2(lane%4)) in the accumulator's register order. A 64x128 bf16 tile over 4
# warps is 64 elements a thread: 8 ldmatrix.x4 where 2-element loads took 32
# (and 32 addresses a thread, which a loop hoisting them spilled).
# - sm_90a (the wgmma accumulator), sm_90 and sm_80 (mma.sync's) alike.
# - A 32-bit tile is no b16 matrix: plain loads.
# - The rows' addresses share registers: a register's constant is XORed
#   into the thread's offset only where the two share bits, and added (an
#   immediate) elsewhere, so the fifth ldmatrix reads the first's address
#   plus 128 bytes (Mamba-3's backward held 17 such registers, and spilled).
# RUN: %kilnc compile %s -n add_to_product -s "*bf16:16, *bf16:16, *bf16:16, *bf16:16, 64, 128, 64" -w 4 --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=LDMATRIX
# RUN: %kilnc compile %s -n add_to_product -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, 64, 128, 64" -w 4 --arch sm_90 --emit ptx -o - | FileCheck %s --check-prefix=LDMATRIX
# RUN: %kilnc compile %s -n add_to_product -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, 64, 128, 64" -w 4 --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=LDMATRIX
# RUN: %kilnc compile %s -n add_to_product -s "*fp16:16, *fp16:16, *fp32:16, *fp32:16, 64, 128, 64" -w 4 --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=FP32
# RUN: %kilnc compile %s -n add_to_product -s "*bf16:16, *bf16:16, *bf16:16, *bf16:16, 64, 128, 64" -w 4 --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=SHARED
import triton
import triton.language as tl

# LDMATRIX: bar.sync 0
# LDMATRIX-COUNT-8: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%r{{[0-9]+}}];
# LDMATRIX-NOT: ld.shared
# LDMATRIX: bar.sync 0

# SHARED: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{.*}}, [%r[[FIRST:[0-9]+]]];
# SHARED-COUNT-3: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# SHARED: add.s32 %r[[FIFTH:[0-9]+]], %r[[FIRST]], 128;
# SHARED-NEXT: // begin inline asm
# SHARED-NEXT: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{.*}}, [%r[[FIFTH]]];

# FP32-NOT: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{.*}}[%r{{[0-9]+}}];
# FP32: ret;


@triton.jit
def add_to_product(a_ptr, b_ptr, c_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr,
                   BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    acc = tl.dot(a, b).to(c_ptr.dtype.element_ty)
    c = tl.load(c_ptr + rm[:, None] * BN + rn[None, :])
    tl.store(out_ptr + rm[:, None] * BN + rn[None, :], acc + c)
