# Runs of equal values along any dimension, not only the last, are computed
# once per run: with a 128 x 128 tile over 4 warps each thread holds 16 rows
# 8 apart, and with M a multiple of 16 the compares `rows < M` of rows r and
# r + 8 agree (their 16-row run), so 8 compares for the rows and 1 for the
# columns. Without M's divisibility, one per row.
# RUN: %kilnc compile %s -n masked_rows -s "x_ptr=*bf16:16, y_ptr=*bf16:16, stride=i32:16, M=i32:16, N=i32:16, BM=128, BN=128" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=ALIGNED
# RUN: %kilnc compile %s -n masked_rows -s "x_ptr=*bf16:16, y_ptr=*bf16:16, stride=i32:16, M=i32, N=i32:16, BM=128, BN=128" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=GENERAL
import triton
import triton.language as tl


# ALIGNED-COUNT-9: setp.lt.s32
# ALIGNED-NOT: setp.lt.s32
# ALIGNED: ld.global.v4.b32
# GENERAL-COUNT-17: setp.lt.s32
# GENERAL-NOT: setp.lt.s32
@triton.jit
def masked_rows(x_ptr, y_ptr, stride, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    offs = rows[:, None].to(tl.int64) * stride + cols[None, :]
    mask = (rows < M)[:, None] & (cols < N)[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * 2, mask=mask)
