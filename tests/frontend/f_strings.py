# f-strings in kernel code: each replacement field's compile-time value
# formatted as upstream Triton 3.6 formats it ("{}" or "{!r}" of the value;
# a format spec is not applied, as upstream's is not), `{{` and `}}` as
# braces, adjacent literals joined. Upstream's message for `failed`, checked
# with its compiler: "{BLOCK} is 16 mode='abc', abc dt=fp16 f=8.0 16".
# RUN: not %kilnc compile %s -n failed -s "x_ptr=*fp32, BLOCK=16, MODE='abc', DT=tl.float16" --arch sm_90a --emit kiln -o /dev/null 2>&1 | FileCheck %s --check-prefix=FAILED
# RUN: %kilnc compile %s -n folded -s "out_ptr=*i32, BLOCK=64, MODE='gelu'" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=FOLDED
# RUN: not %kilnc compile %s -n self_documenting -s "x_ptr=*fp32, BLOCK=16, MODE='abc'" --arch sm_90a --emit kiln -o /dev/null 2>&1 | FileCheck %s --check-prefix=ECHO
# RUN: not %kilnc compile %s -n runtime_field -s "x_ptr=*fp32, n=i32" --arch sm_90a --emit kiln -o /dev/null 2>&1 | FileCheck %s --check-prefix=RUNTIME
import triton
import triton.language as tl


# FAILED: f_strings.py:[[# @LINE + 4]]:5: error: static assertion failed: {BLOCK} is 16 mode='abc', abc dt=fp16 f=8.0 16
@triton.jit
def failed(x_ptr, BLOCK: tl.constexpr, MODE: tl.constexpr, DT: tl.constexpr):
    tl.static_assert(BLOCK % 16 == 0, f"BLOCK={BLOCK} must be a multiple of 16")
    tl.static_assert(BLOCK == 8, f"{{BLOCK}} is {BLOCK!r} " f'mode={MODE!r}, {MODE} dt={DT} f={0.5 * BLOCK} {BLOCK:>8}')


# An f-string is a compile-time string: compared, measured, used as a key.
# "gelu_64" has 7 characters; the stored value is 7 + 100 for the match.
# FOLDED-LABEL: func.func @folded
# FOLDED: arith.constant 107 : i32
@triton.jit
def folded(out_ptr, BLOCK: tl.constexpr, MODE: tl.constexpr):
    name: tl.constexpr = f"{MODE}_{BLOCK}"
    value = len(name)
    if name == "gelu_64":
        value += 100
    tl.store(out_ptr, value)


# RUNTIME: f_strings.py:[[# @LINE + 3]]:29: error: an f-string in a kernel formats compile-time values only (as upstream Triton), not a run-time scalar of type i32
@triton.jit
def runtime_field(x_ptr, n):
    tl.device_print(f"n is {n}", n)



# Self-documenting fields (`{BLOCK=}`, Python 3.8+) show their source text and
# the value's repr, `==`/`!=`/`<=`/`>=` stay comparisons. Upstream's message,
# checked with its compiler: "BLOCK=16 MODE = 'abc' MODE=abc BLOCK=16 True
# False True True".
# ECHO: f_strings.py:[[# @LINE + 3]]:5: error: static assertion failed: BLOCK=16 MODE = 'abc' MODE=abc BLOCK=16 True False True True
@triton.jit
def self_documenting(x_ptr, BLOCK: tl.constexpr, MODE: tl.constexpr):
    tl.static_assert(BLOCK == 8, f"{BLOCK=} {MODE = } {MODE=!s} {BLOCK=:>5} {BLOCK==16} {BLOCK!=16} {BLOCK>=16} {BLOCK<=16}")
