# Weight-only GEMMs over 4-bit weights packed eight to an int32 word, as
# GPTQ- and AWQ-style kernels write them: the word of row k is loaded
# through `(k // 8) * stride` (eight rows of k read one row of words) or
# that of column n through `n // 8`, shifted, masked and scaled into fp16
# before the dot. kilnc keeps one row (or column) of words per eight in
# the pipeline's shared ring (the copies and the ring shrink eightfold);
# the masked form checks that a mask shared by the eight rows keeps it.
#
# kiln-variant: -n packed_rows_matmul -s "a_ptr=*fp16:16, b_ptr=*i32:16, s_ptr=*fp16:16, c_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, BM=64, BN=64, BK=64, GROUP=64, STAGES=3"
# kiln-variant: -n packed_rows_matmul -s "a_ptr=*fp16:16, b_ptr=*i32:16, s_ptr=*fp16:16, c_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, BM=128, BN=128, BK=64, GROUP=128, STAGES=4"
# kiln-variant: -n masked_packed_rows_matmul -s "a_ptr=*fp16:16, b_ptr=*i32:16, c_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, stride_am=i32:16, BM=64, BN=64, BK=64"
# kiln-variant: -n ragged_packed_rows_matmul -s "a_ptr=*fp16:16, b_ptr=*i32:16, s_ptr=*fp16:16, c_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, BM=64, BN=128, BK=64, GROUP=64"
# kiln-variant: -n packed_columns_matmul -s "a_ptr=*fp16:16, b_ptr=*i32:16, c_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, BM=64, BN=64, BK=32"
# kiln-variant: -n packed_zeros_matmul -s "a_ptr=*fp16:16, b_ptr=*i32:16, s_ptr=*fp16:16, z_ptr=*i32:16, c_ptr=*fp32:16, M=i32, N=i32:16, K=i32:16, BM=64, BN=128, BK=32, GROUP=128"
# kiln-covers: packed_rows_matmul: tl.range(num_stages=, loop_unroll_factor=); tl.dot
# kiln-covers: packed_columns_matmul: tl.dot
import triton
import triton.language as tl


@triton.jit
def packed_rows_matmul(a_ptr, b_ptr, s_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                       BK: tl.constexpr, GROUP: tl.constexpr, STAGES: tl.constexpr):
    # c = a @ w, a [M, K] fp16, w[k, n] = (((b[k // 8, n] >> 4 * (k % 8)) & 15) - 8)
    # * s[k // GROUP, n]: b [K // 8, N] int32, s [K // GROUP, N] fp16.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + (rm % M)[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + (rk // 8)[:, None] * N + rn[None, :]
    shifts = (rk % 8) * 4
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K // BK, num_stages=STAGES):
        packed = tl.load(b_ptrs)
        scale = tl.load(s_ptr + (k * BK // GROUP) * N + rn)
        w = ((packed >> shifts[:, None]) & 0xF) - 8
        acc = tl.dot(tl.load(a_ptrs), w.to(tl.float16) * scale[None, :], acc)
        a_ptrs += BK
        b_ptrs += (BK // 8) * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=rm[:, None] < M)


@triton.jit
def ragged_packed_rows_matmul(a_ptr, b_ptr, s_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                              BK: tl.constexpr, GROUP: tl.constexpr):
    # packed_rows_matmul with N not a multiple of BN: the words and the row
    # of scales (copied with them, a ring of its own) are masked past N, the
    # scales falling back to 0.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + (rm % M)[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + (rk // 8)[:, None] * N + rn[None, :]
    shifts = (rk % 8) * 4
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K // BK):
        packed = tl.load(b_ptrs, mask=rn[None, :] < N, other=0)
        scale = tl.load(s_ptr + (k * BK // GROUP) * N + rn, mask=rn < N, other=0.0)
        w = ((packed >> shifts[:, None]) & 0xF) - 8
        acc = tl.dot(tl.load(a_ptrs), w.to(tl.float16) * scale[None, :], acc)
        a_ptrs += BK
        b_ptrs += (BK // 8) * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def masked_packed_rows_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, BM: tl.constexpr,
                              BN: tl.constexpr, BK: tl.constexpr):
    # c = a @ w as above without scales; K is a multiple of 16, not of BK:
    # the last step's rows past K are masked, eight at a time.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + (rm % M)[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + (rk // 8)[:, None] * N + rn[None, :]
    shifts = (rk % 8) * 4
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        left = K - k * BK
        a = tl.load(a_ptrs, mask=rk[None, :] < left, other=0.0)
        packed = tl.load(b_ptrs, mask=(rk // 8)[:, None] < left // 8, other=0)
        w = ((packed >> shifts[:, None]) & 0xF) - 8
        acc = tl.dot(a, w.to(tl.float16), acc)
        a_ptrs += BK
        b_ptrs += (BK // 8) * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=rm[:, None] < M)


@triton.jit
def packed_columns_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                          BK: tl.constexpr):
    # c = a @ w, w[k, n] = ((b[k, n // 8] >> 4 * (n % 8)) & 15) - 8, b [K, N // 8]
    # int32: the words repeat along n, across the tile's lines.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + (rm % M)[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * (N // 8) + (rn // 8)[None, :]
    shifts = (rn % 8) * 4
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K // BK):
        packed = tl.load(b_ptrs)
        w = ((packed >> shifts[None, :]) & 0xF) - 8
        acc = tl.dot(tl.load(a_ptrs), w.to(tl.float16), acc)
        a_ptrs += BK
        b_ptrs += BK * (N // 8)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=rm[:, None] < M)


@triton.jit
def packed_zeros_matmul(a_ptr, b_ptr, s_ptr, z_ptr, c_ptr, M, N, K, BM: tl.constexpr,
                        BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
    # GPTQ's form: w[k, n] = q[k, n] * s[g, n] - zero[g, n] * s[g, n], g = k // GROUP,
    # the zeros packed eight to a word along n (z [K // GROUP, N // 8] int32)
    # and unpacked, then scaled, as vectors before their expansion; the row
    # of scales is read both so and as `scale[None, :]`.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + (rm % M)[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + (rk // 8)[:, None] * N + rn[None, :]
    s_ptrs = s_ptr + rn
    z_ptrs = z_ptr + rn // 8
    shifts = (rk % 8) * 4
    zero_shifts = (rn % 8) * 4
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K // BK):
        g = k // (GROUP // BK)
        scale = tl.load(s_ptrs + g * N)
        zeros = tl.load(z_ptrs + g * (N // 8))
        zeros = ((zeros >> zero_shifts) & 0xF) * scale
        q = (tl.load(b_ptrs) >> shifts[:, None]) & 0xF
        w = q * scale[None, :] - zeros[None, :]
        acc += tl.dot(tl.load(a_ptrs), w)
        a_ptrs += BK
        b_ptrs += (BK // 8) * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=rm[:, None] < M)
