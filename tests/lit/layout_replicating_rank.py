# One blocked encoding serves every tensor of a rank, unless it puts more
# lanes and warps along a dimension than a shape has elements: tutorial 09's
# EPILOGUE_SUBTILE reshapes a 128x256 tile to 128x2x128, permutes it to
# 128x128x2 and splits that. Along the 2, the rank's 32 lanes would each
# hold copies (150 KB of spills in the tutorial's kernel); the split's
# operand gets a layout of its own instead, the pair in each thread. (Here
# the permuted tile is also reduced: split into halves alone, it would
# become two kiln.extract, tests/lit/split_halves.py.)
# RUN: %kilnc compile %s -n subtile -s "*fp32:16, *fp32:16, *fp32:16, *fp32:16" --arch sm_90a -w 8 --emit gpu -o - | FileCheck %s
# The threads' runs count too: a 128 x 32 bf16 tile read beside a 32 x 128
# fp8 one the rank's layout was made for (16-byte runs, 8 lanes: 128
# columns) would hold each element four times (torchao's transposed fp8
# quantization, 0.40 of Triton); it gets its own layout. A small tile
# broadcast into the big ones (64 x 4 block scales) keeps theirs.
# RUN: %kilnc compile %s -n transposed_cast -s "*bf16:16, *fp8e4nv:16" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=RUNS
import triton
import triton.language as tl

# The reshape keeps each element in its thread (reshape_relaid_layouts.py).
# CHECK: kiln.reshape {{.*}} -> tensor<128x2x128xf32, #kiln_gpu.blocked<{sizePerThread = [1, 1, 4], threadsPerWarp = [1, 1, 32], warpsPerCTA = [4, 2, 1], order = [2, 1, 0]}>>
# CHECK: kiln.split %{{.*}} : tensor<128x128x2xf32, #kiln_gpu.blocked<{sizePerThread = [1, 1, 2], threadsPerWarp = [1, 32, 1], warpsPerCTA = [2, 4, 1], order = [2, 1, 0]}>>


@triton.jit
def subtile(x_ptr, lo_ptr, hi_ptr, max_ptr):
    rows = tl.arange(0, 128)
    cols = tl.arange(0, 256)
    x = tl.load(x_ptr + rows[:, None] * 256 + cols[None, :])
    x = tl.reshape(x, (128, 2, 128))
    x = tl.permute(x, (0, 2, 1))
    lo, hi = tl.split(x)
    half = tl.arange(0, 128)
    tl.store(max_ptr + rows[:, None] * 128 + half[None, :], tl.max(x, axis=2))
    tl.store(lo_ptr + rows[:, None] * 128 + half[None, :], lo)
    tl.store(hi_ptr + rows[:, None] * 128 + half[None, :], hi)


# RUNS: kiln.load {{.*}} -> tensor<128x32xbf16, #kiln_gpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>>
# RUNS: kiln.store {{.*}} : tensor<32x128x!kiln.ptr<f8E4M3FN>, #kiln_gpu.blocked<{sizePerThread = [1, 16], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>>
@triton.jit
def transposed_cast(x_ptr, y_ptr):
    m = tl.arange(0, 128)
    k = tl.arange(0, 32)
    x = tl.load(x_ptr + m[:, None] * 32 + k[None, :])
    tl.store(y_ptr + k[:, None] * 128 + m[None, :], x.to(tl.float8e4nv).trans(1, 0))
