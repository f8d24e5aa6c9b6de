# Forms a sweep of the language against upstream Triton 3.6 found rejected
# by Kiln while upstream compiles them: math methods of fp16/bf16 blocks
# (upstream checks the dtype in tl.exp, not in x.exp(); the result keeps the
# block's type), tl.trans of a 3-D block without dims (the last two
# swapped), x.cdiv(n), tl.reduce_or(x, None) (all axes), tl.cast(input=...),
# tl.join of int8 with uint8 (the first operand's type), and -x of a bool
# block (bool).
# RUN: %kilnc compile %s -n forms -s "h_ptr=*fp16, b_ptr=*bf16, i_ptr=*i8, u_ptr=*u8, out_ptr=*fp32, n=i32" --arch sm_90a --emit kiln -o - | FileCheck %s
# RUN: %kilnc compile %s -n lone_operand -s "out_ptr=*i32, n=i32, FLAG=True" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=LONE
# RUN: %kilnc compile %s -n recursion_with_stop -s "x_ptr=*fp32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=RECURSE
# CHECK-LABEL: func.func @forms
# x.exp() of fp16: computed in fp32, rounded back.
# CHECK: %[[W:.*]] = arith.extf %{{.*}} : tensor<16xf16> to tensor<16xf32>
# CHECK: math.exp %[[W]] : tensor<16xf32>
# CHECK: arith.truncf %{{.*}} : tensor<16xf32> to tensor<16xf16>
# CHECK: kiln.trans %{{.*}}, [0, 2, 1] : tensor<2x4x2xf32> -> tensor<2x2x4xf32>
# CHECK: kiln.join %{{.*}}, %{{.*}} : tensor<16xi8> -> tensor<16x2xi8>
import triton
import triton.language as tl


@triton.jit
def forms(h_ptr, b_ptr, i_ptr, u_ptr, out_ptr, n):
    offs = tl.arange(0, 16)
    h = tl.load(h_ptr + offs)
    b = tl.load(b_ptr + offs)
    e = h.exp()
    tl.static_assert(e.dtype == tl.float16)
    tl.static_assert(b.sqrt().dtype == tl.bfloat16)
    tl.static_assert(b.floor().dtype == tl.bfloat16)
    t = tl.trans(tl.reshape(offs.to(tl.float32), (2, 4, 2)))
    tl.static_assert(t.shape[1] == 2 and t.shape[2] == 4)
    blocks = n.cdiv(16)
    halves = offs.cdiv(2)
    any_set = tl.reduce_or(offs, None)
    as_float = tl.cast(input=offs, dtype=tl.float32)
    i = tl.load(i_ptr + offs)
    u = tl.load(u_ptr + offs)
    j = tl.join(i, u)
    tl.static_assert(j.dtype == tl.int8)
    negated = -(offs > 3)
    tl.static_assert(negated.dtype == tl.int1)
    total = e.to(tl.float32) + b.sqrt().to(tl.float32) + tl.sum(tl.reshape(t, (16,)), 0) \
        + blocks + halves + any_set + as_float + tl.sum(j, 1)
    tl.store(out_ptr + offs, total)


# `FLAG and n` with FLAG true is n itself, an int32 (upstream returns the
# lone run-time operand), not n != 0.
# LONE-LABEL: func.func @lone_operand
# LONE-NOT: arith.cmpi
# LONE: kiln.store %arg0, %arg1 : !kiln.ptr<i32>, i32
@triton.jit
def lone_operand(out_ptr, n, FLAG: tl.constexpr):
    tl.store(out_ptr, FLAG and n)


# Recursion that a compile-time condition ends, as upstream compiles it:
# x * 2**N by N nested calls.
# RECURSE-LABEL: func.func @recursion_with_stop
# RECURSE-COUNT-3: arith.mulf
# RECURSE-NOT: arith.mulf
@triton.jit
def _times_two_to(x, N: tl.constexpr):
    if N > 0:
        return _times_two_to(x * 2.0, N - 1)
    return x


@triton.jit
def recursion_with_stop(x_ptr):
    offs = tl.arange(0, 16)
    tl.store(x_ptr + offs, _times_two_to(tl.load(x_ptr + offs), 3))
