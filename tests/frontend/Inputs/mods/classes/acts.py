import triton
import triton.language as tl


# Helpers as a class's static methods, reached through the module.
class Act:
    SLOPE = tl.constexpr(0.5)

    @staticmethod
    @triton.jit
    def leaky(x):
        return tl.where(x > 0, x, x * Act.SLOPE)

    def host_method(self):  # host code beside them
        return {k: v for k, v in self.__dict__.items()}
