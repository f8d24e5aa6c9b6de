# 8-bit GEMMs whose b is stored K x N row-major (n contiguous), as a
# tutorial-style int8 or fp8 matmul loads it. wgmma reads 8-bit tiles only
# K-major: kilnc copies b as it is into the pipeline's ring, reads it back
# four rows a thread and writes it K-major into a staging tile (4-byte
# chunks down each column) that wgmma reads; mma.sync targets read the
# ring directly. K need not divide by BK: the last step is masked.
#
# kiln-variant: -n int8_matmul -s "a_ptr=*i8:16, b_ptr=*i8:16, c_ptr=*i32:16, M=i32, N=i32:16, K=i32:16, BM=64, BN=64, BK=64"
# kiln-variant: -n int8_matmul -s "a_ptr=*i8:16, b_ptr=*i8:16, c_ptr=*i32:16, M=i32, N=i32:16, K=i32:16, BM=128, BN=128, BK=128, num_stages=4"
# kiln-variant: -n fp8_matmul -s "a_ptr=*fp8e4nv:16, b_ptr=*fp8e4nv:16, c_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, BM=128, BN=64, BK=64"
# kiln-covers: int8_matmul: tl.dot
# kiln-covers: fp8_matmul: tl.dot
import triton
import triton.language as tl


@triton.jit
def int8_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # c (int32) = a (int8, M x K) @ b (int8, K x N), both row-major.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + (rm % M)[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.int32)
    for k in range(0, tl.cdiv(K, BK)):
        left = K - k * BK
        a = tl.load(a_ptrs, mask=rk[None, :] < left, other=0)
        b = tl.load(b_ptrs, mask=rk[:, None] < left, other=0)
        acc += tl.dot(a, b)
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=rm[:, None] < M)


@triton.jit
def fp8_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # c (fp32) = a (e4m3, M x K) @ b (e4m3, K x N), both row-major.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + (rm % M)[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        left = K - k * BK
        a = tl.load(a_ptrs, mask=rk[None, :] < left, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=rm[:, None] < M)
