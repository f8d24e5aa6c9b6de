# Tensor descriptors end to end (descriptor_gpu_test.cc): host descriptor
# arguments (upstream's TensorDescriptor, `tensordesc<...>` in the
# specialization) and descriptors made in the kernel, loaded, stored and
# atomically added through. Tiles at the edges reach past the tensor: their
# out-of-bounds elements read as zero and are not written.
import triton
import triton.language as tl


@triton.jit
def scale_tiles(in_desc, out_desc, sums, alpha, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    x = in_desc.load([pid_m * BM, pid_n * BN])
    out_desc.store([pid_m * BM, pid_n * BN], x * alpha)
    # Out-of-bounds elements read as zero, so the sum is that of the tile's
    # in-bounds part.
    tl.store(sums + pid_m * tl.num_programs(1) + pid_n, tl.sum(tl.sum(x, axis=1), axis=0))


@triton.jit
def accumulate_tiles(x_ptr, acc_ptr, M, N, stride_x, stride_acc, BM: tl.constexpr, BN: tl.constexpr):
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[stride_x, 1], block_shape=[BM, BN])
    acc_desc = tl.make_tensor_descriptor(acc_ptr, shape=[M, N], strides=[stride_acc, 1],
                                         block_shape=[BM, BN])
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    acc_desc.atomic_add([m, n], x_desc.load([m, n]))


@triton.jit
def accumulate_host_tiles(x_desc, acc_desc, BM: tl.constexpr, BN: tl.constexpr):
    # Host descriptors: on sm_90a, with extents in whole 16-byte chunks, the
    # add is a TMA reduction (cp.reduce.async.bulk.tensor).
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    acc_desc.atomic_add([m, n], x_desc.load([m, n]))


@triton.jit
def matmul_tiles(a_desc, b_desc, c_ptr, M, N, K, stride_cm, BM: tl.constexpr, BN: tl.constexpr,
                 BK: tl.constexpr):
    # c = a @ b.T through host descriptors (a: M x K, b: N x K, both
    # K-contiguous): on sm_90a the pipelined operands are TMA copies from
    # the launcher's tensor maps, zero past every edge (K's too).
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([pid_m * BM, k])
        b = b_desc.load([pid_n * BN, k])
        acc = tl.dot(a, b.T, acc)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc, mask=mask)


@triton.jit
def persistent_matmul_tiles(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                            BK: tl.constexpr):
    # A persistent c = a @ b.T (fewer programs than tiles, each taking every
    # num_programs-th tile) whose tile and K loops are fused (flatten=True):
    # on sm_90a the K loop's TMA ring stays full across tiles. The epilogue
    # stores at the offsets the prologue computed; with K = 0 the kernel
    # takes the nested loop and stores zeros.
    num_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * num_n
    for tile in tl.range(tl.program_id(0), num_tiles, tl.num_programs(0), flatten=True):
        m = (tile // num_n) * BM
        n = (tile % num_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            acc = tl.dot(a_desc.load([m, k]), b_desc.load([n, k]).T, acc)
        c_desc.store([m, n], acc)


@triton.jit
def device_matmul_tiles(a_ptr, b_ptr, c_ptr, M, N, K, stride_a, stride_b, stride_c, BM: tl.constexpr,
                        BN: tl.constexpr, BK: tl.constexpr):
    # c = a @ b.T through descriptors the kernel makes, one program per tile
    # of a 2-D grid. On sm_90a, when the aligned variant runs (base and
    # strides in whole 16-byte chunks), each program encodes their tensor
    # maps in its share of the global scratch buffer and copies with TMA.
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_a, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[stride_b, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_c, 1], block_shape=[BM, BN])
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([m, k]), b_desc.load([n, k]).T, acc)
    c_desc.store([m, n], acc)


@triton.jit
def device_persistent_matmul_tiles(a_ptr, b_ptr, c_ptr, M, N, K, stride_a, stride_b, stride_c,
                                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # persistent_matmul_tiles with descriptors made in the kernel (as
    # tutorial 09's matmul_kernel_descriptor_persistent).
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_a, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[stride_b, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_c, 1], block_shape=[BM, BN])
    num_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * num_n
    for tile in tl.range(tl.program_id(0), num_tiles, tl.num_programs(0), flatten=True):
        m = (tile // num_n) * BM
        n = (tile % num_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            acc = tl.dot(a_desc.load([m, k]), b_desc.load([n, k]).T, acc)
        c_desc.store([m, n], acc)
