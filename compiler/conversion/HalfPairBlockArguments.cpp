//===- HalfPairBlockArguments.cpp - loop-carried fp16 in f16x2 words ------===//
#include "compiler/conversion/HalfPairBlockArguments.h"

#include "compiler/conversion/LoweringUtils.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"

using namespace mlir;

namespace {

/// The paired form of a struct of an even number of 16-bit floats, or null.
Type pairedType(Type type) {
  auto structType = dyn_cast<LLVM::LLVMStructType>(type);
  if (!structType || structType.isIdentified())
    return {};
  ArrayRef<Type> fields = structType.getBody();
  if (fields.size() < 2 || fields.size() % 2 != 0)
    return {};
  Type element = fields.front();
  if (!element.isF16() ||
      llvm::any_of(fields, [&](Type t) { return t != element; }))
    return {};
  return LLVM::LLVMStructType::getLiteral(
      type.getContext(),
      SmallVector<Type>(fields.size() / 2, VectorType::get({2}, element)));
}

/// `scalars` (a struct of halves) as its paired form `paired`.
Value pair(OpBuilder &b, Location loc, Value scalars, Type paired) {
  auto pairs = cast<LLVM::LLVMStructType>(paired).getBody();
  Value result = LLVM::UndefOp::create(b, loc, paired);
  for (auto [i, pairType] : llvm::enumerate(pairs)) {
    Value v = LLVM::UndefOp::create(b, loc, pairType);
    for (int64_t half = 0; half < 2; ++half)
      v = LLVM::InsertElementOp::create(
          b, loc, v,
          LLVM::ExtractValueOp::create(b, loc, scalars, int64_t(2 * i + half)),
          kiln::i32Constant(b, loc, half));
    result = LLVM::InsertValueOp::create(b, loc, result, v, int64_t(i));
  }
  return result;
}

/// The struct of halves `scalarType` from its paired form.
Value unpair(OpBuilder &b, Location loc, Value paired, Type scalarType) {
  auto pairs = cast<LLVM::LLVMStructType>(paired.getType()).getBody();
  Value result = LLVM::UndefOp::create(b, loc, scalarType);
  for (size_t i = 0; i < pairs.size(); ++i) {
    Value v = LLVM::ExtractValueOp::create(b, loc, paired, int64_t(i));
    for (int64_t half = 0; half < 2; ++half)
      result = LLVM::InsertValueOp::create(
          b, loc, result,
          LLVM::ExtractElementOp::create(b, loc, v,
                                         kiln::i32Constant(b, loc, half)),
          int64_t(2 * i + half));
  }
  return result;
}

} // namespace

void kiln::pairHalfBlockArguments(ModuleOp module) {
  module.walk([](LLVM::LLVMFuncOp func) {
    for (Block &block : llvm::drop_begin(func.getBody())) {
      for (BlockArgument arg : block.getArguments()) {
        Type scalarType = arg.getType();
        Type paired = pairedType(scalarType);
        if (!paired)
          continue;
        // Every predecessor must pass its operand through a branch we can
        // rewrite; otherwise the argument stays as it is.
        if (!llvm::all_of(block.getPredecessors(), [](Block *pred) {
              return isa<BranchOpInterface>(pred->getTerminator());
            }))
          continue;
        for (auto it = block.pred_begin(); it != block.pred_end(); ++it) {
          auto branch = cast<BranchOpInterface>((*it)->getTerminator());
          SuccessorOperands operands =
              branch.getSuccessorOperands(it.getSuccessorIndex());
          // LLVM's branches forward all their successor operands.
          OpOperand &operand =
              operands.getMutableForwardedOperands()[arg.getArgNumber()];
          OpBuilder b(branch);
          operand.set(pair(b, branch.getLoc(), operand.get(), paired));
        }
        SmallVector<OpOperand *> uses;
        for (OpOperand &use : arg.getUses())
          uses.push_back(&use);
        arg.setType(paired);
        OpBuilder b(&block, block.begin());
        Value scalars = unpair(b, arg.getLoc(), arg, scalarType);
        for (OpOperand *use : uses)
          use->set(scalars);
      }
    }
  });
}
