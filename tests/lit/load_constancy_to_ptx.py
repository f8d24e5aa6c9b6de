# A load whose addresses (and mask) repeat along a dimension (axis info's
# constancy) issues one access per run of equal ones: a per-row scale read
# through a 64 x 64 tile of pointers, 32 elements a thread in 8 rows of 4
# columns, is 8 loads, not 32, beside x's 8 vector loads.
# RUN: %kilnc compile %s -n row_broadcast -s "s_ptr=*fp32:16, x_ptr=*fp32:16, y_ptr=*fp32:16, M=i32, BM=64, BN=64" --arch sm_90a --emit ptx -o - | FileCheck %s
import triton
import triton.language as tl


# CHECK-COUNT-8: ld.global.b32
# CHECK-NOT: ld.global.b32
# CHECK: st.global.v4.b32
@triton.jit
def row_broadcast(s_ptr, x_ptr, y_ptr, M, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    mask = (rows < M)[:, None] & (cols < BN)[None, :]
    s = tl.load(s_ptr + rows[:, None] + cols[None, :] * 0, mask=mask, other=0.0)
    x = tl.load(x_ptr + rows[:, None] * BN + cols[None, :], mask=mask, other=0.0)
    tl.store(y_ptr + rows[:, None] * BN + cols[None, :], x * s, mask=mask)
