# Math builtins: tl.exp & co. on the math dialect (fp32/fp64 only, as in
# Triton), IEEE-rounded sqrt_rn/div_rn as kiln ops, fdiv, fma, abs, clamp,
# umulhi, minimum/maximum with propagate_nan, sigmoid; libdevice calls as
# kiln.extern_elementwise by dtype; tl.inline_asm_elementwise.
# RUN: %kilnc compile %s -n unary -s "*fp32, *fp64" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=UNARY
# RUN: %kilnc compile %s -n binary -s "*fp32, *i32, *u32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=BINARY
# RUN: %kilnc compile %s -n libdevice_calls -s "*fp32, *fp64, *i32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=LIBDEVICE
# RUN: %kilnc compile %s -n cuda_form -s "*fp32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=CUDA
# RUN: %kilnc compile %s -n inline_asm -s "*u32, *fp32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=ASM
# RUN: %kilnc compile %s -n promotions -s "*fp16, *fp32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=PROMOTE
# RUN: %kilnc compile %s -n math_module -s "*fp32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=MODULE
# RUN: %kilnc compile %s -n float_precedence -s "*fp16, *bf16, *fp8e5, *fp8e4nv, *i32, *fp32" --arch sm_90a --emit kiln -o /dev/null
# RUN: not %kilnc compile %s -n fp8_with_int -s "*fp8e5, *i32" --arch sm_90a --emit kiln -o /dev/null 2>&1 | FileCheck %s --check-prefix=FP8INT
import triton
import triton.language as tl
from triton.language.extra import libdevice
from triton.language.extra.cuda import libdevice as cuda_libdevice


# UNARY-LABEL: func.func @unary
# UNARY: math.exp %{{.*}} : tensor<64xf32>
# UNARY: math.exp2
# UNARY: math.log
# UNARY: math.log2
# UNARY: math.sin
# UNARY: math.cos
# UNARY: math.sqrt
# UNARY: math.rsqrt
# UNARY: math.erf
# UNARY: math.floor
# UNARY: math.ceil
# UNARY: math.absf
# UNARY: kiln.precise_sqrt %{{.*}} : tensor<64xf32>
# sigmoid is 1 / (1 + exp(-x)).
# UNARY: arith.negf
# UNARY: math.exp
# UNARY: arith.addf
# UNARY: arith.divf
# UNARY: math.exp %{{.*}} : tensor<64xf64>
@triton.jit
def unary(x_ptr, d_ptr):
    r = tl.arange(0, 64)
    x = tl.load(x_ptr + r)
    y = tl.exp(x) + tl.exp2(x) + tl.log(x) + tl.log2(x) + tl.sin(x) + tl.cos(x)
    y += tl.sqrt(x) + tl.rsqrt(x) + tl.erf(x) + tl.floor(x) + tl.ceil(x)
    y += tl.abs(x) + tl.sqrt_rn(x) + tl.sigmoid(x)
    tl.store(x_ptr + r, y)
    d = tl.load(d_ptr + r)
    tl.store(d_ptr + r, d.exp())


# BINARY-LABEL: func.func @binary
# BINARY: arith.divf %{{.*}}, %{{.*}} : tensor<64xf32>
# BINARY: kiln.precise_divf %{{.*}}, %{{.*}} : tensor<64xf32>
# BINARY: kiln.precise_divf %{{.*}}, %{{.*}} : tensor<64xf32>
# BINARY: math.fma %{{.*}}, %{{.*}}, %{{.*}} : tensor<64xf32>
# BINARY: arith.maxnumf
# BINARY: arith.minnumf
# BINARY: arith.maximumf
# BINARY: arith.minimumf
# BINARY: arith.maximumf
# BINARY: math.absi %{{.*}} : tensor<64xi32>
# umulhi of 32-bit values: mul.hi.u32 through NVVM's intrinsic.
# BINARY: kiln.extern_elementwise "llvm.nvvm.mulhi.ui"({{.*}}) {libname = "nvvm", pure} : (tensor<64xi32>, tensor<64xi32>) -> tensor<64xi32>
@triton.jit
def binary(x_ptr, i_ptr, u_ptr):
    r = tl.arange(0, 64)
    x = tl.load(x_ptr + r)
    y = tl.fdiv(x, 3.0) + tl.fdiv(x, x, ieee_rounding=True) + tl.div_rn(x, 2.0)
    y += tl.fma(x, x, 1.0)
    y += tl.clamp(x, -1.0, 1.0)
    y += tl.clamp(x, 0.0, 2.0, propagate_nan=tl.PropagateNan.ALL)
    y += tl.maximum(x, 0.5, propagate_nan=tl.PropagateNan.ALL)
    tl.store(x_ptr + r, y)
    i = tl.load(i_ptr + r)
    tl.store(i_ptr + r, tl.abs(i))
    u = tl.load(u_ptr + r)
    tl.store(u_ptr + r, tl.umulhi(u, u) + tl.abs(u))


