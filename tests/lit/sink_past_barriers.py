# Scalar arithmetic whose only use lies past a barrier moves down to that use
# (compiler/target/SinkPastBarriers.h): the address of the picked element,
# computed from a loaded index before the row's loads, is computed after the
# barriers, so ptxas does not wait for the index among the row's loads.
# RUN: %kilnc compile %s -n picked_after_reduction -s "*fp32:16, *i64:16, *fp32:16, *fp32:16, i32:16, 4096" --arch sm_90a --emit ptx -o - | FileCheck %s
import triton
import triton.language as tl

# CHECK: ld.global.b64 [[IDX:%rd[0-9]+]],
# CHECK-NOT: [[IDX]]
# CHECK: bar.sync
# CHECK-NOT: [[IDX]]
# CHECK: bar.sync
# CHECK: shl.b64 {{%rd[0-9]+}}, [[IDX]], 2;
# CHECK: ld.global.b32


@triton.jit
def picked_after_reduction(x_ptr, idx_ptr, out_ptr, loss_ptr, N,
                           BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    idx = tl.load(idx_ptr + row)
    picked = out_ptr + row * N + idx
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    tl.store(out_ptr + row * N + cols, x - tl.max(x, 0), mask=cols < N)
    tl.debug_barrier()
    tl.store(loss_ptr + row, tl.load(picked))
