# A kernel whose plain PTX spills below 255 registers (256 fp32 values per
# thread live through the loop: ptxas, without a hint, takes 32 registers)
# goes straight to the `.minnctapersm 1` retry (compiler/driver/Pipeline.cpp):
# the copy with the tile's offsets and mask recomputed after the loop
# (RematerializeAfterLoops.cpp), which saves a few registers for occupancy,
# is not assembled, since every ptxas run of such a kernel takes seconds.
# The PTX is the plain one: %ctaid.x is read once, before the loop.
# RUN: %kilnc compile %s -n rows_after_loop -s "x_ptr=*fp32:16, y_ptr=*fp32:16, n=i32, steps=i32, BLOCK=32768" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# RUN: %kilnc compile %s -n rows_after_loop -s "x_ptr=*fp32:16, y_ptr=*fp32:16, n=i32, steps=i32, BLOCK=32768" --arch sm_90a -o %t.cubin --resource-usage 2>/dev/null | FileCheck %s --check-prefix=CUBIN
import triton
import triton.language as tl


# PTX: %ctaid.x
# PTX-NOT: %ctaid.x
# CUBIN: num_warps=4, num_stages=3]: 255 registers
@triton.jit
def rows_after_loop(x_ptr, y_ptr, n, steps, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    acc = x
    for i in range(steps):
        acc = acc * 0.5 + x
    tl.store(y_ptr + offs, acc, mask=mask)
