# Loops: `for` over range with run-time and compile-time bounds and steps,
# tl.range with pipelining hints, tl.static_range (unrolled at compile time),
# nested loops, and `while` on run-time conditions with loop-carried values.
#
# kiln-variant: -n strided_sum -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256"
# kiln-variant: -n pipelined_sum -s "x_ptr=*fp32, out_ptr=*fp32, n=i32, BLOCK=256, STAGES=3, UNROLL=2"
# kiln-variant: -n unrolled_poly -s "x_ptr=*fp32, c_ptr=*fp32, out_ptr=*fp32, n=i32, DEGREE=4, BLOCK=512"
# kiln-variant: -n unrolled_poly -s "x_ptr=*fp64, c_ptr=*fp64, out_ptr=*fp64, n=i32, DEGREE=7, BLOCK=128"
# kiln-variant: -n nested_loops -s "x_ptr=*fp32, out_ptr=*fp32, M=i32, N=i32, BM=16, BN=64"
# kiln-variant: -n collatz_steps -s "x_ptr=*i32, out_ptr=*i32, n=i32"
# kiln-variant: -n countdown -s "out_ptr=*i32, start=i32, BLOCK=64"
# kiln-variant: -n reversed_blocks -s "x_ptr=*fp32, out_ptr=*fp32, K=i32, BLOCK=64"
# kiln-covers: strided_sum: for over range; range step; augmented assignment
# kiln-covers: pipelined_sum: for over tl.range; tl.range(num_stages=, loop_unroll_factor=)
# kiln-covers: unrolled_poly: for over tl.static_range; range on constexprs; tl.zeros_like; range step
# kiln-covers: nested_loops: for over range; nested loops
# kiln-covers: collatz_steps: while; if on run-time scalar; elif/else on run-time scalar
# kiln-covers: countdown: while; augmented assignment
# kiln-covers: reversed_blocks: for over range; negative range step; range step
import triton
import triton.language as tl


@triton.jit
def strided_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
        acc += tl.load(x_ptr + start + offs, mask=start + offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(acc, axis=0))


@triton.jit
def pipelined_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr, STAGES: tl.constexpr, UNROLL: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in tl.range(0, n, BLOCK, num_stages=STAGES, loop_unroll_factor=UNROLL):
        acc += tl.load(x_ptr + start + offs, mask=start + offs < n, other=0.0)
    for i in tl.range(4):
        acc = acc * 0.5
    tl.store(out_ptr + offs, acc)


@triton.jit
def unrolled_poly(x_ptr, c_ptr, out_ptr, n, DEGREE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    y = tl.zeros_like(x)
    # Horner's rule, highest coefficient first; `k` is a compile-time int.
    for k in tl.static_range(DEGREE, -1, -1):
        y = y * x + tl.load(c_ptr + k)
    for k in tl.static_range(2):
        y += k
    for k in range(DEGREE):
        y = y * 1.0
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def nested_loops(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    for m0 in range(0, M, BM):
        for n0 in range(0, N, BN):
            rows = m0 + rm
            cols = n0 + rn
            acc += tl.load(x_ptr + rows[:, None] * N + cols[None, :],
                           mask=(rows[:, None] < M) & (cols[None, :] < N), other=0.0)
    tl.store(out_ptr + rm[:, None] * BN + rn[None, :], acc)


@triton.jit
def collatz_steps(x_ptr, out_ptr, n):
    i = tl.program_id(0)
    v = tl.load(x_ptr + i)
    steps = 0
    while v > 1:
        if v % 2 == 0:
            v = v // 2
        else:
            v = 3 * v + 1
        steps += 1
    tl.store(out_ptr + i, steps)


@triton.jit
def countdown(out_ptr, start, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.int32)
    k = start
    while k > 0:
        acc += k
        k -= 1
    tl.store(out_ptr + offs, acc + offs)


@triton.jit
def reversed_blocks(x_ptr, out_ptr, K, BLOCK: tl.constexpr):
    # A run-time start and a negative step (torchao's int8 GEMM walks K so):
    # the blocks from the end down; the first one may be partial. A weighted
    # running value makes the order visible in the result.
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(K, 0, -BLOCK):
        idx = k - BLOCK + offs
        acc = acc * 0.5 + tl.load(x_ptr + idx, mask=idx >= 0, other=0.0)
    for j in range(3, -4, -3):
        acc += j
    tl.store(out_ptr + offs, acc)
