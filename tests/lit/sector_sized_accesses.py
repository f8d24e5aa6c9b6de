# Global accesses that fill the sectors they touch, where the rank's layout
# (made for the 16-bit tiles) would not.
#
# `state`: an fp32 accumulator stored through pointers computed from index
# vectors that the loop's loads also use (their conversions are free to
# look through): 16 bytes a thread, a warp along one 512-byte row. At 8 a
# thread each of a warp's 16-byte stores wrote half of every sector.
# RUN: %kilnc compile %s -n state -s "*bf16:16, *bf16:16, *fp32:16, *fp32:16, i32:16, i32:16, i32:16, i32:16, i32:1, i32:16, i32:1, i32:16, i32:1, 64, 128, 32" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=STATE
# STATE: kiln.store {{.*}} : tensor<64x128x!kiln.ptr<f32>, #kiln_gpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32]
#
# `scaled`: an fp32 operand tile (scaled, then rounded to bf16) beside bf16
# tiles is copied 16 bytes a thread, 16 lanes along its 256-byte rows.
# RUN: %kilnc compile %s -n scaled -s "*fp32:16, *bf16:16, *bf16:16, *fp32:16, i32:16, 128, 64, 64" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=SCALED
# SCALED: kiln_gpu.async_copy {{.*}} : tensor<128x64x!kiln.ptr<f32>, #kiln_gpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16]
# SCALED: kiln_gpu.async_copy {{.*}} : tensor<64x64x!kiln.ptr<bf16>, #kiln_gpu.blocked<{sizePerThread = [1, 8]
#
# `columns`: a b tile stored N x K (K contiguous) and loaded outside any loop
# is laid out down its columns and read 16 bytes at a time along them, not
# one element at a time (copied straight into its tile by cp.async:
# stage_dots_copy_at_loads.py).
# RUN: %kilnc compile %s -n columns -s "*bf16:16, *bf16:16, *fp32:16, i32:16, i32:1, 128, 64, 128" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=COLUMNS
# COLUMNS-NOT: ld.global.b16
# COLUMNS-COUNT-24: cp.async.cg.shared.global [ {{%r[0-9]+}} ], [ {{%rd[0-9]+}} ], 16,
# COLUMNS-NOT: ld.global.b16
#
# `split_k`: split-K's fp32 partial tiles, added atomically, 4 floats a
# thread (one red.v4.f32) along whole rows, not two half-sector atomics of
# 8; fp16 ones 8 a thread on sm_90 (one 16-byte v4.f16x2 atomic; f16x2
# pairs before sm_90).
# RUN: %kilnc compile %s -n split_k -s "*fp16:16, *fp16:16, *fp32:16, i32:16, 128, 128, 64" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=SPLITK
# SPLITK: kiln.atomic_rmw fadd {{.*}} : tensor<128x128x!kiln.ptr<f32>, #kiln_gpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32]
# RUN: %kilnc compile %s -n split_k -s "*fp16:16, *fp16:16, *fp32:16, i32:16, 128, 128, 64" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=SPLITK-PTX
# SPLITK-PTX-COUNT-32: atom.global.acq_rel.gpu.add.v4.f32
# SPLITK-PTX-NOT: atom.global
# RUN: %kilnc compile %s -n split_k -s "*fp16:16, *fp16:16, *fp16:16, i32:16, 128, 128, 64" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=SPLITK16
# SPLITK16: kiln.atomic_rmw fadd {{.*}} : tensor<128x128x!kiln.ptr<f16>, #kiln_gpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8]
# RUN: %kilnc compile %s -n split_k -s "*fp16:16, *fp16:16, *fp16:16, i32:16, 128, 128, 64" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=SPLITK16-PTX
# SPLITK16-PTX-COUNT-16: atom.global.acq_rel.gpu.add.noftz.v4.f16x2
# SPLITK16-PTX-NOT: atom.global
# RUN: %kilnc compile %s -n split_k -s "*fp16:16, *fp16:16, *fp16:16, i32:16, 128, 128, 64" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=SPLITK16-SM80
# SPLITK16-SM80-COUNT-64: atom.global.acq_rel.gpu.add.noftz.f16x2
# SPLITK16-SM80-NOT: atom.global
import triton
import triton.language as tl


@triton.jit
def state(x_ptr, b_ptr, out_ptr, dt_ptr, hdim, dstate, L, stride_x_seq, stride_x_hdim,
          stride_b_seq, stride_b_dstate, stride_o_m, stride_o_n, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    x_ptrs = x_ptr + (offs_m[:, None] * stride_x_hdim + offs_k[None, :] * stride_x_seq)
    b_ptrs = b_ptr + (offs_n[None, :] * stride_b_dstate + offs_k[:, None] * stride_b_seq)
    dt_ptrs = dt_ptr + offs_k
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, L, BK):
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < hdim) & (offs_k[None, :] < L - k), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < L - k) & (offs_n[None, :] < dstate),
                    other=0.0).to(tl.float32)
        dt = tl.load(dt_ptrs, mask=offs_k < L - k, other=0.0)
        b *= tl.exp(dt)[:, None]
        acc += tl.dot(x, b.to(tl.bfloat16))
        x_ptrs += BK * stride_x_seq
        b_ptrs += BK * stride_b_seq
        dt_ptrs += BK
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    out_ptrs = out_ptr + (offs_m[:, None] * stride_o_m + offs_n[None, :] * stride_o_n)
    tl.store(out_ptrs, acc, mask=(offs_m[:, None] < hdim) & (offs_n[None, :] < dstate))


@triton.jit
def scaled(cb_ptr, x_ptr, out_ptr, dt_ptr, K, BM: tl.constexpr, BN: tl.constexpr,
           BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        cb = tl.load(cb_ptr + rm[:, None] * K + (k + rk)[None, :])
        dt = tl.load(dt_ptr + k + rk)
        cb *= dt[None, :]
        x = tl.load(x_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(cb.to(tl.bfloat16), x)
    tl.store(out_ptr + rm[:, None] * BN + rn[None, :], acc.to(tl.bfloat16))


@triton.jit
def columns(c_ptr, s_ptr, out_ptr, stride_s_n, stride_s_k, BM: tl.constexpr, BN: tl.constexpr,
            BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    c = tl.load(c_ptr + rm[:, None] * BK + rk[None, :])
    s = tl.load(s_ptr + rn[None, :] * stride_s_n + rk[:, None] * stride_s_k)
    acc = tl.dot(c, s)
    tl.store(out_ptr + rm[:, None] * BN + rn[None, :], acc)


@triton.jit
def split_k(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.program_id(0) * BK + tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, 4 * BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.atomic_add(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(c_ptr.dtype.element_ty))
