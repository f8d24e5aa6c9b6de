# Idioms of the seventh real-world sample (lmdeploy, TransformerEngine,
# FlashInfer) that the front end took as errors, and upstream Triton 3.6
# compiles: a list repeated by a compile-time int (`[2] * n`, as bitonic
# sorts reshape into a hypercube), a default of `core.CONSTEXPR_0`, a global
# rebound in terms of its earlier binding (`f = wrap(f)`, by assignment and
# by import), `triton.runtime.jit.constexpr_function`, and a pointer stored
# into an int64 array (its address, as upstream's cast makes it).
# RUN: %kilnc compile %s -n idioms -s "x_ptr=*fp32, table_ptr=*i64, N=4" --arch sm_90a --emit kiln -o - | FileCheck %s
# RUN: not %kilnc compile %s -n repeated_wrong_way -s "x_ptr=*fp32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=RMUL
# RUN: not %kilnc compile %s -n pointer_into_int32 -s "x_ptr=*fp32, table_ptr=*i32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=PTR32
import triton
import triton.language as tl
from triton.language import core
from triton.language.core import get_int_dtype as int_dtype_by_import

int_dtype = core.get_int_dtype
int_dtype = triton.constexpr_function(int_dtype)
int_dtype_by_import = triton.runtime.jit.constexpr_function(int_dtype_by_import)
WIDTH = tl.constexpr(16)
WIDTH = tl.constexpr(WIDTH * 2)


# CHECK-LABEL: func.func @idioms
# The hypercube: 16 elements as [2, 2, 2, 2].
# CHECK: kiln.reshape %{{.*}} : tensor<16xf32> -> tensor<2x2x2x2xf32>
# descending defaults to 0: no negation.
# CHECK-NOT: arith.negf
# int_dtype(32, True) and the import's: i32 bitcasts.
# CHECK: arith.bitcast %{{.*}} : tensor<16xf32> to tensor<16xi32>
# The pointer's address stored as an i64.
# CHECK: kiln.ptr_to_int %{{.*}} : !kiln.ptr<f32> -> i64
# CHECK: kiln.store %arg1, %{{.*}} : !kiln.ptr<i64>, i64
@triton.jit
def idioms(x_ptr, table_ptr, N: tl.constexpr, descending: tl.constexpr = core.CONSTEXPR_0):
    offs = tl.arange(0, 2**N)
    x = tl.load(x_ptr + offs)
    h = tl.reshape(x, [2] * N)
    tl.static_assert(len(h.shape) == N)
    x = tl.reshape(h, [2**N])
    if descending:
        x = -x
    tl.static_assert(WIDTH == 32)
    bits = x.to(int_dtype(WIDTH, True), bitcast=True)
    more = x.to(int_dtype_by_import(32, signed=True), bitcast=True)
    tl.store(x_ptr + offs, (bits ^ more).to(tl.float32, bitcast=True))
    tl.store(table_ptr, x_ptr + 4)


# RMUL: seventh_sample_idioms.py:[[@LINE+4]]:45: error: operator '*' cannot combine the int 4 and a tuple of 1
@triton.jit
def repeated_wrong_way(x_ptr):
    offs = tl.arange(0, 16)
    h = tl.reshape(tl.load(x_ptr + offs), 4 * [2])
    tl.store(x_ptr + offs, tl.reshape(h, [16]))


# PTR32: seventh_sample_idioms.py:[[@LINE+3]]:31: error: argument 'value' of tl.store must be a number or a tensor of numbers (a pointer only through an int64 or uint64 pointer, as its address), got a run-time scalar of type *fp32
@triton.jit
def pointer_into_int32(x_ptr, table_ptr):
    tl.store(table_ptr, x_ptr + 4)
