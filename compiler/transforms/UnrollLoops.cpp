//===- UnrollLoops.cpp - tl.range(..., loop_unroll_factor=N) --------------===//
//
// A loop with `kiln.loop_unroll_factor` N > 1 (tl.range's option) runs N
// copies of its body per iteration, as upstream unrolls it before anything
// else looks at the loop: MLIR's loopUnrollByFactor, which also makes the
// loop for the last trip count % N iterations (any trip count, zero and
// dynamic ones included, stays right). The pipeliner then sees each copy's
// loads and dots as its own.
//
//===----------------------------------------------------------------------===//
#include "compiler/transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"

namespace kiln {
#define GEN_PASS_DEF_KILNUNROLLLOOPS
#include "compiler/transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr StringLiteral kUnrollAttr = "kiln.loop_unroll_factor";

struct UnrollLoopsPass : kiln::impl::KilnUnrollLoopsBase<UnrollLoopsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<scf::ForOp, int64_t>> loops;
    getOperation().walk([&](scf::ForOp loop) {
      auto factor = loop->getAttrOfType<IntegerAttr>(kUnrollAttr);
      if (!factor)
        return;
      loop->removeAttr(kUnrollAttr);
      if (factor.getInt() > 1)
        loops.push_back({loop, factor.getInt()});
    });
    // Inner loops first (the walk is post-order): an outer loop's copies
    // then hold the unrolled inner loop.
    for (auto [loop, factor] : loops)
      if (failed(loopUnrollByFactor(loop, uint64_t(factor)))) {
        loop.emitError("cannot unroll this loop by ") << factor;
        return signalPassFailure();
      }
  }
};

} // namespace
