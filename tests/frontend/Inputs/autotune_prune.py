import triton
import triton.language as tl

CONFIGS = [
    triton.Config({"BLOCK": 1024}, num_warps=4),
    triton.Config({"BLOCK": 2048}, num_warps=8),
    triton.Config({"BLOCK": 4096}, num_warps=8, num_stages=2),
]


def keep_large(configs, named_args, **kwargs):
    return [c for c in configs if c.kwargs["BLOCK"] >= 2048 and c.num_stages == 3]


def keep_fitting(configs, named_args, **kwargs):
    return [c for c in configs if c.kwargs["BLOCK"] <= named_args["n"]]


def keep_none(configs, named_args, **kwargs):
    return []


@triton.autotune(configs=CONFIGS, key=["n"], prune_configs_by={"early_config_prune": keep_large})
@triton.jit
def pruned(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)


@triton.autotune(configs=CONFIGS, key=["n"], prune_configs_by={"early_config_prune": keep_fitting, "top_k": 2})
@triton.jit
def pruned_at_run_time(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)


@triton.autotune(configs=CONFIGS, key=["n"], prune_configs_by={"early_config_prune": keep_none})
@triton.jit
def pruned_to_nothing(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)
