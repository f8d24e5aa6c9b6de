# A persistent GEMM written as one flat loop over every k step of every tile
# a program owns (FBGEMM's fp8 row-wise GEMMs have this form): the row and
# column offsets are loop-carried and computed again in an `if` at a tile's
# first step, and the accumulator is stored and zeroed in an `if` at its
# last step (`acc = tl.zeros(...)` there: a select after the dot).
# - The carried offsets are laid out as the copies that read them, so no
#   iteration converts them (kiln-assign-layouts, retypeTiedValues).
# - The zeroing moves to the next tile's first dot, which does not add its
#   accumulator then: the wgmma stays in flight across iterations
#   (kiln-pipeline-dots, restartAtTileStart).
#
# kiln-variant: -n flat_persistent_matmul -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, M=i32, N=i32, K=i32:16, stride_am=i32:16, stride_bn=i32:16, stride_cm=i32:16, BM=128, BN=128, BK=64, GROUP=8, NUM_SMS=3, num_warps=8"
# kiln-variant: -n flat_persistent_matmul -s "a_ptr=*fp8e5:16, b_ptr=*fp8e5:16, c_ptr=*bf16:16, M=i32, N=i32, K=i32:16, stride_am=i32:16, stride_bn=i32:16, stride_cm=i32:16, BM=128, BN=128, BK=64, GROUP=8, NUM_SMS=3, num_warps=8"
# kiln-covers: flat_persistent_matmul: tl.dot; tl.where; tl.max_contiguous; tl.multiple_of
import triton
import triton.language as tl


@triton.jit
def flat_persistent_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bn, stride_cm,
                           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                           GROUP: tl.constexpr, NUM_SMS: tl.constexpr):
    # c = a @ b^T: a is M x K and b is N x K, both K-contiguous.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    k_steps = tl.cdiv(K, BK)
    tiles = tiles_m * tiles_n
    my_tiles = tiles // NUM_SMS
    if pid < tiles % NUM_SMS:
        my_tiles += 1
    tile = pid - NUM_SMS
    step = -1
    in_group = GROUP * tiles_n
    tile_m = 0
    tile_n = 0
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, k_steps * my_tiles):
        step = tl.where(step == k_steps - 1, 0, step + 1)
        if step == 0:
            tile += NUM_SMS
            first_m = (tile // in_group) * GROUP
            group_rows = min(tiles_m - first_m, GROUP)
            tile_m = first_m + tile % group_rows
            tile_n = (tile % in_group) // group_rows
            rows = tile_m * BM + tl.arange(0, BM)
            cols = tile_n * BN + tl.arange(0, BN)
            rows = tl.where(rows < M, rows, 0)
            cols = tl.where(cols < N, cols, 0)
            rows = tl.max_contiguous(tl.multiple_of(rows, BM), BM)
            cols = tl.max_contiguous(tl.multiple_of(cols, BN), BN)
        k = step * BK + ks
        a = tl.load(a_ptr + rows[:, None] * stride_am + k[None, :],
                    mask=ks[None, :] < K - step * BK, other=0.0)
        b = tl.load(b_ptr + k[:, None] + cols[None, :] * stride_bn,
                    mask=ks[:, None] < K - step * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        if step == k_steps - 1:
            out_rows = tile_m * BM + tl.arange(0, BM)
            out_cols = tile_n * BN + tl.arange(0, BN)
            c = acc.to(c_ptr.dtype.element_ty)
            tl.store(c_ptr + out_rows[:, None] * stride_cm + out_cols[None, :], c,
                     mask=(out_rows < M)[:, None] & (out_cols < N)[None, :])
            acc = tl.zeros((BM, BN), dtype=tl.float32)
