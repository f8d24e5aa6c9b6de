# tl.dot(..., out_dtype=tl.float16) on the tensor cores: fp16 operands sum
# in fp16, as upstream's mma does, two sums to a 32-bit register (wgmma's
# and mma.sync's f16 accumulators). In a loop the fp16 accumulator is
# carried; each iteration's dot is pipelined like any other (wgmma on
# sm_90a, mma.sync on sm_80).
# RUN: %kilnc compile %s -n mm16 -s "*fp16:16, *fp16:16, *fp16:16, i32:16, 64, 64, 32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=KILN
# RUN: %kilnc compile %s -n mm16 -s "*fp16:16, *fp16:16, *fp16:16, i32:16, 64, 64, 32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=WGMMA
# RUN: %kilnc compile %s -n mm16 -s "*fp16:16, *fp16:16, *fp16:16, i32:16, 64, 64, 32" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=MMA
# The carried accumulator travels as f16x2 pairs (one register each), so
# no unpack reads a wgmma's registers before its wait: ptxas keeps the
# wgmmas asynchronous (it warns when it serializes them).
# RUN: %kilnc compile %s -n mm16 -s "*fp16:16, *fp16:16, *fp16:16, i32:16, 64, 64, 32" --arch sm_90a --emit llvm -o - | FileCheck %s --check-prefix=LLVM
# RUN: %kilnc compile %s -n mm16 -s "*fp16:16, *fp16:16, *fp16:16, i32:16, 64, 64, 32" --arch sm_90a -o %t.cubin --resource-usage 2>&1 | FileCheck %s --check-prefix=PTXAS
import triton
import triton.language as tl

# KILN-NOT: arith.extf
# KILN: kiln.dot {{.*}} : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf16>
# KILN-NOT: arith.truncf
# WGMMA: wgmma.mma_async.sync.aligned.m64n64k16.f16.f16.f16 {{[{](%r[0-9]+, ){15}%r[0-9]+[}]}},
# LLVM: phi { <2 x half>, <2 x half>,
# PTXAS-NOT: serialized
# PTXAS: mm16 for sm_90a {{.*}} 0 bytes spill stores
# MMA: mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {{[{]%r[0-9]+, %r[0-9]+[}]}}, {{.*}}, {{[{]%r[0-9]+, %r[0-9]+[}];}}


@triton.jit
def mm16(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float16)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b, acc, out_dtype=tl.float16)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)
