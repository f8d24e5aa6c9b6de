# `and`/`or` of a run-time value and a compile-time one (issue 13: mamba's
# Mamba-3 forward writes `if chunk_idx == num_chunks - 1 and
# RETURN_FINAL_STATES:` around a pointer only defined when
# RETURN_FINAL_STATES): a deciding constexpr decides, as upstream's short
# circuit on constexprs, so `runtime and False` is `False` and its branch
# is never emitted; a constexpr that does not decide is dropped.
# RUN: %kilnc compile %s -n final_state -s "x_ptr=*fp32, n=i32, RETURN_FINAL=False" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=OFF
# RUN: %kilnc compile %s -n final_state -s "x_ptr=*fp32, n=i32, RETURN_FINAL=True" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=ON
import triton
import triton.language as tl


# OFF-LABEL: func.func @final_state
# OFF-NOT: scf.if
# OFF: kiln.store
# OFF-NOT: kiln.store
# ON-LABEL: func.func @final_state
# ON: kiln.store
# ON: arith.cmpi eq
# ON: scf.if
# ON: kiln.store
@triton.jit
def final_state(x_ptr, n, RETURN_FINAL: tl.constexpr):
    if RETURN_FINAL:
        final_ptr = x_ptr + n
    for i in range(n):
        tl.store(x_ptr + i, i * 1.0)
        if i == n - 1 and RETURN_FINAL:
            tl.store(final_ptr, 1.0)
        if i == 0 or not RETURN_FINAL:
            pass
