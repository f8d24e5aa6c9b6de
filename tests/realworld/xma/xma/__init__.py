# **************************************************
# Copyright (c) 2026, Mayank Mishra
# **************************************************

from .accelerator import Accelerator, KernelBackend
from .utils import get_ptx_from_triton_kernel, is_jax_available, is_torch_available, set_seed
