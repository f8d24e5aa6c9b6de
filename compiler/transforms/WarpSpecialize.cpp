//===- WarpSpecialize.cpp - producer and consumer warps for a dot loop ----===//
//
// `tl.range(..., warp_specialize=True)` on a loop whose inner loop multiplies
// two TMA-loaded tiles into an accumulator (tutorial 09's persistent matmul:
// the marked loop runs over output tiles, the inner one over K):
//
//   rings, full[S] (1 arrival + bytes), empty[S] (one per consumer thread)
//   barrier                                      every thread of the program
//   if warp >= num_warps:                        the producer warpgroup
//     setmaxnreg.dec 40
//     if warp == num_warps:
//       for tile: for k:                         c counts copies, across tiles
//         wait empty[c % S] (parity of use c / S, the first use passes)
//         TMA copies of a and b into slot c % S, counted on full[c % S]
//   else:                                        the num_warps consumers
//     setmaxnreg.inc
//     for tile: for k:
//       wait full[c % S]; acc = wgmma(slot c % S, acc); wait until 1 pending
//       arrive empty[(c - 1) % S]                the previous slot is read
//     wait for the last wgmma, arrive on its slot; the tile's epilogue
//     the rest of the program
//
// The producer runs ahead by as many slots as the ring has, across tiles:
// the next tile's loads land while the consumers run this tile's epilogue.
// Its loops are the marked loop and the inner loop with only the slices
// that compute the boxes' offsets and the inner bounds; the consumers keep
// the program, the loads replaced by the ring reads. Both count slot uses
// the same way, so neither carries anything of the other's.
//
// The code before the marked loop runs in every warp, so it must be scalar
// (index arithmetic, kiln.make_tensor_map): a tensor computed there would
// be laid out over the consumer warps only. A map the program encodes is
// acquired by the producer thread that copies with it. Barriers in the
// consumers' part name the consumer threads (kiln-to-llvm), since the
// producer warps have left.
//
//===----------------------------------------------------------------------===//
#include "compiler/transforms/WarpSpecialize.h"

#include "compiler/ir/Occupancy.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace {

/// The ops of `block` that computing `roots` takes, in block order: pure
/// ops reading the block's induction variable (argument 0) and values from
/// above. Values defined inside `skip` (an op of the block) are someone
/// else's. False when the slice needs a carried value or an op with memory
/// effects.
bool sliceOf(Block *block, ArrayRef<Value> roots, Operation *skip,
             llvm::SetVector<Operation *> &slice) {
  SmallVector<Value> work(roots.begin(), roots.end());
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() == block && arg.getArgNumber() != 0)
        return false;
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (skip && skip->isAncestor(def))
      continue;
    Operation *top = block->findAncestorOpInBlock(*def);
    if (!top || !seen.insert(top).second)
      continue;
    if (!isMemoryEffectFree(top))
      return false;
    llvm::append_range(work, top->getOperands());
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(top->getRegions(), captured);
    llvm::append_range(work, captured);
  }
  for (Operation &op : *block)
    if (seen.contains(&op))
      slice.insert(&op);
  return true;
}

/// Whether every op of the function before `outer` is scalar work that all
/// warps may run: no regions, no tensors or buffers, no memory effects but
/// a tensor map's encoding (constants aside).
bool scalarPrologue(func::FuncOp func, Operation *outer) {
  for (Operation &op : func.getBody().front()) {
    if (&op == outer)
      return true;
    if (op.getNumRegions() != 0)
      return false;
    // Constants, tensors included, are only materialized where used.
    if (op.hasTrait<OpTrait::ConstantLike>())
      continue;
    for (Type type : op.getResultTypes())
      if (isa<RankedTensorType, kiln::gpu::MemDescType>(type))
        return false;
    if (!isMemoryEffectFree(&op) && !isa<kiln::MakeTensorMapOp>(op))
      return false;
  }
  return false;
}

kiln::gpu::MemDescType tileType(kiln::gpu::MemDescType ring) {
  return kiln::gpu::MemDescType::get(ring.getContext(),
                                     ring.getShape().drop_front(),
                                     ring.getElementType(), ring.getEncoding());
}

Value tileOf(OpBuilder &b, Location loc, Value ring, Value slot) {
  return kiln::gpu::MemDescIndexOp::create(
      b, loc, tileType(cast<kiln::gpu::MemDescType>(ring.getType())), ring,
      slot);
}

