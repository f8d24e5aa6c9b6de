# tl.randint/rand/randn: Philox 4x32-10 expanded into arith ops with
# upstream Triton's constants, so numbers match it bit for bit. The 64-bit
# seed splits into the two key halves; each round multiplies by 0xD2511F53
# and 0xCD9E8D57 (high halves of 64-bit products) and raises the key by
# 0x9E3779B9 and 0xBB67AE85 (shown below as signed i32). Compiled to PTX,
# these kernels gave the same bits as Triton 3.6 for 100003 offsets on an
# H100 (randint, rand, randn, and randint4x with 7 rounds). tl.philox runs
# the same rounds on counters the caller chooses.
# RUN: %kilnc compile %s -n uniform -s "*fp32, i32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=RAND
# RUN: %kilnc compile %s -n normal -s "*fp32, i64" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=RANDN
# RUN: %kilnc compile %s -n ints -s "*u32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=INT
# RUN: %kilnc compile %s -n counters -s "*u32, i64, i32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=PHILOX
# RUN: %kilnc compile %s -n wide_counters -s "*u64, i32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=PHILOX64
# 64-bit high products on blocks reach the PTX (issue 13: they crashed
# kilnc, reached then from FlagAttention's tl.rand on i64 offsets, which is
# 32-bit Philox now: wide_offsets below).
# RUN: %kilnc compile %s -n wide_counters -s "*u64, i32" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=PHILOX64PTX
# RUN: %kilnc compile %s -n wide_offsets -s "*fp32, i64" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=WIDE-OFFSETS
# tl.philox on (offset, 0, 0, 0) is tl.randint4x: the same PTX.
# RUN: %kilnc compile %s -n via_philox -s "*u32, i32" --arch sm_80 --emit ptx -o - | sed 's/via_philox/K/g' > %t.philox
# RUN: %kilnc compile %s -n via_randint4x -s "*u32, i32" --arch sm_80 --emit ptx -o - | sed 's/via_randint4x/K/g' > %t.randint4x
# RUN: diff %t.philox %t.randint4x
import triton
import triton.language as tl


# RAND-LABEL: func.func @uniform
# RAND-DAG: arith.constant -1640531527 : i32
# RAND-DAG: arith.constant -1150833019 : i32
# RAND-DAG: arith.constant dense<-845247145> : tensor<256xi32>
# RAND-DAG: arith.constant dense<-766435501> : tensor<256xi32>
# RAND-DAG: arith.constant dense<4.6566126E-10> : tensor<256xf32>
# The seed is sign-extended to 64 bits and split into the key halves.
# RAND: %[[SEED:.*]] = arith.extsi %arg1 : i32 to i64
# RAND: arith.shrui %[[SEED]], %{{.*}} : i64
# High products: mul.hi.u32, NVVM's intrinsic (as Triton calls it).
# RAND: kiln.extern_elementwise "llvm.nvvm.mulhi.ui"({{.*}}) {libname = "nvvm", pure} : (tensor<256xi32>, tensor<256xi32>) -> tensor<256xi32>
# uint -> float in [0, 1): fold negatives, then scale.
# RAND: arith.select
# RAND: arith.sitofp
# RAND: arith.mulf
@triton.jit
def uniform(out_ptr, seed):
    offs = tl.program_id(0) * 256 + tl.arange(0, 256)
    r = tl.rand(seed, offs)
    tl.static_assert(r.dtype == tl.float32)
    tl.store(out_ptr + offs, r)


# RANDN-LABEL: func.func @normal
# An int64 seed needs no extension before the split.
# RANDN-NOT: arith.extsi
# RANDN: arith.shrui %arg1, %{{.*}} : i64
# RANDN: kiln.extern_elementwise "llvm.nvvm.mulhi.ui"
# Box-Muller on the first two outputs.
# RANDN: arith.maxnumf
# RANDN: math.log
# RANDN: math.sqrt
# RANDN: math.cos
@triton.jit
def normal(out_ptr, seed):
    offs = tl.arange(0, 256)
    tl.store(out_ptr + offs, tl.randn(seed, offs, n_rounds=10))


