# Kernels as the static methods of classes (kakaobrain/trident's form,
# launched upstream as ReLU.forward[grid](...)): two classes with a `forward`
# of one name, built into one triton_kernel target as ReLU.forward and
# LeakyReLU.forward, whose launchers are launch_ReLU_forward and
# launch_LeakyReLU_forward (class_tuple_launch_test.cc).
import triton
import triton.language as tl


class ReLU:
    @staticmethod
    @triton.jit
    def forward(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class LeakyReLU:
    SLOPE = tl.constexpr(0.125)

    @staticmethod
    @triton.jit
    def forward(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, tl.where(x > 0, x, x * LeakyReLU.SLOPE),
                 mask=mask)
