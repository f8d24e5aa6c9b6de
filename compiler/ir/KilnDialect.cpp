//===- KilnDialect.cpp - the kiln dialect ---------------------------------===//
#include "compiler/ir/Dialects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

#include "compiler/ir/KilnDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "compiler/ir/KilnTypes.cpp.inc"

#define GET_OP_CLASSES
#include "compiler/ir/KilnOps.cpp.inc"

void kiln::KilnDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "compiler/ir/KilnTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "compiler/ir/KilnOps.cpp.inc"
      >();
}

Type kiln::getElementTypeOrSelf(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.getElementType();
  return type;
}

static ArrayRef<int64_t> shapeOf(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.getShape();
  return {};
}

LogicalResult kiln::MakeRangeOp::verify() {
  int64_t start = getStart(), end = getEnd();
  auto type = getResult().getType();
  if (type.getRank() != 1)
    return emitOpError("result must be a 1-D tensor");
  if (end <= start)
    return emitOpError("end (") << end << ") must exceed start (" << start << ")";
  if (type.getDimSize(0) != end - start)
    return emitOpError("result has ") << type.getDimSize(0)
                                      << " elements, range has " << end - start;
  return success();
}

LogicalResult kiln::AddPtrOp::verify() {
  if (shapeOf(getPtr().getType()) != shapeOf(getOffset().getType()))
    return emitOpError("pointer and offset shapes differ");
  return success();
}

// Loads and stores: the mask, `other` and the value share the pointer's shape;
// values have the pointee type.
static LogicalResult verifyMemoryAccess(Operation *op, Type ptrType,
                                        Type valueType, Value mask) {
  auto pointer = cast<kiln::PointerType>(kiln::getElementTypeOrSelf(ptrType));
  if (kiln::getElementTypeOrSelf(valueType) != pointer.getPointeeType())
    return op->emitOpError("value type ")
           << valueType << " does not match pointee type "
           << pointer.getPointeeType();
  if (shapeOf(valueType) != shapeOf(ptrType))
    return op->emitOpError("value and pointer shapes differ");
  if (mask && shapeOf(mask.getType()) != shapeOf(ptrType))
    return op->emitOpError("mask and pointer shapes differ");
  return success();
}

LogicalResult kiln::LoadOp::verify() {
  if (getOther() && getOther().getType() != getResult().getType())
    return emitOpError("`other` must have the result type");
  if (getOther() && !getMask())
    return emitOpError("`other` needs a mask");
  return verifyMemoryAccess(*this, getPtr().getType(), getResult().getType(),
                            getMask());
}

LogicalResult kiln::StoreOp::verify() {
  return verifyMemoryAccess(*this, getPtr().getType(), getValue().getType(),
                            getMask());
}

void kiln::registerAllDialects(DialectRegistry &registry) {
  registry.insert<kiln::KilnDialect, kiln::gpu::KilnGPUDialect,
                  arith::ArithDialect, math::MathDialect, scf::SCFDialect,
                  cf::ControlFlowDialect, func::FuncDialect,
                  LLVM::LLVMDialect, NVVM::NVVMDialect>();
}
