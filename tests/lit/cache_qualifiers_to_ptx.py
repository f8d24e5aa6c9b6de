# tl.load's and tl.store's cache_modifier, eviction_policy and volatile
# reach the PTX, as upstream Triton emits them: a cache operator as
# `.ca`/`.cg`/`.cv` (`.wb`/`.cg`/`.cs`/`.wt` for stores); an eviction
# priority as `.L1::evict_*` with an L2 policy from createpolicy (one per
# priority, which the kernel's accesses share), or, beside a cache operator,
# the L2 policy alone; volatile as ld.volatile, which a spin-wait on another
# block's flag needs (an L1-cached load may never see the write), and which
# stays in its loop (a volatile load counts as a write: not removed, merged
# or hoisted).
# RUN: %kilnc compile %s -n cached -s "x_ptr=*fp32:16, y_ptr=*fp32:16, flag_ptr=*i32, n=i32:16" --arch sm_90a --emit ptx -o - | FileCheck %s
# RUN: %kilnc compile %s -n cached -s "x_ptr=*fp32:16, y_ptr=*fp32:16, flag_ptr=*i32, n=i32:16" --arch sm_80 -o %t.cubin
import triton
import triton.language as tl


# CHECK: [[SPIN:\$L__BB0_[0-9]+]]:
# CHECK: ld.volatile.global.b32
# CHECK: bra {{.*}}[[SPIN]];
# CHECK: createpolicy.fractional.L2::evict_first.b64 [[FIRST:%rd[0-9]+]], 1.0;
# CHECK: ld.global.L1::evict_first.L2::cache_hint.v4.b32 {{.*}}, [[FIRST]];
# CHECK: createpolicy.fractional.L2::evict_last.b64 [[LAST:%rd[0-9]+]], 1.0;
# CHECK: ld.global.cg.L2::cache_hint.v4.b32 {{.*}}, [[LAST]];
# CHECK: ld.global.cv.v4.b32
# CHECK: st.global.cs.v4.b32
# CHECK: st.global.L1::evict_first.L2::cache_hint.v4.b32 [ {{%rd[0-9]+}} + 0 ], {{.*}}, [[FIRST]];
@triton.jit
def cached(x_ptr, y_ptr, flag_ptr, n):
    while tl.load(flag_ptr, volatile=True) == 0:
        pass
    offs = tl.program_id(0) * 1024 + tl.arange(0, 1024)
    a = tl.load(x_ptr + offs, mask=offs < n, eviction_policy="evict_first")
    b = tl.load(x_ptr + n + offs, mask=offs < n, cache_modifier=".cg", eviction_policy="evict_last")
    c = tl.load(x_ptr + 2 * n + offs, mask=offs < n, cache_modifier=".cv")
    tl.store(y_ptr + offs, a + b, mask=offs < n, cache_modifier=".cs")
    tl.store(y_ptr + n + offs, c, mask=offs < n, eviction_policy="evict_first")
