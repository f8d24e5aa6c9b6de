# A conversion whose data stays in each warp moves by shfl.sync.idx, with no
# shared memory and no barrier: x[:, None] + x[None, :] with x of 32 elements
# (one per lane, copied across the 4 warps) needs, in the 2-D layout, row i's
# element from lane i and column j's from lane j. 64-bit elements take two
# shuffles each.
# RUN: %kilnc compile %s -n outer -s "x_ptr=*fp32, out_ptr=*fp32, BLOCK=32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=F32
# RUN: %kilnc compile %s -n outer -s "x_ptr=*i64, out_ptr=*i64, BLOCK=32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=I64
import triton
import triton.language as tl


# F32-NOT: bar.sync
# F32-NOT: st.shared
# F32: ld.global.b32
# F32-COUNT-8: shfl.sync.idx.b32
# F32-NOT: shfl.sync
# F32: add.f32
# F32-NOT: bar.sync
# F32: ret;
# I64-NOT: bar.sync
# I64-COUNT-16: shfl.sync.idx.b32
# I64-NOT: shfl.sync
# I64-NOT: bar.sync
# I64: ret;
@triton.jit
def outer(x_ptr, out_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i)
    tl.store(out_ptr + i[:, None] * BLOCK + i[None, :], x[:, None] + x[None, :])
