# tl.dot. fp16 and bf16 into fp32, and fp32 with the default tf32 precision,
# go to the tensor cores: the layout pass gives the kernel's 2-D tensors the
# mma.sync accumulator layout, the lowering stages a (row-major) and b
# (transposed) in shared memory and issues mma.sync (m16n8k16; m16n8k8 for
# tf32) per 16x8 tile and 32 bytes of K; tf32 rows run as the operand's
# registers do (staged_tf32_operand_rows.py), read by ldmatrix along K. int8 and fp8 with K = 16 (under
# their instruction's 32) and fp32 with input_precision="ieee" run on the CUDA
# cores: the result gets a blocked layout with a nearly square block per
# thread (16x16 over 128 threads is 1x2), a and b are staged the same way and
# each thread takes K fused multiply-adds per element in fp32 (fp8 widened
# before staging), or multiply-adds in the integer accumulator's type. fp8e4nv
# needs sm_89, as in Triton. kiln-stage-dots writes a 16-bit dot into
# swizzled tiles instead, on sm_80-90 (F16) and, where wgmma does not take
# it (16 rows), on sm_90a (STAGED): the shared dot's mma.sync reads them with
# ldmatrix.
# RUN: %kilnc compile %s -n dot16 -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp32" --arch sm_90 --emit gpu -o - | FileCheck %s --check-prefix=GPU
# RUN: %kilnc compile %s -n dot16 -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp32" --arch sm_90 --emit ptx -o - | FileCheck %s --check-prefix=F16
# RUN: %kilnc compile %s -n dot16 -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=STAGED
# RUN: %kilnc compile %s -n dot16 -s "a_ptr=*bf16, b_ptr=*bf16, c_ptr=*fp32" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=BF16
# RUN: %kilnc compile %s -n dot16 -s "a_ptr=*fp32, b_ptr=*fp32, c_ptr=*fp32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=TF32
# RUN: %kilnc compile %s -n dot16_ieee -s "a_ptr=*fp32, b_ptr=*fp32, c_ptr=*fp32" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU32
# RUN: %kilnc compile %s -n dot16_ieee -s "a_ptr=*fp32, b_ptr=*fp32, c_ptr=*fp32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=F32
# RUN: %kilnc compile %s -n dot16 -s "a_ptr=*i8, b_ptr=*i8, c_ptr=*i32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=I8
# RUN: %kilnc compile %s -n dot16 -s "a_ptr=*fp8e4nv, b_ptr=*fp8e4nv, c_ptr=*fp32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=F8
# RUN: not %kilnc compile %s -n dot16 -s "a_ptr=*fp8e4nv, b_ptr=*fp8e4nv, c_ptr=*fp32" --arch sm_80 --emit ptx -o - 2>&1 | FileCheck %s --check-prefix=F8-SM80
import triton
import triton.language as tl


# GPU-NOT: kiln_gpu.convert_layout
# GPU: kiln_gpu.shared_dot {{.*}} -> tensor<16x16xf32, #kiln_gpu.mma<{warpsPerCTA = [1, 4]}>>
# F16: st.shared.b16
# F16: bar.sync 0
# F16: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# F16: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
# F16: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
# F16-NOT: fma.rn
# F16: bar.sync 0
# BF16: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
# STAGED: st.shared.b16
# STAGED: bar.sync 0
# STAGED: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# STAGED: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
# STAGED: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
# STAGED-NOT: wgmma
# TF32: st.shared{{(.v[0-9])?}}.b32
# TF32: bar.sync 0
# TF32: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# TF32: ldmatrix.sync.aligned.m8n8.x2.shared.b16
# TF32: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
# TF32-NOT: fma.rn.f32
# GPU32: kiln.dot {{.*}} -> tensor<16x16xf32, #kiln_gpu.blocked<{sizePerThread = [1, 2]
# F32: st.shared.b32
# F32: bar.sync 0
# F32: ld.shared
# F32-COUNT-32: fma.rn.f32
# F32-NOT: fma.rn.f32
# F32-NOT: mma
# I8: st.shared{{(.v[0-9])?}}.b8
# I8: bar.sync 0
# I8: mul.wide.s16
# I8: add.s32
# F8: cvt.rn.f16x2.e4m3x2
# F8: st.shared.b32
# F8: bar.sync 0
# F8: fma.rn.f32
# F8-SM80: dot_to_ptx.py:[[@LINE+6]]:52: error: tl.dot of fp8e4nv operands needs sm_89 or newer, as in Triton (fp8e5 works from sm_80)
@triton.jit
def dot16(a_ptr, b_ptr, c_ptr):
    i = tl.arange(0, 16)
    a = tl.load(a_ptr + i[:, None] * 16 + i[None, :])
    b = tl.load(b_ptr + i[:, None] * 16 + i[None, :])
    tl.store(c_ptr + i[:, None] * 16 + i[None, :], tl.dot(a, b))


@triton.jit
def dot16_ieee(a_ptr, b_ptr, c_ptr):
    i = tl.arange(0, 16)
    a = tl.load(a_ptr + i[:, None] * 16 + i[None, :])
    b = tl.load(b_ptr + i[:, None] * 16 + i[None, :])
    tl.store(c_ptr + i[:, None] * 16 + i[None, :],
             tl.dot(a, b, input_precision="ieee"))
