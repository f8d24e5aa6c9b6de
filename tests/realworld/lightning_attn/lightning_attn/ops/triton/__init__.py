from .lightning_attn2 import lightning_attn2
from .lightning_attn2_no_decay import lightning_attn2_no_decay
from .lightning_attn2_parallel import lightning_attn2_parallel
from .srmsnorm import *
