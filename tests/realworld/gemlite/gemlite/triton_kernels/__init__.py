# SPDX-License-Identifier: Apache-2.0
# Written by Dr. Hicham Badri @Mobius Labs GmbH - 2025

from .gemm_kernels import gemm
from .gemm_splitK_kernels import gemm_splitK
from .gemm_splitK_persistent_kernels import gemm_splitK_persistent
from .gemv_kernels import gemv
from .gemv_revsplitK_kernels import gemv_revsplitK
from .gemv_splitK_kernels import gemv_splitK

from gemlite.triton_kernels.config import set_autotune, set_kernel_caching

__all__ = [
    "gemm",
    "gemm_splitK",
    "gemm_splitK_persistent",
    "gemv",
    "gemv_splitK",
    "gemv_revsplitK",
    "set_autotune",
    "set_kernel_caching",
]
