# kiln-assign-layouts on sm_90a at 8 warps: a 64 x 128 accumulator (too few
# rows for all 8 warps along M) splits N between the two warpgroups, 64
# columns each. Not when another dot of the kernel reads a computed a
# (`a * 2.0`), which wgmma would take from registers, each warpgroup then
# needing its own rows: all warps share one mma layout, so none splits
# (kilnc compiles such a kernel for 4 warps; here the pass is asked for 8).
# RUN: %kilnc compile %s -n two_dots -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, SCALED_A=False" --arch sm_90a --emit kiln -o - | sed 's/^module {/module attributes {kiln_gpu.target = "sm_90a"} {/' | %kiln-opt --kiln-assign-layouts="num-warps=8" | FileCheck %s --check-prefix=ONE
# RUN: %kilnc compile %s -n two_dots -s "a_ptr=*fp16:16, b_ptr=*fp16:16, c_ptr=*fp16:16, K=i32:16, SCALED_A=True" --arch sm_90a --emit kiln -o - | sed 's/^module {/module attributes {kiln_gpu.target = "sm_90a"} {/' | %kiln-opt --kiln-assign-layouts="num-warps=8" | FileCheck %s --check-prefix=TWO
import triton
import triton.language as tl


# ONE: kiln.dot {{.*}} -> tensor<64x128xf32, #kiln_gpu.mma<{warpsPerCTA = [4, 2], instrN = 64}>>
# TWO-NOT: instrN
@triton.jit
def two_dots(a_ptr, b_ptr, c_ptr, K, SCALED_A: tl.constexpr):
    rm = tl.arange(0, 64)
    rn = tl.arange(0, 128)
    rk = tl.arange(0, 64)
    acc = tl.zeros((64, 128), dtype=tl.float32)
    acc2 = tl.zeros((64, 128), dtype=tl.float32)
    for k in range(0, K, 64):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * 128 + rn[None, :])
        acc = tl.dot(a, b, acc)
        if SCALED_A:
            acc2 = tl.dot(a * 2.0, b, acc2)
    tl.store(c_ptr + rm[:, None] * 128 + rn[None, :], (acc + acc2).to(tl.float16))
