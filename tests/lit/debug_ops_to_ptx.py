# tl.device_print prints in every build (as upstream), through the driver's
# vprintf, one line per element with the program id and the element's index;
# tl.device_assert and `assert` on run-time values call __assertfail only in
# debug builds (kilnc --debug, upstream's debug=True).
# RUN: %kilnc compile %s -n printing -s "x_ptr=*i32, y_ptr=*fp16, BLOCK=32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=IR
# RUN: %kilnc compile %s -n printing -s "x_ptr=*i32, y_ptr=*fp16, BLOCK=32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# RUN: %kilnc compile %s -n checked -s "x_ptr=*fp32, n=i32, BLOCK=64" --arch sm_90a --debug --emit kiln -o - | FileCheck %s --check-prefix=DEBUG
# RUN: %kilnc compile %s -n checked -s "x_ptr=*fp32, n=i32, BLOCK=64" --arch sm_90a --debug --emit ptx -o - | FileCheck %s --check-prefix=DEBUG-PTX
# RUN: %kilnc compile %s -n checked -s "x_ptr=*fp32, n=i32, BLOCK=64" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=RELEASE
# RUN: not %kilnc compile %s -n bad_print -s "x_ptr=*i32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=BAD
import triton
import triton.language as tl


# IR: kiln.print " x: " {hex = false, isSigned = array<i1: true>} %{{.*}} : tensor<32xi32>
# IR: kiln.print " y" {hex = true, isSigned = array<i1: false>} %{{.*}} : tensor<32xf16>
# IR: kiln.print " two" {hex = false, isSigned = array<i1: true, true>}
# The format strings, as the bytes of "pid (%u, %u, %u) idx (%u) x: %d\n"
# and "... y 0x%x\n".
# PTX-DAG: {112, 105, 100, 32, 40, 37, 117, 44, 32, 37, 117, 44, 32, 37, 117, 41, 32, 105, 100, 120, 32, 40, 37, 117, 41, 32, 120, 58, 32, 37, 100, 10
# PTX-DAG: {112, 105, 100, 32, 40, 37, 117, 44, 32, 37, 117, 44, 32, 37, 117, 41, 32, 105, 100, 120, 32, 40, 37, 117, 41, 32, 121, 32, 48, 120, 37, 120, 10
# PTX: call.uni (retval0), vprintf
@triton.jit
def printing(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.device_print("x: ", tl.load(x_ptr + offs))
    tl.device_print("y", tl.load(y_ptr + offs), hex=True)
    tl.device_print("two", tl.program_id(0), offs)


# DEBUG: kiln.assert %{{.*}}, "NaN in input" {file = "{{.*}}debug_ops_to_ptx.py", function = "checked", line = 40 : i32} : tensor<64xi1>
# DEBUG: kiln.assert %{{.*}}, "negative offset"
# DEBUG: kiln.assert %{{.*}}, "n is positive" {{.*}} : i1
# DEBUG-PTX: call.uni __assertfail
# RELEASE-NOT: kiln.assert
@triton.jit
def checked(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.device_assert(x == x, "NaN in input")
    tl.device_assert(offs >= 0, "negative offset", mask=offs < n)
    assert n > 0, "n is positive"
    tl.store(x_ptr + offs, x + 1, mask=offs < n)


# BAD: debug_ops_to_ptx.py:[[@LINE+3]]:5: error: tl.device_print needs a prefix string first, as in tl.device_print("x: ", x)
@triton.jit
def bad_print(x_ptr):
    tl.device_print(tl.load(x_ptr))
