# Shape manipulation: reshape/view, trans/permute, expand_dims, ravel,
# broadcast and broadcast_to, .shape, x[:, None] and x[None, :].
#
# kiln-variant: -n reshape_roundtrip -s "x_ptr=*fp32, out_ptr=*fp32, R=8, C=32"
# kiln-variant: -n reshape_roundtrip -s "x_ptr=*i16, out_ptr=*i16, R=16, C=16"
# kiln-variant: -n permute_3d -s "x_ptr=*fp16, out_ptr=*fp16, A=4, B=8, C=16"
# kiln-variant: -n broadcasting -s "row_ptr=*fp32, col_ptr=*fp32, out_ptr=*fp32, M=32, N=64"
# kiln-variant: -n outer_product -s "a_ptr=*fp32, b_ptr=*fp32, out_ptr=*fp32, M=64, N=32"
# kiln-covers: reshape_roundtrip: tl.reshape; tl.view; tl.ravel; .shape; len
# kiln-covers: permute_3d: tl.permute; tl.trans; .shape
# kiln-covers: broadcasting: tl.broadcast; tl.broadcast_to; tl.expand_dims; broadcasting
# kiln-covers: outer_product: x[:, None]; x[None, :]; broadcasting
import triton
import triton.language as tl


@triton.jit
def reshape_roundtrip(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, R * C)
    flat = tl.load(x_ptr + offs)
    grid = tl.reshape(flat, (R, C))
    tl.static_assert(len(grid.shape) == 2)
    tl.static_assert(grid.shape[1] == C)
    halves = tl.view(grid, R * 2, C // 2)
    back = tl.ravel(tl.reshape(halves, [R, C]))
    tl.store(out_ptr + offs, back)


@triton.jit
def permute_3d(x_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    a = tl.arange(0, A)[:, None, None]
    b = tl.arange(0, B)[None, :, None]
    c = tl.arange(0, C)[None, None, :]
    x = tl.load(x_ptr + a * B * C + b * C + c)          # [A, B, C]
    y = tl.permute(x, (2, 0, 1))                        # [C, A, B]
    tl.static_assert(y.shape[0] == C)
    z = tl.trans(y, 1, 0, 2)                            # [A, C, B]
    a2 = tl.arange(0, A)[:, None, None]
    c2 = tl.arange(0, C)[None, :, None]
    b2 = tl.arange(0, B)[None, None, :]
    tl.store(out_ptr + a2 * C * B + c2 * B + b2, z)


@triton.jit
def broadcasting(row_ptr, col_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    row = tl.load(row_ptr + tl.arange(0, N))            # [N]
    col = tl.load(col_ptr + tl.arange(0, M))            # [M]
    r2 = tl.expand_dims(row, 0)                         # [1, N]
    c2 = tl.expand_dims(col, axis=1)                    # [M, 1]
    rb, cb = tl.broadcast(r2, c2)                       # both [M, N]
    full = tl.broadcast_to(r2, (M, N)) + tl.broadcast_to(c2, M, N)
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(out_ptr + offs, rb * cb + full)


@triton.jit
def outer_product(a_ptr, b_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    a = tl.load(a_ptr + tl.arange(0, M))
    b = tl.load(b_ptr + tl.arange(0, N))
    prod = a[:, None] * b[None, :]
    tl.store(out_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], prod)
