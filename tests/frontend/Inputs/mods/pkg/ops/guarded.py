# GPT-QModel's gguf_triton.py form: triton and a relative import of the
# package's helpers in one module-level try, whose handler leaves `tl`
# None. The try's branch is the one taken when its imports resolve among
# the sources.
try:
    import triton
    import triton.language as tl

    from ..utils import scale_by_factor

    _TRITON_AVAILABLE = True
except Exception:
    triton = None
    tl = None
    scale_by_factor = None
    _TRITON_AVAILABLE = False

if _TRITON_AVAILABLE:

    @triton.jit
    def guarded_scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(out_ptr + offs, scale_by_factor(x), mask=offs < n)
