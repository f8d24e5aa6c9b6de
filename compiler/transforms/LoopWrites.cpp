//===- LoopWrites.cpp - whether a loop may write what a load reads --------===//
#include "compiler/transforms/LoopWrites.h"
#include "compiler/ir/Dialects.h"

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

} // namespace kiln
