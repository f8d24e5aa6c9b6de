# Deeply nested expressions once overflowed the parser's stack (found by
# tests/fuzz/frontend_fuzzer: 1.4 KB of '[' under ASan). Python itself caps
# the nesting ("too many nested parentheses"); kilnc reports a clean error.
# RUN: python3 -c "print('x = ' + '(' * 100000 + '1' + ')' * 100000)" > %t.parens.py
# RUN: not %kilnc compile %t.parens.py -s "" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s
# RUN: python3 -c "print('x = ' + '[' * 100000 + ']' * 100000)" > %t.lists.py
# RUN: not %kilnc compile %t.lists.py -s "" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s
# RUN: python3 -c "print('x = ' + '-' * 100000 + '1')" > %t.unary.py
# RUN: not %kilnc compile %t.unary.py -s "" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s
# CHECK: .py:1:{{[0-9]+}}: error:
