# A dot accumulating into a value that is only carried (attention
# backward's dv = dot(p, do, dv)) ahead of a dot whose result the iteration
# reads (dp = dot(v, do.T)): with 2 stages its wgmma group cannot stay in
# flight into the next iteration, but it needs no wait of its own either.
# dp's full wait completes both, so the two groups run side by side and the
# wait ties dv's carried value. dk, the iteration's last dot, is waited for
# at once.
# RUN: %kilnc compile %s -n dkdv -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, *fp32:16, 128, 32, 64" -w 8 --ns=2 --arch sm_90a --emit gpu -o - | FileCheck %s
# sm_90's mma.sync is synchronous: nothing to defer, and nothing changes.
# RUN: %kilnc compile %s -n dkdv -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, *fp32:16, 128, 32, 64" -w 8 --ns=2 --arch sm_90 --emit gpu -o - | FileCheck %s --check-prefix=SYNC
import triton
import triton.language as tl

# CHECK: scf.for
# CHECK: %[[P:.*]] = kiln_gpu.shared_dot {{.*}} {async}
# CHECK-NEXT: kiln_gpu.dot_wait %[[P]] {pending = 0 : i32}
# CHECK: %[[DV:.*]] = kiln_gpu.shared_dot {{.*}} {async} : tensor<128x32xf16
# CHECK-NOT: kiln_gpu.dot_wait
# CHECK: %[[DP:.*]] = kiln_gpu.shared_dot {{.*}} {async}
# CHECK-NEXT: %[[READY:.*]]:2 = kiln_gpu.dot_wait %[[DP]], %[[DV]] {pending = 0 : i32}
# CHECK: %[[DK:.*]] = kiln_gpu.shared_dot {{.*}} {async}
# CHECK-NEXT: %[[DKREADY:.*]] = kiln_gpu.dot_wait %[[DK]] {pending = 0 : i32}
# CHECK: scf.yield {{.*}}%[[DKREADY]], %[[READY]]#1

# SYNC: scf.for
# SYNC-NOT: kiln_gpu.dot_wait
# SYNC: scf.yield


@triton.jit
def dkdv(k_ptr, v_ptr, q_ptr, do_ptr, dk_ptr, dv_ptr, N: tl.constexpr, BM: tl.constexpr, D: tl.constexpr):
    rn = tl.arange(0, N)
    rm = tl.arange(0, BM)
    rd = tl.arange(0, D)
    k = tl.load(k_ptr + rn[:, None] * D + rd[None, :])
    v = tl.load(v_ptr + rn[:, None] * D + rd[None, :])
    dk = tl.zeros([N, D], dtype=tl.float32)
    dv = tl.zeros([N, D], dtype=tl.float32)
    for m in range(0, 16):
        q = tl.load(q_ptr + (m * BM + rm[:, None]) * D + rd[None, :])
        do = tl.load(do_ptr + (m * BM + rm[:, None]) * D + rd[None, :])
        pT = tl.math.exp2(tl.dot(k, tl.trans(q)))
        dv = tl.dot(pT.to(tl.float16), do, dv)
        dpT = tl.dot(v, tl.trans(do))
        dsT = (pT * dpT).to(tl.float16)
        dk = tl.dot(dsT, q, dk)
    tl.store(dk_ptr + rn[:, None] * D + rd[None, :], dk)
    tl.store(dv_ptr + rn[:, None] * D + rd[None, :], dv)


# Three such dots (three GEMMs over one a): the first two are completed by
# the third's wait, passed on from dot to dot, and all three values tied.
# RUN: %kilnc compile %s -n three -s "*fp16:16, *fp16:16, *fp16:16, *fp16:16, *fp32:16, 128, 64, 64" -w 4 --ns=2 --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=THREE
# THREE: scf.for
# THREE: %[[D1:.*]] = kiln_gpu.shared_dot {{.*}} {async}
# THREE-NOT: kiln_gpu.dot_wait
# THREE: %[[D2:.*]] = kiln_gpu.shared_dot {{.*}} {async}
# THREE-NOT: kiln_gpu.dot_wait
# THREE: %[[D3:.*]] = kiln_gpu.shared_dot {{.*}} {async}
# THREE-NEXT: %[[R:.*]]:3 = kiln_gpu.dot_wait %[[D3]], %[[D2]], %[[D1]] {pending = 0 : i32}
# THREE: scf.yield {{.*}}%[[R]]#2, %[[R]]#1, %[[R]]#0


@triton.jit
def three(a_ptr, b1_ptr, b2_ptr, b3_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    acc1 = tl.zeros([M, N], dtype=tl.float32)
    acc2 = tl.zeros([M, N], dtype=tl.float32)
    acc3 = tl.zeros([M, N], dtype=tl.float32)
    for k in range(0, 8):
        a = tl.load(a_ptr + rm[:, None] * (8 * K) + k * K + rk[None, :])
        b = (k * K + rk[:, None]) * N + rn[None, :]
        acc1 = tl.dot(a, tl.load(b1_ptr + b), acc1)
        acc2 = tl.dot(a, tl.load(b2_ptr + b), acc2)
        acc3 = tl.dot(a, tl.load(b3_ptr + b), acc3)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc1 + acc2 * acc3)
