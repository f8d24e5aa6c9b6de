# Idioms of the eleventh real-world sample that the front end took as errors,
# and upstream Triton 3.6 compiles: a dict display in a constexpr function
# (triton_kernels' `get_scaled_dot_format_string`: `{tl.float16: "fp16",
# ...}[dtype]`), keyed as Python keys it (dtypes by type, `1 == True`,
# tuples by element, a later equal key replacing the earlier one), and
# @triton.heuristics given `dict(NAME=lambda args: ...)` rather than a
# `{...}` display (native-sparse-attention-pytorch's kernels).
# RUN: %kilnc compile %s -n idioms -s "x_ptr=*bf16, GROUPS=4" --arch sm_90a --emit kiln -o - | FileCheck %s
# RUN: not %kilnc compile %s -n idioms -s "x_ptr=*fp32, GROUPS=4" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=MISSING
# RUN: not %kilnc compile %s -n unhashable -s "x_ptr=*fp32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=KEY
import triton
import triton.language as tl


@triton.constexpr_function
def format_string(dtype: tl.dtype):
    # MISSING: eleventh_sample_idioms.py:[[@LINE+5]]:20: error: KeyError: the dtype fp32 is not in the dict
    mapping = {
        tl.float16: "fp16",
        tl.bfloat16: "bf16",
    }
    return mapping[dtype]


@triton.constexpr_function
def width(n):
    return {1: 8, 2: 16, True: 32, 4.0: 64}[n]


# CHECK-LABEL: func.func @idioms
# EXPAND = 16 // GROUPS = 4 elements: BLOCK = width(True) + width(4) = 96 is
# not a power of two, so the range is EXPAND long.
# CHECK: kiln.make_range {end = 4 : i32, start = 0 : i32}
@triton.heuristics(dict(EXPAND=lambda args: 16 // args["GROUPS"]))
@triton.jit
def idioms(x_ptr, GROUPS: tl.constexpr, EXPAND: tl.constexpr):
    tl.static_assert(format_string(x_ptr.dtype.element_ty) == "bf16")
    tl.static_assert(width(1) == 32)
    tl.static_assert(width(4) == 64)
    tl.static_assert({(1, tl.int8): 2, (1, tl.int16): 3}[(True, tl.int16)] == 3)
    offs = tl.arange(0, EXPAND)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)


# KEY: eleventh_sample_idioms.py:[[@LINE+3]]:10: error: a dict key must be a compile-time number, string, None, dtype or tuple of them, not a run-time scalar of type fp32
@triton.jit
def unhashable(x_ptr):
    d = {tl.load(x_ptr): 3, (1, 2): 4}
    tl.store(x_ptr, d[(1, 2)])
