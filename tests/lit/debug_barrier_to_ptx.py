# tl.debug_barrier() is a barrier across the program's threads in every build
# (upstream keeps it too, despite the name): kiln.barrier, then bar.sync 0.
# RUN: %kilnc compile %s -n exchange -s "x_ptr=*fp32, BLOCK=256" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=IR
# RUN: %kilnc compile %s -n exchange -s "x_ptr=*fp32, BLOCK=256" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# RUN: not %kilnc compile %s -n bad -s "x_ptr=*fp32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=ARGS
import triton
import triton.language as tl


# IR: kiln.store
# IR-NEXT: kiln.barrier
# IR: kiln.load
# PTX: st.global
# PTX: bar.sync 0
# PTX: ld.global
@triton.jit
def exchange(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, offs.to(tl.float32))
    tl.debug_barrier()
    tl.store(x_ptr + BLOCK + offs, tl.load(x_ptr + (BLOCK - 1 - offs)))


# ARGS: debug_barrier_to_ptx.py:[[@LINE+3]]:5: error: tl.debug_barrier() takes no arguments
@triton.jit
def bad(x_ptr):
    tl.debug_barrier(1)
