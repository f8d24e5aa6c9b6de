# float("...") on a string: found by tests/fuzz/frontend_fuzzer, whose seed
# corpus (tests/kernels) uses float("-inf"). Under AddressSanitizer the
# string was read after its temporary had gone (stack-use-after-scope in
# pyFloat); the value must be -inf whatever the case of the spelling.
# RUN: %kilnc compile %s -s "*fp32, 16" --arch sm_90a --emit kiln -o - | FileCheck %s
# CHECK: arith.constant dense<0xFF800000> : tensor<16xf32>
import triton
import triton.language as tl


@triton.jit
def fill_neg_inf(out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.full([BLOCK], float("-Infinity"), tl.float32))
