# kiln-stage-dots checks a dot's tiles against the buffers kiln-allocate-shared
# would place beside them, not only against every buffer of the function:
# a second one-stage loop's tiles (k2, v2: 128 KiB) go in the bytes of the
# first loop's (k, v), where counting every buffer (q, k, v, k2, v2: 320 KiB)
# would leave them in registers for mma.sync (SGLang's MLA extend attention:
# prefix, then extend tokens; 8.2 KB of spills -> 0.4 KB). q, copied into its
# tile for the first loop, is read from that tile by the second loop's dot
# too, not copied again. The module is marked
# kiln_gpu.staged_beside_live_buffers, so that kilnc compiles it again with
# the upper bound where the scratch of single ops then runs out of bytes.
# RUN: %kilnc compile %s -n two_loops -s "q_ptr=*bf16:16, k_ptr=*bf16:16, v_ptr=*bf16:16, k2_ptr=*bf16:16, v2_ptr=*bf16:16, o_ptr=*fp32:16, n1=i32, n2=i32, num_warps=8, num_stages=1" --arch sm_90a --emit gpu -o - | FileCheck %s
# Off, the second loop's dots stay kiln.dot.
# RUN: %kilnc compile %s -n two_loops -s "q_ptr=*bf16:16, k_ptr=*bf16:16, v_ptr=*bf16:16, k2_ptr=*bf16:16, v2_ptr=*bf16:16, o_ptr=*fp32:16, n1=i32, n2=i32, num_warps=8, num_stages=1" --arch sm_90a --emit gpu -o - --kiln-stage-dots-beside-live-buffers=false | FileCheck %s --check-prefix=OFF
import triton
import triton.language as tl

# CHECK: module attributes {{.*}}kiln_gpu.staged_beside_live_buffers
# CHECK-LABEL: func.func @two_loops
# CHECK: %[[Q:.*]] = kiln_gpu.local_alloc {offset = 0 : i64} : <64x512xbf16
# CHECK: scf.for
# CHECK: kiln_gpu.local_alloc {offset = [[K:[0-9]+]] : i64} : <512x64xbf16
# CHECK: kiln_gpu.shared_dot %[[Q]],
# CHECK: kiln_gpu.local_alloc {offset = [[V:[0-9]+]] : i64} : <64x512xbf16
# CHECK: scf.yield
# The second loop: its tiles at the first loop's offsets, q's tile again.
# CHECK: scf.for
# CHECK: kiln_gpu.local_alloc {offset = [[K]] : i64} : <512x64xbf16
# CHECK: kiln_gpu.shared_dot %[[Q]],
# CHECK: kiln_gpu.local_alloc {offset = [[V]] : i64} : <64x512xbf16
# CHECK: scf.yield
# CHECK-NOT: kiln.dot
# OFF-NOT: kiln_gpu.staged_beside_live_buffers
# OFF: scf.for
# OFF: kiln_gpu.shared_dot
# OFF: scf.for
# OFF: kiln.dot
@triton.jit
def two_loops(q_ptr, k_ptr, v_ptr, k2_ptr, v2_ptr, o_ptr, n1, n2):
    m = tl.arange(0, 64)
    d = tl.arange(0, 512)
    j = tl.arange(0, 64)
    q = tl.load(q_ptr + m[:, None] * 512 + d[None, :])
    acc = tl.zeros((64, 512), tl.float32)
    for s in range(0, n1, 64):
        k = tl.load(k_ptr + (s + j)[None, :] * 512 + d[:, None])
        p = tl.dot(q, k)
        v = tl.load(v_ptr + (s + j)[:, None] * 512 + d[None, :])
        acc += tl.dot(p.to(tl.bfloat16), v)
    for s in range(0, n2, 64):
        k = tl.load(k2_ptr + (s + j)[None, :] * 512 + d[:, None])
        p = tl.dot(q, k)
        v = tl.load(v2_ptr + (s + j)[:, None] * 512 + d[None, :])
        acc += tl.dot(p.to(tl.bfloat16), v)
    tl.store(o_ptr + m[:, None] * 512 + d[None, :], acc)
