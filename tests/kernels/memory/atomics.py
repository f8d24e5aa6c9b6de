# Every atomic read-modify-write, with masks, memory orderings and scopes,
# on blocks and on scalars.
#
# kiln-variant: -n atomic_rmw -s "counts_ptr=*i32, vals_ptr=*i32, out_ptr=*i32, n=i32, BLOCK=256"
# kiln-variant: -n atomic_rmw -s "counts_ptr=*u32, vals_ptr=*u32, out_ptr=*u32, n=i32, BLOCK=256"
# kiln-variant: -n atomic_rmw -s "counts_ptr=*i64, vals_ptr=*i64, out_ptr=*i64, n=i32, BLOCK=128"
# kiln-variant: -n atomic_float -s "acc_ptr=*fp32, x_ptr=*fp32, n=i32, BLOCK=512"
# kiln-variant: -n atomic_float -s "acc_ptr=*fp64, x_ptr=*fp64, n=i32, BLOCK=256"
# kiln-variant: -n atomic_add_half -s "acc_ptr=*fp16, x_ptr=*fp16, n=i32, BLOCK=512"
# kiln-variant: -n atomic_add_half -s "acc_ptr=*bf16, x_ptr=*bf16, n=i32, BLOCK=512"
# kiln-variant: -n atomic_orderings -s "ptr=*i32, flag_ptr=*i32, n=i32, BLOCK=64"
# kiln-variant: -n atomic_add_old -s "acc_ptr=*fp32:16, x_ptr=*fp32:16, old_ptr=*fp32:16, n=i32:16, BLOCK=512"
# kiln-variant: -n atomic_add_old -s "acc_ptr=*fp16:16, x_ptr=*fp16:16, old_ptr=*fp16:16, n=i32:16, BLOCK=512"
# kiln-variant: -n histogram_atomic -s "x_ptr=*i32, hist_ptr=*i32, n=i32, BINS=64, BLOCK=1024"
# kiln-covers: atomic_rmw: tl.atomic_add; tl.atomic_max; tl.atomic_min; tl.atomic_and; tl.atomic_or; tl.atomic_xor; tl.atomic_xchg; tl.atomic_cas; atomics (mask=, sem=, scope=)
# kiln-covers: atomic_float: tl.atomic_add; tl.atomic_max; tl.atomic_min; atomics (mask=, sem=, scope=)
# kiln-covers: atomic_add_half: tl.atomic_add; tl.float16; tl.bfloat16
# kiln-covers: atomic_add_old: tl.atomic_add
# kiln-covers: atomic_orderings: atomics (mask=, sem=, scope=); tl.atomic_cas; tl.atomic_xchg; tl.atomic_add; string argument
# kiln-covers: histogram_atomic: tl.atomic_add
import triton
import triton.language as tl


@triton.jit
def atomic_rmw(counts_ptr, vals_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(vals_ptr + offs, mask=m, other=0)
    old = tl.atomic_add(counts_ptr + offs, v, mask=m)
    old += tl.atomic_max(counts_ptr + offs, v, mask=m)
    old += tl.atomic_min(counts_ptr + offs, v, mask=m)
    old += tl.atomic_and(counts_ptr + offs, v, mask=m)
    old += tl.atomic_or(counts_ptr + offs, v, mask=m)
    old += tl.atomic_xor(counts_ptr + offs, v, mask=m)
    old += tl.atomic_xchg(counts_ptr + offs, v, mask=m)
    old += tl.atomic_cas(counts_ptr + offs, v, v + 1)
    tl.store(out_ptr + offs, old, mask=m)


@triton.jit
def atomic_float(acc_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.atomic_add(acc_ptr + offs, x, mask=m)
    tl.atomic_max(acc_ptr + n + offs, x, mask=m)
    tl.atomic_min(acc_ptr + 2 * n + offs, x, mask=m)


@triton.jit
def atomic_add_half(acc_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(acc_ptr + offs, x, mask=offs < n, sem="relaxed")


@triton.jit
def atomic_add_old(acc_ptr, x_ptr, old_ptr, n, BLOCK: tl.constexpr):
    # Aligned, contiguous elements: vector atomics where the target has them
    # (f32 quads on sm_90, f16 pairs), whose old values come back per element.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    old = tl.atomic_add(acc_ptr + offs, x, mask=offs < n)
    tl.store(old_ptr + offs, old, mask=offs < n)


@triton.jit
def atomic_orderings(ptr, flag_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.atomic_add(ptr + offs, 1, mask=m, sem="relaxed", scope="gpu")
    tl.atomic_add(ptr + offs, 1, mask=m, sem="acquire", scope="cta")
    tl.atomic_add(ptr + offs, 1, mask=m, sem="release", scope="sys")
    tl.atomic_add(ptr + offs, 1, mask=m, sem="acq_rel")
    prev = tl.atomic_cas(flag_ptr, 0, 1, sem="acquire", scope="gpu")
    if prev == 0:
        tl.atomic_xchg(flag_ptr, 0, sem="release", scope="gpu")


@triton.jit
def histogram_atomic(x_ptr, hist_ptr, n, BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    bins = tl.load(x_ptr + offs, mask=m, other=0) % BINS
    tl.atomic_add(hist_ptr + bins, 1, mask=m)
