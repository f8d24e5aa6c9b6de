# Counter-based random numbers (Philox): rand, randn, randint, randint4x,
# with the seed as a run-time scalar or a constexpr, and a round count;
# tl.philox on counters built from a 64-bit offset, as dropout kernels do.
#
# kiln-variant: -n random_fill -s "u_ptr=*fp32, g_ptr=*fp32, i_ptr=*u32, n=i32, seed=i32, BLOCK=1024"
# kiln-variant: -n random_fill -s "u_ptr=*fp32, g_ptr=*fp32, i_ptr=*u32, n=i32, seed=i64, BLOCK=512"
# kiln-variant: -n random_4x -s "out_ptr=*u32, n=i32, SEED=1234, ROUNDS=7, BLOCK=256"
# kiln-variant: -n philox_streams -s "out_ptr=*u32, n=i32, seed=i64, offset=i64, BLOCK=256"
# kiln-covers: random_fill: tl.rand; tl.randn; tl.randint
# kiln-covers: random_4x: tl.randint4x; tl.rand; tl.constexpr parameter
# kiln-covers: philox_streams: tl.philox
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


@triton.jit
def philox_streams(out_ptr, n, seed, offset, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    c0 = (offset & 0xFFFFFFFF).to(tl.uint32) + offs
    c1 = ((offset >> 32) & 0xFFFFFFFF).to(tl.uint32)
    zero = c0 * 0
    a, b, c, d = tl.philox(seed, c0, c1, zero, zero)
    tl.store(out_ptr + 4 * offs, a, mask=offs < n)
    tl.store(out_ptr + 4 * offs + 1, b, mask=offs < n)
    tl.store(out_ptr + 4 * offs + 2, c, mask=offs < n)
    tl.store(out_ptr + 4 * offs + 3, d, mask=offs < n)
