//===- LoweringUtils.h - shared pieces of the kiln_gpu → LLVM lowering ----===//
//
// A tensor value becomes, in each thread, an LLVM struct of the elements that
// thread holds under the tensor's layout. These helpers pack and unpack such
// structs and map a thread's k-th element to its tensor index.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CONVERSION_LOWERINGUTILS_H
#define KILN_CONVERSION_LOWERINGUTILS_H

#include "compiler/ir/Dialects.h"
#include "compiler/transforms/AxisInfo.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Transforms/DialectConversion.h"

namespace kiln {

/// Elements one thread holds of a tensor with a layout (registers of its
/// linear layout); 0 without one.
unsigned elementsPerThread(mlir::RankedTensorType type);

/// The LLVM type converter of Kiln: pointers to `!llvm.ptr<1>`, tensors with
/// a layout to the struct of one thread's elements.
class KilnTypeConverter : public mlir::LLVMTypeConverter {
public:
  explicit KilnTypeConverter(mlir::MLIRContext *context);
};

/// The thread's elements of a converted tensor (or the scalar itself).
llvm::SmallVector<mlir::Value>
unpackElements(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value);
/// Builds a value of `type` (a struct, or a scalar when one element).
mlir::Value packElements(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Type type, mlir::ValueRange elements);
/// An i32 constant (`v` is truncated to 32 bits).
mlir::Value i32Constant(mlir::OpBuilder &b, mlir::Location loc, int64_t v);
/// `v ^ c` for an i32 `v` whose set bits all lie within `vBits`: the bits of
/// `c` inside them are XORed, the others added (the same there), so that
/// constants differing only outside `vBits` share one XOR and LLVM folds the
/// rest into addresses as immediates.
mlir::Value xorOutsideBits(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value v, int64_t c, uint64_t vBits);
/// `nvvm.read.ptx.sreg.tid.x`.
mlir::Value threadIdX(mlir::OpBuilder &b, mlir::Location loc);

/// Two 16-bit floats in one 32-bit word, `low` in its low half (an f16x2
/// register of the tensor-core instructions).
mlir::Value packHalves(mlir::OpBuilder &b, mlir::Location loc, mlir::Value low,
                       mlir::Value high);
/// The two halves of such a word, as `element` (f16 or bf16).
std::pair<mlir::Value, mlir::Value> unpackHalves(mlir::OpBuilder &b,
                                                 mlir::Location loc,
                                                 mlir::Value word,
                                                 mlir::Type element);

/// One PTX instruction (or `{ ... }` block) without side effects as inline
/// asm with one result of type `result`: `$0` is the result, `$1...` the
/// operands, as `constraints` ("=f,f") say.
mlir::Value inlinePtx(mlir::OpBuilder &b, mlir::Location loc, mlir::Type result,
                      llvm::StringRef text, llvm::StringRef constraints,
                      mlir::ValueRange operands);

/// Inline PTX that must stay where it is and run (barriers, fences, async
/// copies, wgmma): `result` may be null.
mlir::LLVM::InlineAsmOp inlinePtxEffect(mlir::OpBuilder &b, mlir::Location loc,
                                        mlir::Type result, llvm::StringRef text,
                                        llvm::StringRef constraints,
                                        mlir::ValueRange operands);

/// `shfl.sync` of one scalar across the whole warp: of kind idx (`lane` is
/// the lane read from), up, down or bfly (`lane` is the offset or XOR mask).
/// Any integer, float or pointer of up to 64 bits: narrower ones travel in
/// one 32-bit word, 64-bit ones in two.
mlir::Value shuffle(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                    mlir::Value lane, mlir::NVVM::ShflKind kind);

/// Emits `body` in a block of its own that runs only where `condition` (i1)
/// holds, and continues after it (the insertion point ends there).
void emitIf(mlir::ConversionPatternRewriter &rewriter, mlir::Location loc,
            mlir::Value condition, llvm::function_ref<void()> body);

/// The address of a fresh shared-memory array of `count` elements of
/// `elementType` for `op`'s lowering, 16-byte aligned. Contract: the
/// lowering ends every use of its arrays with a barrier, so that the arrays
/// of different ops never hold live data at once; poolSharedMemory then
/// places all ops' arrays in one pool, each op's at offset 0.
mlir::Value allocateSharedArray(mlir::OpBuilder &b, mlir::Operation *op,
                                mlir::Type elementType, int64_t count);

/// The attribute naming, on each array's global, the op it was made for.
inline constexpr llvm::StringLiteral kSharedOwnerAttr = "kiln.smem_owner";
/// Where kiln-allocate-shared says an op's scratch arrays must start.
inline constexpr llvm::StringLiteral kScratchBaseAttr = "kiln_gpu.scratch_base";
/// The end of the highest shared buffer (kiln-allocate-shared).
inline constexpr llvm::StringLiteral kBufferBytesAttr = "kiln_gpu.buffer_bytes";
/// The kernel's dynamic shared memory.
inline constexpr llvm::StringLiteral kSharedPoolName = "kiln_smem";

/// The address of the kernel's dynamic shared memory (declared on first use).
mlir::Value sharedPoolBase(mlir::OpBuilder &b, mlir::Location loc);

/// Replaces the module's per-op shared arrays by places in the dynamic pool:
/// the arrays of one op sit side by side from the op's scratch base (0 where
/// no buffer is live), the ops share the pool (see allocateSharedArray).
/// Returns the pool's size: the largest op's end or the buffers' end.
int64_t poolSharedMemory(mlir::ModuleOp module);

/// Vector widths of global accesses, decided before conversion (when axis
/// info can still read the kiln ops).
using AccessWidths = llvm::DenseMap<mlir::Operation *, unsigned>;
/// Elements of `op` (a load, store or atomic on a tensor of
/// `tensorOrScalar`'s layout) a thread accesses with one vector
/// instruction: its width in `widths`, within the thread's registers that
/// step along the last dimension one element at a time; 1 for a scalar.
unsigned accessWidth(mlir::Operation *op, const AccessWidths &widths,
                     mlir::Type tensorOrScalar);

/// For element-wise integer ops whose result repeats (axis info's
/// constancy), the length of the runs of equal values along each dimension:
/// the lowering computes one element per run and reuses it, as upstream
/// does (e.g. one `cols < N` compare per 8 columns, one `rows < M` compare
/// for the rows 8 apart that a thread holds when M is a multiple of 16).
using Constancies =
    llvm::DenseMap<mlir::Operation *, llvm::SmallVector<int64_t, 2>>;

} // namespace kiln

#endif // KILN_CONVERSION_LOWERINGUTILS_H
