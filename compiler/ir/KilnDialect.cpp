//===- KilnDialect.cpp - the kiln dialect ---------------------------------===//
#include "compiler/ir/Dialects.h"
#include "compiler/ir/TensorMapAccess.h"

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
    return emitOpError("end (")
           << end << ") must exceed start (" << start << ")";
  if (type.getDimSize(0) != end - start)
    return emitOpError("result has ")
           << type.getDimSize(0) << " elements, range has " << end - start;
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

// Block pointers: the value is the block; no mask; boundary_check names
// distinct dimensions of the block.
static LogicalResult
verifyBlockAccess(Operation *op, Type ptrType, Type valueType, Value mask,
                  std::optional<ArrayRef<int32_t>> checks) {
  RankedTensorType block =
      cast<kiln::BlockPointerType>(ptrType).getTensorType();
  if (valueType != block)
    return op->emitOpError("value type ")
           << valueType << " must be the block type " << block;
  if (mask)
    return op->emitOpError("block-pointer accesses take no mask");
  SmallVector<bool> seen(block.getRank(), false);
  for (int32_t d : checks.value_or(ArrayRef<int32_t>())) {
    if (d < 0 || d >= block.getRank() || seen[d])
      return op->emitOpError("boundary_check must list distinct dimensions "
                             "of the block");
    seen[d] = true;
  }
  return success();
}

void kiln::LoadOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(),
                       SideEffects::DefaultResource::get());
  if (getIsVolatile())
    effects.emplace_back(MemoryEffects::Write::get(),
                         SideEffects::DefaultResource::get());
}

LogicalResult kiln::LoadOp::verify() {
  if (getOther() && getOther().getType() != getResult().getType())
    return emitOpError("`other` must have the result type");
  if (getOther() && !getMask())
    return emitOpError("`other` needs a mask");
  if (failed(kiln::verifyTensorMapOperands(*this, getTensorMap(),
                                           getBoxOffsets(),
                                           getResult().getType(), "result")))
    return failure();
  if (isa<BlockPointerType>(getPtr().getType()))
    return verifyBlockAccess(*this, getPtr().getType(), getResult().getType(),
                             getMask(), getBoundaryCheck());
  if (getBoundaryCheck() || getPadding())
    return emitOpError("boundary_check and padding need a block pointer");
  return verifyMemoryAccess(*this, getPtr().getType(), getResult().getType(),
                            getMask());
}

LogicalResult kiln::StoreOp::verify() {
  if (failed(kiln::verifyTensorMapOperands(*this, getTensorMap(),
                                           getBoxOffsets(),
                                           getValue().getType(), "value")))
    return failure();
  if (isa<BlockPointerType>(getPtr().getType()))
    return verifyBlockAccess(*this, getPtr().getType(), getValue().getType(),
                             getMask(), getBoundaryCheck());
  if (getBoundaryCheck())
    return emitOpError("boundary_check needs a block pointer");
  return verifyMemoryAccess(*this, getPtr().getType(), getValue().getType(),
                            getMask());
}

// Reductions and scans: N operands of one shape, a region of 2N scalar
// arguments of their element types yielding N values of the same types.
static LogicalResult verifyCombineRegion(Operation *op, ValueRange srcs,
                                         Region &region) {
  Block &block = region.front();
  if (block.getNumArguments() != 2 * srcs.size())
    return op->emitOpError("combine region needs ")
           << 2 * srcs.size() << " arguments, has " << block.getNumArguments();
  for (auto [i, src] : llvm::enumerate(srcs)) {
    Type element = cast<RankedTensorType>(src.getType()).getElementType();
    if (block.getArgument(i).getType() != element ||
        block.getArgument(i + srcs.size()).getType() != element)
      return op->emitOpError("combine region argument types must be the "
                             "operands' element types");
  }
  Operation *terminator = block.getTerminator();
  if (terminator->getNumOperands() != srcs.size())
    return op->emitOpError("combine region must yield ")
           << srcs.size() << " values";
  for (auto [value, src] : llvm::zip(terminator->getOperands(), srcs))
    if (value.getType() !=
        cast<RankedTensorType>(src.getType()).getElementType())
      return op->emitOpError(
          "combine region must yield the operands' element types");
  return success();
}

