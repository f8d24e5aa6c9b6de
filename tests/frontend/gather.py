# tl.gather (issue 13: gemlite's fp4 GEMV looks 4-bit codes up in a
# 16-entry table): each output element compares its index with every
# position of the axis and sums the match, src's bits as integers.
# RUN: %kilnc compile %s -n lookup -s "table_ptr=*fp16, codes_ptr=*u8, out_ptr=*fp16, K=32" --arch sm_90a --emit kiln -o - | FileCheck %s
# RUN: %kilnc compile %s -n lookup -s "table_ptr=*fp16, codes_ptr=*u8, out_ptr=*fp16, K=32" --arch sm_80 --emit cubin -o /dev/null
# RUN: not %kilnc compile %s -n mismatch -s "x_ptr=*fp32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=BAD
import triton
import triton.language as tl


# CHECK-LABEL: func.func @lookup
# CHECK: arith.bitcast {{.*}} : tensor<32x16xf16> to tensor<32x16xi16>
# CHECK: arith.cmpi eq, {{.*}} : tensor<32x8x16xi32>
# CHECK: kiln.reduce {{.*}} {axis = 2 : i32}
# CHECK: arith.bitcast {{.*}} : tensor<32x8xi16> to tensor<32x8xf16>
@triton.jit
def lookup(table_ptr, codes_ptr, out_ptr, K: tl.constexpr):
    table = tl.load(table_ptr + tl.arange(0, 16))[None, :].broadcast_to((K, 16))
    rk = tl.arange(0, K)
    rn = tl.arange(0, 8)
    codes = tl.load(codes_ptr + rk[:, None] * 8 + rn[None, :]) & 15
    values = tl.gather(table, codes, axis=1)
    tl.store(out_ptr + rk[:, None] * 8 + rn[None, :], values)


# BAD: gather.py:31:79: error: tl.gather needs index to match src on every dimension but the axis (1), got [16, 16] and [8, 4]
@triton.jit
def mismatch(x_ptr):
    src = tl.zeros((16, 16), dtype=tl.float32)
    idx = tl.zeros((8, 4), dtype=tl.int32)
    tl.store(x_ptr + tl.arange(0, 8)[:, None] * 4 + tl.arange(0, 4)[None, :], tl.gather(src, idx, axis=1))
