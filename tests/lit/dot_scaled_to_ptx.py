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

# With a K-packed e2m1 operand the product is two dots, over the even and
# over the odd elements of K: the nibbles are those halves already, and
# interleaving them would cost register shuffles. The lhs: fp8 to bf16,
# split into its even and odd columns; its scales [64, 2] shifted by 7 into
# bf16's exponent, 0xFF to NaN, repeated 16 times per half, multiplied.
# MX: arith.extf {{.*}} : tensor<64x64xf8E4M3FN> to tensor<64x64xbf16>
# MX: kiln.reshape {{.*}} : tensor<64x64xbf16> -> tensor<64x32x2xbf16>
# MX: kiln.split {{.*}} -> tensor<64x32xbf16>
# MX: arith.shli {{.*}} : tensor<64x2xi16>
# MX: arith.bitcast {{.*}} : tensor<64x2xi16> to tensor<64x2xbf16>
# MX: arith.cmpi eq, {{.*}} : tensor<64x2xi8>
# MX: arith.select {{.*}} : tensor<64x2xi1>, tensor<64x2xbf16>
# MX: kiln.broadcast {{.*}} : tensor<64x2x1xbf16> -> tensor<64x2x16xbf16>
# MX: kiln.reshape {{.*}} -> tensor<64x32xbf16>
# MX: arith.mulf {{.*}} : tensor<64x32xbf16>
# MX: arith.mulf {{.*}} : tensor<64x32xbf16>
# The rhs: [32, 64] bytes, e2m1 decoded exactly through fp32 bits (low
# nibbles: even K, high: odd), its scales [N, K / 32] transposed to [K, N].
# MX: arith.bitcast {{.*}} : tensor<32x64xi32> to tensor<32x64xf32>
# MX: arith.truncf {{.*}} : tensor<32x64xf32> to tensor<32x64xbf16>
# MX: kiln.trans {{.*}} : tensor<64x32xbf16> -> tensor<32x64xbf16>
# MX: arith.mulf {{.*}} : tensor<32x64xbf16>
# MX: %[[EVEN:.*]] = kiln.dot {{.*}} : tensor<64x32xbf16> * tensor<32x64xbf16> -> tensor<64x64xf32>
# MX: kiln.dot {{.*}}, %[[EVEN]], {{.*}} : tensor<64x32xbf16> * tensor<32x64xbf16> -> tensor<64x64xf32>

# Too short a K for two dots (K = 16): the nibbles are interleaved along K,
# [8, 32] -> [8, 32, 2] -> [8, 2, 32] -> [16, 32], and one dot.
# RUN: %kilnc compile %s -n short_k -s "a_ptr=*bf16, b_ptr=*u8, c_ptr=*fp32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=SHORT
# SHORT: kiln.join {{.*}} : tensor<8x32xbf16> -> tensor<8x32x2xbf16>
# SHORT: kiln.trans {{.*}} -> tensor<8x2x32xbf16>
# SHORT: kiln.reshape {{.*}} -> tensor<16x32xbf16>
# SHORT: kiln.dot {{.*}} : tensor<32x16xbf16> * tensor<16x32xbf16> -> tensor<32x32xf32>
# SHORT-NOT: kiln.dot

# fp16 with fast_math: the scales go through fp32 (s << 23) into fp16, and
# no NaN select.
# F16-NOT: arith.select {{.*}}xf16>
# F16: arith.shli {{.*}} : tensor<64x2xi32>
# F16: arith.bitcast {{.*}} : tensor<64x2xi32> to tensor<64x2xf32>
# F16: arith.truncf {{.*}} : tensor<64x2xf32> to tensor<64x2xf16>
# F16: arith.mulf {{.*}} : tensor<64x64xf16>
# F16: arith.extf {{.*}} : tensor<64x64xf8E5M2> to tensor<64x64xf16>
# F16: kiln.dot {{.*}} : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>

# The products run on the tensor cores in bf16, never as an FMA loop (on
# sm_90a through wgmma, their operands staged in shared memory:
# kiln-stage-dots).
# PTX80-NOT: fma.rn.f32
# PTX80: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
# PTX90: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16


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


@triton.jit
def short_k(a_ptr, b_ptr, c_ptr):
    r = tl.arange(0, 32)
    a = tl.load(a_ptr + r[:, None] * 16 + tl.arange(0, 16)[None, :])
    b = tl.load(b_ptr + tl.arange(0, 8)[:, None] * 32 + r[None, :])
    c = tl.dot_scaled(a, None, "bf16", b, None, "e2m1")
    tl.store(c_ptr + r[:, None] * 32 + r[None, :], c)
