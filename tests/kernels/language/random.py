# Counter-based random numbers (Philox): rand, randn, randint, randint4x,
# with the seed as a run-time scalar or a constexpr, and a round count.
#
# kiln-variant: -n random_fill -s "u_ptr=*fp32, g_ptr=*fp32, i_ptr=*u32, n=i32, seed=i32, BLOCK=1024"
# kiln-variant: -n random_fill -s "u_ptr=*fp32, g_ptr=*fp32, i_ptr=*u32, n=i32, seed=i64, BLOCK=512"
# kiln-variant: -n random_4x -s "out_ptr=*u32, n=i32, SEED=1234, ROUNDS=7, BLOCK=256"
# kiln-covers: random_fill: tl.rand; tl.randn; tl.randint
# kiln-covers: random_4x: tl.randint4x; tl.rand; tl.constexpr parameter
import triton
import triton.language as tl


@triton.jit
def random_fill(u_ptr, g_ptr, i_ptr, n, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(u_ptr + offs, tl.rand(seed, offs), mask=m)
    tl.store(g_ptr + offs, tl.randn(seed, offs), mask=m)
    tl.store(i_ptr + offs, tl.randint(seed, offs), mask=m)


@triton.jit
def random_4x(out_ptr, n, SEED: tl.constexpr, ROUNDS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a, b, c, d = tl.randint4x(SEED, offs, ROUNDS)
    tl.store(out_ptr + 4 * offs, a, mask=offs < n)
    tl.store(out_ptr + 4 * offs + 1, b, mask=offs < n)
    tl.store(out_ptr + 4 * offs + 2, c, mask=offs < n)
    tl.store(out_ptr + 4 * offs + 3, d ^ tl.rand(SEED, offs, n_rounds=ROUNDS).to(tl.uint32, bitcast=True), mask=offs < n)
