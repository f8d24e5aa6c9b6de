# The triton.language.extra.cuda form of the libdevice import, alone.
#
# kiln-variant: -n probe_cuda_libdevice -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=128"
# kiln-variant: -n probe_cuda_libdevice -s "x_ptr=*fp64, out_ptr=*fp64, n=i32, BLOCK=128"
# kiln-covers: probe_cuda_libdevice: from triton.language.extra.cuda import libdevice; libdevice functions
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice


@triton.jit
def probe_cuda_libdevice(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, libdevice.atan2(x, x + 1.0) + libdevice.cbrt(x), mask=offs < n)
