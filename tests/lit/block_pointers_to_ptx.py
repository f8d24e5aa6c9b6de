# Block pointers become tensors of pointers whose last dimension, of stride 1,
# axis info proves contiguous: row-major tiles load and store 128 bits at a
# time, also when the pointer is advanced in a loop (the carried offset stays
# divisible by the step). An unknown stride gives scalar accesses.
# RUN: %kilnc compile %s -n copy_tile -s "*fp32:16, *fp32:16, i32:16, i32:16, i32:16, 32, 64" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=COPY
# RUN: %kilnc compile %s -n row_sums -s "*fp32:16, *fp32:16, i32:16, i32:16, i64:16, 16, 128" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=LOOP
# RUN: %kilnc compile %s -n copy_strided -s "*fp32:16, *fp32:16, i32:16, i32:16, i32, 32, 64" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=STRIDED
import triton
import triton.language as tl


# COPY-LABEL: .entry copy_tile
# COPY-NOT: ld.global.b32
# COPY: ld.global.v4.b32
# COPY-NOT: st.global.b32
# COPY: st.global.v4.b32
@triton.jit
def copy_tile(src, dst, M, N, stride_m, BM: tl.constexpr, BN: tl.constexpr):
    m0 = tl.program_id(0) * BM
    n0 = tl.program_id(1) * BN
    s = tl.make_block_ptr(src, (M, N), (stride_m, 1), (m0, n0), (BM, BN), (1, 0))
    d = tl.make_block_ptr(dst, (M, N), (stride_m, 1), (m0, n0), (BM, BN), (1, 0))
    tl.store(d, tl.load(s, boundary_check=(0, 1), padding_option="zero"), boundary_check=(0, 1))


# LOOP-LABEL: .entry row_sums
# LOOP-NOT: ld.global.b32
# LOOP: ld.global.v4.b32
@triton.jit
def row_sums(x, out, M, N, stride_m, BM: tl.constexpr, BN: tl.constexpr):
    m0 = tl.program_id(0) * BM
    blk = tl.make_block_ptr(x, (M, N), (stride_m, 1), (m0, 0), (BM, BN), (1, 0))
    acc = tl.zeros((BM,), dtype=tl.float32)
    for _ in range(0, N, BN):
        acc += tl.sum(tl.load(blk, boundary_check=(0, 1), padding_option="zero"), axis=1)
        blk = tl.advance(blk, (0, BN))
    rows = m0 + tl.arange(0, BM)
    tl.store(out + rows, acc, mask=rows < M)


# STRIDED-LABEL: .entry copy_strided
# STRIDED-NOT: .v4
# STRIDED: ld.global.b32
# STRIDED-NOT: .v4
# STRIDED: st.global.b32
@triton.jit
def copy_strided(src, dst, M, N, stride_n, BM: tl.constexpr, BN: tl.constexpr):
    s = tl.make_block_ptr(src, (M, N), (N, stride_n), (0, 0), (BM, BN), (1, 0))
    d = tl.make_block_ptr(dst, (M, N), (N, stride_n), (0, 0), (BM, BN), (1, 0))
    tl.store(d, tl.load(s, boundary_check=(0, 1)), boundary_check=(0, 1))
