# Tutorial (our version): persistent matmul. The grid has NUM_SMS programs;
# each walks the output tiles start, start + NUM_SMS, ... in grouped order.
#
# kiln-variant: -n persistent_matmul -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp16, M=i32, N=i32, K=i32, stride_am=i32, stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_cm=i32, stride_cn=i32, BM=128, BN=128, BK=64, GROUP=8, NUM_SMS=132, num_warps=8"
# kiln-variant: -n persistent_matmul -s "a_ptr=*fp8e4nv, b_ptr=*fp8e4nv, c_ptr=*fp16, M=i32, N=i32, K=i32, stride_am=i32, stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_cm=i32, stride_cn=i32, BM=128, BN=128, BK=128, GROUP=8, NUM_SMS=132, num_warps=8"
# kiln-variant: -n persistent_matmul -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp16, M=i32, N=i32, K=i32, stride_am=i32, stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_cm=i32, stride_cn=i32, BM=128, BN=128, BK=64, GROUP=8, NUM_SMS=3, FLATTEN=True, num_warps=8"
# kiln-covers: persistent_matmul: tl.range flatten; for over tl.range; helper returning a tuple; tuple unpacking; tl.max_contiguous; tl.multiple_of; tl.dot; tl.float8e4nv; nested helper calls
import triton
import triton.language as tl


@triton.jit
def _grouped(tile, tiles_m, tiles_n, GROUP: tl.constexpr):
    per_group = GROUP * tiles_n
    first_m = (tile // per_group) * GROUP
    rows = tl.minimum(tiles_m - first_m, GROUP)
    return first_m + (tile % per_group) % rows, (tile % per_group) // rows


@triton.jit
def _tile_coords(tile, M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP: tl.constexpr):
    tm, tn = _grouped(tile, tl.cdiv(M, BM), tl.cdiv(N, BN), GROUP)
    return tm * BM, tn * BN


@triton.jit
def persistent_matmul(a_ptr, b_ptr, c_ptr, M, N, K,
                      stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                      BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr,
                      NUM_SMS: tl.constexpr, FLATTEN: tl.constexpr = False):
    num_tiles = tl.cdiv(M, BM) * tl.cdiv(N, BN)
    k_steps = tl.cdiv(K, BK)
    # FLATTEN fuses the tile loop and the K loop into one: on sm_90a the
    # pipeline then keeps copies in flight across tiles.
    for tile in tl.range(tl.program_id(0), num_tiles, NUM_SMS, flatten=FLATTEN):
        m0, n0 = _tile_coords(tile, M, N, BM, BN, GROUP)
        rm = m0 + tl.arange(0, BM)
        rn = n0 + tl.arange(0, BN)
        # Clamp out-of-range rows and columns to 0 so that loads need no mask.
        rm_safe = tl.max_contiguous(tl.multiple_of(tl.where(rm < M, rm, 0), BM), BM)
        rn_safe = tl.max_contiguous(tl.multiple_of(tl.where(rn < N, rn, 0), BN), BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ks in range(k_steps):
            rk = ks * BK + tl.arange(0, BK)
            a = tl.load(a_ptr + rm_safe[:, None] * stride_am + rk[None, :] * stride_ak,
                        mask=rk[None, :] < K, other=0.0)
            b = tl.load(b_ptr + rk[:, None] * stride_bk + rn_safe[None, :] * stride_bn,
                        mask=rk[:, None] < K, other=0.0)
            acc = tl.dot(a, b, acc)
        c = acc.to(c_ptr.dtype.element_ty)
        tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, c,
                 mask=(rm[:, None] < M) & (rn[None, :] < N))

