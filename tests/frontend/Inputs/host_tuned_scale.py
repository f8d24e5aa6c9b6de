# A kernel file laid out like upstream's tutorials: the autotune configs come
# from host functions, and host code (torch, benchmarks, printing) sits at
# module level around the kernels. Kiln compiles the kernels and evaluates
# only what the decorator needs.
import torch

import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()
WIDE = 2


def is_cuda():
    return triton.runtime.driver.active.get_current_target().backend == "cuda"


def is_hopper():
    return is_cuda() and torch.cuda.get_device_capability()[0] == 9


def cuda_configs():
    configs = []
    for block in [256, 1024]:
        for warps in range(2, 5, 2):
            configs.append(triton.Config({"BLOCK": block * WIDE}, num_warps=warps))
    if is_hopper():
        configs += [triton.Config({"BLOCK": 4096}, num_stages=2, num_warps=8)]
    return configs


def hip_configs():
    sizes = [{"BLOCK": b} for b in [64, 128] if b > 64]
    return [triton.Config(s | {"waves_per_eu": 2}, num_warps=4) for s in sizes]


def get_configs(*extra, **options):
    return cuda_configs() if is_cuda() else hip_configs()


def all_configs():
    return cuda_configs() if is_cuda() else hip_configs()


@triton.autotune(configs=all_configs(), key=["n"])
@triton.jit
def tuned_scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr, ACTIVATION: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if ACTIVATION == "leaky_relu":
        x = leaky_relu(x)
    tl.store(out_ptr + offs, x * 2.0, mask=offs < n)


@triton.autotune(configs=get_configs(), key=["n"])
@triton.jit
def star_args_configs(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 0.0)


@triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=len(DEVICE.type))], key=[])
@triton.jit
def device_configs(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 0.0)


@triton.autotune(configs=[triton.Config({"BLOCK": triton.runtime.driver.active.get_current_target().arch})], key=[])
@triton.jit
def arch_configs(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 0.0)


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.jit
def uses_host_global(x_ptr):
    tl.store(x_ptr, FROM_STAR_ARGS)


@triton.jit
def comprehension(x_ptr):
    offsets = [i * 2 for i in range(4)]
    tl.store(x_ptr + offsets[0], 0.0)


def scale(x, activation=""):
    out = torch.empty_like(x)
    n = x.numel()
    grid = lambda META: (triton.cdiv(n, META["BLOCK"]), )
    tuned_scale[grid](x, out, n, ACTIVATION=activation)
    return out


FROM_STAR_ARGS = get_configs(*[1, 2])
torch.manual_seed(0)
x = torch.rand(4096, device=DEVICE)
print(f"max error={(scale(x) - 2 * x).abs().max()} ✅")
squares = [i * i for i in range(10) if i % 2]
total = sum(v for v in squares)

with torch.no_grad():
    scale(x, activation="leaky_relu")


class Bench:
    pass


if __name__ == "__main__":
    for n in [2**i for i in range(12, 20)]:
        ms = triton.testing.do_bench(lambda: scale(torch.rand(n, device=DEVICE)))
        print(f"{n}: {ms:.3f} ms")
