# A wgmma chain whose accumulator is the constant zero (attention's q @ kᵀ,
# `tl.dot(a, b)` without acc) takes no accumulator input: its first wgmma
# runs with scale-d 0 (d = a b) on undefined registers, so nothing zeroes a
# fragment every iteration; the rest of the chain accumulates (scale-d 1).
# An accumulator that is not zero is read by every wgmma of its chain.
# RUN: %kilnc compile %s -n zero_acc -s "*fp16:16, *fp16:16, *fp32:16, i32:16" --arch sm_90a --emit llvm -o - | FileCheck %s --check-prefix=ZERO
# RUN: %kilnc compile %s -n with_acc -s "*fp16:16, *fp16:16, *fp32:16, i32:16" --arch sm_90a --emit llvm -o - | FileCheck %s --check-prefix=ACC
import triton
import triton.language as tl

# ZERO: asm sideeffect "{{.*}}wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16{{.*}}"(i64 %{{[0-9]+}}, i64 %{{[0-9]+}}, float undef, {{(float undef, )+}}i32 0)
# ZERO-NEXT: extractvalue
# ZERO: asm sideeffect "{{.*}}wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16{{.*}}"(i64 %{{[0-9]+}}, i64 %{{[0-9]+}}, float %{{[0-9]+}}, {{.*}}, i32 1)
# ACC-NOT: float undef
# ACC: wgmma.mma_async
# ACC-NOT: float undef


@triton.jit
def zero_acc(a_ptr, b_ptr, out_ptr, n):
    r = tl.arange(0, 64)
    total = tl.zeros((64, 64), dtype=tl.float32)
    for k in range(0, n, 64):
        a = tl.load(a_ptr + k * 64 + r[:, None] * 64 + r[None, :])
        b = tl.load(b_ptr + k * 64 + r[:, None] * 64 + r[None, :])
        s = tl.dot(a, b)
        total += tl.exp(s)
    tl.store(out_ptr + r[:, None] * 64 + r[None, :], total)


@triton.jit
def with_acc(a_ptr, b_ptr, out_ptr, n):
    r = tl.arange(0, 64)
    acc = tl.zeros((64, 64), dtype=tl.float32) + 1.0
    for k in range(0, n, 64):
        a = tl.load(a_ptr + k * 64 + r[:, None] * 64 + r[None, :])
        b = tl.load(b_ptr + k * 64 + r[:, None] * 64 + r[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(out_ptr + r[:, None] * 64 + r[None, :], acc)
