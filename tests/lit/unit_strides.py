# kilnc compile --unit-strides: the aligned variant with the unit-stride
# parameters taken equal to 1: integer parameters named like strides that the
# kernel multiplies by an index along a tensor's last axis, or gives as the
# stride of a block pointer's fastest-varying dimension
# (compiler/driver/UnitStrides.h, docs/usage.md "Unit strides are automatic").
# RUN: rm -rf %t && mkdir -p %t

# Upstream's matmul indexing: stride_ak, stride_bn and stride_cn, never
# stride_am, stride_bk or stride_cm; everything else as --aligned.
# RUN: %kilnc compile %S/../e2e/strided_matmul.py -s "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp32, M=i32, N=i32, K=i32, stride_am=i32, stride_ak=i32, stride_bk=i32, stride_bn=i32, stride_cm=i32, stride_cn=i32, BM=64, BN=64, BK=32" --unit-strides --arch sm_90a -o %t/mm.cubin --metadata %t/mm.json
# RUN: FileCheck %s --check-prefix=MATMUL < %t/mm.json
# MATMUL: "signature": "*fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32:16, i32:16, i32:1, i32:16, i32:1, i32:16, i32:1, 64, 64, 32",
# MATMUL: "name": "stride_ak",
# MATMUL-NEXT: "type": "i32",
# MATMUL-NEXT: "divisibility": 1,
# MATMUL-NEXT: "equal_to_1": true
# The same in the positional form.
# RUN: %kilnc compile %S/../e2e/strided_matmul.py -s "*fp16, *fp16, *fp32, i32, i32, i32, i32, i32, i32, i32, i32, i32, 64, 64, 32" --unit-strides --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=POSITIONAL
# POSITIONAL: func.func @strided_matmul(
# POSITIONAL-SAME: %arg6: i32 {kiln.divisibility = 16 : i32}, %arg7: i32 {kiln.divisibility = 16 : i32}, %arg8: i32 {kiln.divisibility = 16 : i32})

# A tile copied row-major: the unit stride makes each row contiguous, and
# with aligned rows that is 128-bit accesses, where the aligned variant (a
# stride that is a multiple of 16) must access element by element.
# RUN: %kilnc compile %s -n tile_copy -s "src=*fp16, dst=*fp16, M=i32, N=i32, stride_sm=i32, stride_sn=i32, stride_dm=i32, stride_dn=i32, BM=64, BN=64" --unit-strides --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=UNIT
# RUN: %kilnc compile %s -n tile_copy -s "src=*fp16, dst=*fp16, M=i32, N=i32, stride_sm=i32, stride_sn=i32, stride_dm=i32, stride_dn=i32, BM=64, BN=64" --aligned --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=ALIGNED
# UNIT: .entry tile_copy(
# UNIT: .param .u32 tile_copy_param_5
# UNIT-NEXT: )
# UNIT-COUNT-4: ld.global.v4.b32
# UNIT-COUNT-4: st.global.v4.b32
# ALIGNED: .param .u32 tile_copy_param_7
# ALIGNED-NOT: ld.global.v
# ALIGNED: ld.global.b16
# ALIGNED-NOT: ld.global.v

# Block pointers: the stride of the fastest-varying dimension (order[0]).
# RUN: %kilnc compile %S/../kernels/memory/block_pointers.py -n tile_copy -s "src_ptr=*fp32, dst_ptr=*fp32, M=i32, N=i32, stride_m=i32, stride_n=i32, BM=64, BN=64" --unit-strides --arch sm_90a -o %t/block.cubin --metadata %t/block.json
# RUN: FileCheck %s --check-prefix=BLOCK < %t/block.json
# BLOCK: "signature": "*fp32:16, *fp32:16, i32:16, i32:16, i32:16, i32:1, 64, 64",

# No unit-stride parameter (row_sum_block_ptr's only stride is its rows'):
# the aligned variant, byte for byte.
# RUN: %kilnc compile %S/../kernels/memory/block_pointers.py -n row_sum_block_ptr -s "x_ptr=*fp32, out_ptr=*fp32, M=i32, N=i32, stride_m=i64, BM=32, BN=128" --unit-strides --arch sm_90a -o %t/rows_unit.cubin --metadata %t/rows_unit.json
# RUN: %kilnc compile %S/../kernels/memory/block_pointers.py -n row_sum_block_ptr -s "x_ptr=*fp32, out_ptr=*fp32, M=i32, N=i32, stride_m=i64, BM=32, BN=128" --aligned --arch sm_90a -o %t/rows_aligned.cubin --metadata %t/rows_aligned.json
# RUN: cmp %t/rows_unit.cubin %t/rows_aligned.cubin
# RUN: cmp %t/rows_unit.json %t/rows_aligned.json

# Per config with --autotune.
# RUN: %kilnc compile %s -n tuned_tile_copy -s "src=*fp32, dst=*fp32, M=i32, N=i32, stride_sm=i32, stride_sn=i32, stride_dm=i32, stride_dn=i32" --unit-strides --autotune --arch sm_90a -o %t/tuned
# RUN: FileCheck %s --check-prefix=TUNED < %t/tuned/config1.json
# TUNED: "signature": "*fp32:16, *fp32:16, i32:16, i32:16, i32:16, i32:1, i32:16, i32:1, 32, 128",

# A parameter given `:16` or `:1` is the user's: not inferred; and
# --unit-strides includes --aligned.
# RUN: %kilnc compile %s -n tile_copy -s "src=*fp16, dst=*fp16, M=i32, N=i32, stride_sm=i32, stride_sn=i32:16, stride_dm=i32, stride_dn=i32, BM=64, BN=64" --unit-strides --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=GIVEN
# GIVEN: func.func @tile_copy(%arg0: !kiln.ptr<f16> {kiln.divisibility = 16 : i32}, %arg1: !kiln.ptr<f16> {kiln.divisibility = 16 : i32}, %arg2: i32 {kiln.divisibility = 16 : i32}, %arg3: i32 {kiln.divisibility = 16 : i32}, %arg4: i32 {kiln.divisibility = 16 : i32}, %arg5: i32 {kiln.divisibility = 16 : i32}, %arg6: i32 {kiln.divisibility = 16 : i32})
# RUN: not %kilnc compile %s -n tile_copy -s "src=*fp16, dst=*fp16, M=i32, N=i32, stride_sm=i32, stride_sn=i32, stride_dm=i32, stride_dn=i32, BM=64, BN=64" --unit-strides --aligned --arch sm_90a -o %t/x 2>&1 | FileCheck %s --check-prefix=BOTH
# BOTH: error: --unit-strides is the aligned variant with unit strides: drop --aligned
import triton
import triton.language as tl


@triton.jit
def tile_copy(src, dst, M, N, stride_sm, stride_sn, stride_dm, stride_dn,
              BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(src + rm[:, None] * stride_sm + rn[None, :] * stride_sn, mask=mask)
    tl.store(dst + rm[:, None] * stride_dm + rn[None, :] * stride_dn, tile, mask=mask)


@triton.autotune(
    configs=[
        triton.Config({"BM": 64, "BN": 64}, num_warps=4),
        triton.Config({"BM": 32, "BN": 128}, num_warps=4),
    ],
    key=["M", "N"],
)
@triton.jit
def tuned_tile_copy(src, dst, M, N, stride_sm, stride_sn, stride_dm, stride_dn,
                    BM: tl.constexpr, BN: tl.constexpr):
    tile_copy(src, dst, M, N, stride_sm, stride_sn, stride_dm, stride_dn, BM, BN)
