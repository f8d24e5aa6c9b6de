//===- MmaSyncInstructions.h - mma.sync over operand fragments -*- C++ -*-===//
//
// Both mma.sync lowerings (kiln_gpu.shared_dot from swizzled tiles, and the
// staged kiln.dot) load operand fragments 32 bytes of K at a time and hand
// them here. A group of k steps (one, or two for the bf16 emulations) is
// prepared once per tile row of a and tile column of b, then multiplied
// into every 16x8 accumulator tile: one instruction for the native
// flavours, several over the split words for the fp32 emulations
// (compiler/ir/TensorCoreFlavour.h says how they split). On sm_90, whose
// mma.sync has no fp8 of its own (ptxas expands m16n8k32 e4m3 into two
// fp16 products and an add a register: 0.62-0.70 of Triton's mma.sync
// path on the H100's fp8 GEMMs), fp8 fragments are widened to fp16 and
// multiplied by two m16n8k16, as upstream does there.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CONVERSION_MMASYNCINSTRUCTIONS_H
#define KILN_CONVERSION_MMASYNCINSTRUCTIONS_H

#include "compiler/ir/TensorCoreFlavour.h"

#include "mlir/IR/Builders.h"

#include <string>

namespace kiln {

class MmaSyncInstructions {
public:
  /// An operand's words for one group, per part of its split (one part
  /// when nothing is split): a's 4 or b's 2 32-bit registers each.
  using Operand = llvm::SmallVector<llvm::SmallVector<mlir::Value, 4>, 4>;

  /// `aElement` and `bElement` are the operands' element types in the
  /// tiles, `accElement` the accumulator's.
  MmaSyncInstructions(mlir::OpBuilder &b, mlir::Location loc,
                      const TargetInfo &target,
                      const TensorCoreFlavour &flavour, mlir::Type aElement,
                      mlir::Type bElement, mlir::Type accElement);

  /// Fragments (of kStep() each) one group takes.
  int64_t stepsPerGroup() const { return flavour_.kGroup() / flavour_.kStep(); }

  /// The instruction operand of one group: `steps[s]` holds the fragment
  /// words of k step s (a: a0..a3, b: b0, b1), as every flavour lays them
  /// out (compiler/conversion/WgmmaToLLVM.cpp).
  Operand prepare(llvm::ArrayRef<llvm::SmallVector<mlir::Value>> steps,
                  bool isA);

  /// acc (c0..c3 of one 16x8 tile) plus the group's products of a and b.
  void multiply(const Operand &a, const Operand &b,
                llvm::MutableArrayRef<mlir::Value> acc);

private:
  /// The parts of one fp32 element: high (exact product with high),
  /// high clamped to finite (multiplies low parts), then the low parts.
  llvm::SmallVector<mlir::Value, 4> splitElement(mlir::Value word);
  mlir::Value packBF16(mlir::Value low, mlir::Value high);
  /// The two f16x2 words of one word of four fp8 elements of type `t`:
  /// its elements 0, 1 and 2, 3.
  std::pair<mlir::Value, mlir::Value> widenFp8(mlir::Value word, mlir::Type t);
  void emitOne(const std::string &text, llvm::ArrayRef<mlir::Value> a,
               llvm::ArrayRef<mlir::Value> b,
               llvm::MutableArrayRef<mlir::Value> acc);

  mlir::OpBuilder &b_;
  mlir::Location loc_;
  TensorCoreFlavour flavour_;
  mlir::Type accElement_;
  mlir::Type aElement_, bElement_;
  /// fp8 multiplied as fp16 (!hasNativeFp8MmaSync): two m16n8k16 a
  /// fragment.
  bool widenedFp8_ = false;
  std::string text_; // the instruction of every product
};

} // namespace kiln

#endif // KILN_CONVERSION_MMASYNCINSTRUCTIONS_H