# Overloads are picked by dtype; an argument of another type is converted
# when that makes an overload fit (pow(fp32, 2) uses powif; ldexp of two
# fp32 has none, so the int stays).
# LIBDEVICE-LABEL: func.func @libdevice_calls
# LIBDEVICE: kiln.extern_elementwise "__nv_expf"(%{{.*}}) {libname = "libdevice", pure} : (tensor<64xf32>) -> tensor<64xf32>
# LIBDEVICE: kiln.extern_elementwise "__nv_exp"(%{{.*}}) {libname = "libdevice", pure} : (tensor<64xf64>) -> tensor<64xf64>
# LIBDEVICE: kiln.extern_elementwise "__nv_powif"(%{{.*}}, %{{.*}}) {libname = "libdevice", pure} : (tensor<64xf32>, tensor<64xi32>) -> tensor<64xf32>
# LIBDEVICE: kiln.extern_elementwise "__nv_powf"(%{{.*}}, %{{.*}}) {libname = "libdevice", pure} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
# LIBDEVICE: kiln.extern_elementwise "__nv_isnanf"(%{{.*}}) {libname = "libdevice", pure} : (tensor<64xf32>) -> tensor<64xi32>
# LIBDEVICE: arith.cmpi ne
# LIBDEVICE: kiln.extern_elementwise "__nv_popc"(%{{.*}}) {libname = "libdevice", pure} : (tensor<64xi32>) -> tensor<64xi32>
# LIBDEVICE: kiln.extern_elementwise "__nv_tanhf"(%{{.*}}) {libname = "libdevice", pure} : (f32) -> f32
@triton.jit
def libdevice_calls(x_ptr, d_ptr, i_ptr):
    r = tl.arange(0, 64)
    x = tl.load(x_ptr + r)
    d = tl.load(d_ptr + r)
    i = tl.load(i_ptr + r)
    y = libdevice.exp(x) + libdevice.exp(d).to(tl.float32)
    y += libdevice.pow(x, i) + libdevice.pow(x, 2.5)
    y = tl.where(libdevice.isnan(y), 0.0, y)
    tl.store(i_ptr + r, libdevice.popc(i))
    s = libdevice.tanh(tl.load(x_ptr))
    tl.store(x_ptr + r, y + s)


# CUDA-LABEL: func.func @cuda_form
# CUDA: kiln.extern_elementwise "__nv_fast_expf"
# CUDA: kiln.extern_elementwise "__nv_fdiv_rn"
@triton.jit
def cuda_form(x_ptr):
    r = tl.arange(0, 64)
    x = tl.load(x_ptr + r)
    tl.store(x_ptr + r, cuda_libdevice.div_rn(cuda_libdevice.fast_expf(x), x))


