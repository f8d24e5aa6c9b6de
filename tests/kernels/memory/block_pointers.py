# Block pointers: tl.make_block_ptr over a row-major matrix, tl.advance in a
# loop, boundary checks with zero and NaN padding, and a transposed view
# through order=(0, 1).
#
# kiln-variant: -n tile_copy -s "src_ptr=*fp32, dst_ptr=*fp32, M=i32, N=i32, stride_m=i32, stride_n=i32, BM=64, BN=64"
# kiln-variant: -n tile_copy -s "src_ptr=*fp16, dst_ptr=*fp16, M=i32, N=i32, stride_m=i32, stride_n=i32, BM=128, BN=32"
# kiln-variant: -n row_sum_block_ptr -s "x_ptr=*fp32, out_ptr=*fp32, M=i32, N=i32, stride_m=i64, BM=32, BN=128"
# kiln-variant: -n block_ptr_matmul -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp32, M=i32, N=i32, K=i32, sam=i32, sak=i32, sbk=i32, sbn=i32, scm=i32, scn=i32, BM=64, BN=64, BK=32"
# kiln-covers: tile_copy: tl.make_block_ptr; tl.load(boundary_check=, padding_option=); tl.store(boundary_check=)
# kiln-covers: row_sum_block_ptr: tl.make_block_ptr; tl.advance; tl.load(boundary_check=, padding_option=); for over range
# kiln-covers: block_ptr_matmul: tl.make_block_ptr; tl.advance; tl.dot; tl.store(boundary_check=)
import triton
import triton.language as tl


@triton.jit
def tile_copy(src_ptr, dst_ptr, M, N, stride_m, stride_n, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    src = tl.make_block_ptr(base=src_ptr, shape=(M, N), strides=(stride_m, stride_n),
                            offsets=(pm * BM, pn * BN), block_shape=(BM, BN), order=(1, 0))
    dst = tl.make_block_ptr(dst_ptr, (M, N), (stride_m, stride_n), (pm * BM, pn * BN), (BM, BN), (1, 0))
    tile = tl.load(src, boundary_check=(0, 1), padding_option="zero")
    tl.store(dst, tile, boundary_check=(0, 1))


@triton.jit
def row_sum_block_ptr(x_ptr, out_ptr, M, N, stride_m, BM: tl.constexpr, BN: tl.constexpr):
    row0 = tl.program_id(0) * BM
    blk = tl.make_block_ptr(x_ptr, shape=(M, N), strides=(stride_m, 1), offsets=(row0, 0),
                            block_shape=(BM, BN), order=(1, 0))
    acc = tl.zeros((BM,), dtype=tl.float32)
    for _ in range(0, N, BN):
        tile = tl.load(blk, boundary_check=(1, 0), padding_option="nan")
        tile = tl.where(tile == tile, tile, 0.0)   # padding is NaN: drop it
        acc += tl.sum(tile, axis=1)
        blk = tl.advance(blk, (0, BN))
    rows = row0 + tl.arange(0, BM)
    tl.store(out_ptr + rows, acc, mask=rows < M)


@triton.jit
def block_ptr_matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    a_blk = tl.make_block_ptr(a_ptr, (M, K), (sam, sak), (pm * BM, 0), (BM, BK), (1, 0))
    b_blk = tl.make_block_ptr(b_ptr, (K, N), (sbk, sbn), (0, pn * BN), (BK, BN), (0, 1))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K, BK):
        a = tl.load(a_blk, boundary_check=(0, 1))
        b = tl.load(b_blk, boundary_check=(0, 1))
        acc += tl.dot(a, b)
        a_blk = tl.advance(a_blk, [0, BK])
        b_blk = tl.advance(b_blk, [BK, 0])
    c_blk = tl.make_block_ptr(c_ptr, (M, N), (scm, scn), (pm * BM, pn * BN), (BM, BN), (1, 0))
    tl.store(c_blk, acc, boundary_check=(0, 1))
