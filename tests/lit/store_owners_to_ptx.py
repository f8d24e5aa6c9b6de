# A store writes each element once, as upstream Triton's redundant-data mask
# does: a scalar store (a row's mean and 1/std in the fused layer norm) runs
# in thread 0 alone, not in every thread of the program, and a tensor held
# in copies by several threads is stored by the threads that hold no copies.
# Tensors whose every element has one owner store without an extra predicate.
# RUN: %kilnc compile %s -n row_stats -s "x_ptr=*fp32:16, mean_ptr=*fp32:16, rstd_ptr=*fp32:16, N=i32:16, BLOCK=1024, num_warps=4" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=SCALAR
# RUN: %kilnc compile %s -n small_tile -s "x_ptr=*fp32:16, y_ptr=*fp32:16, num_warps=4" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=COPIES
# RUN: %kilnc compile %s -n copy -s "x_ptr=*fp32:16, y_ptr=*fp32:16, BLOCK=512, num_warps=4" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=OWNED
import triton
import triton.language as tl


# SCALAR: mov.u32 [[TID:%r[0-9]+]], %tid.x;
# SCALAR: setp.eq.b32 [[FIRST:%p[0-9]+]], [[TID]], 0;
# SCALAR: @[[FIRST]] st.global.b32
# SCALAR: @[[FIRST]] st.global.b32
# SCALAR-NOT: st.global
@triton.jit
def row_stats(x_ptr, mean_ptr, rstd_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.)
    mean = tl.sum(x, axis=0) / N
    centered = tl.where(cols < N, x - mean, 0.)
    rstd = 1 / tl.sqrt(tl.sum(centered * centered, axis=0) / N + 1e-5)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)


# 32 elements over 128 threads: each element is held by four threads (one
# per warp), and only warp 0 stores.
# COPIES: setp.lt.u32 [[OWNER:%p[0-9]+]], %r{{[0-9]+}}, 32;
# COPIES: @[[OWNER]] st.global.b32
# COPIES-NOT: st.global
@triton.jit
def small_tile(x_ptr, y_ptr):
    offs = tl.arange(0, 32)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) + 1)


# 512 elements over 128 threads, four each: no copies, no owner predicate.
# OWNED-NOT: setp
# OWNED: st.global.v4.b32 [
@triton.jit
def copy(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))
