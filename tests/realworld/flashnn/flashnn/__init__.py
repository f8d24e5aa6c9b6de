# Copyright 2024 The FLASHNN Authors. All rights reserved.
#
# This source code is licensed under the Apache 2.0 license found in the
# LICENSE file in the root directory of this source tree.

from .attention import FlashAttention, PagedAttention
from .kernel_backend import set_autotune_triton_kernels, set_use_triton
from .logits_processor import LogitsProcessor
from .norm import LayerNorm, LayernormDquant, RMSNorm, RMSNormDquant
from .quant_gemm import DynamicQuantize, GemmA8W8, GemmWeightOnly
from .rotary_embedding import RotaryEmbedding
from .triton_kernels.paged_attn_v2 import triton_paged_attention_v2
from .triton_kernels.paged_attn import paged_attention, paged_attn_w_mma, paged_attn_wo_mma
from .triton_kernels.fused_moe_a8w8 import fused_moe_a8w8_forward
from .triton_kernels.fused_moe_a16w4 import fused_moe_a16w4_forward
from .triton_kernels.fused_moe_fp16 import fused_moe_fp16_forward
