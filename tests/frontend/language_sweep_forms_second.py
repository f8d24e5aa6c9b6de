# More forms the language sweep against upstream Triton 3.6 found rejected by
# Kiln while upstream compiles them (each checked with upstream's compiler):
# a tl.constexpr tuple in the signature (SHAPE=(2, 4)), dtype introspection
# (int_signedness, kind(), codegen_name(), mangle(), tl.dtype("fp32")),
# getattr/hasattr, attributes of typed numbers (`s = 0.5; s.dtype` is fp32),
# bitwise atomics on fp32 (on the bits), a pointer plus a bool block (0 or 1),
# tl.multiple_of on a float block (no address facts: dropped), tl.cat of int8
# with uint8 (int8), isinstance(B, tl.constexpr) (False upstream: constexprs
# are unwrapped before Python's builtins see them), a torch dtype unequal to
# every tl dtype, and an `assert` false at compile time (upstream drops
# asserts without debug: a warning, an error with --debug).
# RUN: %kilnc compile %s -n forms -s "x_ptr=*fp32, y_ptr=*fp32, i8_ptr=*i8, u8_ptr=*u8, SHAPE=(2, 4), B=32" --arch sm_90a --emit kiln -o - 2>%t.warn | FileCheck %s
# RUN: FileCheck %s --check-prefix=WARN < %t.warn
# RUN: not %kilnc compile %s -n forms -s "x_ptr=*fp32, y_ptr=*fp32, i8_ptr=*i8, u8_ptr=*u8, SHAPE=(2, 4), B=32" --arch sm_90a --debug --emit kiln -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEBUG
# RUN: not %kilnc compile %s -n forms -s "x_ptr=*fp32, y_ptr=*fp32, i8_ptr=*i8, u8_ptr=*u8, SHAPE=(2, i32), B=32" --arch sm_90a --emit kiln -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADTUPLE
# RUN: %kilnc compile %s -n forms -s "x_ptr=*fp32, y_ptr=*fp32, i8_ptr=*i8, u8_ptr=*u8, SHAPE=(2, 4), B=64" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# CHECK-LABEL: func.func @forms
# The SHAPE tuple's values shape the block.
# CHECK: kiln.make_range {end = 2 : i32, start = 0 : i32}
# CHECK: kiln.make_range {end = 4 : i32, start = 0 : i32}
# A bool offset is widened as unsigned (0 or 1).
# CHECK: arith.extui %{{.*}} : tensor<128xi1> to tensor<128xi32>
# CHECK: kiln.atomic_rmw and
# CHECK: kiln.cat %{{.*}}, %{{.*}} : tensor<16xi8>
# WARN: warning: assertion failed: B must be 64 (false at compile time; dropped
# DEBUG: error: assertion failed: B must be 64
# BADTUPLE: parameter 'SHAPE' is tl.constexpr: its tuple holds compile-time values only
# PTX: atom.global.acq_rel.gpu.and.b32
# PTX: atom.global.acq_rel.gpu.or.b32
import torch
import triton
import triton.language as tl
from triton.language import core


@triton.jit
def forms(x_ptr, y_ptr, i8_ptr, u8_ptr, SHAPE: tl.constexpr, B: tl.constexpr):
    tl.static_assert(len(SHAPE) == 2)
    o = tl.arange(0, SHAPE[0])[:, None] * SHAPE[1] + tl.arange(0, SHAPE[1])[None, :]
    tl.store(y_ptr + o, o.to(tl.float32))

    offs = tl.arange(0, 128)
    x = tl.load(x_ptr + offs)
    i8 = tl.load(i8_ptr + tl.arange(0, 16))
    tl.static_assert(i8.dtype.int_signedness == tl.dtype.SIGNEDNESS.SIGNED)
    tl.static_assert(u8_ptr.dtype.element_ty.int_signedness == core.dtype.SIGNEDNESS.UNSIGNED)
    tl.static_assert(tl.int1.int_signedness == tl.dtype.SIGNEDNESS.UNSIGNED)
    tl.static_assert(i8.dtype.kind() == tl.dtype.KIND.INTEGRAL)
    tl.static_assert(x.dtype.kind() == tl.dtype.KIND.FLOATING)
    tl.static_assert(tl.int1.kind() == tl.dtype.KIND.BOOLEAN)
    tl.static_assert(tl.float16.codegen_name() == "float16")
    tl.static_assert(tl.bfloat16.codegen_name() == "bfloat16")
    tl.static_assert(tl.uint8.codegen_name() == "uint8")
    tl.static_assert(tl.uint8.mangle() == "u8")
    tl.static_assert(tl.float32.cache_key_part == "fp32")
    tl.static_assert(tl.dtype("fp32") == tl.float32)
    tl.static_assert(tl.dtype("int1") == tl.int1)
    tl.static_assert(not tl.float8e4nv.is_fp8e4b8())

    # Upstream unwraps constexprs before Python's builtins see them.
    tl.static_assert(not isinstance(B, tl.constexpr))
    tl.static_assert(isinstance(B, int))
    tl.static_assert(getattr(x, "dtype") == tl.float32)
    # A torch dtype is no tl dtype in a kernel (lmdeploy's fused_lora asks
    # `dtype == torch.float16`); two torch dtypes compare as usual.
    tl.static_assert(x.dtype != torch.float32)
    tl.static_assert(torch.float32 == torch.float)
    tl.static_assert(hasattr(x, "dtype"))
    tl.static_assert(not hasattr(B, "dtype"))
    tl.static_assert(getattr(B, "no_such_attribute", 7) == 7)

    s = 0.5
    t = 3
    tl.static_assert(s.dtype == tl.float32)
    tl.static_assert(t.dtype == tl.int32)
    tl.static_assert(t.to(tl.int64).dtype == tl.int64)

    positive = x > 0
    tl.store(y_ptr + positive, x)
    old = tl.atomic_and(y_ptr + offs, x)
    old = tl.atomic_or(y_ptr + offs, old)
    tl.store(y_ptr + offs, tl.multiple_of(old, 16))

    both = tl.cat(i8, tl.load(u8_ptr + tl.arange(0, 16)), can_reorder=True)
    tl.static_assert(both.dtype == tl.int8)
    tl.store(i8_ptr + tl.arange(0, 32), both)
    assert B == 64, "B must be 64"
