import triton
import triton.language as tl


# Two classes with a static method of one name (KERNELS Scale.forward
# Shift.forward), taking scale.py's parameters.
class Scale:
    @staticmethod
    @triton.jit
    def forward(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


class Shift:
    @staticmethod
    @triton.jit
    def forward(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + alpha, mask=mask)
