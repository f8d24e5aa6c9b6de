# Copyright (c) Microsoft Corporation.
# SPDX-License-Identifier: Apache-2.0

# DeepSpeed Team

from .residual_add import residual_add_bias
from .layer_norm import layer_norm, layer_norm_residual
from .gelu import gelu
from .softmax import softmax
from .ops import *
from .matmul_ext import fp16_matmul, matmul_4d, score_4d_matmul, context_4d_matmul
