# `:1`, as in upstream's AOT compiler: the argument is the constant 1. It
# leaves the entry point (one .param fewer), folds into the address
# arithmetic, and stays in the metadata, marked, for the launcher to check.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %kilnc compile %s -n strided_copy -s "src=*fp32:16, dst=*fp32:16, n=i32:16, stride=i32:1, BLOCK=512" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=IR
# RUN: %kilnc compile %s -n strided_copy -s "src=*fp32:16, dst=*fp32:16, n=i32:16, stride=i32:1, BLOCK=512" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=UNIT
# RUN: %kilnc compile %s -n strided_copy -s "src=*fp32:16, dst=*fp32:16, n=i32:16, stride=i32:16, BLOCK=512" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=ANY
# RUN: %kilnc compile %s -n strided_copy -s "*fp32, *fp32, i32, i32:1, 512" --aligned --arch sm_90a -o %t/one.cubin --metadata %t/one.json
# RUN: FileCheck %s --check-prefix=META < %t/one.json

# The kernel takes three arguments; `stride` is the constant 1 of its type.
# IR-LABEL: func.func @strided_copy(%arg0: !kiln.ptr<f32> {kiln.divisibility = 16 : i32}, %arg1: !kiln.ptr<f32> {kiln.divisibility = 16 : i32}, %arg2: i32 {kiln.divisibility = 16 : i32})
# IR: %[[C1:.*]] = arith.constant 1 : i32
# IR: kiln.splat %[[C1]] : i32 -> tensor<512xi32>

# One .param fewer than the entry point that takes the stride; the constant
# folds (no multiplication by a stride), and the offsets, now contiguous,
# give 128-bit accesses.
# UNIT: .entry strided_copy(
# UNIT-NEXT: .param .u64 {{.*}}strided_copy_param_0,
# UNIT-NEXT: .param .u64 {{.*}}strided_copy_param_1,
# UNIT-NEXT: .param .u32 strided_copy_param_2
# UNIT-NEXT: )
# UNIT-NOT: mul.lo
# UNIT: ld.global.v4.b32
# UNIT-NOT: mul.lo
# UNIT: st.global.v4.b32

# With the stride an argument: four parameters, a multiplication by the
# stride and scalar accesses.
# ANY: .entry strided_copy(
# ANY: .param .u32 strided_copy_param_3
# ANY: ld.param.b32 %r[[STRIDE:[0-9]+]], [strided_copy_param_3];
# ANY: mul.lo.s32 %r{{[0-9]+}}, %r[[STRIDE]],
# ANY-NOT: ld.global.v4
# ANY: ld.global.b32
# ANY-NOT: ld.global.v4

# --aligned keeps `:1`; the metadata lists the parameter for the launcher.
# META: "signature": "*fp32:16, *fp32:16, i32:16, i32:1, 512",
# META: "name": "n",
# META-NEXT: "type": "i32",
# META-NEXT: "divisibility": 16
# META: "name": "stride",
# META-NEXT: "type": "i32",
# META-NEXT: "divisibility": 1,
# META-NEXT: "equal_to_1": true
# META: "constexprs": [

# `:1` is for integers.
# RUN: not %kilnc compile %s -n strided_copy -s "*fp32:1, *fp32, i32, i32, 512" --arch sm_90a -o %t/x 2>&1 | FileCheck %s --check-prefix=ERR
# ERR: error: bad signature for 'strided_copy': parameter 'src': ':1' (the argument equals 1) applies to integer types i8..i64 and u8..u64 only, got '*fp32:1'; pointers take ':16'
import triton
import triton.language as tl


@triton.jit
def strided_copy(src, dst, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs * stride, tl.load(src + offs * stride, mask=mask), mask=mask)
