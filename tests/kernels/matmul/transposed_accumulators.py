# A dot operand that is the transpose of another dot's result
# (`tl.dot(tl.trans(s).to(tl.bfloat16), k)`, as Mamba-3's backward takes dq
# and dv): in a loop, and in straight-line code.
#
# kiln-variant: -n in_loop -s "q_ptr=*bf16:16, k_ptr=*bf16:16, out_ptr=*bf16:16, n=i32, BT=64, D=128, num_warps=4, num_stages=2"
# kiln-variant: -n straight -s "q_ptr=*bf16:16, k_ptr=*bf16:16, out_ptr=*bf16:16, BT=64, D=128, num_warps=4"
# kiln-covers: in_loop: tl.dot(acc=); tl.trans
# kiln-covers: straight: tl.dot; tl.trans
import triton
import triton.language as tl


@triton.jit
def in_loop(q_ptr, k_ptr, out_ptr, n, BT: tl.constexpr, D: tl.constexpr):
    rt = tl.arange(0, BT)
    rd = tl.arange(0, D)
    acc = tl.zeros((BT, D), dtype=tl.float32)
    for i in range(n):
        offs = (i * BT + rt)[:, None] * D + rd[None, :]
        q = tl.load(q_ptr + offs)
        k = tl.load(k_ptr + offs)
        s = tl.dot(q, tl.trans(k))
        acc += tl.dot(tl.trans(s).to(tl.bfloat16), k)
    tl.store(out_ptr + rt[:, None] * D + rd[None, :], acc.to(tl.bfloat16))


@triton.jit
def straight(q_ptr, k_ptr, out_ptr, BT: tl.constexpr, D: tl.constexpr):
    rt = tl.arange(0, BT)
    rd = tl.arange(0, D)
    offs = rt[:, None] * D + rd[None, :]
    q = tl.load(q_ptr + offs)
    k = tl.load(k_ptr + offs)
    s = tl.dot(q, tl.trans(k))
    out = tl.dot(tl.trans(s).to(tl.bfloat16), k)
    tl.store(out_ptr + offs, out.to(tl.bfloat16))
