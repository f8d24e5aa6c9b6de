//===- EarlyLoads.cpp - loads moved to an earlier iteration of a loop -----===//
#include "compiler/transforms/EarlyLoads.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace kiln {

bool writesMemory(scf::ForOp loop) {
  return loop.getBody()
      ->walk([](Operation *op) {
        if (isa<PrintOp, AssertOp>(op) ||
            isa_and_nonnull<gpu::KilnGPUDialect>(op->getDialect()) ||
            op->hasTrait<OpTrait::IsTerminator>() ||
            op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
          return WalkResult::advance();
        auto effects = dyn_cast<MemoryEffectOpInterface>(op);
        if (!effects || effects.hasEffect<MemoryEffects::Write>())
          return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

Value loadMaskedBy(OpBuilder &b, LoadOp load, Value inRange,
                   IRMapping &mapping) {
  Location loc = load.getLoc();
  Type type = load.getType();
  Value mask = inRange;
  if (auto ptrType = dyn_cast<RankedTensorType>(load.getPtr().getType()))
    mask =
        SplatOp::create(b, loc,
                        RankedTensorType::get(ptrType.getShape(), b.getI1Type(),
                                              ptrType.getEncoding()),
                        inRange);
  if (Value original = load.getMask())
    mask =
        arith::AndIOp::create(b, loc, mapping.lookupOrDefault(original), mask);
  Value other = load.getOther()
                    ? mapping.lookupOrDefault(load.getOther())
                    : Value(arith::ConstantOp::create(
                          b, loc, cast<TypedAttr>(b.getZeroAttr(type))));
  return LoadOp::create(b, loc, type, mapping.lookupOrDefault(load.getPtr()),
                        mask, other, DenseI32ArrayAttr(), PaddingOptionAttr(),
                        load.getCache(), load.getEvict(),
                        /*is_volatile=*/false)
      .getResult();
}

Value ivPlus(OpBuilder &b, Location loc, Value iv, Value step, int64_t k) {
  if (k == 0)
    return iv;
  Value kk =
      arith::ConstantOp::create(b, loc, b.getIntegerAttr(iv.getType(), k));
  return arith::AddIOp::create(b, loc, iv,
                               arith::MulIOp::create(b, loc, kk, step));
}

} // namespace kiln
