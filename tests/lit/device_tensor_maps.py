# Descriptors made in the kernel (tl.make_tensor_descriptor) on sm_90a: with
# a 16-byte aligned base and strides of whole 16-byte chunks (the aligned
# variant's `:16`), each program encodes a tensor map per TMA access in its
# share of the global scratch buffer, the entry point's hidden last
# parameter.
# DEFINE: %{aligned} = *fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32:16, i32:16, i32:16, 64, 128, 32
# DEFINE: %{general} = *fp16:16, *fp16:16, *fp32:16, i32, i32, i32, i32, i32, 64, 128, 32
# RUN: %kilnc compile %s -n tiles -s "%{aligned}" -w 4 --ns=3 --arch sm_90a --emit llvm -o - | FileCheck %s --check-prefix=LLVM
# RUN: %kilnc compile %s -n tiles -s "%{aligned}" -w 4 --ns=3 --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# RUN: %kilnc compile %s -n tiles -s "%{aligned}" -w 4 --ns=3 --arch sm_90a -o %t.cubin --metadata %t.json
# RUN: FileCheck %s --check-prefix=META < %t.json
# The general variant (strides of unknown alignment) and sm_80 encode none,
# but take the parameter all the same: one signature for every arch.
# RUN: %kilnc compile %s -n tiles -s "%{general}" -w 4 --ns=3 --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=NOMAP
# RUN: %kilnc compile %s -n tiles -s "%{aligned}" -w 4 --ns=3 --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=NOMAP
# RUN: %kilnc compile %s -n tiles -s "%{general}" -w 4 --ns=3 --arch sm_90a -o %t2.cubin --metadata %t2.json
# RUN: FileCheck %s --check-prefix=META0 < %t2.json
import triton
import triton.language as tl

# The scratch buffer is the last parameter.
# LLVM: define ptx_kernel void @tiles({{.*}}, i32 %[[M:[0-9]+]], i32 %[[N:[0-9]+]], i32 %[[K:[0-9]+]], i32 %{{[0-9]+}}, i32 %{{[0-9]+}}, ptr addrspace(1) %{{[0-9]+}})
# a (64 x 32 boxes of halves, a 64-byte swizzle): rank 2 (1 + 1), element
# strides 1, box and extents innermost first, then its row stride in bytes.
# LLVM: tensormap.replace.tile.global_address{{.*}}tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [$0], 6;{{.*}}tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [$0], 2;{{.*}}fill_mode.shared::cta.b1024.b32 [$0], 0;{{.*}}tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [$4], [$0], 128; fence.proxy.tensormap::generic.acquire.gpu [$7], 128; }", "r,r,r,l,l,r,r,l,r,r,l,r,r"(i32 %{{[0-9]+}}, i32 %{{[0-9]+}}, i32 %{{[0-9]+}}, i64 %{{[0-9]+}}, i64 %{{[0-9]+}}, i32 1, i32 1, i64 %{{[0-9]+}}, i32 32, i32 %[[K]], i64 %{{[0-9]+}}, i32 64, i32 %[[M]])
# b: 128 x 32 boxes.
# LLVM: "r,r,r,l,l,r,r,l,r,r,l,r,r"(i32 %{{[0-9]+}}, i32 %{{[0-9]+}}, i32 %{{[0-9]+}}, i64 %{{[0-9]+}}, i64 %{{[0-9]+}}, i32 1, i32 1, i64 %{{[0-9]+}}, i32 32, i32 %[[K]], i64 %{{[0-9]+}}, i32 128, i32 %[[N]])
# c (floats, stored with TMA): 64 x 32 boxes, a 128-byte swizzle.
# LLVM: tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [$0], 7;{{.*}}tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [$0], 3;{{.*}}"(i32 %{{[0-9]+}}, i32 %{{[0-9]+}}, i32 %{{[0-9]+}}, i64 %{{[0-9]+}}, i64 %{{[0-9]+}}, i32 1, i32 1, i64 %{{[0-9]+}}, i32 32, i32 %[[N]], i64 %{{[0-9]+}}, i32 64, i32 %[[M]])

# Warp 0 zeroes the staging map in shared memory, thread 0 sets its fields,
# warp 0 copies it out with a release and acquires it (thread 0 issues the
# TMA instructions, which read it at its generic address). The staging array
# is free again after one barrier behind the three maps.
# PTX: .param .u64 .ptr .global .align 1 tiles_param_8
# PTX: st.shared.b32 [%r{{[0-9]+}}], 0; bar.warp.sync -1;
# PTX-SAME: tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd{{[0-9]+}}], [%r{{[0-9]+}}], 128; fence.proxy.tensormap::generic.acquire.gpu [%rd[[A:[0-9]+]]], 128; }
# PTX-NOT: bar.sync
# PTX: tensormap.cp_fenceproxy
# PTX-NOT: bar.sync
# PTX: tensormap.cp_fenceproxy{{.*}}generic.acquire.gpu [%rd{{[0-9]+}}], 128; }
# PTX-NOT: tensormap
# PTX: bar.sync 0;
# PTX: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], [%rd[[A]], {%r{{[0-9]+}}, %r{{[0-9]+}}}]
# PTX: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group

# META: "global_scratch_bytes": 384,
# META0: "global_scratch_bytes": 0,

# NOMAP: .param .u64 .ptr .global .align 1 tiles_param_8
# NOMAP-NOT: tensormap
# NOMAP-NOT: cp.async.bulk.tensor


@triton.jit
def tiles(a_ptr, b_ptr, c_ptr, M, N, K, stride_a, stride_c, BM: tl.constexpr, BN: tl.constexpr,
          BK: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_a, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[stride_a, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_c, 1], block_shape=[BM, BN])
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([m, k]), b_desc.load([n, k]).T, acc)
    c_desc.store([m, n], acc)
