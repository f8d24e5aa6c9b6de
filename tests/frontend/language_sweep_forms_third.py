# Forms a third sweep against upstream Triton 3.6 found rejected by Kiln
# while upstream compiles them (each checked with upstream's compiler): a
# constexpr string's Python operations (upstream's constexpr forwards them
# to its str: `+`, `*` by an int, ordering, len, and its methods), a Python
# int beside a float tensor in tl.div_rn (promoted, as upstream's binary
# functions promote it), tl.reshape of a one-element block to () (its
# element), tl.sort of booleans (as bytes) and a load whose mask is larger
# than its block of pointers (both broadcast, as upstream's load does).
# RUN: %kilnc compile %s -n strings -s "out_ptr=*i32, NAME=' Fused_GeLU '" --arch sm_90a --emit kiln -o - | FileCheck %s
# RUN: not %kilnc compile %s -n bad_method -s "out_ptr=*i32, NAME='relu'" --arch sm_90a --emit kiln -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
# RUN: not %kilnc compile %s -n bad_find -s "out_ptr=*i32, NAME='relu'" --arch sm_90a --emit kiln -o /dev/null 2>&1 | FileCheck %s --check-prefix=FIND
# RUN: %kilnc compile %s -n values -s "x_ptr=*fp32, out_ptr=*fp32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=VALUES
# RUN: not %kilnc compile %s -n too_big -s "x_ptr=*fp32, out_ptr=*fp32" --arch sm_90a --emit kiln -o /dev/null 2>&1 | FileCheck %s --check-prefix=RESHAPE
import triton
import triton.language as tl


# Every test below holds (as in Python), folded at compile time into the one
# stored constant, 1654321:
# 'fused_gelu' -> 10 letters, starts with 'fused', one 'u' after 'fused',
# ends with 'gelu', ordered before 'relu', twice is 20 letters, split on '_'
# into 2 parts.
# CHECK-LABEL: func.func @strings
# CHECK: arith.constant 1654321 : i32
@triton.jit
def strings(out_ptr, NAME: tl.constexpr):
    name: tl.constexpr = NAME.strip().lower()
    total = 0
    if len(name) == 10:
        total += 1
    if name.startswith("fused") and name.find("gelu") == 6:
        total += 20
    if name.replace("fused_", "").upper() == "GELU":
        total += 300
    if name.endswith("gelu") and name < "relu" and name >= "fused":
        total += 4000
    if len(name * 2) == 20 and (name + "!").count("!") == 1:
        total += 50000
    if len(name.split("_")) == 2:
        total += 600000
    if NAME.lstrip().rstrip() == " Fused_GeLU ".strip():
        total += 1000000
    tl.store(out_ptr, total)


# BAD: error: the string "relu" has no attribute 'capitalize'
@triton.jit
def bad_method(out_ptr, NAME: tl.constexpr):
    tl.store(out_ptr, len(NAME.capitalize()))


# FIND: error: str.find() with 0 argument(s) is not supported by Kiln
@triton.jit
def bad_find(out_ptr, NAME: tl.constexpr):
    tl.store(out_ptr, NAME.find())


# VALUES-LABEL: func.func @values
# tl.div_rn(x, 3): 3 as fp32.
# VALUES: %[[THREE:.*]] = arith.constant dense<3.000000e+00> : tensor<16xf32>
# VALUES: kiln.precise_divf %{{.*}}, %[[THREE]]
# tl.sort of bools: bytes through the network, back to i1.
# VALUES: arith.extui %{{.*}} : tensor<16xi1> to tensor<16xi8>
# VALUES: arith.cmpi ne, %{{.*}} : tensor<16xi8>
# The [16, 1] pointers broadcast to the [16, 4] mask.
# VALUES: kiln.broadcast %{{.*}} : tensor<16x1x!kiln.ptr<f32>> -> tensor<16x4x!kiln.ptr<f32>>
# VALUES: kiln.load %{{.*}}, mask %{{.*}}, other %{{.*}} : (tensor<16x4x!kiln.ptr<f32>>
@triton.jit
def values(x_ptr, out_ptr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.div_rn(x, 3))
    tl.store(out_ptr + 16 + offs, tl.sort(x > 0).to(tl.float32))
    tl.store(out_ptr + 32, tl.reshape(tl.load(x_ptr + tl.arange(0, 1)), ()))
    cols = tl.arange(0, 4)
    m = (offs[:, None] < 12) & (cols[None, :] < 3)
    tl.store(out_ptr + 64 + offs[:, None] * 4 + cols[None, :],
             tl.load(x_ptr + offs[:, None], mask=m, other=-1.0))


# RESHAPE: error: tl.reshape to () needs one element, got [2] of 2
@triton.jit
def too_big(x_ptr, out_ptr):
    tl.store(out_ptr, tl.reshape(tl.load(x_ptr + tl.arange(0, 2)), ()))
