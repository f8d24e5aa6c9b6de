# tl.range(..., loop_unroll_factor=N) runs N copies of the body per
# iteration (kiln-unroll-loops, MLIR's loopUnrollByFactor), then a loop over
# the remainder of the (dynamic) trip count; a factor of 1 leaves the loop.
# RUN: %kilnc compile %s -n unrolled -s "*fp32, *fp32, i32, 256, 4" --arch sm_80 --emit gpu -o - | FileCheck %s
# RUN: %kilnc compile %s -n unrolled -s "*fp32, *fp32, i32, 256, 1" --arch sm_80 --emit gpu -o - | FileCheck %s --check-prefix=ONCE
import triton
import triton.language as tl

# CHECK: %[[STEP:.*]] = arith.constant 1024 : i32
# CHECK: scf.for %{{.*}} = %c0_i32 to %{{.*}} step %[[STEP]]
# CHECK-COUNT-4: kiln.load
# CHECK: scf.yield
# CHECK: scf.for %{{.*}} step %c256_i32
# CHECK: kiln.load
# CHECK-NOT: kiln.load
# CHECK: scf.yield
# CHECK: kiln.store

# ONCE: scf.for
# ONCE: kiln.load
# ONCE-NOT: kiln.load
# ONCE: scf.yield
# ONCE-NOT: scf.for


@triton.jit
def unrolled(x_ptr, out_ptr, n, BLOCK: tl.constexpr, UNROLL: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in tl.range(0, n, BLOCK, loop_unroll_factor=UNROLL):
        acc += tl.load(x_ptr + start + offs, mask=start + offs < n, other=0.0)
    tl.store(out_ptr + offs, acc)
