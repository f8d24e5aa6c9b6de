# `if` on run-time scalars becomes a structured branch that yields every
# variable the branches assign; early return from a branch; scalar `and`,
# `or`, `not` and the conditional expression on run-time values.
#
# kiln-variant: -n clamp_by_program -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, limit=fp32, BLOCK=256"
# kiln-variant: -n skip_tail -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256"
# kiln-variant: -n scalar_logic -s "out_ptr=*i32, a=i32, b=i32, BLOCK=32"
# kiln-variant: -n nested_branches -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, mode=i32, BLOCK=128"
# kiln-covers: clamp_by_program: if on run-time scalar; elif/else on run-time scalar; ternary on run-time scalars
# kiln-covers: skip_tail: early return in if; return
# kiln-covers: scalar_logic: and/or/not on run-time scalars; ternary on run-time scalars; comparisons < <= > >= == !=
# kiln-covers: nested_branches: if on run-time scalar; elif/else on run-time scalar; augmented assignment
import triton
import triton.language as tl


@triton.jit
def clamp_by_program(x_ptr, out_ptr, n, limit, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if pid % 3 == 0:
        scale = 2.0
        y = tl.minimum(x, limit)
    elif pid % 3 == 1:
        scale = 0.5
        y = tl.maximum(x, -limit)
    else:
        scale = 1.0
        y = x
    bias = 1.0 if pid > 4 else 0.0
    tl.store(out_ptr + offs, y * scale + bias, mask=offs < n)


@triton.jit
def skip_tail(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    if start >= n:
        return
    offs = start + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)


@triton.jit
def scalar_logic(out_ptr, a, b, BLOCK: tl.constexpr):
    both = (a > 0) and (b > 0)
    either = (a < 0) or (b <= 0)
    neither = not (a == b)
    distinct = a != b
    big = a >= 100
    code = 0
    if both:
        code += 1
    if either:
        code += 2
    if neither:
        code += 4
    if distinct and big:
        code += 8
    v = a if a > b else b
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs + code + v)


@triton.jit
def nested_branches(x_ptr, out_ptr, n, mode, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    if mode > 0:
        if mode > 10:
            acc += x * 10
        else:
            acc += x
    else:
        if mode == 0:
            acc -= x
    tl.store(out_ptr + offs, acc, mask=offs < n)
