# ptxas serializes every wgmma of a kernel that calls a function (here the
# __assertfail of tl.device_assert, kept by --debug): kilnc passes its
# advisory on as a warning naming the kernel. Without --debug there is no
# call and no warning.
# RUN: %kilnc compile %s -n checked_dot -s "*fp16:16, *fp16:16, *fp32:16, i32:16, 64" -w 4 --ns=3 --arch sm_90a --debug -o %t.cubin 2>&1 | FileCheck %s
# RUN: %kilnc compile %s -n checked_dot -s "*fp16:16, *fp16:16, *fp32:16, i32:16, 64" -w 4 --ns=3 --arch sm_90a -o %t.cubin 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
import triton
import triton.language as tl

# CHECK: warning: kernel 'checked_dot' for sm_90a: wgmma.mma_async instructions are serialized due to {{.*}} function call {{.*}} (ptxas)
# QUIET-NOT: serialized


@triton.jit
def checked_dot(a_ptr, b_ptr, c_ptr, K, B: tl.constexpr):
    offs = tl.arange(0, B)
    acc = tl.zeros((B, B), dtype=tl.float32)
    for k in range(0, K, B):
        a = tl.load(a_ptr + offs[:, None] * K + (k + offs)[None, :])
        b = tl.load(b_ptr + (k + offs)[:, None] * B + offs[None, :])
        tl.device_assert(k + K > 0, "K must be positive")
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + offs[:, None] * B + offs[None, :], acc)
