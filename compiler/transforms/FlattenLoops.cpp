//===- FlattenLoops.cpp - tl.range(..., flatten=True) ---------------------===//
//
// A persistent kernel's loop over tiles holds a loop over K:
//
//   for t in range(lb0, ub0, s0):           # iter_args o
//     A(t, o)                               # the tile's offsets: pure
//     for k in range(lb1, ub1, s1): B(k, x) # x starts at x0 (from A)
//     C(t, o, x)                            # the epilogue; yields o
//
// Pipelined as it is, the K loop's ring drains and refills at every tile.
// With `flatten` set on the outer loop (tl.range's option), the two become
// one loop of trip count n0 * n1, so the pipeliner keeps copies in flight
// across tiles and the next tile's first tiles land while this one's
// epilogue runs:
//
//   for i in range(n0 * n1):                # carries o, x, A's values, j, t
//     first = j == 0
//     a = if first: A(t, o) else: a         # carried, recomputed per tile
//     x = select(first, x0(a), x)           # a zero x0: the dot's use_c
//     x = B(lb1 + j * s1, x)
//     if j == n1 - 1: o = C(t, o, x)
//     j, t = (0, t + s0) if j == n1 - 1 else (j + 1, t)
//
// A must be free of memory effects (it runs once per tile either way, but
// the pipeliner may compute it ahead of the iteration that reads it). When
// the K loop runs no iteration, or the product does not fit the induction
// variable, the original nested loop runs instead (an scf.if picks).
//
// Only on targets with wgmma (flattensWell); elsewhere the loops stay
// nested, with the same results. What the inner loop computes once per
// tile (a TMA copy's box offsets; with pointer loads, a row's offsets
// times its stride) moves into A first, as LLVM would hoist it out of the
// nested loop. kilnc compiles a flattened kernel again nested when it
// overflows shared memory or spills (compiler/driver/Pipeline.cpp).
//
//===----------------------------------------------------------------------===//
#include "compiler/ir/TargetInfo.h"
#include "compiler/ir/TensorMapAccess.h"
#include "compiler/transforms/AsyncCopies.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

#include <limits>

