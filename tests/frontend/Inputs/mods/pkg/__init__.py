# A package's __init__ with host code Kiln never needs to run.
import contextlib

from .utils import FACTOR, scale_by_factor  # noqa: F401

__all__ = [name for name in ("FACTOR", "scale_by_factor")]


class Registry:
    entries = {}

    def register(self, *args, **kwargs):
        with contextlib.suppress(KeyError):
            raise KeyError(args)


try:
    import numpy as np
except ImportError:
    np = None
