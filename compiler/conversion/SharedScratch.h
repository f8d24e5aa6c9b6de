//===- SharedScratch.h - static shared memory for one op -------*- C++ -*-===//
//
// Lowerings that exchange values between threads (scalar atomics that
// broadcast their result, cross-warp scans) each get a fresh static
// shared-memory array, named after the op family, declared in the module.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CONVERSION_SHAREDSCRATCH_H
#define KILN_CONVERSION_SHAREDSCRATCH_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace kiln {

/// The address (`!llvm.ptr<3>`) of a new 16-byte aligned shared array of
/// `count` elements of `elementType`, named `<prefix>_<n>`.
inline mlir::Value allocateSharedScratch(mlir::OpBuilder &b, mlir::Operation *op,
                                         llvm::StringRef prefix,
                                         mlir::Type elementType, int64_t count) {
  auto module = op->getParentOfType<mlir::ModuleOp>();
  mlir::Location loc = op->getLoc();
  std::string name;
  unsigned id = 0;
  do {
    name = (prefix + "_" + llvm::Twine(id++)).str();
  } while (module.lookupSymbol(name));
  {
    mlir::OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto global = mlir::LLVM::GlobalOp::create(
        b, loc, mlir::LLVM::LLVMArrayType::get(elementType, count),
        /*isConstant=*/false, mlir::LLVM::Linkage::Internal, name,
        mlir::Attribute(), /*alignment=*/16, /*addrSpace=*/3);
    // Pooled with the other ops' arrays (see kiln::allocateSharedArray).
    global->setAttr("kiln.smem_owner",
                    b.getI64IntegerAttr(int64_t(reinterpret_cast<intptr_t>(op))));
  }
  return mlir::LLVM::AddressOfOp::create(
      b, loc, mlir::LLVM::LLVMPointerType::get(b.getContext(), 3), name);
}

} // namespace kiln

#endif // KILN_CONVERSION_SHAREDSCRATCH_H
