# kiln-carry-pointers: a matmul loop that computes its operands' pointers
# from the induction variable each iteration (tutorial 09's persistent
# kernel) carries them instead, starting at the first iteration's value and
# advancing by the step, found symbolically: ki * BK + offs_k grows by BK
# (the loop's step times BK), times the unit stride of a, times stride_bk
# for b.
# - computed: both loads read carried pointers; the loop yields them
#   advanced by BK and BK * stride_bk.
# - wrapped: `% K` makes the offsets non-affine: the pointers stay computed.
# - Loads through a tensor map (TMA on sm_90a) keep their pointers too.
# RUN: %kilnc compile %s -n computed -s "*fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32:16, 64, 64, 32" --arch sm_90a --emit kiln -o - | %kiln-opt --kiln-carry-pointers | FileCheck %s --check-prefix=COMPUTED
# RUN: %kilnc compile %s -n wrapped -s "*fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32:16, 64, 64, 32" --arch sm_90a --emit kiln -o - | %kiln-opt --kiln-carry-pointers | FileCheck %s --check-prefix=WRAPPED
# RUN: %kilnc compile %s -n described -s "*fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32:16, 64, 64, 32" --arch sm_90a --emit kiln -o - | %kiln-opt --kiln-set-target="arch=sm_90a" --kiln-lower-tensor-descriptors --kiln-carry-pointers | FileCheck %s --check-prefix=DESCRIBED
# RUN: %kilnc compile %s -n computed -s "*fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32:16, 64, 64, 32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
import triton
import triton.language as tl

# COMPUTED: %[[STEP_A:.*]] = kiln.broadcast %{{.*}} : tensor<1x32xi32> -> tensor<64x32xi32>
# COMPUTED: %[[STEP_B:.*]] = kiln.broadcast %{{.*}} : tensor<32x1xi32> -> tensor<32x64xi32>
# COMPUTED: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[A:.*]] = %{{.*}}, %[[B:.*]] = %{{.*}}) -> (tensor<64x64xf32>, tensor<64x32x!kiln.ptr<f16>>, tensor<32x64x!kiln.ptr<f16>>)
# COMPUTED: kiln.load %[[A]], mask
# COMPUTED: kiln.load %[[B]], mask
# COMPUTED: kiln.dot
# COMPUTED: %[[NEXT_A:.*]] = kiln.addptr %[[A]], %[[STEP_A]]
# COMPUTED: %[[NEXT_B:.*]] = kiln.addptr %[[B]], %[[STEP_B]]
# COMPUTED: scf.yield %{{.*}}, %[[NEXT_A]], %[[NEXT_B]]

# WRAPPED: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<64x64xf32>)
# WRAPPED: arith.remsi
# WRAPPED: kiln.load

# DESCRIBED: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<64x64xf32>)
# DESCRIBED: kiln.load {{.*}} tensor_map

# PTX: cp.async.cg.shared.global
# PTX: wgmma.mma_async


@triton.jit
def computed(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for ki in range(tl.cdiv(K, BK)):
        k = ki * BK + offs_k
        a = tl.load(a_ptr + offs_m[:, None] * K + k[None, :], mask=k[None, :] < K, other=0.0)
        b = tl.load(b_ptr + k[:, None] * N + offs_n[None, :], mask=k[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)


@triton.jit
def wrapped(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for ki in range(tl.cdiv(K, BK)):
        k = (ki * BK + offs_k) % K
        a = tl.load(a_ptr + offs_m[:, None] * K + k[None, :])
        b = tl.load(b_ptr + k[:, None] * N + offs_n[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)


@triton.jit
def described(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for ki in range(tl.cdiv(K, BK)):
        a = a_desc.load([pm * BM, ki * BK])
        b = b_desc.load([ki * BK, pn * BN])
        acc = tl.dot(a, b, acc)
    offs_m = pm * BM + tl.arange(0, BM)
    offs_n = pn * BN + tl.arange(0, BN)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)
