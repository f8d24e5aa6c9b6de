# `@tl.constexpr` on a def (FlagGems' sort helpers) makes a function upstream
# calls as plain Python when compiling, with constexpr arguments; the plain
# helpers it calls (`unwrap_if_constexpr`, not @triton.jit) run the same way.
# RUN: %kilnc compile %s -n fill_bits -s "x=*i32, N=8" --arch sm_90a --emit kiln -o - | FileCheck %s
# 1 << 7 through int8 (get_int_t(8, True)) and back: -128.
# CHECK: arith.constant dense<-128> : tensor<16xi32>
import triton
import triton.language as tl


def unwrap_if_constexpr(o):
    return o.value if isinstance(o, tl.constexpr) else o


@tl.constexpr
def one_zeros(num_bits: tl.constexpr) -> int:
    num_bits = unwrap_if_constexpr(num_bits)
    return 1 << (num_bits - 1)


@tl.constexpr
def get_int_t(num_bits: tl.constexpr, signed: tl.constexpr) -> tl.dtype:
    num_bits = unwrap_if_constexpr(num_bits)
    signed = unwrap_if_constexpr(signed)
    return tl.core.get_int_dtype(num_bits, signed)


@triton.jit
def fill_bits(x, N: tl.constexpr):
    o = tl.arange(0, 16)
    v = tl.full((16,), one_zeros(N), tl.int32)
    tl.store(x + o, v.to(get_int_t(N, True)).to(tl.int32))
