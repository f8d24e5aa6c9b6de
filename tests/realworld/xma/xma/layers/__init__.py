# **************************************************
# Copyright (c) 2026, Mayank Mishra
# **************************************************

from .depthwise_causal_convolution import DepthwiseCausalConvolution
from .gru import GRU, gru
from .linear_attention import LinearAttention, linear_attention
from .m2rnn import M2RNN, m2rnn
from .moe import MoE
from .rnn import RNN, rnn