# ASM-LABEL: func.func @inline_asm
# ASM: kiln.inline_asm_elementwise "shf.l.wrap.b32 $0, $1, $2, $3;"(%{{.*}}, %{{.*}}, %{{.*}}) {constraints = "=r,r,r,r", packed_element = 1 : i32, pure = true} : (tensor<64xi32>, tensor<64xi32>, tensor<64xi32>) -> tensor<64xi32>
# Two results come back as a tuple.
# ASM: kiln.inline_asm_elementwise "{{.*}}"(%{{.*}}) {constraints = "=r,=r,r", packed_element = 1 : i32, pure = true} : (tensor<64xf32>) -> (tensor<64xi32>, tensor<64xi32>)
@triton.jit
def inline_asm(u_ptr, x_ptr):
    r = tl.arange(0, 64)
    u = tl.load(u_ptr + r)
    rot = tl.inline_asm_elementwise("shf.l.wrap.b32 $0, $1, $2, $3;", "=r,r,r,r",
                                    [u, u, 3], dtype=tl.uint32, is_pure=True, pack=1)
    x = tl.load(x_ptr + r)
    a, b = tl.inline_asm_elementwise("mov.b32 $0, $2; mov.b32 $1, $2;", "=r,=r,r", [x],
                                     dtype=(tl.int32, tl.int32), is_pure=True, pack=1)
    tl.store(u_ptr + r, rot + a + b)


# fp16 / fp16 computes in fp32, as in Triton (PTX has no fp16 division).
# PROMOTE-LABEL: func.func @promotions
# PROMOTE: arith.extf %{{.*}} : tensor<64xf16> to tensor<64xf32>
# PROMOTE: arith.divf %{{.*}}, %{{.*}} : tensor<64xf32>
@triton.jit
def promotions(h_ptr, out_ptr):
    r = tl.arange(0, 64)
    h = tl.load(h_ptr + r)
    q = h / h
    tl.static_assert(q.dtype == tl.float32)
    tl.store(out_ptr + r, q)


# Upstream's float precedence, not width: fp32, then fp16 (over bf16 and
# fp8), bf16 only with bf16, two different fp8 kinds give fp16. The static
# asserts fail the compile if a rule breaks.
@triton.jit
def float_precedence(h_ptr, b_ptr, e5_ptr, e4_ptr, i_ptr, out_ptr):
    r = tl.arange(0, 64)
    h = tl.load(h_ptr + r)
    b = tl.load(b_ptr + r)
    e5 = tl.load(e5_ptr + r)
    e4 = tl.load(e4_ptr + r)
    i = tl.load(i_ptr + r)
    tl.static_assert((h * b).dtype == tl.float16)
    tl.static_assert((b * h).dtype == tl.float16)
    tl.static_assert((h + e5).dtype == tl.float16)
    tl.static_assert((h + i).dtype == tl.float16)
    tl.static_assert((b + i).dtype == tl.float32)
    tl.static_assert((b + e5).dtype == tl.float32)
    tl.static_assert((b + b).dtype == tl.bfloat16)
    tl.static_assert((b / b).dtype == tl.float32)
    tl.static_assert((e5 + e4).dtype == tl.float16)
    tl.static_assert((e5 + e5).dtype == tl.float8e5)
    tl.static_assert((b * 2.0).dtype == tl.bfloat16)
    tl.static_assert((h * b + tl.load(out_ptr + r)).dtype == tl.float32)
    tl.store(out_ptr + r, (h * b).to(tl.float32))


# FP8INT: math_ops.py:[[@LINE+5]]:14: error: operator '+' cannot combine fp8e5 and i32 (as in Triton); convert one with .to()
@triton.jit
def fp8_with_int(e5_ptr, i_ptr):
    r = tl.arange(0, 64)
    e5 = tl.load(e5_ptr + r)
    bad = e5 + tl.load(i_ptr + r)
    tl.store(e5_ptr + r, bad)


# tl.math.NAME is tl.NAME (not libdevice).
# MODULE-LABEL: func.func @math_module
# MODULE: math.log %{{.*}} : tensor<64xf32>
# MODULE: kiln.precise_divf
# MODULE-NOT: kiln.extern_elementwise
@triton.jit
def math_module(x_ptr):
    r = tl.arange(0, 64)
    x = tl.load(x_ptr + r)
    tl.store(x_ptr + r, tl.math.div_rn(tl.math.log(x), x))
