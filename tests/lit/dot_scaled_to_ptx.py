# tl.dot_scaled below sm_100 (compiler/frontend/BuiltinsScaledDot.cpp), as
# upstream Triton emulates it: each operand upcast to bf16 (fp16 when either
# is fp16), e2m1 bytes unpacked low nibble first along K, each e8m0 scale
# byte s made 2^(s-127) by a shift into the exponent field (NaN for 0xFF
# unless fast_math), repeated over its 32 elements of K and multiplied in,
# then an ordinary tl.dot with fp32 accumulation on the tensor cores.
# RUN: %kilnc compile %s -n scaled -s "a_ptr=*fp8e4nv, sa_ptr=*u8, b_ptr=*u8, sb_ptr=*u8, c_ptr=*fp32, FA='e4m3', FB='e2m1'" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=MX
# RUN: %kilnc compile %s -n scaled -s "a_ptr=*fp16, sa_ptr=*u8, b_ptr=*u8, sb_ptr=*u8, c_ptr=*fp32, FA='fp16', FB='e5m2', FAST=True" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=F16
# RUN: %kilnc compile %s -n scaled -s "a_ptr=*u8, sa_ptr=*u8, b_ptr=*u8, sb_ptr=*u8, c_ptr=*fp32, FA='e2m1', FB='e2m1'" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=PTX80
# RUN: %kilnc compile %s -n scaled -s "a_ptr=*fp8e4nv, sa_ptr=*u8, b_ptr=*u8, sb_ptr=*u8, c_ptr=*fp32, FA='e4m3', FB='e2m1'" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX90
import triton
import triton.language as tl

# The lhs: fp8 to bf16; its scales [64, 2] shifted by 7 into bf16's
# exponent, 0xFF to NaN, [64, 2, 1] -> [64, 2, 32] -> [64, 64], multiplied.
# MX: arith.extf {{.*}} : tensor<64x64xf8E4M3FN> to tensor<64x64xbf16>
# MX: arith.shli {{.*}} : tensor<64x2xi16>
# MX: arith.bitcast {{.*}} : tensor<64x2xi16> to tensor<64x2xbf16>
# MX: arith.cmpi eq, {{.*}} : tensor<64x2xi8>
# MX: arith.select {{.*}} : tensor<64x2xi1>, tensor<64x2xbf16>
# MX: kiln.broadcast {{.*}} : tensor<64x2x1xbf16> -> tensor<64x2x32xbf16>
# MX: kiln.reshape {{.*}} -> tensor<64x64xbf16>
# MX: arith.mulf {{.*}} : tensor<64x64xbf16>
# The rhs: [32, 64] bytes, two e2m1 values each, joined along K and
# reshaped with K outermost: [32, 64, 2] -> [32, 2, 64] -> [64, 64].
# MX: kiln.join {{.*}} : tensor<32x64xbf16> -> tensor<32x64x2xbf16>
# MX: kiln.trans {{.*}} -> tensor<32x2x64xbf16>
# MX: kiln.reshape {{.*}} -> tensor<64x64xbf16>
# Its scales are [N, K / 32]: repeated along K, then transposed to [K, N].
# MX: kiln.broadcast {{.*}} -> tensor<64x2x32xbf16>
# MX: kiln.trans {{.*}} : tensor<64x64xbf16> -> tensor<64x64xbf16>
# MX: arith.mulf {{.*}} : tensor<64x64xbf16>
# MX: kiln.dot {{.*}} : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>

# fp16 with fast_math: the scales go through fp32 (s << 23) into fp16, and
# no NaN select.
# F16-NOT: arith.select {{.*}}xf16>
# F16: arith.shli {{.*}} : tensor<64x2xi32>
# F16: arith.bitcast {{.*}} : tensor<64x2xi32> to tensor<64x2xf32>
# F16: arith.truncf {{.*}} : tensor<64x2xf32> to tensor<64x2xf16>
# F16: arith.mulf {{.*}} : tensor<64x64xf16>
# F16: arith.extf {{.*}} : tensor<64x64xf8E5M2> to tensor<64x64xf16>
# F16: kiln.dot {{.*}} : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>

# The products run on the tensor cores in bf16, never as an FMA loop.
# PTX80-NOT: fma.rn.f32
# PTX80: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
# PTX90: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32


@triton.jit
def scaled(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr, FA: tl.constexpr, FB: tl.constexpr,
           FAST: tl.constexpr = False):
    r = tl.arange(0, 64)
    KA: tl.constexpr = 32 if FA == "e2m1" else 64
    KB: tl.constexpr = 32 if FB == "e2m1" else 64
    a = tl.load(a_ptr + r[:, None] * KA + tl.arange(0, KA)[None, :])
    b = tl.load(b_ptr + tl.arange(0, KB)[:, None] * 64 + r[None, :])
    sa = tl.load(sa_ptr + r[:, None] * 2 + tl.arange(0, 2)[None, :])
    sb = tl.load(sb_ptr + r[:, None] * 2 + tl.arange(0, 2)[None, :])
    c = tl.dot_scaled(a, sa, FA, b, sb, FB, fast_math=FAST)
    tl.store(c_ptr + r[:, None] * 64 + r[None, :], c)
