# tl.inline_asm_elementwise: one asm per element, or per packed group of
# narrow elements in one register; several results come back as a struct;
# is_pure=False keeps the side effects.
# RUN: %kilnc compile %s -n packed -s "*u8, *u8" --arch sm_90a --emit gpu -o - | %kiln-opt --kiln-to-llvm | FileCheck %s --check-prefix=PACKED
# RUN: %kilnc compile %s -n two_results -s "*u32, *u32" --arch sm_90a --emit gpu -o - | %kiln-opt --kiln-to-llvm | FileCheck %s --check-prefix=TWO
# RUN: %kilnc compile %s -n two_results -s "*u32, *u32" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
import triton
import triton.language as tl


# 1024 bytes, 4 warps: 8 per thread, 2 asm calls of 4 packed bytes.
# PACKED-COUNT-2: llvm.inline_asm asm_dialect = att "prmt.b32 $0, $1, 0, 0x0123;", "=r,r" %{{.*}} : (i32) -> i32
# PACKED-NOT: llvm.inline_asm asm_dialect
@triton.jit
def packed(x_ptr, out_ptr):
    offs = tl.arange(0, 1024)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("prmt.b32 $0, $1, 0, 0x0123;", "=r,r", [x],
                                  dtype=tl.uint8, is_pure=True, pack=4)
    tl.store(out_ptr + offs, y)


# TWO: llvm.inline_asm has_side_effects asm_dialect = att "add.u32 $0, $2, 1;\0A\09sub.u32 $1, $2, 1;", "=r,=r,r" %{{.*}} : (i32) -> !llvm.struct<(i32, i32)>
# PTX: add.u32 %r{{[0-9]+}}, %r{{[0-9]+}}, 1;
# PTX: sub.u32
@triton.jit
def two_results(x_ptr, out_ptr):
    offs = tl.arange(0, 128)
    x = tl.load(x_ptr + offs)
    a, b = tl.inline_asm_elementwise("add.u32 $0, $2, 1;\n\tsub.u32 $1, $2, 1;", "=r,=r,r", [x],
                                     dtype=(tl.uint32, tl.uint32), is_pure=False, pack=1)
    tl.store(out_ptr + offs, a * b)