Value i32Const(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(int32_t(v)));
}

} // namespace

bool kiln::warpSpecialize(WarpSpecializedLoop spec) {
  // `outer` is null when the marked loop is the dot's own (tutorial 09's
  // matmul_kernel_tma): then the producer runs that loop alone.
  scf::ForOp outer = spec.outer, loop = spec.loop;
  Operation *top = outer ? outer.getOperation() : loop.getOperation();
  auto func = dyn_cast<func::FuncOp>(top->getParentOp());
  if (!func || !func.getBody().hasOneBlock() || !scalarPrologue(func, top) ||
      spec.numWarps % 4 != 0)
    return false;
  Block *body = loop.getBody();
  // The accumulator: a carried value of the inner loop.
  auto acc = dyn_cast<BlockArgument>(spec.dot.getC());
  if (!acc || acc.getOwner() != body || acc.getArgNumber() == 0)
    return false;
  unsigned accIndex = acc.getArgNumber() - 1;

  // What the producer computes: the boxes' offsets in the inner loop, and
  // in the marked loop what they and the inner bounds read.
  SmallVector<Value> offsets;
  for (RingOperand &operand : spec.operands) {
    Value map = operand.load.getTensorMap();
    bool fromAbove =
        isa<BlockArgument>(map)
            ? cast<BlockArgument>(map).getOwner() == &func.getBody().front()
            : map.getDefiningOp()->getBlock() == &func.getBody().front();
    if (!fromAbove)
      return false;
    llvm::append_range(offsets, operand.load.getBoxOffsets());
  }
  llvm::SetVector<Operation *> innerSlice, outerSlice;
  if (!sliceOf(body, offsets, nullptr, innerSlice))
    return false;
  SmallVector<Value> outerRoots{loop.getLowerBound(), loop.getUpperBound(),
                                loop.getStep()};
  llvm::append_range(outerRoots, offsets);
  for (Operation *op : innerSlice)
    llvm::append_range(outerRoots, op->getOperands());
  if (outer && !sliceOf(outer.getBody(), outerRoots, loop, outerSlice))
    return false;

  MLIRContext *ctx = top->getContext();
  Location loc = top->getLoc();
  unsigned stages = spec.stages;
  unsigned consumerThreads = spec.numWarps * TargetInfo::kThreadsPerWarp;
  OpBuilder b(top);

  // The rings and their barriers, ready before either role starts.
  auto barrierRing =
      gpu::MemDescType::get(ctx, {int64_t(stages), 1, 1}, b.getI64Type(),
                            gpu::NVMMASharedEncodingAttr::get(ctx, 0, false));
  Value rings[2], full[2];
  for (unsigned i = 0; i < 2; ++i) {
    rings[i] =
        gpu::LocalAllocOp::create(b, loc, spec.operands[i].ring, IntegerAttr());
    full[i] = gpu::LocalAllocOp::create(b, loc, barrierRing, IntegerAttr());
  }
  Value empty = gpu::LocalAllocOp::create(b, loc, barrierRing, IntegerAttr());
  for (unsigned j = 0; j < stages; ++j) {
    Value slot = i32Const(b, loc, j);
    for (unsigned i = 0; i < 2; ++i)
      gpu::InitBarrierOp::create(b, loc, tileOf(b, loc, full[i], slot), 1);
    gpu::InitBarrierOp::create(b, loc, tileOf(b, loc, empty, slot),
                               consumerThreads);
  }
  gpu::FenceAsyncSharedOp::create(b, loc);
  gpu::BarrierOp::create(b, loc);
  Value zero = i32Const(b, loc, 0);
  Value warp = gpu::WarpIndexOp::create(b, loc, b.getI32Type());
  Value consumerWarps = i32Const(b, loc, spec.numWarps);
  Value isProducer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                           warp, consumerWarps);
  auto split = scf::IfOp::create(b, loc, TypeRange{}, isProducer,
                                 /*withElseRegion=*/true);

  // Slot and phase parity of a slot use counted by `count`.
  auto slotOf = [&](OpBuilder &at, Value count) {
    return arith::RemUIOp::create(at, loc, count, i32Const(at, loc, stages));
  };
  auto parityOf = [&](OpBuilder &at, Value count) -> Value {
    Value round =
        arith::DivUIOp::create(at, loc, count, i32Const(at, loc, stages));
    return arith::AndIOp::create(at, loc, round, i32Const(at, loc, 1));
  };

  // The producer: one warp issues, the others of its warpgroup only give
  // their registers back.
  {
    OpBuilder p = split.getThenBodyBuilder();
    gpu::SetMaxRegistersOp::create(
        p, loc, p.getI32IntegerAttr(kProducerRegisters), UnitAttr());
    Value isIssuer = arith::CmpIOp::create(p, loc, arith::CmpIPredicate::eq,
                                           warp, consumerWarps);
    auto issue = scf::IfOp::create(p, loc, TypeRange{}, isIssuer,
                                   /*withElseRegion=*/false);
    OpBuilder q = issue.getThenBodyBuilder();
    llvm::SmallSetVector<Value, 2> encoded;
    for (RingOperand &operand : spec.operands)
      if (operand.load.getTensorMap().getDefiningOp<MakeTensorMapOp>())
        encoded.insert(operand.load.getTensorMap());
    for (Value map : encoded)
      gpu::TensorMapAcquireOp::create(q, loc, map);
    Value yes = arith::ConstantOp::create(q, loc, q.getBoolAttr(true));
    IRMapping mapping;
    // The inner loop, counting from `start`.
    auto emitInner = [&](OpBuilder &ob, Value start) {
      return scf::ForOp::create(
          ob, loc, mapping.lookupOrDefault(loop.getLowerBound()),
          mapping.lookupOrDefault(loop.getUpperBound()),
          mapping.lookupOrDefault(loop.getStep()), ValueRange{start},
          [&](OpBuilder &ib, Location, Value innerIv, ValueRange innerCounts) {
            mapping.map(loop.getInductionVar(), innerIv);
            for (Operation *op : innerSlice)
              ib.clone(*op, mapping);
            Value count = innerCounts[0];
            Value slot = slotOf(ib, count);
            Value free = arith::XOrIOp::create(ib, loc, parityOf(ib, count),
                                               i32Const(ib, loc, 1));
            gpu::WaitBarrierOp::create(ib, loc, tileOf(ib, loc, empty, slot),
                                       free);
            for (unsigned i = 0; i < 2; ++i) {
              SmallVector<Value> box;
              for (Value offset : spec.operands[i].load.getBoxOffsets())
                box.push_back(mapping.lookupOrDefault(offset));
              auto copy = gpu::AsyncTmaCopyOp::create(
                  ib, loc, spec.operands[i].load.getTensorMap(), box,
                  tileOf(ib, loc, rings[i], slot),
                  tileOf(ib, loc, full[i], slot), yes);
              copy->setAttr(gpu::AsyncTmaCopyOp::kWarpIssuedAttr,
                            ib.getUnitAttr());
            }
            scf::YieldOp::create(ib, loc,
                                 ValueRange{arith::AddIOp::create(
                                     ib, loc, count, i32Const(ib, loc, 1))});
          });
    };
    if (!outer)
      emitInner(q, zero);
    else
      scf::ForOp::create(
          q, loc, outer.getLowerBound(), outer.getUpperBound(), outer.getStep(),
          ValueRange{zero},
          [&](OpBuilder &ob, Location, Value iv, ValueRange counts) {
            mapping.map(outer.getInductionVar(), iv);
            for (Operation *op : outerSlice)
              ob.clone(*op, mapping);
            scf::YieldOp::create(ob, loc,
                                 emitInner(ob, counts[0]).getResults());
          });
  }

  // The consumers: the rest of the program.
  Block *consumer = split.elseBlock();
  {
    OpBuilder c = OpBuilder::atBlockBegin(consumer);
    gpu::SetMaxRegistersOp::create(
        c, loc, c.getI32IntegerAttr(consumerRegisters(spec.numWarps)),
        c.getUnitAttr());
    Operation *end = func.getBody().front().getTerminator();
    Operation *yield = consumer->getTerminator();
    for (Operation *op = top; op != end;) {
      Operation *next = op->getNextNode();
      op->moveBefore(yield);
      op = next;
    }
  }
  IRRewriter rewriter(ctx);
  scf::ForOp countedOuter;
  Value tileStart = zero;
  if (outer) {
    rewriter.setInsertionPoint(outer);
    countedOuter = cast<scf::ForOp>(*outer.replaceWithAdditionalYields(
        rewriter, ValueRange{zero}, /*replaceInitOperandUsesInLoop=*/false,
        [](OpBuilder &, Location, ArrayRef<BlockArgument> args) {
          return SmallVector<Value>(args.begin(), args.end());
        }));
    tileStart = countedOuter.getRegionIterArgs().back();
  }
  rewriter.setInsertionPoint(loop);
  auto counted = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
      rewriter, ValueRange{tileStart}, /*replaceInitOperandUsesInLoop=*/false,
      [](OpBuilder &, Location, ArrayRef<BlockArgument> args) {
        return SmallVector<Value>(args.begin(), args.end());
      }));
  body = counted.getBody();
  Value count = counted.getRegionIterArgs().back();

  // In the inner loop: the ring's slot instead of the loads.
  DotOp dot = spec.dot;
  OpBuilder d(dot);
  Value slot = slotOf(d, count);
  Value parity = parityOf(d, count);
  Value tiles[2];
  for (unsigned i = 0; i < 2; ++i) {
    gpu::WaitBarrierOp::create(d, loc, tileOf(d, loc, full[i], slot), parity);
    tiles[i] = tileOf(d, loc, rings[i], slot);
    if (spec.operands[i].viewTransposed)
      tiles[i] = gpu::MemDescTransOp::create(
          d, loc,
          gpu::MemDescTransOp::transposedType(
              cast<gpu::MemDescType>(tiles[i].getType())),
          tiles[i]);
  }
  InputPrecisionAttr precision;
  if (dot.getA().getType().getElementType().isF32() &&
      dot.getInputPrecision() != InputPrecision::TF32)
    precision = InputPrecisionAttr::get(ctx, dot.getInputPrecision());
  auto sharedDot =
      gpu::SharedDotOp::create(d, loc, dot.getType(), tiles[0], tiles[1],
                               dot.getC(), Value(), d.getUnitAttr(), precision);
  // At most this dot in flight: the previous one's slot is read.
  auto wait = gpu::DotWaitOp::create(d, loc, TypeRange{dot.getType()},
                                     ValueRange{sharedDot.getD()}, 1);
  auto release = [&](OpBuilder &at, Value used) {
    Value notFirst = arith::CmpIOp::create(at, loc, arith::CmpIPredicate::ne,
                                           used, tileStart);
    auto ifUsed = scf::IfOp::create(at, loc, TypeRange{}, notFirst,
                                    /*withElseRegion=*/false);
    OpBuilder r = ifUsed.getThenBodyBuilder();
    Value previous = slotOf(
        r, arith::AddIOp::create(r, loc, used, i32Const(r, loc, stages - 1)));
    gpu::ArriveBarrierOp::create(r, loc, tileOf(r, loc, empty, previous));
  };
  release(d, count);
  Value operands[2] = {dot.getA(), dot.getB()};
  dot.getD().replaceAllUsesWith(wait.getOutputs()[0]);
  dot->erase();
  for (unsigned i = 0; i < 2; ++i) {
    Value operand = operands[i];
    while (isa_and_nonnull<gpu::ConvertLayoutOp, TransOp>(
        operand.getDefiningOp())) {
      Operation *def = operand.getDefiningOp();
      operand = def->getOperand(0);
      if (!def->use_empty())
        break;
      def->erase();
    }
  }
  for (RingOperand &operand : spec.operands)
    if (operand.load->use_empty())
      operand.load->erase();
  auto innerYield = cast<scf::YieldOp>(body->getTerminator());
  OpBuilder y(innerYield);
  innerYield->setOperand(
      innerYield.getNumOperands() - 1,
      arith::AddIOp::create(y, loc, count, i32Const(y, loc, 1)));

  // After it: the last dot done, its slot released, the count carried on.
  OpBuilder after(counted->getBlock(), std::next(counted->getIterator()));
  Value result = counted.getResult(accIndex);
  auto last = gpu::DotWaitOp::create(after, loc, TypeRange{result.getType()},
                                     ValueRange{result}, 0);
  result.replaceAllUsesExcept(last.getOutputs()[0], last);
  Value tileEnd = counted.getResults().back();
  release(after, tileEnd);
  if (countedOuter) {
    auto outerYield =
        cast<scf::YieldOp>(countedOuter.getBody()->getTerminator());
    outerYield->setOperand(outerYield.getNumOperands() - 1, tileEnd);
  }

  func->getParentOfType<ModuleOp>()->setAttr(
      gpu::KilnGPUDialect::kProducerWarpsAttrName,
      b.getI32IntegerAttr(int32_t(kProducerWarps)));
  return true;
}
