# tl.float8e4b15 on every target (sm_80 here): to it from fp32 goes to fp16
# toward zero, clamps the magnitude to 1.75 (0x3f00: inf and NaN too), rounds
# half up and keeps bits 13..7 beside the sign; from it, those bits go back
# into an fp16. A dot of two fp8e4b15 blocks widens them to fp16 first.
#
# RUN: %kilnc compile %S/../kernels/elementwise/fp8e4b15.py -n encode -s "in_ptr=*fp32, out_ptr=*u8, n=i32, BLOCK=128" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=ENCODE
# ENCODE: cvt.rz.f16.f32 %[[H:rs[0-9]+]], %r{{[0-9]+}};
# ENCODE-DAG: and.b16 %[[SIGN:rs[0-9]+]], %[[H]], -32768;
# ENCODE-DAG: and.b16 %[[MAG:rs[0-9]+]], %[[H]], 32767;
# ENCODE: min.u16 %[[C:rs[0-9]+]], %[[MAG]], 16128;
# ENCODE: shl.b16 %[[S:rs[0-9]+]], %[[C]], 1;
# ENCODE: or.b16 %[[O:rs[0-9]+]], %[[S]], %[[SIGN]];
# ENCODE: add.s16 %[[R:rs[0-9]+]], %[[O]], 128;
# ENCODE: shr.u16 %[[B:rs[0-9]+]], %[[R]], 8;
# ENCODE: st.global.b8 [ %rd{{[0-9]+}} + 0 ], %[[B]];
#
# RUN: %kilnc compile %S/../kernels/elementwise/fp8e4b15.py -n decode -s "in_ptr=*u8, out_ptr=*fp32, n=i32, BLOCK=128" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=DECODE
# DECODE: ld.global.b8 %[[B:rs[0-9]+]]
# DECODE: shl.b16 %[[HI:rs[0-9]+]], %[[B]], 8;
# DECODE: and.b16 %[[SIGN:rs[0-9]+]], %[[HI]], -32768;
# DECODE: shl.b16 %[[LO:rs[0-9]+]], %[[B]], 7;
# DECODE: and.b16 %[[REST:rs[0-9]+]], %[[LO]], 16256;
# DECODE: or.b16 %[[H:rs[0-9]+]], %[[SIGN]], %[[REST]];
# DECODE: cvt.f32.f16 %r{{[0-9]+}}, %[[H]];
#
# RUN: %kilnc compile %S/../kernels/elementwise/fp8e4b15.py -n dot_e4b15 -s "a_ptr=*u8, b_ptr=*u8, c_ptr=*fp32, M=i32, N=i32, K=i32, BM=64, BN=64, BK=32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=DOT
# DOT: arith.extf %{{.*}} : tensor<64x32xf8E4M3B11FNUZ> to tensor<64x32xf16>
# DOT: arith.extf %{{.*}} : tensor<32x64xf8E4M3B11FNUZ> to tensor<32x64xf16>
# DOT: kiln.dot %{{.*}} : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
# RUN: %kilnc compile %S/../kernels/elementwise/fp8e4b15.py -n dot_e4b15 -s "a_ptr=*u8, b_ptr=*u8, c_ptr=*fp32, M=i32, N=i32, K=i32, BM=16, BN=32, BK=16" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=MMA
# MMA: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
#
# RUN: not %kilnc compile %s -n from_bf16 -s "x_ptr=*bf16, out_ptr=*fp32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=BF16
# BF16: fp8e4b15_to_ptx.py:[[@LINE+10]]:9: error: cannot convert bf16 to fp8e4b15: it converts from fp16 and fp32 only (as in Triton)
# RUN: not %kilnc compile %s -n mixed_dot -s "a_ptr=*fp8e4b15, b_ptr=*fp8e5, out_ptr=*fp32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=MIXED
# MIXED: error: tl.dot needs operands of one dtype, got float8e4b15 and float8e5
import triton
import triton.language as tl


@triton.jit
def from_bf16(x_ptr, out_ptr):
    offs = tl.arange(0, 32)
    y = tl.load(x_ptr + offs).to(tl.float8e4b15)
    tl.store(out_ptr + offs, y.to(tl.float32))


@triton.jit
def mixed_dot(a_ptr, b_ptr, out_ptr):
    r = tl.arange(0, 16)
    a = tl.load(a_ptr + r[:, None] * 16 + r[None, :])
    b = tl.load(b_ptr + r[:, None] * 16 + r[None, :])
    tl.store(out_ptr + r[:, None] * 16 + r[None, :], tl.dot(a, b))
