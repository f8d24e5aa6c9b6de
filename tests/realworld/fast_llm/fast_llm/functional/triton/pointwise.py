"""
A triton implementation of some basic pointwise kernels.
These triton kernels tend to be much faster than their pytorch equivalent (observed up to ~2x on A100).
"""

import torch

from fast_llm.engine.config_utils.data_type import DataType
from fast_llm.functional.config import TritonConfig
from fast_llm.functional.triton import tl, tl_arange, tl_constexpr, tl_full, triton, triton_jit


@triton_jit()
def triton_copy_kernel(
    input_ptr,
    out_ptr,
    numel: tl_constexpr,
    block_size: tl_constexpr,
):
    # TODO: Int64 ptr only if needed?
    block_start = tl.program_id(axis=0).to(tl.int64) * block_size
    offsets = block_start + tl_arange(0, block_size)
    mask = offsets < numel
    input_ = tl.load(input_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, input_, mask=mask)


def triton_copy(
    input_: torch.Tensor,
    out: torch.Tensor,
    use_triton: bool | None = None,
) -> torch.Tensor:
    """
    A triton implementation of tensor copying (`torch.Tensor.copy_()`).
    """
    if not TritonConfig.enabled(input_.device, use_triton):
        return out.copy_(input_)
    # TODO: Improve assumptions.
    assert input_.is_contiguous()
    assert out.is_contiguous()
    numel = input_.numel()
    grid = lambda meta: (triton.cdiv(numel, meta["block_size"]),)
    triton_copy_kernel[grid](input_, out, numel, block_size=TritonConfig.POINTWISE_BLOCK_SIZE)
    return out


@triton_jit()
def triton_fill_kernel(
    input_ptr,
    value: tl_constexpr,
    numel: tl_constexpr,
    dtype: tl_constexpr,
    block_size: tl_constexpr,
):
    # TODO: Int64 ptr only if needed?
    block_start = tl.program_id(axis=0).to(tl.int64) * block_size
    offsets = block_start + tl_arange(0, block_size)
    mask = offsets < numel
    tl.store(input_ptr + offsets, tl_full((block_size,), value, dtype), mask=mask)


def triton_fill(
    input_: torch.Tensor,
    value: float | int,
    use_triton: bool | None = None,
) -> torch.Tensor:
    """
    A faster triton implementation of tensor copying (`torch.Tensor.fill_()`).
    """
    if not TritonConfig.enabled(input_.device, use_triton):
        return input_.fill_(value)
    # TODO: Improve assumptions.
    assert input_.is_contiguous()
    numel = input_.numel()
    grid = lambda meta: (triton.cdiv(numel, meta["block_size"]),)
    triton_fill_kernel[grid](
        input_,
        value,  # noqa
        numel,  # noqa
        DataType.from_torch(input_.dtype).triton,
        block_size=TritonConfig.POINTWISE_BLOCK_SIZE,  # noqa
    )
    return input_


@triton_jit()
def triton_add_kernel(
    input_ptr,
    other_ptr,
    out_ptr,
    numel: tl_constexpr,
    block_size: tl_constexpr,
):
    # TODO: Int64 ptr only if needed?
    block_start = tl.program_id(axis=0).to(tl.int64) * block_size
    offsets = block_start + tl_arange(0, block_size)
    mask = offsets < numel
    input_ = tl.load(input_ptr + offsets, mask=mask)
    other = tl.load(other_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, input_ + other, mask=mask)


def triton_add(
    input_: torch.Tensor,
    other: torch.Tensor,
    out: torch.Tensor | None = None,
    use_triton: bool | None = None,
) -> torch.Tensor:
    """
    A faster triton implementation of tensor addition (`torch.Tensor.add()`).
    """
    if not TritonConfig.enabled(input_.device, use_triton):
        return torch.add(input_, other, out=out)
    # TODO: Improve assumptions.
    assert input_.is_contiguous()
    assert other.is_contiguous()
    numel = input_.numel()
    if out is None:
        out = torch.empty_like(input_)
    grid = lambda meta: (triton.cdiv(numel, meta["block_size"]),)
    triton_add_kernel[grid](input_, other, out, numel, block_size=TritonConfig.POINTWISE_BLOCK_SIZE)
    return out
