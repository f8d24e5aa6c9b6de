# Integer-specific builtins: tl.umulhi, tl.cdiv on scalars and blocks,
# tl.swizzle2d on program ids and on a block of indices, and a small integer
# hash with shifts and xors on uint32.
#
# kiln-variant: -n hash_u32 -s "in_ptr=*u32, out_ptr=*u32, n=i32, BLOCK=1024"
# kiln-variant: -n mulhi_kernel -s "a_ptr=*u32, b_ptr=*u32, out_ptr=*u32, n=i32, BLOCK=1024"
# kiln-variant: -n mulhi_kernel -s "a_ptr=*i32, b_ptr=*i32, out_ptr=*i32, n=i32, BLOCK=1024"
# kiln-variant: -n block_counts -s "sizes_ptr=*i32, out_ptr=*i32, n=i32, TILE=64, BLOCK=128"
# kiln-variant: -n grouped_order -s "pid_ptr=*i32, tile_ptr=*i32, GROUP=3, TILE=8"
# kiln-covers: hash_u32: << >>; & | ^ ~; tl.uint32; augmented assignment
# kiln-covers: mulhi_kernel: tl.umulhi
# kiln-covers: block_counts: tl.cdiv
# kiln-covers: grouped_order: tl.swizzle2d; tl.num_programs
import triton
import triton.language as tl


@triton.jit
def hash_u32(in_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    h = tl.load(in_ptr + offs, mask=offs < n)
    h ^= h >> 16
    h *= 0x7FEB352D
    h ^= h >> 15
    h *= 0x846CA68B
    h ^= h >> 16
    h |= 1
    h &= ~(h << 31)
    tl.store(out_ptr + offs, h, mask=offs < n)


@triton.jit
def mulhi_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs, mask=offs < n)
    b = tl.load(b_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, tl.umulhi(a, b), mask=offs < n)


@triton.jit
def block_counts(sizes_ptr, out_ptr, n, TILE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    sizes = tl.load(sizes_ptr + offs, mask=offs < n, other=0)
    tiles = tl.cdiv(sizes, TILE)
    total = tl.cdiv(n, TILE)
    tl.store(out_ptr + offs, tiles + total, mask=offs < n)


@triton.jit
def grouped_order(pid_ptr, tile_ptr, GROUP: tl.constexpr, TILE: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    num_m, num_n = tl.num_programs(0), tl.num_programs(1)
    new_m, new_n = tl.swizzle2d(pid_m, pid_n, num_m, num_n, GROUP)
    linear = pid_m * num_n + pid_n
    tl.store(pid_ptr + 2 * linear, new_m)
    tl.store(pid_ptr + 2 * linear + 1, new_n)
    # The same renumbering of a whole TILE x TILE grid at once.
    i = tl.arange(0, TILE)[:, None]
    j = tl.arange(0, TILE)[None, :]
    ti, tj = tl.swizzle2d(i, j, TILE, TILE, GROUP)
    tl.store(tile_ptr + i * TILE + j, ti * TILE + tj, mask=linear == 0)
