import triton
import triton.language as tl


@triton.jit
def transpose_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """y = x^T for a row-major M x N x: one BLOCK_M x BLOCK_N tile per program.
    Loads run along x's rows and stores along y's, so the tile changes layout
    in between (through shared memory)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(y_ptr + rn[:, None] * M + rm[None, :], tl.trans(x))
