//===- PrefetchLoads.cpp - loads a tensor-core loop reads, one iteration early
//===//
//
// After kiln-pipeline-dots, a tensor-core loop's operand tiles arrive
// through cp.async rings, but its other loads (attention backward's row
// statistics m and Di, a few floats per thread) still go to global memory
// in the iteration that reads them, and each iteration waits out their
// latency. Such a load (or a scalar one: SageAttention's per-block k scale)
// is issued one iteration ahead into registers: the
// prologue loads for the first iteration, each iteration loads for the next
// one (masked off past the last) and the loop carries the value.
//
// The load's address, mask and `other` must come from the induction
// variable, values defined outside the loop and carried values that are
// recurrences of pure arithmetic (curr_m += step): then their next
// iteration's values are the yield's operands, and the whole computation can
// be cloned for iv + step. Only small loads (at most 8 registers a thread)
// are moved, as their registers stay live across the iteration, and only in
// loops that write no memory a load could read.
//
//===----------------------------------------------------------------------===//
#include "compiler/ir/Dialects.h"
#include "compiler/transforms/EarlyLoads.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace kiln {
#define GEN_PASS_DEF_KILNPREFETCHLOADS
#include "compiler/transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Registers a thread holds for a tensor in a distributed layout (32-bit
/// registers); none for another layout.
std::optional<int64_t> registersPerThread(RankedTensorType type) {
  auto encoding =
      dyn_cast_or_null<kiln::gpu::DistributedEncodingAttr>(type.getEncoding());
  if (!encoding)
    return std::nullopt;
  std::optional<kiln::layout::LinearLayout> layout =
      encoding.toLinearLayout(type.getShape());
  if (!layout)
    return std::nullopt;
  int64_t elements = layout->getInDimSize(kiln::layout::kRegister);
  unsigned bits = type.getElementType().isIntOrFloat()
                      ? type.getElementType().getIntOrFloatBitWidth()
                      : 64;
  return llvm::divideCeil(elements * bits, 32);
}

struct PrefetchLoadsPass
    : kiln::impl::KilnPrefetchLoadsBase<PrefetchLoadsPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) {
      if (llvm::any_of(
              loop.getBody()->getOperations(),
              [](Operation &op) { return isa<kiln::gpu::SharedDotOp>(op); }) &&
          !kiln::writesMemory(loop))
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops) {
      SmallVector<kiln::LoadOp> loads;
      for (Operation &op : loop.getBody()->without_terminator())
        if (auto load = dyn_cast<kiln::LoadOp>(op); load && prefetchable(load))
          loads.push_back(load);
      for (kiln::LoadOp load : loads)
        loop = prefetch(loop, load);
    }
  }

private:
  /// The ops of the body that `load`'s operands are computed from (in body
  /// order), closed over the carried values they read; none when one of
  /// them is not pure arithmetic.
  static std::optional<SmallVector<Operation *>>
  addressSlice(kiln::LoadOp load) {
    auto loop = cast<scf::ForOp>(load->getParentOp());
    Block *body = loop.getBody();
    auto yield = cast<scf::YieldOp>(body->getTerminator());
    llvm::SmallPtrSet<Operation *, 16> slice;
    SmallVector<Value> work(load->getOperands());
    llvm::SmallDenseSet<unsigned> carried;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        if (arg.getOwner() != body || arg.getArgNumber() == 0)
          continue;
        if (carried.insert(arg.getArgNumber() - 1).second)
          work.push_back(yield.getOperand(arg.getArgNumber() - 1));
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != body || !slice.insert(def).second)
        continue;
      if (def->getNumRegions() != 0 || !isMemoryEffectFree(def))
        return std::nullopt;
      llvm::append_range(work, def->getOperands());
    }
    SmallVector<Operation *> ordered;
    for (Operation &op : body->without_terminator())
      if (slice.contains(&op))
        ordered.push_back(&op);
    return ordered;
  }

  static bool prefetchable(kiln::LoadOp load) {
    if (load.getBoundaryCheck() || load.getIsVolatile())
      return false;
    // A scalar (SageAttention's per-block k scale, read each iteration).
    if (load.getType().isIntOrFloat() &&
        isa<kiln::PointerType>(load.getPtr().getType()))
      return addressSlice(load).has_value();
    auto type = dyn_cast<RankedTensorType>(load.getType());
    if (!type || !isa<RankedTensorType>(load.getPtr().getType()))
      return false;
    std::optional<int64_t> registers = registersPerThread(type);
    if (!registers || *registers > 8)
      return false;
    return addressSlice(load).has_value();
  }

  /// `load` for the iteration whose induction variable is `iv`, with
  /// `mapping` giving its carried values: the address slice cloned, the
  /// mask and-ed with `iv < ub`.
  static Value loadFor(OpBuilder &b, kiln::LoadOp load,
                       ArrayRef<Operation *> slice, IRMapping &mapping,
                       Value inRange) {
    for (Operation *op : slice)
      b.clone(*op, mapping);
    return kiln::loadMaskedBy(b, load, inRange, mapping);
  }

  static scf::ForOp prefetch(scf::ForOp loop, kiln::LoadOp load) {
    SmallVector<Operation *> slice = *addressSlice(load);
    Location loc = load.getLoc();
    Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
          step = loop.getStep();

    // The first iteration's, before the loop.
    OpBuilder b(loop);
    IRMapping first;
    first.map(loop.getInductionVar(), lb);
    for (auto [arg, init] :
         llvm::zip(loop.getRegionIterArgs(), loop.getInitArgs()))
      first.map(arg, init);
    Value firstInRange =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lb, ub);
    Value initial = loadFor(b, load, slice, first, firstInRange);

    IRRewriter rewriter(b);
    auto newLoop = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
        rewriter, ValueRange{initial},
        /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &inner, Location, ArrayRef<BlockArgument>) {
          // The next iteration's, at the end of this one. The body is still
          // the old loop's here (it moves into the new loop afterwards).
          Block *body = loop.getBody();
          auto yield = cast<scf::YieldOp>(body->getTerminator());
          inner.setInsertionPoint(yield);
          Value iv = body->getArgument(0);
          Value next = arith::AddIOp::create(inner, loc, iv, step);
          IRMapping mapping;
          mapping.map(iv, next);
          unsigned original = yield.getNumOperands();
          for (unsigned i = 0; i < original; ++i)
            mapping.map(body->getArgument(1 + i), yield.getOperand(i));
          Value inRange = arith::CmpIOp::create(
              inner, loc, arith::CmpIPredicate::slt, next, ub);
          return SmallVector<Value>{
              loadFor(inner, load, slice, mapping, inRange)};
        }));
    load.getResult().replaceAllUsesWith(newLoop.getRegionIterArgs().back());
    load->erase();
    return newLoop;
  }
};

} // namespace
