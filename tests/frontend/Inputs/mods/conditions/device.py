# Device flags as real packages compute them at import time: host functions
# with try/except under functools.cache, the target's capability, features of
# triton.language, and environment variables (unset in a build).
import os
from functools import cache
from importlib.util import find_spec

import torch
import triton


@cache
def get_available_device() -> str:
    try:
        return triton.runtime.driver.active.get_current_target().backend
    except Exception:
        return "cpu"


device_platform = get_available_device()
IS_NVIDIA = device_platform == "cuda"
IS_BLACKWELL = IS_NVIDIA and torch.cuda.get_device_capability()[0] in (10, 12)
IS_GATHER_SUPPORTED = hasattr(triton.language, "gather")
IS_TMA_SUPPORTED = (
    IS_NVIDIA
    and torch.cuda.get_device_capability(0)[0] >= 9
    and os.environ.get("PKG_USE_TMA", "0") == "1"
)

# Whether Triton can run, cleared by checks of the machine's drivers that
# cannot be evaluated when compiling (vLLM's triton_utils): Kiln builds for
# a machine where it runs.
HAS_TRITON = find_spec("triton") is not None
if len(torch.cuda.get_device_name(0)) == 0:
    HAS_TRITON = False
