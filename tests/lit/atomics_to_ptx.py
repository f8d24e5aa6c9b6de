# Atomics become predicated atom.global instructions with their ordering and
# scope; an element is updated by one thread only (copies are masked off),
# and a scalar atomic runs in thread 0, whose old value reaches every thread
# through shared memory.
# RUN: %kilnc compile %s -n orderings -s "*i32, *i32, i32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=ORDER
# RUN: %kilnc compile %s -n float_ops -s "*fp32, *fp32, i32" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=FLOAT
# RUN: %kilnc compile %s -n half_add -s "*fp16, *fp16, i32" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=F16
# RUN: %kilnc compile %s -n half_add -s "*bf16, *bf16, i32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=BF16-NATIVE
# RUN: %kilnc compile %s -n half_add -s "*bf16, *bf16, i32" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=BF16-LOOP
# RUN: %kilnc compile %s -n wide -s "*i64, *i64, i32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=WIDE
# RUN: %kilnc compile %s -n tile_add -s "*fp32, *fp32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=TILE
# A thread's contiguous, aligned elements go as one vector atomic (split-K's
# partial tiles): f32 quads from sm_90, f16 pairs packed as f16x2; f32 on
# sm_80 stays one element an atomic.
# RUN: %kilnc compile %s -n partial_tile -s "*fp32:16, *fp32:16, i32:16" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=VEC4
# RUN: %kilnc compile %s -n partial_tile -s "*fp32:16, *fp32:16, i32:16" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=SCALAR
# RUN: %kilnc compile %s -n partial_tile -s "*fp16:16, *fp16:16, i32:16" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=F16X2
import triton
import triton.language as tl


# 64 elements, 128 threads: threads 64.. hold copies and stay out.
# ORDER: setp.lt.u32 [[OWNER:%p[0-9]+]], %r{{[0-9]+}}, 64;
# ORDER: @%p{{[0-9]+}} atom.global.relaxed.gpu.add.u32
# ORDER: @%p{{[0-9]+}} atom.global.acquire.cta.add.u32
# ORDER: @%p{{[0-9]+}} atom.global.release.sys.add.u32
# ORDER: @%p{{[0-9]+}} atom.global.acq_rel.gpu.add.u32
# ORDER: setp.eq.b32 [[FIRST:%p[0-9]+]], %r{{[0-9]+}}, 0;
# ORDER: @[[FIRST]] atom.global.acquire.gpu.cas.b32
# ORDER: @[[FIRST]] st.shared.b32
# ORDER: bar.sync 0;
# ORDER: ld.shared.b32
# ORDER: bar.sync 0;
# ORDER: @[[FIRST]] atom.global.release.gpu.exch.b32
@triton.jit
def orderings(ptr, flag_ptr, n):
    offs = tl.arange(0, 64)
    m = offs < n
    tl.atomic_add(ptr + offs, 1, mask=m, sem="relaxed", scope="gpu")
    tl.atomic_add(ptr + offs, 1, mask=m, sem="acquire", scope="cta")
    tl.atomic_add(ptr + offs, 1, mask=m, sem="release", scope="sys")
    tl.atomic_add(ptr + offs, 1, mask=m, sem="acq_rel")
    if tl.atomic_cas(flag_ptr, 0, 1, sem="acquire", scope="gpu") == 0:
        tl.atomic_xchg(flag_ptr, 0, sem="release", scope="gpu")


# Float max/min on the bits: signed for non-negative values, unsigned
# (reversed) for negative ones.
# FLOAT: atom.global.acq_rel.gpu.add.f32
# FLOAT-DAG: atom.global.acq_rel.gpu.max.s32
# FLOAT-DAG: atom.global.acq_rel.gpu.min.u32
# FLOAT-DAG: atom.global.acq_rel.gpu.min.s32
# FLOAT-DAG: atom.global.acq_rel.gpu.max.u32
@triton.jit
def float_ops(acc_ptr, x_ptr, n):
    offs = tl.arange(0, 256)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    old = tl.atomic_add(acc_ptr + offs, x, mask=m)
    tl.atomic_max(acc_ptr + n + offs, old, mask=m)
    tl.atomic_min(acc_ptr + 2 * n + offs, x, mask=m)


# F16: atom.global.relaxed.gpu.add.noftz.f16
# BF16-NATIVE: atom.global.relaxed.gpu.add.noftz.bf16
# BF16-LOOP-NOT: add.noftz.bf16
# BF16-LOOP: kiln_atom_retry_0:
# BF16-LOOP: cvt.rn.bf16.f32
# BF16-LOOP: atom.global.relaxed.gpu.cas.b16
# BF16-LOOP: @%kiln_retry bra kiln_atom_retry_0;
@triton.jit
def half_add(acc_ptr, x_ptr, n):
    offs = tl.arange(0, 512)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.atomic_add(acc_ptr + offs, x, mask=offs < n, sem="relaxed")


# WIDE: atom.global.acq_rel.gpu.max.s64
# WIDE: atom.global.acq_rel.gpu.cas.b64
@triton.jit
def wide(ptr, val_ptr, n):
    offs = tl.arange(0, 256)
    v = tl.load(val_ptr + offs)
    tl.atomic_max(ptr + offs, v, mask=offs < n)
    tl.atomic_cas(ptr + offs, v, v + 1)


# A 4x8 tile over 128 threads: only the 32 threads of warp 0 hold distinct
# elements; the other warps' copies stay out.
# TILE-LABEL: .entry tile_add
# TILE: setp.lt.u32 [[P:%p[0-9]+]], %r{{[0-9]+}}, 32;
# TILE: @[[P]] atom.global.acq_rel.gpu.add.f32
# TILE-NOT: atom.global
@triton.jit
def tile_add(ptr, out):
    offs = tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :]
    old = tl.atomic_add(out + offs, tl.load(ptr + offs))
    tl.store(ptr + offs, old)


# VEC4: @%p{{[0-9]+}} atom.global.acq_rel.gpu.add.v4.f32 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [ %rd{{[0-9]+}} + 0 ], {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
# VEC4-NOT: gpu.add.f32
# SCALAR: atom.global.acq_rel.gpu.add.f32
# SCALAR-NOT: .v4.f32
# SCALAR-NOT: .v2.f32
# F16X2: atom.global.acq_rel.gpu.add.noftz.f16x2
# F16X2-NOT: {{add\.noftz\.f16[^x]}}
@triton.jit
def partial_tile(c_ptr, x_ptr, stride):
    rows = tl.arange(0, 64)[:, None]
    cols = tl.arange(0, 64)[None, :]
    x = tl.load(x_ptr + rows * 64 + cols)
    old = tl.atomic_add(c_ptr + rows * stride + cols, x, mask=rows < 60)
    tl.store(x_ptr + rows * 64 + cols, old)
