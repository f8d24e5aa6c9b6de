# @triton.heuristics over constexprs is evaluated when compiling, so the
# signature may leave its parameters out; one over a run-time parameter is
# an error that says which and what to do.
# RUN: %kilnc compile %s -n scaled -s "x_ptr=*fp32, N=100" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=P2
# RUN: %kilnc compile %s -n scaled -s "x_ptr=*fp32, N=64" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=EXACT
# RUN: %kilnc compile %s -n scaled -s "x_ptr=*fp32, N=100, BLOCK=256, EVEN=False" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=GIVEN
# RUN: not %kilnc compile %s -n runtime_input -s "x_ptr=*fp32, n=i32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=RUNTIME
# RUN: not %kilnc compile %s -n not_constant -s "x_ptr=*fp32, N=4" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=CONST
import triton
import triton.language as tl


# P2: kiln.make_range {end = 128 : i32, start = 0 : i32}
# P2: arith.cmpi slt
# EXACT: kiln.make_range {end = 64 : i32, start = 0 : i32}
# EXACT-NOT: arith.cmpi
# GIVEN: kiln.make_range {end = 256 : i32, start = 0 : i32}
@triton.heuristics(values={"BLOCK": lambda args: triton.next_power_of_2(args["N"])})
@triton.heuristics({"EVEN": lambda args: args["N"] == args["BLOCK"]})
@triton.jit
def scaled(x_ptr, N: tl.constexpr, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if EVEN:
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)
    else:
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < N) * 2, mask=offs < N)


# RUNTIME: heuristics.py:[[@LINE+2]]:47: error: the heuristic for 'EVEN' reads 'n', a run-time parameter whose value is not known when compiling: give EVEN in the signature
# RUNTIME-NEXT: @triton.heuristics({"EVEN": lambda args: args["n"] % 16 == 0})
@triton.heuristics({"EVEN": lambda args: args["n"] % 16 == 0})
@triton.jit
def runtime_input(x_ptr, n, EVEN: tl.constexpr):
    pass


# CONST: heuristics.py:[[@LINE+1]]:43: error: the heuristic for 'BLOCK' gives a tuple of 2, not a compile-time constant
@triton.heuristics({"BLOCK": lambda args: (args["N"], 2)})
@triton.jit
def not_constant(x_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    pass
