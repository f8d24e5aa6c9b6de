# Memory builtins: cache/eviction/volatile options on kiln.load/kiln.store,
# the atomics (kiln.atomic_rmw, kiln.atomic_cas), block pointers
# (kiln.make_block_ptr, kiln.advance, boundary_check, padding), and tl.dot.
# RUN: %kilnc compile %s -n access_options -s "*fp32, *fp32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=OPTS
# RUN: %kilnc compile %s -n atomics -s "*fp32, *i32, *u32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=ATOMIC
# RUN: %kilnc compile %s -n block_pointers -s "*fp16, i32, i32, i32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=BLOCK
# RUN: %kilnc compile %s -n dots -s "*fp16, *fp32, *i8" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=DOT
# RUN: %kilnc compile %s -n pointer_casts -s "*fp32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=PTR
# RUN: %kilnc compile %s -n bool_memory -s "*i1" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=BOOL
import triton
import triton.language as tl


# OPTS-LABEL: func.func @access_options
# OPTS: kiln.load %{{.*}}, mask %{{.*}}, other %{{.*}} cache = cg evict = evict_last volatile :
# OPTS: kiln.store %{{.*}}, %{{.*}}, mask %{{.*}} cache = cs evict = evict_first :
@triton.jit
def access_options(x_ptr, y_ptr):
    r = tl.arange(0, 128)
    m = r < 100
    x = tl.load(x_ptr + r, mask=m, other=0.0, cache_modifier=".cg",
                eviction_policy="evict_last", volatile=True)
    tl.store(y_ptr + r, x, mask=m, cache_modifier=".cs", eviction_policy="evict_first")


# ATOMIC-LABEL: func.func @atomics
# ATOMIC: kiln.atomic_rmw fadd acq_rel gpu %{{.*}}, %{{.*}}, mask %{{.*}} : tensor<128x!kiln.ptr<f32>>, tensor<128xf32>, tensor<128xi1>
# ATOMIC: kiln.atomic_rmw max relaxed cta %{{.*}}, %{{.*}} : tensor<128x!kiln.ptr<f32>>, tensor<128xf32>
# ATOMIC: kiln.atomic_rmw add acquire sys %{{.*}}, %{{.*}} : !kiln.ptr<i32>, i32
# ATOMIC: kiln.atomic_rmw umax acq_rel gpu
# ATOMIC: kiln.atomic_rmw umin acq_rel gpu
# ATOMIC: kiln.atomic_rmw and acq_rel gpu
# ATOMIC: kiln.atomic_rmw or acq_rel gpu
# ATOMIC: kiln.atomic_rmw xor release gpu
# ATOMIC: kiln.atomic_rmw xchg acq_rel gpu
# ATOMIC: kiln.atomic_cas acq_rel gpu %{{.*}}, %{{.*}}, %{{.*}} : !kiln.ptr<i32>, i32
@triton.jit
def atomics(f_ptr, i_ptr, u_ptr):
    r = tl.arange(0, 128)
    old = tl.atomic_add(f_ptr + r, 1.0, mask=r < 64)
    tl.atomic_max(f_ptr + r, old, sem="relaxed", scope="cta")
    tl.atomic_add(i_ptr, 1, sem="acquire", scope="sys")
    tl.atomic_max(u_ptr + r, r)
    tl.atomic_min(u_ptr + r, 3)
    tl.atomic_and(u_ptr + r, 1)
    tl.atomic_or(u_ptr + r, 2)
    tl.atomic_xor(u_ptr + r, 4, sem="release")
    tl.atomic_xchg(u_ptr + r, 5)
    while_locked = tl.atomic_cas(i_ptr, 0, 1)
    tl.store(i_ptr + 1, while_locked)


