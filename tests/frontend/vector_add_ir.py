# The vector-add kernel in kiln IR: parameters become arguments (constexprs
# fold away), python scalars take the type of the tensor beside them, and
# the mask and pointers are built from splats.
# RUN: %kilnc compile %s -s "*fp32:16, *fp32:16, *fp32:16, i32, 1024" --arch sm_90a --emit kiln -o - | FileCheck %s
# CHECK-LABEL: func.func @add_kernel(%arg0: !kiln.ptr<f32> {kiln.divisibility = 16 : i32}, %arg1: !kiln.ptr<f32> {kiln.divisibility = 16 : i32}, %arg2: !kiln.ptr<f32> {kiln.divisibility = 16 : i32}, %arg3: i32)
# CHECK-DAG: %[[BLOCK:.*]] = arith.constant 1024 : i32
# CHECK-DAG: %[[PID:.*]] = kiln.program_id 0 : i32
# CHECK: %[[START:.*]] = arith.muli %[[PID]], %[[BLOCK]] : i32
# CHECK: %[[RANGE:.*]] = kiln.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
# CHECK: %[[SPLAT:.*]] = kiln.splat %[[START]] : i32 -> tensor<1024xi32>
# CHECK: %[[OFFS:.*]] = arith.addi %[[SPLAT]], %[[RANGE]] : tensor<1024xi32>
# CHECK: %[[N:.*]] = kiln.splat %arg3 : i32 -> tensor<1024xi32>
# CHECK: %[[MASK:.*]] = arith.cmpi slt, %[[OFFS]], %[[N]] : tensor<1024xi32>
# CHECK: kiln.load %{{.*}}, mask %[[MASK]]
# CHECK: arith.addf
# CHECK: kiln.store %{{.*}}, %{{.*}}, mask %[[MASK]]
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)
