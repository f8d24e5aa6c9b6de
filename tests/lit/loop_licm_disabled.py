# `disable_licm`: tl.range's option on a for loop and tl.condition's on a
# while loop are kept on the loop (kiln.disable_licm) and become the loop
# metadata LLVM's LICM honors (llvm.licm.disable on the back edge), as
# upstream sets it; loops without it get no annotation. The loops with the
# option are the corpus's (language/functional_forms.py).
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %kilnc compile %S/../kernels/language/functional_forms.py -n summed_rows_while -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=WHILE
# WHILE: scf.while
# WHILE: } attributes {kiln.disable_licm = 1 : i32}
#
# RUN: %kilnc compile %S/../kernels/language/functional_forms.py -n summed_rows_while -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128" --arch sm_90a --emit ptx -o %t/w.ptx --dump-ir=%t/w
# RUN: FileCheck %s --check-prefix=LLVM < %t/w/03-llvm.mlir
# RUN: %kilnc compile %S/../kernels/language/functional_forms.py -n summed_rows -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128" --arch sm_90a --emit ptx -o %t/r.ptx --dump-ir=%t/r
# RUN: FileCheck %s --check-prefix=LLVM < %t/r/03-llvm.mlir
# LLVM: #[[LICM:.*]] = #llvm.loop_licm<disable = true>
# LLVM: #[[ANN:.*]] = #llvm.loop_annotation<licm = #[[LICM]]>
# LLVM: llvm.br ^bb{{[0-9]+}}({{.*}}) {llvm.loop_annotation = #[[ANN]]}
#
# RUN: %kilnc compile %s -n while_condition_kept -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128" --arch sm_90a --emit ptx -o %t/k.ptx --dump-ir=%t/k
# RUN: FileCheck %s --check-prefix=KEPT < %t/k/03-llvm.mlir
# KEPT-NOT: loop_licm
#
# RUN: not %kilnc compile %s -n bad_keyword -s "n=i32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=KEYWORD
# KEYWORD: loop_licm_disabled.py:[[@LINE+23]]:{{[0-9]+}}: error: tl.condition has no argument 'licm'
# RUN: not %kilnc compile %s -n runtime_option -s "n=i32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=OPTION
# OPTION: error: 'disable_licm' must be a compile-time boolean, got
# RUN: not %kilnc compile %s -n no_condition -s "n=i32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=EMPTY
# EMPTY: error: tl.condition takes a condition and, optionally, disable_licm
import triton
import triton.language as tl


@triton.jit
def while_condition_kept(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    i = 0
    while tl.condition(i < n):
        acc += tl.load(x_ptr + i * BLOCK + offs)
        i += 1
    tl.store(out_ptr + offs, acc)


@triton.jit
def bad_keyword(n):
    i = 0
    while tl.condition(i < n, licm=False):
        i += 1


@triton.jit
def runtime_option(n):
    i = 0
    while tl.condition(i < n, disable_licm=n > 2):
        i += 1


@triton.jit
def no_condition(n):
    i = 0
    while tl.condition():
        i += 1
