# tl.gather (issue 13: gemlite's fp4 GEMV looks 4-bit codes up in a
# 16-entry table): each output element compares its index with every
# position of the axis and sums the match, src's bits as integers. The
# kernel is the differential corpus's (tests/kernels/language).
# RUN: %kilnc compile %S/../kernels/language/gather_thin_dot_wide_rand.py -n lookup -s "table_ptr=*fp16, codes_ptr=*u8, out_ptr=*fp16, K=32" --arch sm_90a --emit kiln -o - | FileCheck %s
# RUN: %kilnc compile %S/../kernels/language/gather_thin_dot_wide_rand.py -n lookup -s "table_ptr=*fp16, codes_ptr=*u8, out_ptr=*fp16, K=32" --arch sm_80 --emit cubin -o /dev/null
# RUN: not %kilnc compile %s -n mismatch -s "x_ptr=*fp32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=BAD
import triton
import triton.language as tl


# CHECK-LABEL: func.func @lookup
# CHECK: arith.bitcast {{.*}} : tensor<32x16xf16> to tensor<32x16xi16>
# CHECK: arith.cmpi eq, {{.*}} : tensor<32x8x16xi32>
# CHECK: kiln.reduce {{.*}} {axis = 2 : i32}
# CHECK: arith.bitcast {{.*}} : tensor<32x8xi16> to tensor<32x8xf16>
# BAD: gather.py:22:79: error: tl.gather needs index to match src on every dimension but the axis (1), got [16, 16] and [8, 4]
@triton.jit
def mismatch(x_ptr):
    src = tl.zeros((16, 16), dtype=tl.float32)
    idx = tl.zeros((8, 4), dtype=tl.int32)
    tl.store(x_ptr + tl.arange(0, 8)[:, None] * 4 + tl.arange(0, 4)[None, :], tl.gather(src, idx, axis=1))