# INT-LABEL: func.func @ints
# Seven rounds: 14 high products, less the one of the first round's zero
# counter, which folds away.
# INT-COUNT-13: kiln.extern_elementwise "llvm.nvvm.mulhi.ui"
# INT-NOT: llvm.nvvm.mulhi.ui
@triton.jit
def ints(out_ptr):
    offs = tl.arange(0, 64)
    a, b, c, d = tl.randint4x(1234, offs, n_rounds=7)
    tl.static_assert(a.dtype == tl.uint32)
    tl.store(out_ptr + offs, a ^ b ^ c ^ d)


# tl.philox keys the rounds with the seed (split into halves for 32-bit
# counters) and runs them on the caller's four counters: a block, a run-time
# scalar and python ints, bitcast to uint32 and broadcast as arithmetic.
# PHILOX-LABEL: func.func @counters
# PHILOX-DAG: arith.constant dense<-845247145> : tensor<64xi32>
# PHILOX-DAG: arith.constant dense<-766435501> : tensor<64xi32>
# An int64 seed splits without an extension.
# PHILOX-NOT: arith.extsi
# PHILOX: arith.shrui %arg1, %{{.*}} : i64
# PHILOX: %[[K0:.*]] = arith.trunci %{{.*}} : i64 to i32
# PHILOX: arith.trunci %{{.*}} : i64 to i32
# Round 1: c0 = umulhi(B, c2) ^ c1 ^ k0 with c2 = 0 folds to c1 ^ k0.
# PHILOX: arith.xori %arg2, %[[K0]] : i32
# PHILOX: kiln.extern_elementwise "llvm.nvvm.mulhi.ui"
# PHILOX: arith.xori %{{.*}}, %{{.*}} : tensor<64xi32>
# PHILOX: arith.muli %{{.*}}, %{{.*}} : tensor<64xi32>
@triton.jit
def counters(out_ptr, seed, hi):
    offs = tl.arange(0, 64)
    a, b, c, d = tl.philox(seed, offs.to(tl.uint32), hi, 0, 7)
    tl.static_assert(a.dtype == tl.uint32)
    tl.static_assert(d.dtype == tl.uint32)
    tl.store(out_ptr + offs, a ^ b ^ c ^ d)


# 64-bit counters: Philox 4x64 with the whole seed as the low key half.
# PHILOX64-LABEL: func.func @wide_counters
# PHILOX64: arith.constant dense<-3249550476889527149> : tensor<64xi64>
# PHILOX64: arith.extsi %arg1 : i32 to i64
# PHILOX64: kiln.extern_elementwise "__nv_umul64hi"{{.*}} : (tensor<64xi64>, tensor<64xi64>) -> tensor<64xi64>
# PHILOX64PTX: mul.hi.u64
@triton.jit
def wide_counters(out_ptr, seed):
    offs = tl.arange(0, 64).to(tl.int64)
    a, b, c, d = tl.philox(seed, offs, offs * 0, offs * 0, offs * 0, n_rounds=4)
    tl.static_assert(a.dtype == tl.uint64)
    tl.store(out_ptr + offs, a + b + c + d)


@triton.jit
def via_philox(out_ptr, seed):
    offs = tl.arange(0, 64)
    a, b, c, d = tl.philox(seed, offs, 0, 0, 0)
    tl.store(out_ptr + offs, a ^ b ^ c ^ d)


@triton.jit
def via_randint4x(out_ptr, seed):
    offs = tl.arange(0, 64)
    a, b, c, d = tl.randint4x(seed, offs)
    tl.store(out_ptr + offs, a ^ b ^ c ^ d)


# tl.rand on 64-bit offsets is 32-bit Philox on the offsets' two halves, as
# upstream's randint4x splits them (the differential check compares the
# numbers with Triton's bit for bit: rand_wide_offsets).
# WIDE-OFFSETS-LABEL: func.func @wide_offsets
# WIDE-OFFSETS-NOT: -3249550476889527149
# WIDE-OFFSETS-DAG: arith.constant dense<-845247145> : tensor<64xi32>
# WIDE-OFFSETS-DAG: arith.shr{{[su]}}i {{.*}} : tensor<64xi64>
# WIDE-OFFSETS-DAG: arith.trunci {{.*}} : tensor<64xi64> to tensor<64xi32>
@triton.jit
def wide_offsets(out_ptr, base):
    local = tl.arange(0, 64)
    tl.store(out_ptr + local, tl.rand(base, base + local.to(tl.int64)))
