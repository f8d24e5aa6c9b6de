# tl.extra.cuda's utilities: the launch's warps and threads (compile-time
# values), the SM a program runs on, the global timer, and grid dependency
# control around a copy (programmatic dependent launch: a no-op unless the
# grid was launched early, and absent before sm_90).
#
# kiln-variant: -n launch_shape -s "out_ptr=*i32, num_warps=8"
# kiln-variant: -n launch_shape -s "out_ptr=*i32"
# kiln-variant: -n dependent_copy -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256"
# kiln-covers: launch_shape: tl.extra.cuda utilities
# kiln-variant: -n target_flags -s "out_ptr=*i32"
# kiln-covers: dependent_copy: tl.extra.cuda utilities
# kiln-covers: target_flags: tl.target_info
import triton
import triton.language as tl
from triton.language import target_info
from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait
from triton.language.target_info import cuda_capability_geq


@triton.jit
def launch_shape(out_ptr):
    pid = tl.program_id(0)
    warps: tl.constexpr = tl.extra.cuda.num_warps()
    threads: tl.constexpr = tl.extra.cuda.num_threads()
    tl.store(out_ptr + pid * 4 + 0, warps)
    tl.store(out_ptr + pid * 4 + 1, threads)
    # Which SM, and when: only their ranges are stable.
    sm_ok = (tl.extra.cuda.smid() >= 0) & (tl.extra.cuda.smid() < 1024)
    tl.store(out_ptr + pid * 4 + 2, sm_ok.to(tl.int32))
    tl.store(out_ptr + pid * 4 + 3, (tl.extra.cuda.globaltimer() > 0).to(tl.int32))


@triton.jit
def dependent_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    gdc_wait()
    x = tl.load(x_ptr + offs, mask=offs < n)
    gdc_launch_dependents()
    tl.store(out_ptr + offs, x * 2, mask=offs < n)


@triton.jit
def target_flags(out_ptr):
    # Compile-time booleans of the target: 13 on sm_90, 8 on sm_80.
    flags = 0
    if tl.target_info.cuda_capability_geq(9, 0):
        flags += 1
    if target_info.cuda_capability_geq(10):
        flags += 2
    if cuda_capability_geq(8, minor=9):
        flags += 4
    if tl.target_info.is_cuda():
        flags += 8
    if target_info.is_hip():
        flags += 16
    tl.store(out_ptr, flags)
