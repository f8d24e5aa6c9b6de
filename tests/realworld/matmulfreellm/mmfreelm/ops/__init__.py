from .hgrn import fused_recurrent_hgrn

__all__ = [
    'fused_recurrent_hgrn'
]