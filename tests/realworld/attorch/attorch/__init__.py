"""
A subset of PyTorch's neural network modules,
written in Python using OpenAI's Triton.
"""


from . import math, nn
from .act_layers import CELU, ELU, GELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, \
    LogSigmoid, Mish, ReLU, ReLU6, SELU, SiLU, Sigmoid, Softplus, Softshrink, Softsign, Tanh, Tanhshrink
from .batch_norm_layer import BatchNorm1d, BatchNorm2d
from .conv_layer import Conv1d, Conv2d
from .cross_entropy_loss_layer import CrossEntropyLoss
from .dropout_layer import Dropout
from .glu_layer import GLU
from .layer_norm_layer import LayerNorm
from .linear_layer import Linear
from .multi_head_attention_layer import MultiheadAttention
from .nll_loss_layer import NLLLoss
from .p_loss_layers import HuberLoss, L1Loss, MSELoss, SmoothL1Loss
from .pooling_layer import AvgPool1d, AvgPool2d
from .rms_norm_layer import RMSNorm
from .softmax_layers import LogSoftmax, Softmax, Softmin
