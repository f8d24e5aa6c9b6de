from flag_attn.testing.flash import attention as flash_attention # noqa: F401
from flag_attn.testing.piecewise import attention as piecewise_attention # noqa: F401
from flag_attn.testing.paged import attention as paged_attention # noqa: F401
from flag_attn.testing.dropout import recompute_mask