# tl.load/tl.store options: cache modifiers, eviction policies, volatile
# loads, scalar loads and stores through a bare pointer, 2-D masks.
#
# kiln-variant: -n cached_copy -s "src_ptr=*fp32, dst_ptr=*fp32, n=i32, BLOCK=1024"
# kiln-variant: -n cached_copy -s "src_ptr=*bf16, dst_ptr=*bf16, n=i32, BLOCK=2048"
# kiln-variant: -n volatile_poll -s "flag_ptr=*i32, data_ptr=*fp32, out_ptr=*fp32, BLOCK=128"
# kiln-variant: -n scalar_access -s "in_ptr=*i64, out_ptr=*i64, index=i32"
# kiln-covers: cached_copy: tl.load(cache_modifier=, eviction_policy=, volatile=); tl.store(cache_modifier=, eviction_policy=); string argument
# kiln-covers: volatile_poll: tl.load(cache_modifier=, eviction_policy=, volatile=); while
# kiln-covers: scalar_access: tl.load; tl.store; tl.int64
import triton
import triton.language as tl


@triton.jit
def cached_copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    # PTX allows an eviction policy or a cache operator on one access, not both.
    streamed = tl.load(src_ptr + offs, mask=m, cache_modifier=".cg")
    kept = tl.load(src_ptr + offs, mask=m, eviction_policy="evict_last")
    again = tl.load(src_ptr + offs, mask=m, cache_modifier=".ca")
    tl.store(dst_ptr + offs, streamed + kept * 0, mask=m, eviction_policy="evict_first")
    tl.store(dst_ptr + offs, streamed + again * 0, mask=m, cache_modifier=".cs")
    tl.store(dst_ptr + offs, streamed, mask=m, cache_modifier=".wb")


@triton.jit
def volatile_poll(flag_ptr, data_ptr, out_ptr, BLOCK: tl.constexpr):
    # Spin until a producer sets the flag, then copy its data.
    while tl.load(flag_ptr, volatile=True) == 0:
        pass
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(data_ptr + offs, volatile=True))


@triton.jit
def scalar_access(in_ptr, out_ptr, index):
    v = tl.load(in_ptr + index)
    tl.store(out_ptr + index, v * 2 + 1)
