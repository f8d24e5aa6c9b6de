# C = A @ B for every tensor-core flavour (compiler/ir/TensorCoreFlavour.h):
# A row-major (M x K), B either row-major K x N (`dot_nn`: N contiguous) or
# given as its N x K transpose (`dot_nt`: K contiguous), in a pipelined loop
# over K with masked tails. tests/e2e/dot_flavours_gpu_test.cc runs them
# through the generated launchers, built for sm_90 (mma.sync) and for sm_90a
# (wgmma where both tiles are K-contiguous), and checks every element.
import triton
import triton.language as tl


@triton.jit
def dot_nn(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
           INTEGER: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    if INTEGER:
        acc = tl.zeros((BM, BN), dtype=tl.int32)
    else:
        acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + kk[None, :],
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0)
        b = tl.load(b_ptr + kk[:, None] * stride_bk + rn[None, :],
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def dot_nt(a_ptr, bt_ptr, c_ptr, M, N, K, stride_am, stride_btn, stride_cm,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
           INTEGER: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    if INTEGER:
        acc = tl.zeros((BM, BN), dtype=tl.int32)
    else:
        acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + kk[None, :],
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0)
        b = tl.load(bt_ptr + rn[None, :] * stride_btn + kk[:, None],
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def dot_nt_trans(a_ptr, bt_ptr, c_ptr, M, N, K, stride_am, stride_btn, stride_cm,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # B given as its N x K transpose, loaded as an N x K tile and transposed
    # in the kernel (`.T`), as attention's k is.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + kk[None, :],
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0)
        bt = tl.load(bt_ptr + rn[:, None] * stride_btn + kk[None, :],
                     mask=(rn[:, None] < N) & (kk[None, :] < K), other=0)
        acc = tl.dot(a, bt.T, acc)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))
