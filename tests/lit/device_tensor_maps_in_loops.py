# Descriptors made inside loops from pointers and leading dimensions the
# kernel loads (upstream's tutorial 08, grouped GEMM), on sm_90a: no variant
# can know their alignment, so TMA takes tl.make_tensor_descriptor's
# contract (16-byte aligned base, strides multiples of 16 bytes), the
# program checks it before it encodes each map (a trap), and thread 0 waits
# for its bulk copies before a map is encoded again.
# DEFINE: %{sig} = *i64:16, *i64:16, *i64:16, *i32:16, *i32:16, i32, 128, 128, 64
# RUN: %kilnc compile %s -n groups -s "%{sig}" -w 4 --ns=3 --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU
# RUN: %kilnc compile %s -n groups -s "%{sig}" -w 4 --ns=3 --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# A pointer argument of the general variant is not loaded: masked loads, as
# before (tests/lit/device_tensor_maps.py); sm_80 has no TMA.
# RUN: %kilnc compile %s -n groups -s "%{sig}" -w 4 --ns=3 --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=NOMAP
# RUN: %kilnc compile %s -n one_group -s "*fp16, *fp16, *fp16, i32, i32, i32, i32, 128, 128, 64" -w 4 --ns=3 --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=NOMAP
import triton
import triton.language as tl

# GPU: scf.for
# GPU: scf.if
# GPU: %[[A:[0-9]+]] = kiln.make_tensor_map {{.*}} {assumes_alignment, box = array<i64: 128, 64>, scratch_offset = 0 : i64, swizzle = 128 : i32}
# GPU: %[[B:[0-9]+]] = kiln.make_tensor_map {{.*}} {assumes_alignment, box = array<i64: 128, 64>, scratch_offset = 128 : i64, swizzle = 128 : i32}
# GPU: scf.while
# GPU: kiln_gpu.async_tma_copy %[[A]]
# GPU: kiln_gpu.async_tma_copy %[[B]]
# GPU: kiln_gpu.shared_dot {{.*}} {async}

# Each map: every thread traps on a misaligned base or stride (a trap, not a
# call: a call would serialize the wgmma), then thread 0 waits for its bulk
# copies and sets the fields.
# PTX-NOT: call
# PTX: setp.ne.b64 misaligned, %rd{{[0-9]+}}, 0; @misaligned trap;
# PTX: setp.eq.u32 first, %r{{[0-9]+}}, 0; @first cp.async.bulk.wait_group 0; @first tensormap.replace.tile.global_address
# PTX: @misaligned trap;
# PTX: @first cp.async.bulk.wait_group 0; @first tensormap.replace.tile.global_address
# PTX: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
# PTX: wgmma.mma_async
# PTX-NOT: call

# NOMAP-NOT: tensormap
# NOMAP-NOT: cp.async.bulk.tensor
# NOMAP-NOT: trap


@triton.jit
def groups(a_ptrs, b_ptrs, c_ptrs, sizes, lds, group_size, BM: tl.constexpr, BN: tl.constexpr,
           BK: tl.constexpr):
    tile = tl.program_id(0)
    end = 0
    for g in range(group_size):
        gm = tl.load(sizes + g * 3)
        gn = tl.load(sizes + g * 3 + 1)
        gk = tl.load(sizes + g * 3 + 2)
        tiles = tl.cdiv(gm, BM) * tl.cdiv(gn, BN)
        if tile >= end and tile < end + tiles:
            a_ptr = tl.load(a_ptrs + g).to(tl.pointer_type(tl.float16))
            b_ptr = tl.load(b_ptrs + g).to(tl.pointer_type(tl.float16))
            c_ptr = tl.load(c_ptrs + g).to(tl.pointer_type(tl.float16))
            a_desc = tl.make_tensor_descriptor(a_ptr, shape=[gm, gk], strides=[tl.load(lds + g * 3), 1],
                                               block_shape=[BM, BK])
            b_desc = tl.make_tensor_descriptor(b_ptr, shape=[gn, gk], strides=[tl.load(lds + g * 3 + 1), 1],
                                               block_shape=[BN, BK])
            c_desc = tl.make_tensor_descriptor(c_ptr, shape=[gm, gn], strides=[tl.load(lds + g * 3 + 2), 1],
                                               block_shape=[BM, BN])
            while tile >= end and tile < end + tiles:
                m = (tile - end) // tl.cdiv(gn, BN) * BM
                n = (tile - end) % tl.cdiv(gn, BN) * BN
                acc = tl.zeros((BM, BN), dtype=tl.float32)
                for k in range(0, tl.cdiv(gk, BK)):
                    acc += tl.dot(a_desc.load([m, k * BK]), b_desc.load([n, k * BK]).T)
                c_desc.store([m, n], acc.to(tl.float16))
                tile += tl.num_programs(0)
        end += tiles


@triton.jit
def one_group(a_ptr, b_ptr, c_ptr, M, N, K, ld, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    for g in range(2):
        a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[ld, 1], block_shape=[BM, BK])
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[ld, 1], block_shape=[BN, BK])
        c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[ld, 1], block_shape=[BM, BN])
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            acc += tl.dot(a_desc.load([0, k * BK]), b_desc.load([0, k * BK]).T)
        c_desc.store([0, 0], acc.to(tl.float16))
