# **************************************************
# Copyright (c) 2026, Mayank Mishra
# **************************************************

from .continuous_count import continuous_count
from .cross_entropy import cross_entropy
from .fused_linear_cross_entropy import fused_linear_cross_entropy
from .fused_residual_add_rmsnorm import fused_residual_add_rmsnorm
from .p_norm import p_norm
from .rmsnorm import rmsnorm
from .sequence_packing import pack_sequence, unpack_sequence
from .softmax import softmax
from .swiglu import swiglu, swiglu_packed
