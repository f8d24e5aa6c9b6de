# Shape operations: subscripts with None and ':', numpy broadcasting of
# size-1 dimensions, expand_dims, reshape/view/ravel, trans/permute/.T,
# join/split/interleave/cat.
# RUN: %kilnc compile %s -n subscripts -s "*fp32, 16, 32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=SUB
# RUN: %kilnc compile %s -n expand_and_broadcast -s "*fp32, 16, 32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=EXPAND
# RUN: %kilnc compile %s -n reshapes -s "*fp32, 16, 32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=RESHAPE
# RUN: %kilnc compile %s -n transposes -s "*fp32, 16, 32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=TRANS
# RUN: %kilnc compile %s -n join_split -s "*fp32, 16" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=JOIN
# RUN: %kilnc compile %s -n scalar_subscript -s "*fp32, fp32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=SCALAR
import triton
import triton.language as tl


# x[:, None] and x[None, :] insert size-1 dimensions; adding them broadcasts
# both to [M, N] (kiln.broadcast repeats the size-1 dimension).
# SUB-LABEL: func.func @subscripts
# SUB: %[[RM:.*]] = kiln.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
# SUB: %[[RN:.*]] = kiln.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
# SUB: %[[COL:.*]] = kiln.expand_dims %[[RM]] {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
# SUB: %[[SCALED:.*]] = arith.muli %[[COL]], %{{.*}} : tensor<16x1xi32>
# SUB: %[[ROW:.*]] = kiln.expand_dims %[[RN]] {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
# SUB: %[[B1:.*]] = kiln.broadcast %[[SCALED]] : tensor<16x1xi32> -> tensor<16x32xi32>
# SUB: %[[B2:.*]] = kiln.broadcast %[[ROW]] : tensor<1x32xi32> -> tensor<16x32xi32>
# SUB: %[[OFFS:.*]] = arith.addi %[[B1]], %[[B2]] : tensor<16x32xi32>
# SUB: kiln.addptr %{{.*}}, %[[OFFS]] : tensor<16x32x!kiln.ptr<f32>>, tensor<16x32xi32>
@triton.jit
def subscripts(x_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    offs = rm[:, None] * N + rn[None, :]
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1.0)


# A block of lower rank gains leading dimensions first (numpy rules).
# EXPAND-LABEL: func.func @expand_and_broadcast
# EXPAND: kiln.expand_dims %{{.*}} {axis = 0 : i32} : tensor<32xf32> -> tensor<1x32xf32>
# EXPAND: kiln.broadcast %{{.*}} : tensor<1x32xf32> -> tensor<16x32xf32>
# EXPAND: kiln.expand_dims %{{.*}} {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
# EXPAND: kiln.broadcast %{{.*}} : tensor<16x1xf32> -> tensor<16x32xf32>
# tl.broadcast broadcasts both operands to their common shape.
# EXPAND: kiln.broadcast %{{.*}} : tensor<16x1xi32> -> tensor<16x32xi32>
# EXPAND: kiln.broadcast %{{.*}} : tensor<1x32xi32> -> tensor<16x32xi32>
# tl.expand_dims with several axes inserts them in increasing order (the
# first, rn[None, :], is shared with the one above).
# EXPAND: kiln.expand_dims %{{.*}} {axis = 2 : i32} : tensor<1x32xi32> -> tensor<1x32x1xi32>
@triton.jit
def expand_and_broadcast(x_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    row = tl.load(x_ptr + rn)
    grid = tl.zeros((M, N), dtype=tl.float32) + row
    col = tl.broadcast_to(tl.load(x_ptr + rm)[:, None], (M, N))
    a, b = tl.broadcast(rm[:, None], rn[None, :])
    tl.store(x_ptr + a * N + b, grid + col)
    both = tl.expand_dims(rn, (0, 2))
    tl.static_assert(both.shape[0] == 1 and both.shape[2] == 1)
    tl.store(x_ptr + both, both.to(tl.float32))


# RESHAPE-LABEL: func.func @reshapes
# RESHAPE: kiln.reshape %{{.*}} : tensor<16x32xf32> -> tensor<32x16xf32>
# RESHAPE: kiln.reshape %{{.*}} {allow_reorder = true} : tensor<32x16xf32> -> tensor<512xf32>
# RESHAPE: kiln.reshape %{{.*}} : tensor<16x32xf32> -> tensor<512xf32>
@triton.jit
def reshapes(x_ptr, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    y = tl.reshape(x, (N, M))
    z = y.view(M * N)
    flat = tl.ravel(x)
    r = tl.arange(0, M * N)
    tl.store(x_ptr + r, z + flat)


# .T and tl.trans swap the dimensions of a 2-D block; tl.permute takes any
# order.
# TRANS-LABEL: func.func @transposes
# TRANS: kiln.trans %{{.*}}, [1, 0] : tensor<16x32xf32> -> tensor<32x16xf32>
# TRANS: kiln.trans %{{.*}}, [2, 0, 1] : tensor<16x32x1xf32> -> tensor<1x16x32xf32>
@triton.jit
def transposes(x_ptr, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    t = x.T
    u = tl.trans(x)
    p = tl.permute(x[:, :, None], (2, 0, 1))
    tl.store(x_ptr + offs.T, t + u)
    tl.store(x_ptr + offs[None, :, :], p)


# JOIN-LABEL: func.func @join_split
# JOIN: %[[J:.*]] = kiln.join %{{.*}}, %{{.*}} : tensor<16xf32> -> tensor<16x2xf32>
# JOIN: %{{.*}}, %{{.*}} = kiln.split %[[J]] : tensor<16x2xf32> -> tensor<16xf32>
# JOIN: kiln.reshape %{{.*}} : tensor<16x2xf32> -> tensor<32xf32>
# JOIN: kiln.cat %{{.*}}, %{{.*}} : tensor<16xf32> -> tensor<32xf32>
@triton.jit
def join_split(x_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(x_ptr + r)
    b = tl.load(x_ptr + N + r)
    j = tl.join(a, b)
    lo, hi = tl.split(j)
    tl.store(x_ptr + r, lo * hi)
    i = tl.interleave(a, b)
    c = tl.cat(a, b, can_reorder=True)
    r2 = tl.arange(0, 2 * N)
    tl.store(x_ptr + r2, i + c)


# A run-time scalar indexed with None becomes a block of one element.
# SCALAR-LABEL: func.func @scalar_subscript
# SCALAR: kiln.splat %arg1 : f32 -> tensor<1xf32>
@triton.jit
def scalar_subscript(x_ptr, s):
    tl.store(x_ptr + tl.arange(0, 1), s[None])
