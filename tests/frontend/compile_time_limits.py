# Limits that keep bad input an error instead of a crash or a compile that
# never ends (found by tests/fuzz/frontend_fuzzer): long left-associative
# chains, deep helper nesting, runaway tl.static_range unrolls, and
# compile-time integer overflow.
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
import triton
import triton.language as tl

MIN64 = -9223372036854775807 - 1


@triton.jit
def overflow_add(n):
    # ADD: compile_time_limits.py:[[@LINE+2]]:29: error: integer overflow in a compile-time expression (compile-time integers are 64-bit)
    # ADD-NEXT: x = 9223372036854775807 + 1
    x = 9223372036854775807 + 1


@triton.jit
def overflow_pow(n):
    # POW: compile_time_limits.py:[[@LINE+1]]:11: error: integer overflow
    x = 3 ** 1000000000000


@triton.jit
def overflow_shift(n):
    # SHIFT: compile_time_limits.py:[[@LINE+1]]:11: error: integer overflow
    x = 1 << 63


@triton.jit
def overflow_div(n):
    # DIV: compile_time_limits.py:[[@LINE+1]]:15: error: integer overflow
    x = MIN64 // -1


@triton.jit
def overflow_neg(n):
    # NEG: compile_time_limits.py:[[@LINE+1]]:9: error: integer overflow
    x = -MIN64


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