static LogicalResult verifyAxisAndShapes(Operation *op, ValueRange srcs,
                                         int64_t axis) {
  if (srcs.empty())
    return op->emitOpError("needs at least one operand");
  auto first = cast<RankedTensorType>(srcs.front().getType());
  if (axis < 0 || axis >= first.getRank())
    return op->emitOpError("axis ")
           << axis << " out of range for rank " << first.getRank();
  for (Value src : srcs)
    if (cast<RankedTensorType>(src.getType()).getShape() != first.getShape())
      return op->emitOpError("operands must have the same shape");
  return success();
}

LogicalResult kiln::ReduceOp::verify() {
  if (failed(verifyAxisAndShapes(*this, getSrcs(), getAxis())))
    return failure();
  if (getResults().size() != getSrcs().size())
    return emitOpError("needs one result per operand");
  for (auto [src, result] : llvm::zip(getSrcs(), getResults())) {
    auto type = cast<RankedTensorType>(src.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape.erase(shape.begin() + getAxis());
    Type expected = type.getElementType();
    if (!shape.empty())
      expected = RankedTensorType::get(shape, expected);
    Type actual = result.getType();
    if (auto t = dyn_cast<RankedTensorType>(actual))
      actual = RankedTensorType::get(t.getShape(), t.getElementType());
    if (actual != expected)
      return emitOpError("result type ")
             << result.getType() << " should be " << expected;
  }
  return success();
}
LogicalResult kiln::ReduceOp::verifyRegions() {
  return verifyCombineRegion(*this, getSrcs(), getCombineOp());
}

LogicalResult kiln::ScanOp::verify() {
  if (failed(verifyAxisAndShapes(*this, getSrcs(), getAxis())))
    return failure();
  if (getResults().getTypes() != getSrcs().getTypes())
    return emitOpError("results must have the operands' types");
  return success();
}
LogicalResult kiln::ScanOp::verifyRegions() {
  return verifyCombineRegion(*this, getSrcs(), getCombineOp());
}

LogicalResult kiln::MapElementwiseOp::verify() {
  if (getSrcs().empty() || getResults().empty())
    return emitOpError("needs at least one operand and one result");
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(getSrcs().front().getType()).getShape();
  for (Type type :
       llvm::concat<const Type>(getSrcs().getTypes(), getResults().getTypes()))
    if (cast<RankedTensorType>(type).getShape() != shape)
      return emitOpError("operands and results must have the same shape");
  return success();
}

LogicalResult kiln::MapElementwiseOp::verifyRegions() {
  Block &block = getBody().front();
  unsigned pack = getPack();
  if (block.getNumArguments() != pack * getSrcs().size())
    return emitOpError("region needs ")
           << pack * getSrcs().size() << " arguments, has "
           << block.getNumArguments();
  for (auto [i, src] : llvm::enumerate(getSrcs()))
    for (unsigned j = 0; j < pack; ++j)
      if (block.getArgument(i * pack + j).getType() !=
          cast<RankedTensorType>(src.getType()).getElementType())
        return emitOpError("region argument types must be the operands' "
                           "element types");
  Operation *terminator = block.getTerminator();
  if (terminator->getNumOperands() != pack * getResults().size())
    return emitOpError("region must yield ")
           << pack * getResults().size() << " values";
  for (auto [r, result] : llvm::enumerate(getResults()))
    for (unsigned j = 0; j < pack; ++j)
      if (terminator->getOperand(r * pack + j).getType() !=
          cast<RankedTensorType>(result.getType()).getElementType())
        return emitOpError("region must yield the results' element types");
  return success();
}

void kiln::registerAllDialects(DialectRegistry &registry) {
  registry
      .insert<kiln::KilnDialect, kiln::gpu::KilnGPUDialect, arith::ArithDialect,
              math::MathDialect, scf::SCFDialect, cf::ControlFlowDialect,
              func::FuncDialect, LLVM::LLVMDialect, NVVM::NVVMDialect>();
}
