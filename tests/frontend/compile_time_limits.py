# Limits that keep bad input an error instead of a crash or a compile that
# never ends (found by tests/fuzz/frontend_fuzzer): long left-associative
# chains, deep helper nesting, runaway tl.static_range unrolls, and
# compile-time integer overflow (compile-time integers are 128-bit, Python's
# unbounded: every value Triton types, int64 and uint64, and the
# intermediate values that reach them fold; a value outside int64 and uint64
# is an error where it becomes a value, as upstream's).
#
# Chains nest one tree level per link, so they share the nesting limit.
# RUN: python3 -c "print('import triton\n@triton.jit\ndef k():\n    x = 1' + ' + 1' * 5000)" > %t.add.py
# RUN: not %kilnc compile %t.add.py -s "" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=DEEP
# RUN: python3 -c "print('import triton\n@triton.jit\ndef k():\n    x = y' + '[0]' * 5000)" > %t.sub.py
# RUN: not %kilnc compile %t.sub.py -s "" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=DEEP
# RUN: python3 -c "print('import triton\n@triton.jit\ndef k():\n    x = tl' + '.a' * 5000)" > %t.attr.py
# RUN: not %kilnc compile %t.attr.py -s "" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=DEEP
# DEEP: .py:4:{{[0-9]+}}: error: too deeply nested (more than 200 levels)
#
# In host code the same chain is skipped like any host code outside the
# subset; the kernel beside it compiles.
# RUN: python3 -c "print('import triton\nx = 1' + ' + 1' * 5000 + '\n@triton.jit\ndef k(p):\n    pass')" > %t.host.py
# RUN: %kilnc compile %t.host.py -s "*fp32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=HOSTDEEP
# HOSTDEEP: func.func @k
#
# Helpers nested 100 deep stop at 64, with a note per inlined call.
# RUN: python3 -c "print('import triton\n' + ''.join('@triton.jit\ndef h%%d(x):\n    return h%%d(x) + 1\n' %% (i, i + 1) for i in range(100)) + '@triton.jit\ndef h100(x):\n    return x\n@triton.jit\ndef k(n):\n    y = h0(n)')" > %t.helpers.py
# RUN: not %kilnc compile %t.helpers.py -n k -s "i32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=HELPERS
# HELPERS: error: helper calls are nested more than 64 deep at this call to 'h64'
# HELPERS: note: in the inlined call to 'h63' here
#
# 4^10 unrolled iterations exceed the statement budget (2^20).
# RUN: python3 -c "print('import triton\nimport triton.language as tl\n@triton.jit\ndef k(n):\n' + ''.join('    ' + ' ' * i + 'for i%%d in tl.static_range(4):\n' %% i for i in range(10)) + '    ' + ' ' * 10 + 'n = n + 1')" > %t.unroll.py
# RUN: not %kilnc compile %t.unroll.py -n k -s "i32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=UNROLL
# UNROLL: error: the kernel is too large: more than 1048576 statements after unrolling tl.static_range loops and inlining helpers
#
# RUN: not %kilnc compile %s -n overflow_add -s "i32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=ADD
# RUN: not %kilnc compile %s -n overflow_pow -s "i32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=POW
# RUN: not %kilnc compile %s -n overflow_shift -s "i32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=SHIFT
# RUN: not %kilnc compile %s -n overflow_div -s "i32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=DIV
# RUN: not %kilnc compile %s -n overflow_neg -s "i32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=NEG
# RUN: not %kilnc compile %s -n negative_shift -s "i32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=NEGSHIFT
# RUN: %kilnc compile %s -n in_range -s "*i64" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=OK
# RUN: %kilnc compile %s -n unsigned_hash -s "x_ptr=*u64, out_ptr=*u64" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=HASH
# RUN: not %kilnc compile %s -n beyond_uint64 -s "x_ptr=*u64" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=BEYOND
# RUN: not %kilnc compile %s -n signed_hash -s "x_ptr=*i64" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=SIGNED
import triton
import triton.language as tl

