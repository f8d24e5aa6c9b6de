from .ops import (
    twice,
)
from .ops import thrice
