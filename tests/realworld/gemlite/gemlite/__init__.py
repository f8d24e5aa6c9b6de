__version__ = "0.5.1.post1"
__author__  = 'Dr. Hicham Badri'
__credits__ = 'Mobius Labs GmbH'

from .core import (
    GemLiteLinearTriton,
    GemLiteLinear,
    DType,
    GEMLITE_ACC_DTYPE,
    set_autotune_setting,
    set_packing_bitwidth,
    set_acc_dtype,
    set_autotune,
    set_kernel_caching,
    forward_functional,
)

from . import helper

load_config  = GemLiteLinear.load_config
cache_config = GemLiteLinear.cache_config
reset_config = GemLiteLinear.reset_config
