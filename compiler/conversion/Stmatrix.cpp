//===- Stmatrix.cpp - 16-bit fragments by stmatrix and ldmatrix -----------===//

#include "compiler/conversion/Stmatrix.h"

#include "compiler/conversion/LoweringUtils.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <string>

using namespace mlir;

namespace kiln {

void emitStmatrix(OpBuilder &b, Location loc, Value sharedAddress,
                  ValueRange elements, bool transposed) {
  // Matrix m's register: the pair 2m, 2m+1, packed.
  Type pair = VectorType::get({2}, elements.front().getType());
  SmallVector<Value, 5> operands{sharedAddress};
  for (int32_t m = 0; m < 4; ++m) {
    Value v = LLVM::UndefOp::create(b, loc, pair);
    for (int32_t i = 0; i < 2; ++i)
      v = LLVM::InsertElementOp::create(b, loc, v, elements[2 * m + i],
                                        i32Constant(b, loc, i));
    operands.push_back(LLVM::BitcastOp::create(b, loc, b.getI32Type(), v));
  }
  inlinePtxEffect(b, loc, Type(),
                  transposed
                      ? "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [$0], "
                        "{$1, $2, $3, $4};"
                      : "stmatrix.sync.aligned.m8n8.x4.shared.b16 [$0], "
                        "{$1, $2, $3, $4};",
                  "r,r,r,r,r", operands);
}

SmallVector<Value, 4> emitLdmatrixWords(OpBuilder &b, Location loc,
                                        Value sharedAddress, int64_t count,
                                        bool transposed) {
  Type i32 = b.getI32Type();
  std::string registers, constraints;
  for (int64_t i = 0; i < count; ++i) {
    registers += (i ? ", $" : "$") + std::to_string(i);
    constraints += "=r,";
  }
  Type result = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                 SmallVector<Type>(count, i32));
  Value words =
      inlinePtxEffect(b, loc, result,
                      "ldmatrix.sync.aligned.m8n8.x" + std::to_string(count) +
                          (transposed ? ".trans" : "") + ".shared.b16 {" +
                          registers + "}, [$" + std::to_string(count) + "];",
                      constraints + "r", ValueRange{sharedAddress})
          .getResult(0);
  SmallVector<Value, 4> out;
  for (int64_t i = 0; i < count; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, words, i));
  return out;
}

SmallVector<Value, 8> emitLdmatrix(OpBuilder &b, Location loc,
                                   Value sharedAddress, Type element,
                                   bool transposed) {
  // Matrix m's register: the pair 2m, 2m+1.
  Type pair = VectorType::get({2}, element);
  SmallVector<Value, 8> elements;
  for (Value word :
       emitLdmatrixWords(b, loc, sharedAddress, /*count=*/4, transposed)) {
    Value v = LLVM::BitcastOp::create(b, loc, pair, word);
    for (int32_t i = 0; i < 2; ++i)
      elements.push_back(
          LLVM::ExtractElementOp::create(b, loc, v, i32Constant(b, loc, i)));
  }
  return elements;
}

} // namespace kiln
