import triton
import triton.language as tl

import acts


@triton.jit
def module_helper(x):
    return x + 1


# Kernels as static methods (kakaobrain/trident's form), launched upstream as
# Ops.forward[grid](...): their bodies see the module's globals, and call the
# class's other methods through its name.
class Ops:
    @staticmethod
    @triton.jit
    def forward(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = Ops.twice(tl.load(x_ptr + offs))
        tl.store(y_ptr + offs, acts.Act.leaky(module_helper(x)))

    @staticmethod
    @triton.jit
    def twice(x):
        return x * 2

    class Nested:
        @staticmethod
        @triton.jit
        def zero(y_ptr, BLOCK: tl.constexpr):
            tl.store(y_ptr + tl.arange(0, BLOCK), tl.zeros((BLOCK,), tl.float32))
