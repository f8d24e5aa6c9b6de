# tf32 operands of a dot no pipelined loop feeds are staged with their rows
# along the dimension their registers run, four elements a 16-byte store
# (compiler/conversion/DotToLLVM.cpp, stagedOperand): b loaded N-contiguous
# in rows along K, a loaded K-contiguous in rows along M; transposed loads
# the other way round. K-contiguous rows (whole 16-byte words) are read by
# ldmatrix: a 16x8 tile of a in one .x4, an 8x8 tile of b in one .x2 (its
# fragments are tf32's); rows along K a word at a time.
# RUN: %kilnc compile %s -n row_major -s "*fp32:16, *fp32:16, *fp32:16, 32, 128, 32" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=ROWS
# RUN: %kilnc compile %s -n transposed -s "*fp32:16, *fp32:16, *fp32:16, 32, 64, 64" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=COLUMNS
import triton
import triton.language as tl

# a: 32 x 32 over 128 threads, 2 stores a thread; b: 32 x 128, 8.
# ROWS-NOT: st.shared.b32
# ROWS-COUNT-10: st.shared.v4.b32
# ROWS-NOT: st.shared
# ROWS-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# ROWS-DAG: ld.shared.b32
# ROWS: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
# a: 32 x 64, 4 stores a thread; b: 64 x 64, 8.
# COLUMNS-NOT: st.shared.b32
# COLUMNS-COUNT-12: st.shared.v4.b32
# COLUMNS-NOT: st.shared
# COLUMNS-NOT: ldmatrix.sync.aligned.m8n8.x4
# COLUMNS-DAG: ldmatrix.sync.aligned.m8n8.x2.shared.b16
# COLUMNS-DAG: ld.shared.b32
# COLUMNS: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32


@triton.jit
def row_major(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr,
              K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


@triton.jit
def transposed(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr,
               K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rk[None, :] * M + rm[:, None])
    b = tl.load(b_ptr + rn[None, :] * K + rk[:, None])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))