# BLOCK-LABEL: func.func @block_pointers
# BLOCK: %[[BP:.*]] = kiln.make_block_ptr %arg0, [%{{.*}}, %{{.*}}], [%{{.*}}, %{{.*}}], [%{{.*}}, %{{.*}}], [1, 0] : !kiln.ptr<f16> -> !kiln.block_ptr<tensor<64x32xf16>>
# BLOCK: kiln.load %[[BP]] boundary_check = [0, 1] padding = zero : (!kiln.block_ptr<tensor<64x32xf16>>) -> tensor<64x32xf16>
# BLOCK: %[[NEXT:.*]] = kiln.advance %[[BP]], [%{{.*}}, %{{.*}}] : !kiln.block_ptr<tensor<64x32xf16>>
# BLOCK: kiln.store %[[NEXT]], %{{.*}} boundary_check = [1] : !kiln.block_ptr<tensor<64x32xf16>>, tensor<64x32xf16>
@triton.jit
def block_pointers(a_ptr, M, N, stride_m):
    bp = tl.make_block_ptr(a_ptr, shape=(M, N), strides=(stride_m, 1),
                           offsets=(tl.program_id(0) * 64, 0),
                           block_shape=(64, 32), order=(1, 0))
    a = tl.load(bp, boundary_check=(1, 0), padding_option="zero")
    bp = tl.advance(bp, (0, 32))
    tl.store(bp, a * 2, boundary_check=1)


# DOT-LABEL: func.func @dots
# DOT: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<32x64xf32>
# DOT: %[[F:.*]] = kiln.dot %{{.*}}, %{{.*}}, %[[ZERO]], tf32 : tensor<32x16xf16> * tensor<16x64xf16> -> tensor<32x64xf32>
# DOT: kiln.dot %{{.*}}, %{{.*}}, %{{.*}}, ieee : tensor<32x16xf32> * tensor<16x64xf32> -> tensor<32x64xf32>
# out_dtype=tl.float16 on fp16 operands: an fp16 dot (the tensor cores'
# fp16 accumulator, as upstream's).
# DOT: kiln.dot %{{.*}}, %{{.*}}, %{{.*}}, tf32 : tensor<32x16xf16> * tensor<16x64xf16> -> tensor<32x64xf16>
# int8 accumulates in int32.
# DOT: kiln.dot %{{.*}}, %{{.*}}, %{{.*}}, tf32 : tensor<32x32xi8> * tensor<32x32xi8> -> tensor<32x32xi32>
@triton.jit
def dots(h_ptr, f_ptr, i_ptr):
    rm = tl.arange(0, 32)
    rk = tl.arange(0, 16)
    rn = tl.arange(0, 64)
    a = tl.load(h_ptr + rm[:, None] * 16 + rk[None, :])
    b = tl.load(h_ptr + rk[:, None] * 64 + rn[None, :])
    acc = tl.dot(a, b)
    acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
    h = tl.dot(a, b, out_dtype=tl.float16)
    tl.store(f_ptr + rm[:, None] * 64 + rn[None, :], acc + h)
    r32 = tl.arange(0, 32)
    q = tl.load(i_ptr + r32[:, None] * 32 + r32[None, :])
    tl.store(i_ptr + r32[:, None] * 32 + r32[None, :], tl.dot(q, q).to(tl.int8))


# PTR-LABEL: func.func @pointer_casts
# PTR: kiln.ptr_cast %arg0 : !kiln.ptr<f32> -> !kiln.ptr<i32>
# PTR: kiln.ptr_to_int %arg0 : !kiln.ptr<f32> -> i64
@triton.jit
def pointer_casts(x_ptr):
    ip = x_ptr.to(tl.pointer_type(tl.int32))
    addr = x_ptr.to(tl.int64)
    tl.store(ip, addr.to(tl.int32))


# Pointers to int1 address bytes, as in Triton: loads and stores go through
# int8.
# BOOL-LABEL: func.func @bool_memory
# BOOL: %[[BYTES:.*]] = kiln.ptr_cast %{{.*}} : tensor<64x!kiln.ptr<i1>> -> tensor<64x!kiln.ptr<i8>>
# BOOL: %[[B:.*]] = kiln.load %[[BYTES]] : (tensor<64x!kiln.ptr<i8>>) -> tensor<64xi8>
# BOOL: arith.cmpi ne, %[[B]], %{{.*}} : tensor<64xi8>
# BOOL: arith.extui %{{.*}} : tensor<64xi1> to tensor<64xi8>
# BOOL: kiln.store %[[BYTES]], %{{.*}} : tensor<64x!kiln.ptr<i8>>, tensor<64xi8>
@triton.jit
def bool_memory(b_ptr):
    r = tl.arange(0, 64)
    b = tl.load(b_ptr + r)
    tl.store(b_ptr + r, b ^ (r < 32))
