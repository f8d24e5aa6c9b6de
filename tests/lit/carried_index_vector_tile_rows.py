# A loop's carried index vector that addresses the rows of tiles laid out
# differently (lightning-attention's forward: `off_block += BLOCK` indexes a
# q tile loaded through a :16 pointer, 16-byte runs a thread, and k, v and
# the output with narrower ones for their dots) gets a carried copy in a
# slice of each tile's layout, as for vectors converted whole
# (carried_index_vectors.py). kiln-assign-layouts had taken a tile's
# conversion for the vector's and crashed recomputing the tile.
# RUN: %kilnc compile %s -n rows -s "Q=*bf16:16, K=*bf16, V=*bf16, Out=*bf16, n=i32" --arch sm_90a --emit gpu -o - | FileCheck %s
# RUN: %kilnc compile %s -n rows -s "Q=*bf16:16, K=*bf16, V=*bf16, Out=*bf16, n=i32" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=PTX
import triton
import triton.language as tl

# Copies in slices of q's layout (8 a thread) and of v's and the output's
# (4 a thread); no tile of addresses or masks converted in the loop, only
# the result for its store.
# CHECK: scf.for {{.*}}tensor<64xi32, #kiln_gpu.slice<{dim = 1, parent = #kiln_gpu.blocked<{sizePerThread = [1, 8]{{.*}}tensor<64xi32, #kiln_gpu.slice<{dim = 1, parent = #kiln_gpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8]
# CHECK-NOT: kiln_gpu.convert_layout {{.*}}x!kiln.ptr
# CHECK-NOT: kiln_gpu.convert_layout {{.*}}xi1,
# CHECK-NOT: kiln_gpu.convert_layout {{.*}}xi32,
# CHECK: scf.yield
# PTX: .entry rows
# PTX: mma.sync


@triton.jit
def rows(Q, K, V, Out, n, BLOCK: tl.constexpr = 64, D: tl.constexpr = 128,
         E: tl.constexpr = 32, NUM_BLOCK: tl.constexpr = 32):
    off_block = tl.arange(0, BLOCK)
    q_ptrs = Q + tl.arange(0, D)[None, :]
    k_trans_ptrs = K + tl.arange(0, D)[:, None]
    kv = tl.zeros([D, E], dtype=tl.float32)
    for i in range(NUM_BLOCK):
        q = tl.load(q_ptrs + off_block[:, None] * D, mask=off_block[:, None] < n,
                    other=0.0).to(tl.float32)
        k_trans = tl.load(k_trans_ptrs + off_block[None, :] * D,
                          mask=off_block[None, :] < n, other=0.0).to(tl.float32)
        v = tl.load(V + off_block[:, None] * E + tl.arange(0, E)[None, :],
                    mask=off_block[:, None] < n, other=0.0).to(tl.float32)
        o = tl.dot(tl.dot(q, k_trans), v) + tl.dot(q, kv)
        tl.store(Out + off_block[:, None] * E + tl.arange(0, E)[None, :],
                 o.to(tl.bfloat16), mask=off_block[:, None] < n)
        kv = kv + tl.dot(k_trans, v)
        off_block += BLOCK