MIN64 = -9223372036854775807 - 1
MIN128: tl.constexpr = tl.constexpr(-170141183460469231731687303715884105727 - 1)


@triton.jit
def overflow_add(n):
    # ADD: compile_time_limits.py:[[@LINE+2]]:49: error: integer overflow in a compile-time expression (compile-time integers are 128-bit)
    # ADD-NEXT: x = 170141183460469231731687303715884105727 + 1
    x = 170141183460469231731687303715884105727 + 1


@triton.jit
def overflow_pow(n):
    # POW: compile_time_limits.py:[[@LINE+1]]:11: error: integer overflow
    x = 3 ** 1000000000000


@triton.jit
def overflow_shift(n):
    # SHIFT: compile_time_limits.py:[[@LINE+1]]:11: error: integer overflow
    x = 1 << 127


@triton.jit
def overflow_div(n):
    # DIV: compile_time_limits.py:[[@LINE+1]]:16: error: integer overflow
    x = MIN128 // -1


@triton.jit
def overflow_neg(n):
    # NEG: compile_time_limits.py:[[@LINE+1]]:9: error: integer overflow
    x = -MIN128


@triton.jit
def negative_shift(n):
    # NEGSHIFT: compile_time_limits.py:[[@LINE+1]]:11: error: negative shift count in a compile-time expression
    x = 1 << -1


@triton.jit
def in_range(out_ptr):
    # Values up to the 64-bit limits still fold.
    a: tl.constexpr = 2**62 + (2**62 - 1)
    b: tl.constexpr = 1 << 62
    c: tl.constexpr = MIN64 // 1
    d: tl.constexpr = -(MIN64 + 2)
    e: tl.constexpr = 3**39
    # OK-DAG: arith.constant 9223372036854775807 : i64
    tl.store(out_ptr, a)
    # OK-DAG: arith.constant 4611686018427387904 : i64
    tl.store(out_ptr, b)
    # OK-DAG: arith.constant -9223372036854775808 : i64
    tl.store(out_ptr, c)
    # OK-DAG: arith.constant 9223372036854775806 : i64
    tl.store(out_ptr, d)
    # OK-DAG: arith.constant 4052555153018976267 : i64
    tl.store(out_ptr, e)
    # Past int64: 2**63 - 1 through 2**63, uint64's largest through 2**64.
    f: tl.constexpr = 2**63 - 1
    g: tl.constexpr = (1 << 64) - 1
    tl.store(out_ptr, f)  # a's constant: 9223372036854775807
    # OK-DAG: arith.constant 4243 : i64
    tl.store(out_ptr, 4200 + (g == 18446744073709551615) * 42 + (g > f))


# A 64-bit multiplicative hash: its constant is a uint64 (as upstream types
# an int in [2**63, 2**64)), its mask all 64 bits.
# HASH-LABEL: func.func @unsigned_hash
# HASH: arith.constant dense<-7046029254386353131> : tensor<16xi64>
# HASH: arith.muli
@triton.jit
def unsigned_hash(x_ptr, out_ptr):
    offs = tl.arange(0, 16)
    h = tl.load(x_ptr + offs) * 0x9E3779B97F4A7C15
    h = (h ^ (h >> 31)) & 0xFFFFFFFFFFFFFFFF
    tl.store(out_ptr + offs, h)


# BEYOND: compile_time_limits.py:[[@LINE+4]]:50: error: the integer 18446744073709551616 does not fit int64 or uint64 (as in Triton: [-2**63, 2**64))
@triton.jit
def beyond_uint64(x_ptr):
    offs = tl.arange(0, 16)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + (1 << 64))


# SIGNED: compile_time_limits.py:[[@LINE+4]]:{{[0-9]+}}: error: the number 11400714819323198485 is out of range for i64 (as in Triton); cast the other operand to uint64 with .to() first
@triton.jit
def signed_hash(x_ptr):
    offs = tl.arange(0, 16)
    h = tl.load(x_ptr + offs) * 0x9E3779B97F4A7C15
    tl.store(x_ptr + offs, h)
