# Decorators kept as metadata: @triton.autotune (its configs can serve as the
# variant list) and @triton.heuristics (lambdas over the arguments that are
# known when compiling), alone and stacked.
#
# kiln-variant: -n tuned_scale -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=1024, num_warps=4"
# kiln-variant: -n tuned_scale -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=4096, num_warps=8"
# kiln-variant: -n even_blocks -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256, EVEN=True"
# kiln-variant: -n even_blocks -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256, EVEN=False"
# kiln-variant: -n tuned_and_heuristic -s "x_ptr=*fp16, out_ptr=*fp16, n_rows=i32, n_cols=i32, BLOCK_N=1024, ROWS=4"
# kiln-variant: -n row_scale -s "x_ptr=*fp32, out_ptr=*fp32, n_rows=i32, N_COLS=100"
# kiln-variant: -n row_scale -s "x_ptr=*fp16, out_ptr=*fp16, n_rows=i32, N_COLS=256"
# kiln-variant: -n row_scale -s "x_ptr=*fp32, out_ptr=*fp32, n_rows=i32, N_COLS=100, BLOCK_N=512, EVEN=False"
# kiln-covers: tuned_scale: @triton.autotune
# kiln-covers: even_blocks: @triton.heuristics; if on constexpr
# kiln-covers: row_scale: @triton.heuristics; if on constexpr
# kiln-covers: tuned_and_heuristic: @triton.autotune; @triton.heuristics; for over tl.static_range
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 2048}, num_warps=8, num_stages=2),
        triton.Config(kwargs={"BLOCK": 4096}, num_warps=8),
    ],
    key=["n"],
)
@triton.jit
def tuned_scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def even_blocks(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + offs)
        tl.store(out_ptr + offs, x + 1)
    else:
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(out_ptr + offs, x + 1, mask=offs < n)


@triton.autotune(configs=[triton.Config({"ROWS": 1}), triton.Config({"ROWS": 4}, num_warps=8)],
                 key=["n_cols"])
@triton.heuristics(values={"BLOCK_N": lambda args: triton.next_power_of_2(args["n_cols"])})
@triton.jit
def tuned_and_heuristic(x_ptr, out_ptr, n_rows, n_cols, BLOCK_N: tl.constexpr, ROWS: tl.constexpr):
    cols = tl.arange(0, BLOCK_N)
    for r in tl.static_range(ROWS):
        row = tl.program_id(0) * ROWS + r
        m = (cols < n_cols) & (row < n_rows)
        x = tl.load(x_ptr + row * n_cols + cols, mask=m, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * n_cols + cols, (x - tl.sum(x, 0) / n_cols).to(tl.float16), mask=m)


# Heuristics over constexprs are evaluated when compiling: the signatures
# above may leave BLOCK_N and EVEN out (outer decorator first, as upstream).
@triton.heuristics(values={"BLOCK_N": lambda args: triton.next_power_of_2(args["N_COLS"])})
@triton.heuristics({"EVEN": lambda args: args["N_COLS"] == args["BLOCK_N"]})
@triton.jit
def row_scale(x_ptr, out_ptr, n_rows, N_COLS: tl.constexpr, BLOCK_N: tl.constexpr,
              EVEN: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    if EVEN:
        x = tl.load(x_ptr + row * N_COLS + cols)
        tl.store(out_ptr + row * N_COLS + cols, x * 2)
    else:
        x = tl.load(x_ptr + row * N_COLS + cols, mask=cols < N_COLS, other=0)
        tl.store(out_ptr + row * N_COLS + cols, x * 2, mask=cols < N_COLS)
