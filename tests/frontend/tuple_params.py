# Tuple kernel parameters (upstream 3.x: mamba's rotary step kernel takes
# q.stride() as one argument): `stride=(i32, i32:16, i32:1)` in the
# signature. The run-time elements are the entry point's parameters in order
# (each with its own hint); `:1` and constexpr elements are constants in the
# body and leave the entry point, as scalar `:1` parameters do.
# RUN: %kilnc compile %s -n strided_copy -s "x_ptr=*fp32, out_ptr=*fp32, stride=(i32, i32:16, i32:1), BLOCK=64" --arch sm_90a --emit kiln -o - | FileCheck %s
# The positional form, nested tuples and constexpr elements.
# RUN: %kilnc compile %s -n nested -s "*fp32, (i32, (i64:16, 4), *fp32), 2" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=NESTED
# A tuple given where the kernel reads a scalar, and a scalar given where it
# reads a tuple: the errors point at the use.
# RUN: not %kilnc compile %s -n strided_copy -s "x_ptr=*fp32, out_ptr=*fp32, stride=i32, BLOCK=64" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=SCALAR
# RUN: not %kilnc compile %s -n scalar_use -s "x_ptr=*fp32, n=(i32, i32)" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=TUPLE-USE
# RUN: not %kilnc compile %s -n strided_copy -s "x_ptr=*fp32, out_ptr=*fp32, stride=(i32, i32), BLOCK=64" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=SHORT
# Signature errors name the parameter and the element.
# RUN: not %kilnc compile %s -n strided_copy -s "x_ptr=*fp32, out_ptr=*fp32, stride=(i32, i33, i32), BLOCK=64" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=BAD
import triton
import triton.language as tl


@triton.jit
def offset_of(strides, i, j):
    # A helper function takes the tuple as it is.
    return i * strides[0] + j * strides[1]


# CHECK-LABEL: func.func @strided_copy(
# CHECK-SAME: %arg0: !kiln.ptr<f32>, %arg1: !kiln.ptr<f32>, %arg2: i32, %arg3: i32 {kiln.divisibility = 16 : i32})
# CHECK-NOT: %arg4
# The static_range loop unrolls len(stride) = 3 times: stride[0] + stride[1]
# + 1 (the `:1` element is the constant 1).
# CHECK: %[[SUM:.*]] = arith.addi %arg2, %arg3 : i32
# CHECK: arith.addi %[[SUM]], %c1_i32 : i32
# The helper reads the tuple it was passed: pid * stride[0] + 1 * stride[1].
# CHECK: %[[PID:.*]] = kiln.program_id 0 : i32
# CHECK: %[[ROW:.*]] = arith.muli %[[PID]], %arg2 : i32
# CHECK: arith.addi %[[ROW]], %arg3 : i32
# row_stride * len(stride), from the unpacked tuple.
# CHECK: arith.muli %arg2, %c3_i32 : i32
# CHECK: kiln.store
# SCALAR: tuple_params.py:[[@LINE+5]]:{{[0-9]+}}: error: a run-time scalar of type i32 cannot be indexed with an int; a kernel parameter that upstream takes as a tuple (x.stride()) needs a tuple type in the signature, e.g. stride=(i32, i32)
# SHORT: tuple_params.py:[[@LINE+5]]:5: error: cannot unpack a tuple of 2 into 3 names
@triton.jit
def strided_copy(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
    total = 0
    last = stride[-1]
    row_stride, col_stride, unit = stride
    n = len(stride)
    for i in tl.static_range(len(stride)):
        total += stride[i]
    offs = tl.arange(0, BLOCK)
    base = offset_of(stride, tl.program_id(0), 1)
    x = tl.load(x_ptr + base + offs * stride[2])
    tl.store(out_ptr + row_stride * n + col_stride * last + unit + offs,
             x + total)


# NESTED-LABEL: func.func @nested(
# NESTED-SAME: %arg0: !kiln.ptr<f32>, %arg1: i32, %arg2: i64 {kiln.divisibility = 16 : i32}, %arg3: !kiln.ptr<f32>)
# NESTED: arith.constant 4 : i64
@triton.jit
def nested(out_ptr, t, SCALE: tl.constexpr):
    inner = t[1]
    tl.static_assert(len(inner) == 2)
    tl.static_assert(inner[1] == 4)
    value = tl.load(t[2] + t[0]) * SCALE
    tl.store(out_ptr + inner[0] * inner[1], value)


# TUPLE-USE: tuple_params.py:[[@LINE+3]]:20: error: operator '+' cannot combine a run-time scalar of type *fp32 and a tuple of 2
@triton.jit
def scalar_use(x_ptr, n):
    tl.store(x_ptr + n, 1.0)


# BAD: tuple_params.py:{{[0-9]+}}:5: error: bad signature for 'strided_copy': parameter 'stride[1]': 'i33' is not a type (*T or T, optionally with :16, or :1 for integers), a constexpr value (an int, float, bool, string, None or tl dtype) or a nested tuple (did you mean 'i32'?)
