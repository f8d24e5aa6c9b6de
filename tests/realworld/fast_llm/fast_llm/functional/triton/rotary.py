import torch

from fast_llm.functional.config import TritonConfig
from fast_llm.functional.triton import tl, tl_arange, tl_constexpr, triton, triton_jit
from fast_llm.functional.utils import wrap_forward_backward
from fast_llm.utils import div


@triton_jit()
def triton_rotary_kernel(
    input_ptr,
    output_ptr,
    frequencies_ptr,
    stride_0,
    stride_1,
    stride_2,
    rotary_dim: tl_constexpr,
    num_heads: tl_constexpr,
    rotary_block_size: tl_constexpr,
    head_block_size: tl_constexpr,
    seq_len: tl_constexpr,
    backward: tl_constexpr,
):
    # TODO: Int64 ptr if needed?
    pid_0 = tl.program_id(axis=0)  # Folded (batch * seq) index
    pid_1 = tl.program_id(axis=1)  # Head index
    position_id = pid_0 % seq_len

    offsets = tl_arange(0, rotary_block_size)
    head_offsets = pid_1 * head_block_size + tl_arange(0, head_block_size)[:, None]
    input_offsets = stride_0 * (pid_0 // seq_len) + stride_1 * position_id + stride_2 * head_offsets + offsets[None, :]
    input_re_ptr = input_ptr + input_offsets
    input_im_ptr = input_re_ptr + rotary_dim
    output_re_ptr = output_ptr + input_offsets
    output_im_ptr = output_re_ptr + rotary_dim

    if rotary_block_size % rotary_dim == 0 and num_heads % head_block_size == 0:
        input_re = tl.load(input_re_ptr).to(tl.float32)
        input_im = tl.load(input_im_ptr).to(tl.float32)
    else:
        mask = (offsets[None, :] < rotary_dim) & (head_offsets < num_heads)
        input_re = tl.load(input_re_ptr, mask=mask).to(tl.float32)
        input_im = tl.load(input_im_ptr, mask=mask).to(tl.float32)

    # Computing frequencies here is faster but hurts precision, so we load pre-computed ones instead.
    frequencies_offsets = 2 * rotary_dim * position_id + offsets
    frequencies_re_ptr = frequencies_ptr + frequencies_offsets
    frequencies_im_ptr = frequencies_re_ptr + rotary_dim
    frequencies_re = tl.load(frequencies_re_ptr)
    frequencies_im = tl.load(frequencies_im_ptr)

    if backward:
        out_re = input_re * frequencies_re + input_im * frequencies_im
        out_im = input_im * frequencies_re - input_re * frequencies_im
    else:
        out_re = input_re * frequencies_re - input_im * frequencies_im
        out_im = input_im * frequencies_re + input_re * frequencies_im

    if rotary_block_size % rotary_dim == 0 and num_heads % head_block_size == 0:
        tl.store(output_re_ptr, out_re)
        tl.store(output_im_ptr, out_im)
    else:
        tl.store(output_re_ptr, out_re, mask=mask)  # noqa
        tl.store(output_im_ptr, out_im, mask=mask)


def triton_rotary_(
    input_: torch.Tensor,
    frequencies: torch.Tensor,
    is_key_value: bool = False,
    backward: bool = False,
    inplace: bool = True,
) -> torch.Tensor:
    # TODO: Improve assumptions.
    # TODO: Make a transposed version to avoid contiguous call in key backward.
    # TODO: Improve block size heuristics.
    out = input_
    write = input_
    if input_.stride(-1) != 1:
        # TODO: Make a transposed version to avoid contiguous call in key backward.
        input_ = input_.contiguous()
        write = input_
    if not inplace:
        out = torch.empty_like(input_)
        write = out
        if is_key_value:
            # The kernel only writes the key chunk; copy the value chunk so `out` is fully defined.
            out.chunk(2, dim=-2)[1].copy_(input_.chunk(2, dim=-2)[1])
    if input_.ndim == 3:
        input_ = input_.unsqueeze(0)
        write = write.unsqueeze(0)
        frequencies = frequencies.unsqueeze(0)
    if is_key_value:
        input_ = input_.chunk(2, dim=-2)[0]
        write = write.chunk(2, dim=-2)[0]
    batch_size, seq_len, num_heads, head_size = input_.shape
    rotary_dim = div(head_size, 2)
    rotary_block_size = triton.next_power_of_2(rotary_dim)
    head_block_size = triton.cdiv(TritonConfig.POINTWISE_BLOCK_SIZE, rotary_block_size)
    if head_block_size > num_heads:
        head_block_size = triton.next_power_of_2(num_heads)

    # Folded the large y dim into the x dim as gridDim.x is 32 bit while gridDim.y and gridDim.z are 16 bit registers
    triton_rotary_kernel[(batch_size * seq_len, triton.cdiv(num_heads, head_block_size))](
        input_,
        write,
        frequencies,
        input_.stride(0),
        input_.stride(1),
        input_.stride(2),
        rotary_dim,
        num_heads,
        rotary_block_size,
        head_block_size,
        seq_len,
        backward,  # noqa
    )
    return out


def triton_rotary_forward_(
    input_: torch.Tensor, frequencies: torch.Tensor, is_key_value: bool = False
) -> tuple[torch.Tensor, tuple[torch.Tensor, bool]]:
    return triton_rotary_(input_, frequencies, is_key_value), (frequencies, is_key_value)


def triton_rotary_backward_(grad_output: torch.Tensor, context: tuple[torch.Tensor, bool]) -> torch.Tensor:
    frequencies, is_key_value = context
    if grad_output.stride(-1) != 1:
        grad_output = grad_output.contiguous()
    return triton_rotary_(grad_output, frequencies, is_key_value, True)


triton_rotary_autograd_ = wrap_forward_backward(triton_rotary_forward_, triton_rotary_backward_)
