# A module-level `except E as e:` handler that keeps the exception (remember
# why an optional setup failed, report it later), taken where the try body
# runs what Kiln cannot, binds `e`, so the rest of the handler runs: host
# code evaluated when compiling (here a helper that a global calls) sees
# the names it sets. Before, `e` was unbound, the handler stopped at its
# first use and BLOCK_DEFAULT was never set. The exception is an object
# kernels cannot use.
# RUN: %kilnc compile %s -n copy -s "x_ptr=*fp32, y_ptr=*fp32" --arch sm_90a --emit kiln -o - | FileCheck %s
# RUN: not %kilnc compile %s -n uses_error -s "x_ptr=*fp32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=USE
import triton
import triton.language as tl

try:
    BLOCK_DEFAULT = int("not a number")  # what the machine would say
except ValueError as error:
    SETUP_ERROR = error
    BLOCK_DEFAULT = 128


def pick_block():
    return BLOCK_DEFAULT


def setup_error():
    return SETUP_ERROR


BLOCK = pick_block()
KEPT = setup_error()

# CHECK-LABEL: func.func @copy
# CHECK: kiln.make_range {end = 128 : i32, start = 0 : i32}


@triton.jit
def copy(x_ptr, y_ptr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


# USE: error: {{.*}}'ValueError'


@triton.jit
def uses_error(x_ptr):
    tl.store(x_ptr + tl.arange(0, KEPT), 0.0)
