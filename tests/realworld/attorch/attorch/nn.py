"""
Interface for attorch with PyTorch fallback.
"""


from torch.nn import *
from attorch import *
from torch.nn import AvgPool1d, AvgPool2d, Conv1d, Conv2d
