# Kernels with tensor-descriptor mistakes (descriptor_diagnostics.test).
import triton
import triton.language as tl


@triton.jit
def last_stride(x_ptr, M, N):
    d = tl.make_tensor_descriptor(x_ptr, [M, N], [N, N], [16, 16])


@triton.jit
def narrow_block(x_ptr, M, N):
    d = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [16, 2])


@triton.jit
def offsets_count(desc):
    x = desc.load([0])


@triton.jit
def wide_offsets(desc, off):
    x = desc.load([off, 0])


@triton.jit
def store_shape(desc):
    desc.store([0, 0], tl.zeros((16, 8), tl.float32))


@triton.jit
def arithmetic(desc):
    x = desc + 1


@triton.jit
def tl_load_of_descriptor(desc):
    x = tl.load(desc)


@triton.jit
def float_max(desc):
    desc.atomic_max([0, 0], tl.zeros((16, 16), tl.float16))


@triton.jit
def nan_ints(x_ptr, n):
    d = tl.make_tensor_descriptor(x_ptr, [n], [1], [64], padding_option="nan")


@triton.jit
def unknown_class(x):
    if isinstance(x, tl.block_type):
        pass


@triton.jit
def branch_made(x_ptr, y_ptr, n, flag):
    if flag > 0:
        d = tl.make_tensor_descriptor(x_ptr, [n], [1], [64])
    else:
        d = tl.make_tensor_descriptor(y_ptr, [n], [1], [64])
    d.store([0], d.load([0]))


@triton.jit
def loop_made(x_ptr, n):
    d = tl.make_tensor_descriptor(x_ptr, [n], [1], [64])
    for i in range(0, n, 64):
        d.store([i], d.load([i]) + 1)
        d = tl.make_tensor_descriptor(x_ptr + 64, [n], [1], [64])
