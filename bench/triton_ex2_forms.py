"""Which ex2 instruction upstream Triton emits for fp32 `tl.math.exp2` and
`tl.exp` (compiler/conversion/MathToNVVM.cpp emits the same), and whether
exp2 flushes a subnormal result. Run on the GPU machine:

    python3 bench/triton_ex2_forms.py
"""
import torch
import triton
import triton.language as tl


@triton.jit
def exp2_kernel(x, y, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(y + o, tl.math.exp2(tl.load(x + o)))


@triton.jit
def exp_kernel(x, y, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(y + o, tl.exp(tl.load(x + o)))


def main():
    x = torch.randn(128, device="cuda")
    y = torch.empty_like(x)
    for kernel in (exp2_kernel, exp_kernel):
        ptx = kernel[(1,)](x, y, N=128).asm["ptx"]
        print(f"{kernel.fn.__name__}: ex2.approx.ftz.f32 x{ptx.count('ex2.approx.ftz.f32')}, "
              f"ex2.approx.f32 x{ptx.count('ex2.approx.f32')}")
    x.fill_(-140.0)  # 2^-140 is subnormal in fp32
    exp2_kernel[(1,)](x, y, N=128)
    print(f"exp2(-140) = {y[0].item()!r} (0.0: flushed to zero)")


if __name__ == "__main__":
    main()
