# Helpers of upstream's random.py and standard.py that real-world files call
# directly: tl.uint_to_uniform_float (FlagGems' dropout reaches it through a
# try/except fallback), and the private constexpr helper
# triton.language.standard._log2 (lightllm's bitonic argsort).
# RUN: %kilnc compile %s -n uniform -s "*u32, *fp32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=UNIFORM
# RUN: %kilnc compile %s -n log2_sizes -s "out_ptr=*i32, N=64" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=LOG2
# RUN: not %kilnc compile %s -n uniform_float -s "*fp32" --arch sm_90a --emit kiln -o - 2>&1 | FileCheck %s --check-prefix=BADUNIFORM
import triton
import triton.language as tl
from triton.language.standard import _log2

try:
    uint_to_uniform_float = tl.uint_to_uniform_float
except AttributeError:
    @triton.jit
    def uint_to_uniform_float(x):
        return x * 0.0


# uint32 -> int32 by bitcast, negatives folded, scaled by 2**-31 (rounded
# down); uint64 as int64 with its own scale.
# UNIFORM-LABEL: func.func @uniform
# UNIFORM-DAG: arith.constant dense<4.6566126E-10> : tensor<64xf32>
# UNIFORM-DAG: arith.constant dense<1.084202{{[0-9]*}}E-19> : tensor<64xf32>
# UNIFORM: arith.select
# UNIFORM: arith.sitofp %{{.*}} : tensor<64xi32> to tensor<64xf32>
# UNIFORM: arith.select
# UNIFORM: arith.sitofp %{{.*}} : tensor<64xi64> to tensor<64xf32>
@triton.jit
def uniform(in_ptr, out_ptr):
    offs = tl.arange(0, 64)
    x = tl.load(in_ptr + offs)
    u = uint_to_uniform_float(x)
    tl.static_assert(u.dtype == tl.float32)
    w = tl.uint_to_uniform_float(x.to(tl.uint64) << 32)
    tl.store(out_ptr + offs, u + w)


# _log2 rounds down: 6 for 64, 0 for 1.
# LOG2-LABEL: func.func @log2_sizes
# LOG2: arith.constant dense<6> : tensor<64xi32>
@triton.jit
def log2_sizes(out_ptr, N: tl.constexpr):
    n_dims: tl.constexpr = _log2(N)
    tl.static_assert(n_dims == 6)
    tl.static_assert(_log2(1) == 0)
    tl.static_assert(_log2(96) == 6)
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, offs * 0 + n_dims)


# BADUNIFORM: standard_helpers.py:[[@LINE+4]]:{{[0-9]+}}: error: argument 'x' of tl.uint_to_uniform_float must be 32- or 64-bit integers, got a block of type <64xfp32>
@triton.jit
def uniform_float(ptr):
    offs = tl.arange(0, 64)
    tl.store(ptr + offs, tl.uint_to_uniform_float(tl.load(ptr + offs)))
