# Checks and printing: `assert` and tl.device_assert (kept in debug builds),
# tl.static_assert and tl.static_print (at compile time), tl.device_print,
# and `pass`.
#
# kiln-variant: -n checked_copy -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256"
# kiln-variant: -n printing -s "x_ptr=*i32, n=i32, BLOCK=32"
# kiln-variant: -n static_checks -s "x_ptr=*fp16, out_ptr=*fp16, BLOCK=128, CHUNK=32"
# kiln-covers: checked_copy: assert; tl.device_assert; pass
# kiln-covers: printing: tl.device_print; tl.static_print; string argument
# kiln-covers: static_checks: tl.static_assert; tl.static_print; // and % on constexprs; ** on constexprs
import triton
import triton.language as tl


@triton.jit
def checked_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    assert pid >= 0, "program ids are never negative"
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.device_assert(x == x, "NaN in input")
    tl.device_assert(offs >= 0, "negative offset", mask=offs < n)
    if n < 0:
        pass
    tl.store(out_ptr + offs, x, mask=offs < n)


@triton.jit
def printing(x_ptr, n, BLOCK: tl.constexpr):
    tl.static_print("compiling printing with BLOCK =", BLOCK)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.device_print("x = ", x)
    tl.device_print("x hex ", x, hex=True)
    tl.device_print("pid", tl.program_id(0))


@triton.jit
def static_checks(x_ptr, out_ptr, BLOCK: tl.constexpr, CHUNK: tl.constexpr):
    tl.static_assert(BLOCK % CHUNK == 0)
    tl.static_assert(BLOCK // CHUNK == 4, "this kernel splits BLOCK into four chunks")
    tl.static_assert(2 ** 7 == BLOCK)
    tl.static_print(BLOCK, CHUNK)
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2)
