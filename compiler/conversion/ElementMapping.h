//===- ElementMapping.h - one scalar computation per held element -*- C++ -*-===//
//
// Element-wise ops whose scalar form is not an arith/math op (calls, inline
// PTX, intrinsics) all lower the same way: take the k-th element of every
// converted operand, build the scalar result, and pack the results back into
// the struct the type converter gives the result tensor.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CONVERSION_ELEMENTMAPPING_H
#define KILN_CONVERSION_ELEMENTMAPPING_H

#include "compiler/conversion/LoweringUtils.h"

namespace kiln {

/// Builds one scalar per element from the operands' k-th elements and packs
/// them as `resultType` (a struct, or a scalar for one element). Operands
/// are all tensors of one layout or all scalars.
inline mlir::Value
mapElements(mlir::OpBuilder &b, mlir::Location loc, mlir::Type resultType,
            mlir::ValueRange operands,
            llvm::function_ref<mlir::Value(mlir::ValueRange)> buildScalar) {
  llvm::SmallVector<llvm::SmallVector<mlir::Value>> elements;
  for (mlir::Value operand : operands)
    elements.push_back(unpackElements(b, loc, operand));
  size_t count = 1;
  if (auto structType = llvm::dyn_cast<mlir::LLVM::LLVMStructType>(resultType))
    count = structType.getBody().size();
  llvm::SmallVector<mlir::Value> results;
  for (size_t k = 0; k < count; ++k) {
    llvm::SmallVector<mlir::Value> scalars;
    for (auto &operandElements : elements)
      scalars.push_back(operandElements[k]);
    results.push_back(buildScalar(scalars));
  }
  return packElements(b, loc, resultType, results);
}

} // namespace kiln

#endif // KILN_CONVERSION_ELEMENTMAPPING_H
