# One minimal kernel per construct that the larger corpus kernels combine, so
# that docs/language.md can tell which construct is missing when a larger
# kernel fails.
#
# kiln-variant: -n probe_outer -s "x_ptr=*fp32, out_ptr=*fp32, BLOCK=32"
# kiln-variant: -n probe_zeros -s "out_ptr=*fp32, BLOCK=128"
# kiln-variant: -n probe_zeros_like -s "x_ptr=*fp32, out_ptr=*fp32, BLOCK=128"
# kiln-variant: -n probe_full -s "out_ptr=*i32, value=i32, BLOCK=128"
# kiln-variant: -n probe_inf_other -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_num_programs -s "out_ptr=*i32"
# kiln-variant: -n probe_shape_len -s "x_ptr=*fp32, out_ptr=*fp32, BLOCK=64"
# kiln-variant: -n probe_dtype -s "x_ptr=*fp16, out_ptr=*fp16, BLOCK=64"
# kiln-variant: -n probe_transpose -s "x_ptr=*fp32, out_ptr=*fp32, BLOCK=16"
# kiln-variant: -n probe_constexpr_compare -s "x_ptr=*fp32, out_ptr=*fp32, BLOCK=128, MODE='double'"
# kiln-variant: -n probe_constexpr_compare -s "x_ptr=*fp32, out_ptr=*fp32, BLOCK=64, MODE='copy'"
# kiln-variant: -n probe_ternary_constexpr -s "x_ptr=*fp32, out_ptr=*fp32, BLOCK=64, NEG=True"
# kiln-variant: -n probe_for_range -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=64"
# kiln-variant: -n probe_for_constexpr_range -s "out_ptr=*fp32, BLOCK=64, STEPS=3"
# kiln-variant: -n probe_static_range -s "out_ptr=*fp32, BLOCK=64, STEPS=3"
# kiln-variant: -n probe_while -s "out_ptr=*i32, n=i32"
# kiln-variant: -n probe_runtime_if -s "out_ptr=*fp32, flag=i32, BLOCK=64"
# kiln-variant: -n probe_runtime_if_else -s "out_ptr=*fp32, flag=i32, BLOCK=64"
# kiln-variant: -n probe_pass -s "out_ptr=*fp32, BLOCK=64"
# kiln-variant: -n probe_assert -s "x_ptr=*fp32, BLOCK=64"
# kiln-variant: -n probe_device_assert -s "x_ptr=*fp32, BLOCK=64"
# kiln-variant: -n probe_device_print -s "x_ptr=*fp32, BLOCK=64"
# kiln-variant: -n probe_debug_barrier -s "out_ptr=*fp32, BLOCK=64"
# kiln-variant: -n probe_cdiv -s "out_ptr=*i32, n=i32, BLOCK=64"
# kiln-variant: -n probe_sum -s "x_ptr=*fp32, out_ptr=*fp32, BLOCK=128"
# kiln-variant: -n probe_max -s "x_ptr=*fp32, out_ptr=*fp32, BLOCK=128"
# kiln-variant: -n probe_min -s "x_ptr=*i32, out_ptr=*i32, BLOCK=128"
# kiln-variant: -n probe_atomic_add -s "out_ptr=*fp32, BLOCK=64"
# kiln-variant: -n probe_bitcast -s "x_ptr=*fp32, out_ptr=*i32, BLOCK=64"
# kiln-variant: -n probe_is_none -s "x_ptr=*fp32, bias_ptr=None, BLOCK=64"
# kiln-variant: -n probe_runtime_ternary -s "out_ptr=*fp32, flag=i32"
# kiln-variant: -n probe_runtime_bool_ops -s "out_ptr=*i32, a=i32, b=i32"
# kiln-covers: probe_outer: x[:, None]; x[None, :]; broadcasting
# kiln-covers: probe_zeros: tl.zeros
# kiln-covers: probe_zeros_like: tl.zeros_like
# kiln-covers: probe_full: tl.full
# kiln-covers: probe_inf_other: float("inf"); tl.load(mask=, other=)
# kiln-covers: probe_num_programs: tl.num_programs
# kiln-covers: probe_shape_len: .shape; len
# kiln-covers: probe_dtype: .dtype; ptr.dtype.element_ty
# kiln-covers: probe_transpose: .T
# kiln-covers: probe_constexpr_compare: == on constexprs; if on constexpr; elif/else on constexpr; string argument
# kiln-covers: probe_ternary_constexpr: ternary on constexprs; bool literal
# kiln-covers: probe_for_range: for over range; augmented assignment
# kiln-covers: probe_for_constexpr_range: for over range; range on constexprs
# kiln-covers: probe_static_range: for over tl.static_range
# kiln-covers: probe_while: while
# kiln-covers: probe_runtime_if: if on run-time scalar
# kiln-covers: probe_runtime_if_else: if on run-time scalar; elif/else on run-time scalar
# kiln-covers: probe_pass: pass
# kiln-covers: probe_assert: assert
# kiln-covers: probe_device_assert: tl.device_assert
# kiln-covers: probe_device_print: tl.device_print
# kiln-covers: probe_debug_barrier: tl.debug_barrier
# kiln-covers: probe_cdiv: tl.cdiv
# kiln-covers: probe_sum: tl.sum
# kiln-covers: probe_max: tl.max
# kiln-covers: probe_min: tl.min
# kiln-covers: probe_atomic_add: tl.atomic_add
# kiln-covers: probe_bitcast: .to(dtype, bitcast=True)
# kiln-covers: probe_runtime_ternary: ternary on run-time scalars
# kiln-covers: probe_runtime_bool_ops: and/or/not on run-time scalars
# kiln-covers: probe_is_none: is None / is not None; None
import triton
import triton.language as tl