namespace kiln {
#define GEN_PASS_DEF_KILNFLATTENLOOPS
#include "compiler/transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr StringLiteral kFlattenAttr = "kiln.flatten";
constexpr StringLiteral kNumStagesAttr = "kiln.num_stages";

struct FlattenLoopsPass : kiln::impl::KilnFlattenLoopsBase<FlattenLoopsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    target_ = kiln::TargetInfo::of(module);
    if (!target_.hasCpAsync())
      return;
    SmallVector<scf::ForOp> loops;
    module.walk([&](scf::ForOp loop) {
      if (auto flag = loop->getAttrOfType<IntegerAttr>(kFlattenAttr);
          flag && flag.getInt() != 0)
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops)
      flatten(loop);
  }

private:
  /// The trip count of a loop from lb to ub by step (step > 0), in i64.
  static Value tripCount(OpBuilder &b, Location loc, Value lb, Value ub,
                         Value step) {
    auto wide = [&](Value v) -> Value {
      if (v.getType().isInteger(64))
        return v;
      return arith::ExtSIOp::create(b, loc, b.getI64Type(), v);
    };
    Value diff = arith::SubIOp::create(b, loc, wide(ub), wide(lb));
    Value s = wide(step);
    Value one = arith::ConstantIntOp::create(b, loc, 1, 64);
    Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
    Value rounded = arith::AddIOp::create(
        b, loc, diff, arith::SubIOp::create(b, loc, s, one));
    Value n = arith::DivSIOp::create(b, loc, rounded, s);
    Value positive =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, diff, zero);
    return arith::SelectOp::create(b, loc, positive, n, zero);
  }

  /// Ends an scf.if branch with `values`; a branch of an if without results
  /// already ends in its yield.
  static void yieldFrom(OpBuilder &b, Location loc, ValueRange values) {
    if (!values.empty())
      scf::YieldOp::create(b, loc, values);
  }

  static Value castInt(OpBuilder &b, Location loc, Value v, Type to) {
    unsigned from = v.getType().getIntOrFloatBitWidth();
    unsigned width = to.getIntOrFloatBitWidth();
    if (from == width)
      return v;
    if (from < width)
      return arith::ExtSIOp::create(b, loc, to, v);
    return arith::TruncIOp::create(b, loc, to, v);
  }

  /// Whether the inner loop's loads will all be TMA copies (each through a
  /// kernel argument's tensor map or one the kernel encodes): then a flattened
  /// iteration computes no addresses.
  static bool copiesByTma(scf::ForOp inner) {
    unsigned loads = 0;
    WalkResult result = inner.getBody()->walk([&](kiln::LoadOp load) {
      ++loads;
      return kiln::isTmaReadyMap(load.getTensorMap()) ? WalkResult::advance()
                                                      : WalkResult::interrupt();
    });
    return loads > 0 && !result.wasInterrupted();
  }

  /// Whether kiln-pipeline-dots can stage `load` asynchronously: a TMA copy
  /// through a tensor map, or cp.async (the pipeliner's own test).
  static bool copiesAsynchronously(kiln::LoadOp load,
                                   kiln::AxisInfoAnalysis &axisInfo) {
    return kiln::isTmaReadyMap(load.getTensorMap()) ||
           kiln::cpAsyncForm(load, axisInfo);
  }

  /// Whether flattening pays: on targets with wgmma, whose pipeliner keeps
  /// copies in flight across tiles, and when the inner loop loads, every
  /// load one the pipeliner will copy asynchronously (a loop it cannot
  /// pipeline gains nothing from running across tiles, and takes more
  /// registers: tutorial 09's pointer kernel in its general variant, 255
  /// flattened against 234 nested). The mma.sync targets keep their loops
  /// nested (not measured flattened).
  bool flattensWell(scf::ForOp inner) {
    if (!target_.hasWgmma())
      return false;
    // Carried pointers (`a_ptrs += BK`, or kiln-carry-pointers') would
    // restart at each tile inside the flattened loop, where the pipeliner
    // cannot run their loads ahead: nested, they pipeline.
    if (llvm::any_of(inner.getRegionIterArgs(), [](BlockArgument arg) {
          auto type = dyn_cast<RankedTensorType>(arg.getType());
          return type && isa<kiln::PointerType>(type.getElementType());
        }))
      return false;
    kiln::AxisInfoAnalysis axisInfo(
        inner->getParentOfType<FunctionOpInterface>());
    unsigned loads = 0;
    WalkResult result = inner.getBody()->walk([&](kiln::LoadOp load) {
      ++loads;
      return copiesAsynchronously(load, axisInfo) ? WalkResult::advance()
                                                  : WalkResult::interrupt();
    });
    return loads > 0 && !result.wasInterrupted();
  }

  /// Ops that only rearrange registers: their results are rebuilt where
  /// used rather than carried.
  static bool isShapeOnly(Operation *op) {
    return isa<kiln::SplatOp, kiln::BroadcastOp, kiln::ExpandDimsOp,
               kiln::MakeRangeOp, arith::ConstantOp>(op);
  }

  kiln::TargetInfo target_;

  void flatten(scf::ForOp outer) {
    outer->removeAttr(kFlattenAttr);
    Block *body = outer.getBody();
    scf::ForOp inner;
    for (Operation &op : body->without_terminator()) {
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        if (inner)
          return; // two loops over K: nothing to fuse into one
        inner = loop;
      }
    }
    if (!inner || !flattensWell(inner))
      return;
    // What the inner loop computes per tile from A moves into A: computed
    // once per tile, as LLVM hoists it out of a nested K loop, and carried.
    // With TMA copies only scalars move (the box offsets): the loads'
    // pointers and masks die once the copies replace them. With pointer
    // loads, tensors move too (a row's offsets times its stride); the
    // shape-only ops among them are rebuilt where they are read (below).
    bool tensors = !copiesByTma(inner);
    (void)moveLoopInvariantCode(
        {&inner.getRegion()},
        [&](Value v, Region *) { return inner.isDefinedOutsideOfLoop(v); },
        [&](Operation *op, Region *) {
          if (!isMemoryEffectFree(op) || !isSpeculatable(op) ||
              op->getNumRegions() != 0)
            return false;
          if (llvm::none_of(op->getResultTypes(),
                            [](Type type) { return isa<ShapedType>(type); }))
            return true;
          return tensors;
        },
        [&](Operation *op, Region *) { op->moveBefore(inner); });
    // What does not depend on the tile leaves the loop.
    (void)moveLoopInvariantCode(
        cast<LoopLikeOpInterface>(outer.getOperation()));
    for (Value bound :
         {inner.getLowerBound(), inner.getUpperBound(), inner.getStep()})
      if (!outer.isDefinedOutsideOfLoop(bound))
        return;
    // A: the ops before the inner loop, pure; C: the ops after it.
    SmallVector<Operation *> prologue, epilogue;
    bool afterInner = false;
    for (Operation &op : body->without_terminator()) {
      if (&op == inner.getOperation()) {
        afterInner = true;
        continue;
      }
      if (!afterInner && !isMemoryEffectFree(&op))
        return;
      (afterInner ? epilogue : prologue).push_back(&op);
    }
    // Shape-only ops of A read after A are rebuilt at each reader, so that
    // what is carried is their (smaller) operand.
    for (Operation *op : llvm::reverse(prologue)) {
      if (!isShapeOnly(op))
        continue;
      for (OpOperand &use : llvm::make_early_inc_range(op->getUses())) {
        Operation *top = body->findAncestorOpInBlock(*use.getOwner());
        if (!top || llvm::is_contained(prologue, top))
          continue;
        unsigned result = cast<OpResult>(use.get()).getResultNumber();
        OpBuilder rb(use.getOwner());
        use.set(rb.clone(*op)->getResult(result));
      }
    }
    // C again: it now holds the copies made for its readers.
    epilogue.clear();
    for (Operation &op : llvm::make_range(std::next(inner->getIterator()),
                                          body->without_terminator().end()))
      epilogue.push_back(&op);
    // A's values read after A: by the inner loop (its inits, its body) or
    // by C. The flattened loop carries them from the tile's first iteration.
    llvm::SetVector<Value> escaping;
    llvm::SmallPtrSet<Operation *, 16> inPrologue(prologue.begin(),
                                                  prologue.end());
    for (Operation *op : prologue)
      for (Value result : op->getResults())
        for (OpOperand &use : result.getUses()) {
          Operation *top = body->findAncestorOpInBlock(*use.getOwner());
          if (top && !inPrologue.contains(top))
            escaping.insert(result);
        }

    Location loc = outer.getLoc();
    OpBuilder b(outer);
    Type outerIv = outer.getInductionVar().getType();
    Type innerIv = inner.getInductionVar().getType();
    Type flatIv = outerIv.isInteger(64) || innerIv.isInteger(64)
                      ? b.getI64Type()
                      : b.getI32Type();
    Value n0 = tripCount(b, loc, outer.getLowerBound(), outer.getUpperBound(),
                         outer.getStep());
    Value n1 = tripCount(b, loc, inner.getLowerBound(), inner.getUpperBound(),
                         inner.getStep());
    // n0 and n1 below 2^31 keep the product within i64.
    Value limit31 = arith::ConstantIntOp::create(
        b, loc, std::numeric_limits<int32_t>::max(), 64);
    Value flatMax = arith::ConstantIntOp::create(
        b, loc,
        flatIv.isInteger(64) ? std::numeric_limits<int64_t>::max()
                             : std::numeric_limits<int32_t>::max(),
        64);
    Value zero64 = arith::ConstantIntOp::create(b, loc, 0, 64);
    Value total = arith::MulIOp::create(b, loc, n0, n1);
    Value fits = arith::AndIOp::create(
        b, loc,
        arith::AndIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, n1,
                                  zero64),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, n0,
                                  limit31)),
        arith::AndIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, n1,
                                  limit31),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, total,
                                  flatMax)));
    auto choice = scf::IfOp::create(b, loc, outer.getResultTypes(), fits,
                                    /*withElseRegion=*/true);
    {
      // The original nested loop, for what the flattened one cannot run.
      OpBuilder eb = choice.getElseBodyBuilder();
      Operation *original = eb.clone(*outer);
      yieldFrom(eb, loc, original->getResults());
    }
    OpBuilder tb = choice.getThenBodyBuilder();
    // The carried values' first facts: A for the first tile (pure, so
    // computing it here changes nothing even when no tile runs).
    IRMapping first0;
    first0.map(outer.getInductionVar(), outer.getLowerBound());
    for (auto [arg, init] :
         llvm::zip(outer.getRegionIterArgs(), outer.getInitArgs()))
      first0.map(arg, init);
    for (Operation *op : prologue)
      tb.clone(*op, first0);
    SmallVector<Value> inits(outer.getInitArgs());
    unsigned xFirst = unsigned(inits.size());
    for (Value x0 : inner.getInitArgs())
      inits.push_back(first0.lookupOrDefault(x0));
    unsigned aFirst = unsigned(inits.size());
    for (Value v : escaping)
      inits.push_back(first0.lookup(v));
    unsigned jIndex = unsigned(inits.size());
    inits.push_back(arith::ConstantIntOp::create(tb, loc, innerIv, 0));
    inits.push_back(outer.getLowerBound());
    Value flatTotal = castInt(tb, loc, total, flatIv);
    Value flatZero = arith::ConstantIntOp::create(tb, loc, flatIv, 0);
    Value flatOne = arith::ConstantIntOp::create(tb, loc, flatIv, 1);
    auto flat =
        scf::ForOp::create(tb, loc, flatZero, flatTotal, flatOne, inits);
    for (NamedAttribute attr : outer->getDiscardableAttrs())
      flat->setAttr(attr.getName(), attr.getValue());
    // The K loop's own pipeline depth wins: its loads are the ones piped.
    if (Attribute stages = inner->getAttr(kNumStagesAttr))
      flat->setAttr(kNumStagesAttr, stages);

    OpBuilder fb = OpBuilder::atBlockBegin(flat.getBody());
    ValueRange args = flat.getRegionIterArgs();
    Value j = args[jIndex], t = args[jIndex + 1];
    IRMapping mapping;
    mapping.map(outer.getInductionVar(), t);
    for (auto [arg, carried] :
         llvm::zip(outer.getRegionIterArgs(), args.take_front(xFirst)))
      mapping.map(arg, carried);
    Value zeroJ = arith::ConstantIntOp::create(fb, loc, innerIv, 0);
    Value isFirst =
        arith::CmpIOp::create(fb, loc, arith::CmpIPredicate::eq, j, zeroJ);
    // A, once per tile.
    if (!escaping.empty()) {
      SmallVector<Type> types;
      for (Value v : escaping)
        types.push_back(v.getType());
      auto recompute = scf::IfOp::create(fb, loc, types, isFirst, true);
      OpBuilder thenB = recompute.getThenBodyBuilder();
      for (Operation *op : prologue)
        thenB.clone(*op, mapping);
      SmallVector<Value> computed;
      for (Value v : escaping)
        computed.push_back(mapping.lookup(v));
      scf::YieldOp::create(thenB, loc, computed);
      OpBuilder elseB = recompute.getElseBodyBuilder();
      scf::YieldOp::create(elseB, loc, args.slice(aFirst, escaping.size()));
      for (auto [v, result] : llvm::zip(escaping, recompute.getResults()))
        mapping.map(v, result);
    }
    // The inner loop's carried values restart with each tile.
    for (auto [i, arg] : llvm::enumerate(inner.getRegionIterArgs())) {
      Value start = mapping.lookupOrDefault(inner.getInitArgs()[i]);
      mapping.map(arg, arith::SelectOp::create(fb, loc, isFirst, start,
                                               args[xFirst + i]));
    }
    Value k = arith::AddIOp::create(
        fb, loc, inner.getLowerBound(),
        arith::MulIOp::create(fb, loc, j, inner.getStep()));
    mapping.map(inner.getInductionVar(), k);
    for (Operation &op : inner.getBody()->without_terminator())
      fb.clone(op, mapping);
    SmallVector<Value> xNext;
    for (Value v : inner.getBody()->getTerminator()->getOperands())
      xNext.push_back(mapping.lookupOrDefault(v));
    for (auto [result, v] : llvm::zip(inner.getResults(), xNext))
      mapping.map(result, v);
    // C, at the tile's last iteration.
    Value oneJ = arith::ConstantIntOp::create(fb, loc, innerIv, 1);
    Value jNext = arith::AddIOp::create(fb, loc, j, oneJ);
    Value isLast = arith::CmpIOp::create(fb, loc, arith::CmpIPredicate::eq,
                                         jNext, castInt(fb, loc, n1, innerIv));
    auto finish = scf::IfOp::create(fb, loc, outer.getResultTypes(), isLast,
                                    /*withElseRegion=*/true);
    {
      OpBuilder thenB = finish.getThenBodyBuilder();
      for (Operation *op : epilogue)
        thenB.clone(*op, mapping);
      SmallVector<Value> yielded;
      for (Value v : body->getTerminator()->getOperands())
        yielded.push_back(mapping.lookupOrDefault(v));
      yieldFrom(thenB, loc, yielded);
      OpBuilder elseB = finish.getElseBodyBuilder();
      yieldFrom(elseB, loc, args.take_front(xFirst));
    }
    SmallVector<Value> next(finish.getResults());
    llvm::append_range(next, xNext);
    for (auto [i, v] : llvm::enumerate(escaping))
      next.push_back(mapping.lookup(v));
    next.push_back(arith::SelectOp::create(fb, loc, isLast, zeroJ, jNext));
    next.push_back(arith::SelectOp::create(
        fb, loc, isLast, arith::AddIOp::create(fb, loc, t, outer.getStep()),
        t));
    scf::YieldOp::create(fb, loc, next);
    yieldFrom(tb, loc, flat.getResults().take_front(xFirst));
    outer->replaceAllUsesWith(choice.getResults());
    outer->erase();
  }
};

} // namespace
