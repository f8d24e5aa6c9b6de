from .parallel_experts import flatten_sort_count, parallel_linear, ParallelExperts
from . import parallel_experts
from . import kernels
from . import mlp
from . import utils

__all__ = [
    "flatten_sort_count",
    "parallel_linear",
    "ParallelExperts",
    "parallel_experts",
    "kernels",
    "mlp",
    "utils"
]
