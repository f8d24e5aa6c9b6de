from .matmul import matmul
from .softmax import softmax

__all__ = [
    "matmul",
    "softmax",
]
