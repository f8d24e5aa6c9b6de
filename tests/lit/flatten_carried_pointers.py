# Persistent pointer kernels marked `flatten=True` on sm_90a:
# - carried: its K loop advances carried pointers (`a_ptrs += BK`). They
#   would restart at each tile inside a flattened loop, where the pipeliner
#   cannot run their loads ahead, so the loops stay nested and pipeline.
# - shared_rows: computed pointers flatten; the epilogue reads `rm[:, None]`
#   as the tile's prologue does, through its own copy of that shape-only
#   op, which the flattened loop's epilogue takes along (it was left in the
#   erased loop: a crash in the verifier).
# - where_pointers: arith.select on pointer tensors (`tl.where` between two
#   pointer tensors) lowers with LLVM pointer elements (it built kiln
#   pointers into the struct of LLVM ones and failed to lower).
# RUN: %kilnc compile %s -n carried -s "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:16, i32:16, 64, 64, 64, 132" -w 4 --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=CARRIED
# RUN: %kilnc compile %s -n shared_rows -s "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, 64, 64, 64, 132" -w 4 --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=FLAT
# RUN: %kilnc compile %s -n shared_rows -s "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, 64, 64, 64, 132" -w 4 --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# RUN: %kilnc compile %s -n where_pointers -s "*fp32:16, *fp32:16, *fp32:16, i32, 256" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=WHERE
import triton
import triton.language as tl

# CARRIED: scf.for
# CARRIED: scf.for {{.*}} -> (tensor<64x64x!kiln.ptr<f16>
# CARRIED: kiln_gpu.shared_dot
# CARRIED-NOT: arith.select {{.*}} tensor<64x64x!kiln.ptr<f16>

# FLAT: scf.for %{{.*}} = %c0_i32 to %{{.*}} step %c1_i32 iter_args(
# FLAT: kiln_gpu.shared_dot
# FLAT: scf.if
# FLAT: kiln.expand_dims
# FLAT: kiln.store

# PTX: .entry shared_rows
# PTX: wgmma.mma_async

# WHERE: .entry where_pointers
# WHERE: selp.b64
# WHERE: ld.global


@triton.jit
def carried(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm, BM: tl.constexpr, BN: tl.constexpr,
            BK: tl.constexpr, NUM_SMS: tl.constexpr):
    num_pid_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * num_pid_n
    offs_k = tl.arange(0, BK)
    for tile in tl.range(tl.program_id(0), num_tiles, NUM_SMS, flatten=True):
        offs_m = (tile // num_pid_n) * BM + tl.arange(0, BM)
        offs_n = (tile % num_pid_n) * BN + tl.arange(0, BN)
        a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
        b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(tl.cdiv(K, BK)):
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
            acc = tl.dot(a, b, acc)
            a_ptrs += BK
            b_ptrs += BK * stride_bk
        c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
        tl.store(c_ptrs, acc.to(tl.float16))


@triton.jit
def shared_rows(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, NUM_SMS: tl.constexpr):
    num_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * num_n
    for tile in tl.range(tl.program_id(0), num_tiles, NUM_SMS, flatten=True):
        rm = (tile // num_n) * BM + tl.arange(0, BM)
        rn = (tile % num_n) * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            rk = (k // BK) * BK + tl.arange(0, BK)
            x = tl.load(a + rm[:, None] * K + rk[None, :])
            y = tl.load(b + rk[:, None] * N + rn[None, :])
            acc = tl.dot(x, y, acc)
        tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def where_pointers(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    src = tl.where(offs < n // 2, x + offs, y + offs)
    tl.store(out + offs, tl.load(src, mask=offs < n), mask=offs < n)
