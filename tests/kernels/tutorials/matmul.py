# Tutorial (our version): C = act(A @ B) with tiles visited in groups of GROUP
# tile-rows, so that programs running together share tiles of A and B in L2.
#
# kiln-variant: -n matmul_kernel -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp16, M=i32, N=i32, K=i32, stride_am=i32, stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_cm=i32, stride_cn=i32, BM=128, BN=128, BK=64, GROUP=8, num_warps=8, num_stages=3"
# kiln-variant: -n matmul_kernel -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp32, M=i32, N=i32, K=i32, stride_am=i32, stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_cm=i32, stride_cn=i32, BM=64, BN=64, BK=32, GROUP=4, ACTIVATION='leaky_relu'"
# kiln-variant: -n matmul_kernel -s "a_ptr=*bf16, b_ptr=*bf16, c_ptr=*bf16, M=i32, N=i32, K=i32, stride_am=i32, stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_cm=i32, stride_cn=i32, BM=128, BN=64, BK=64, GROUP=8, ACTIVATION='relu'"
# kiln-covers: matmul_kernel: @triton.autotune; tl.cdiv; tl.minimum; tl.dot; tl.dot(acc=); x[:, None]; x[None, :]; augmented assignment; if on constexpr; elif/else on constexpr; string argument; default argument; tl.maximum; tl.where; tl.zeros; // and % on signed ints; for over range
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BM": 128, "BN": 128, "BK": 64, "GROUP": 8}, num_warps=8, num_stages=3),
        triton.Config({"BM": 128, "BN": 64, "BK": 64, "GROUP": 8}, num_warps=4, num_stages=4),
        triton.Config({"BM": 64, "BN": 64, "BK": 32, "GROUP": 4}, num_warps=4, num_stages=5),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr,
                  ACTIVATION: tl.constexpr = ""):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    # Tiles are numbered column-major inside each group of GROUP tile-rows.
    tiles_per_group = GROUP * tiles_n
    first_m = (pid // tiles_per_group) * GROUP
    group_rows = tl.minimum(tiles_m - first_m, GROUP)
    in_group = pid % tiles_per_group
    tile_m = first_m + in_group % group_rows
    tile_n = in_group // group_rows

    # Rows and columns wrap around instead of being masked: loads stay in
    # bounds, and the store below drops the wrapped part.
    rm = (tile_m * BM + tl.arange(0, BM)) % M
    rn = (tile_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_tile = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_tile = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BK)):
        k_left = K - kt * BK
        a = tl.load(a_tile, mask=rk[None, :] < k_left, other=0.0)
        b = tl.load(b_tile, mask=rk[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BK * stride_ak
        b_tile += BK * stride_bk

    if ACTIVATION == "relu":
        acc = tl.maximum(acc, 0.0)
    elif ACTIVATION == "leaky_relu":
        acc = tl.where(acc >= 0, acc, acc * 0.01)
    else:
        pass
    out = acc.to(c_ptr.dtype.element_ty)
    cm = tile_m * BM + tl.arange(0, BM)
    cn = tile_n * BN + tl.arange(0, BN)
    c_tile = c_ptr + stride_cm * cm[:, None] + stride_cn * cn[None, :]
    tl.store(c_tile, out, mask=(cm[:, None] < M) & (cn[None, :] < N))
