# from .conv import _conv, conv
from . import blocksparse
from .cross_entropy import _cross_entropy, cross_entropy
from .flash_attention import attention
from .matmul import _matmul, get_higher_dtype, matmul

__all__ = [
    "blocksparse",
    "_cross_entropy",
    "cross_entropy",
    "_matmul",
    "matmul",
    "attention",
    "get_higher_dtype",
]