@triton.jit
def probe_outer(x_ptr, out_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i)
    tl.store(out_ptr + i[:, None] * BLOCK + i[None, :], x[:, None] + x[None, :])


@triton.jit
def probe_zeros(out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.zeros([BLOCK], dtype=tl.float32))


@triton.jit
def probe_zeros_like(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.zeros_like(x))


@triton.jit
def probe_full(out_ptr, value, BLOCK: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.full([BLOCK], value, tl.int32))


@triton.jit
def probe_inf_other(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=float("inf")))


@triton.jit
def probe_num_programs(out_ptr):
    tl.store(out_ptr + tl.program_id(0), tl.num_programs(0))


@triton.jit
def probe_shape_len(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.static_assert(len(x.shape) == 1)
    tl.static_assert(x.shape[0] == BLOCK)
    tl.store(out_ptr + tl.arange(0, BLOCK), x)


@triton.jit
def probe_dtype(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.static_assert(x.dtype == tl.float16)
    tl.store(out_ptr + tl.arange(0, BLOCK), x.to(out_ptr.dtype.element_ty))


@triton.jit
def probe_transpose(x_ptr, out_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i[:, None] * BLOCK + i[None, :])
    tl.store(out_ptr + i[:, None] * BLOCK + i[None, :], x.T)


@triton.jit
def probe_constexpr_compare(x_ptr, out_ptr, BLOCK: tl.constexpr, MODE: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    if MODE == "double":
        x = x * 2
    elif BLOCK != 128:
        x = x + 1
    else:
        x = -x
    tl.store(out_ptr + tl.arange(0, BLOCK), x)


@triton.jit
def probe_ternary_constexpr(x_ptr, out_ptr, BLOCK: tl.constexpr, NEG: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr + tl.arange(0, BLOCK), -x if NEG else x)


@triton.jit
def probe_for_range(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        acc += tl.load(x_ptr + start + offs, mask=start + offs < n, other=0.0)
    tl.store(out_ptr + offs, acc)


@triton.jit
def probe_for_constexpr_range(out_ptr, BLOCK: tl.constexpr, STEPS: tl.constexpr):
    x = tl.arange(0, BLOCK).to(tl.float32)
    for i in range(STEPS):
        x = x * 0.5
    tl.store(out_ptr + tl.arange(0, BLOCK), x)


@triton.jit
def probe_static_range(out_ptr, BLOCK: tl.constexpr, STEPS: tl.constexpr):
    x = tl.arange(0, BLOCK).to(tl.float32)
    for i in tl.static_range(STEPS):
        x = x + i
    tl.store(out_ptr + tl.arange(0, BLOCK), x)


@triton.jit
def probe_while(out_ptr, n):
    i = 0
    while i < n:
        i += 3
    tl.store(out_ptr, i)


@triton.jit
def probe_runtime_if(out_ptr, flag, BLOCK: tl.constexpr):
    x = tl.arange(0, BLOCK).to(tl.float32)
    if flag > 0:
        x = x * 2
    tl.store(out_ptr + tl.arange(0, BLOCK), x)


@triton.jit
def probe_runtime_if_else(out_ptr, flag, BLOCK: tl.constexpr):
    if flag > 0:
        x = tl.arange(0, BLOCK).to(tl.float32)
    else:
        x = tl.zeros([BLOCK], dtype=tl.float32)
    tl.store(out_ptr + tl.arange(0, BLOCK), x)


@triton.jit
def probe_pass(out_ptr, BLOCK: tl.constexpr):
    pass
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.arange(0, BLOCK).to(tl.float32))


@triton.jit
def probe_assert(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    assert x == x, "NaN"


@triton.jit
def probe_device_assert(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_assert(x >= 0, "negative input")


@triton.jit
def probe_device_print(x_ptr, BLOCK: tl.constexpr):
    tl.device_print("x", tl.load(x_ptr + tl.arange(0, BLOCK)))


@triton.jit
def probe_debug_barrier(out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.zeros([BLOCK], dtype=tl.float32))
    tl.debug_barrier()
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.full([BLOCK], 1.0, tl.float32))


@triton.jit
def probe_cdiv(out_ptr, n, BLOCK: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.arange(0, BLOCK) + tl.cdiv(n, BLOCK))


@triton.jit
def probe_sum(x_ptr, out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr, tl.sum(tl.load(x_ptr + tl.arange(0, BLOCK)), axis=0))


@triton.jit
def probe_max(x_ptr, out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr, tl.max(tl.load(x_ptr + tl.arange(0, BLOCK)), axis=0))


@triton.jit
def probe_min(x_ptr, out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr, tl.min(tl.load(x_ptr + tl.arange(0, BLOCK)), axis=0))


@triton.jit
def probe_atomic_add(out_ptr, BLOCK: tl.constexpr):
    tl.atomic_add(out_ptr + tl.arange(0, BLOCK), 1.0)


@triton.jit
def probe_bitcast(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr + tl.arange(0, BLOCK), x.to(tl.int32, bitcast=True))


@triton.jit
def probe_is_none(x_ptr, bias_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    if bias_ptr is not None:
        x += tl.load(bias_ptr + tl.arange(0, BLOCK))
    tl.store(x_ptr + tl.arange(0, BLOCK), x)


@triton.jit
def probe_runtime_ternary(out_ptr, flag):
    tl.store(out_ptr, 1.0 if flag > 0 else 2.0)


@triton.jit
def probe_runtime_bool_ops(out_ptr, a, b):
    tl.store(out_ptr, ((a > 0) and (b > 0)) or not (a == b))
