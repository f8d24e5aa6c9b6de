# Scans of 1-D blocks: in-thread, across lanes with shfl.up (shfl.down in
# reverse) over the five lane bits, across warps through shared memory
# between barriers; custom combine functions on tuples.
# RUN: %kilnc compile %s -n cumsum -s "*fp32, *fp32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=SUM
# The shared memory is dynamic; its size is in the metadata.
# RUN: %kilnc compile %s -n cumsum -s "*fp32, *fp32" --arch sm_90a -o %t.sum.cubin --metadata %t.sum.json && FileCheck %s --check-prefix=SUM-BYTES < %t.sum.json
# RUN: %kilnc compile %s -n one_item -s "*fp32, *fp32" --arch sm_90a -o %t.one.cubin --metadata %t.one.json && FileCheck %s --check-prefix=ONE-BYTES < %t.one.json
# RUN: %kilnc compile %s -n one_item -s "*fp32, *fp32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=ONE
# RUN: %kilnc compile %s -n concat -s "*i32, *i32, *i32" --arch sm_90a -o %t.cat.cubin --metadata %t.cat.json && FileCheck %s --check-prefix=CAT-BYTES < %t.cat.json
# RUN: %kilnc compile %s -n reversed -s "*i32, *i32" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=REV
# RUN: %kilnc compile %s -n segmented -s "*fp32, *i32, *fp32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=SEG
# RUN: %kilnc compile %s -n concat -s "*i32, *i32, *i32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=CAT
import triton
import triton.language as tl


# SUM: .extern .shared .align 1024 .b8 kiln_smem[];
# 8 repetitions x 4 warps' totals, then 128 spare slots.
# SUM-BYTES: "shared_bytes": 640,
# SUM: shfl.sync.up.b32 {{.*}}, 1, 0, -1;
# SUM: shfl.sync.up.b32 {{.*}}, 2, 0, -1;
# SUM: shfl.sync.up.b32 {{.*}}, 4, 0, -1;
# SUM: shfl.sync.up.b32 {{.*}}, 8, 0, -1;
# SUM: shfl.sync.up.b32 {{.*}}, 16, 0, -1;
# The last lane stores its warp's total (the others a spare slot of their
# own): no shuffle broadcasts it.
# SUM-NOT: shfl.sync.idx
# SUM: st.shared.b32
# SUM: bar.sync 0;
# SUM: ld.shared.v4.b32
# The closing barrier goes (kiln-remove-redundant-barriers): no shared-memory
# access follows it.
# SUM-NOT: bar.sync
# SUM: ret;
@triton.jit
def cumsum(x_ptr, out_ptr):
    offs = tl.arange(0, 1024)
    tl.store(out_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), axis=0))


# One element a thread: every lane gets its warp's total by a shuffle and
# writes it, so only the 4 warps' slots are allocated (no spare slots).
# ONE-BYTES: "shared_bytes": 16,
# ONE: shfl.sync.idx.b32
# ONE: st.shared.b32
# ONE: bar.sync 0;
@triton.jit
def one_item(x_ptr, out_ptr):
    offs = tl.arange(0, 128)
    tl.store(out_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), axis=0))


# REV-NOT: shfl.sync.up
# REV: shfl.sync.down.b32 {{.*}}, 1, 31, -1;
# REV: shfl.sync.down.b32 {{.*}}, 16, 31, -1;
@triton.jit
def reversed(x_ptr, out_ptr):
    offs = tl.arange(0, 256)
    tl.store(out_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), axis=0, reverse=True))


@triton.jit
def _segment_combine(v_left, f_left, v_right, f_right):
    return tl.where(f_right != 0, v_right, v_left + v_right), f_left | f_right


# Two operands: two shuffles per step.
# SEG-COUNT-2: shfl.sync.up.b32 {{.*}}, 1, 0, -1;
@triton.jit
def segmented(x_ptr, flag_ptr, out_ptr):
    offs = tl.arange(0, 512)
    sums, flags = tl.associative_scan((tl.load(x_ptr + offs), tl.load(flag_ptr + offs)),
                                      axis=0, combine_fn=_segment_combine)
    tl.store(out_ptr + offs, sums)


# 64-element operands on 128 threads hold copies: through shared memory.
# CAT: .extern .shared .align 1024 .b8 kiln_smem[];
# CAT-BYTES: "shared_bytes": 512,
# CAT: st.shared.b32
# CAT: st.shared.b32
# CAT: bar.sync 0;
# CAT: ld.shared.b32
@triton.jit
def concat(x_ptr, y_ptr, out_ptr):
    offs = tl.arange(0, 64)
    both = tl.cat(tl.load(x_ptr + offs), tl.load(y_ptr + offs), can_reorder=True)
    tl.store(out_ptr, tl.sum(both, axis=0))
