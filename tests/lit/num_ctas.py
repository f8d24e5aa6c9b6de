# num_ctas > 1 asks for thread-block clusters, which Kiln does not compile
# yet: program ids and the grid would ignore them while the runtime launched
# num_ctas times the programs. kilnc rejects it, naming the kernel and the
# option, from a signature and from an autotune config alike.
# RUN: not %kilnc compile %s -n scale -s "x_ptr=*fp32, n=i32, BLOCK=128, num_ctas=2" --arch sm_90a -o %t.cubin 2>&1 | FileCheck %s --check-prefix=SIG
# SIG: num_ctas.py:[[@LINE+14]]:5: error: kernel 'scale': num_ctas=2 is not supported (Kiln does not compile thread-block clusters yet); use num_ctas=1, the default
# RUN: rm -rf %t.dir
# RUN: not %kilnc compile %s -n tuned -s "x_ptr=*fp32, n=i32" --autotune --arch sm_90a -o %t.dir 2>&1 | FileCheck %s --check-prefix=TUNED
# TUNED: num_ctas.py:[[@LINE+21]]:5: error: kernel 'tuned': num_ctas=4 is not supported
# TUNED: num_ctas.py:[[@LINE+17]]:{{[0-9]+}}: note: while compiling autotune config 1 (BLOCK=256, num_ctas=4)
# num_ctas=1 is the default, and fine.
# RUN: %kilnc compile %s -n scale -s "x_ptr=*fp32, n=i32, BLOCK=128, num_ctas=1" --arch sm_90a -o %t.cubin --metadata %t.json
# RUN: FileCheck %s --check-prefix=META < %t.json
# META: "num_ctas": 1
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


@triton.autotune(configs=[
    triton.Config({"BLOCK": 128}),
    triton.Config({"BLOCK": 256}, num_ctas=4),
], key=["n"])
@triton.jit
def tuned(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
