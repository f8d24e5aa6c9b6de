# Expressions: every comparison, `is None`, bitwise and logical operators on
# masks, the conditional expression on constexprs, Python builtins on
# constexprs (min, max, len, int, float, **), .dtype/.shape/.T, and
# ptr.dtype.element_ty.
#
# kiln-variant: -n comparisons -s "x_ptr=*fp32, y_ptr=*fp32, out_ptr=*i8, n=i32, BLOCK=256"
# kiln-variant: -n comparisons -s "x_ptr=*i64, y_ptr=*i64, out_ptr=*i8, n=i32, BLOCK=256"
# kiln-variant: -n constexpr_builtins -s "out_ptr=*fp32, A=48, B=100, RATIO=0.25"
# kiln-variant: -n constexpr_builtins -s "out_ptr=*fp32, A=16, B=8, RATIO=2.0"
# kiln-variant: -n optional_pointer -s "x_ptr=*fp32, scale_ptr=None, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n optional_pointer -s "x_ptr=*fp32, scale_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n attributes -s "x_ptr=*bf16, out_ptr=*fp32, R=16, C=32"
# kiln-covers: comparisons: comparisons < <= > >= == !=; & | ^ ~; tl.int8
# kiln-covers: constexpr_builtins: min/max on constexprs; int() / float() on constexprs; ** on constexprs; ternary on constexprs; // and % on constexprs; float literal
# kiln-covers: optional_pointer: is None / is not None; None
# kiln-covers: attributes: .dtype; .shape; .T; ptr.dtype.element_ty; len
import triton
import triton.language as tl


@triton.jit
def comparisons(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0)
    y = tl.load(y_ptr + offs, mask=m, other=0)
    lt = x < y
    le = x <= y
    gt = x > y
    ge = x >= y
    eq = x == y
    ne = x != y
    code = lt.to(tl.int8) + (le.to(tl.int8) << 1) + (gt.to(tl.int8) << 2) + (ge.to(tl.int8) << 3)
    code += (eq & ~ne).to(tl.int8) << 4
    code += ((lt | gt) ^ ne).to(tl.int8) << 5
    tl.store(out_ptr + offs, code, mask=m)


@triton.jit
def constexpr_builtins(out_ptr, A: tl.constexpr, B: tl.constexpr, RATIO: tl.constexpr):
    P2: tl.constexpr = 2 ** 5
    HALF: tl.constexpr = int(A * RATIO) if RATIO < 1 else B // 2
    tl.static_assert(len((A, B)) == 2)
    offs = tl.arange(0, P2)
    scale = float(A) / B + HALF % 7 + min(A, B) / max(A, B)
    tl.store(out_ptr + offs, offs * scale)


@triton.jit
def optional_pointer(x_ptr, scale_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if scale_ptr is not None:
        x = x * tl.load(scale_ptr)
    if scale_ptr is None:
        x = x + 1.0
    tl.store(out_ptr + offs, x, mask=offs < n)


@triton.jit
def attributes(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    tl.static_assert(x_ptr.dtype.element_ty == tl.bfloat16)
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    x = tl.load(x_ptr + r[:, None] * C + c[None, :])
    tl.static_assert(x.dtype == x_ptr.dtype.element_ty)
    tl.static_assert(len(x.shape) == 2 and x.shape[0] == R)
    xt = x.T
    tl.static_assert(xt.shape[0] == C)
    y = xt.to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + c[:, None] * R + r[None, :], y)
