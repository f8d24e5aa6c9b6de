# **************************************************
# Copyright (c) 2026, Mayank Mishra
# **************************************************

from .activations import (
    clamp,
    leaky_relu,
    leaky_relu_backward,
    sigmoid,
    sigmoid_backward,
    silu,
    silu_backward,
    tanh,
    tanh_backward,
)
from .cu_seqlens import get_start_end
from .elementwise import elementwise_2d_kernel, get_elementwise_2d_configs
from .math import compute_p_norm
from .matmul import matmul
