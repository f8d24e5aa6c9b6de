//===- MapElementwiseToLLVM.cpp - tl.map_elementwise ----------------------===//
//
// The region is the user's scalar function. Each thread runs it once per
// group of `pack` consecutive elements it holds: the region's ops are copied
// in place of the op, one copy per group, reading the group's elements of
// the operands and giving the group's elements of the results. The copies
// keep their own control flow (an `if` on the element branches around the
// work of the other side, as upstream's does), which lowers with the
// function's. Casts to and from the tensors' converted types (structs of a
// thread's elements) join the copies to the rest of the IR until the
// conversion resolves them. Layout assignment gives a packed op's 1-D
// tensors `pack` consecutive elements a thread where the shape allows.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/OpFamilyLowerings.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace {

/// `value` as `type`, through a cast the conversion resolves.
Value castTo(OpBuilder &b, Location loc, Type type, Value value) {
  if (value.getType() == type)
    return value;
  return UnrealizedConversionCastOp::create(b, loc, type, value).getResult(0);
}

LogicalResult inlineOne(kiln::MapElementwiseOp op,
                        kiln::KilnTypeConverter &converter) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  unsigned pack = op.getPack();
  SmallVector<SmallVector<Value>> operands;
  for (Value src : op.getSrcs()) {
    Type converted = converter.convertType(src.getType());
    if (!converted)
      return op.emitOpError("operand type ")
             << src.getType() << " has no lowering";
    operands.push_back(
        kiln::unpackElements(b, loc, castTo(b, loc, converted, src)));
  }
  // A thread holding fewer elements than a group (or not a multiple of
  // one) runs its last group on copies of its last element and keeps only
  // the results of its own.
  size_t count = operands.front().size();

  Block &body = op.getBody().front();
  auto ret = cast<kiln::MapElementwiseReturnOp>(body.getTerminator());
  SmallVector<SmallVector<Value>> results(op.getNumResults());
  for (size_t k = 0; k < count; k += pack) {
    IRMapping map;
    for (auto [i, elements] : llvm::enumerate(operands))
      for (unsigned j = 0; j < pack; ++j) {
        BlockArgument arg = body.getArgument(i * pack + j);
        map.map(arg, castTo(b, loc, arg.getType(),
                            elements[std::min(k + j, count - 1)]));
      }
    for (Operation &inner : body.without_terminator())
      b.clone(inner, map);
    for (size_t r = 0; r < results.size(); ++r)
      for (unsigned j = 0; j < pack && k + j < count; ++j) {
        Value v = map.lookupOrDefault(ret.getOperand(r * pack + j));
        results[r].push_back(
            castTo(b, loc, converter.convertType(v.getType()), v));
      }
  }
  for (auto [result, elements] : llvm::zip(op.getResults(), results)) {
    Type converted = converter.convertType(result.getType());
    Value packed = kiln::packElements(b, loc, converted, elements);
    result.replaceAllUsesWith(castTo(b, loc, result.getType(), packed));
  }
  op.erase();
  return success();
}

} // namespace

LogicalResult kiln::inlineMapElementwise(ModuleOp module,
                                         KilnTypeConverter &converter) {
  SmallVector<kiln::MapElementwiseOp> ops;
  module.walk([&](kiln::MapElementwiseOp op) { ops.push_back(op); });
  for (kiln::MapElementwiseOp op : ops)
    if (failed(inlineOne(op, converter)))
      return failure();
  return success();
}
