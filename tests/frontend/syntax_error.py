# A syntax error stops compilation with file:line:col, the line and a caret.
# RUN: not %kilnc compile %s -s "*fp32, 1024" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s
# CHECK: syntax_error.py:[[@LINE+6]]:30: error: unmatched ')'
# CHECK-NEXT: {{^}}    x = tl.load(x_ptr + offs))
# CHECK-NEXT: {{^}}                             ^{{$}}
@triton.jit
def kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs))

# Indentation errors point at the line too.
# RUN: not %kilnc compile %S/Inputs/bad_indent.py -s "*fp32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=INDENT
# INDENT: bad_indent.py:6:5: error: unindent does not match any outer indentation level
# INDENT-NEXT: {{^}}    return
