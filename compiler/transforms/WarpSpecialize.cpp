//===- WarpSpecialize.cpp - producer and consumer warps for dot loops -----===//
//
// `tl.range(..., warp_specialize=True)` on loops whose wgmma dots read
// tiles that TMA loads in their bodies: tutorial 09's matmul (the marked
// loop over output tiles, the dot loop over K inside it, or the dot loop
// alone) and tutorial 06's attention loops (q @ k and p @ v, q loaded once
// before them; two loops when causal).
//
//   rings, full[r][S] (1 arrival + bytes), empty[r][S] (one per consumer
//   thread), for each operand r that the loops load
//   barrier                                      every thread of the program
//   if warp >= num_warps:                        the producer warpgroup
//     setmaxnreg.dec 40
//     if warp == num_warps:
//       for each loop, in program order:         c counts iterations, across
//         for (tile:) for it:                    tiles and loops
//           for r: wait empty[r][c % S] (parity of use c / S, the first use
//                  passes); TMA copy of r into slot c % S, on full[r][c % S]
//   else:                                        the num_warps consumers
//     setmaxnreg.inc
//     the program, with in each loop's iteration and for each dot:
//       wait full[r][c % S] of its operands; wgmma on the slots, then
//       - a dot read in the iteration: wait for it; every consumer thread
//         arrives on empty[r][c % S], the slot is read;
//       - an accumulating dot (matmul): wait until it alone is in flight;
//         the previous iteration's slots are read: arrive on them;
//       - a dot only carried (attention's p @ v): no wait; the next
//         iteration's first wait completes it, then arrive on its slots.
//       After the loop: the last carried dots waited for, their slots
//       released.
//
// The producer runs ahead by as many slots as the ring has, across tiles
// and loops: the next tile's loads land while the consumers run this
// tile's epilogue. Its loops keep only the slices that compute the boxes'
// offsets and the loops' bounds (carried offsets included), cloned from
// the program; the consumers keep the program, the loads replaced by the
// ring reads. Both count slot uses the same way, so neither carries
// anything of the other's.
//
// The split comes right after the last tensor map the producer needs that
// the program encodes, so that every warp runs the code before it: scalar
// work only, since a tensor there would be laid out over the consumer warps
// (pure tensor code that nothing before the split reads moves after it).
// A map the program encodes is acquired by the producer thread that copies
// with it. A tile loaded once goes from the consumers' registers to shared
// memory. Barriers in the consumers' part name the consumer threads
// (kiln-to-llvm), since the producer warps have left.
//
//===----------------------------------------------------------------------===//
#include "compiler/transforms/WarpSpecialize.h"

#include "compiler/ir/Occupancy.h"
#include "compiler/transforms/RingTiles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace {

using OpSlice = llvm::SetVector<Operation *>;
using CarriedSet = llvm::SmallSetVector<unsigned, 4>;

bool isTensorLike(Type type) {
  return isa<RankedTensorType, kiln::gpu::MemDescType>(type);
}

/// The ops of `block` that computing `roots` takes, in block order: pure
/// scalar ops reading values from above and the block's arguments. In a
/// loop's body (`carried` given), argument 0 is the induction variable and
/// a carried value brings its recurrence into the slice (`carried` gets its
/// index). Values defined inside `skip` (an op of the block) are someone
/// else's. False when the slice needs an op with memory effects or one
/// computing a tensor.
bool sliceOf(Block *block, ArrayRef<Value> roots, Operation *skip,
             OpSlice &slice, CarriedSet *carried) {
  SmallVector<Value> work(roots.begin(), roots.end());
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != block || !carried || arg.getArgNumber() == 0)
        continue;
      unsigned index = arg.getArgNumber() - 1;
      if (carried->insert(index))
        work.push_back(block->getTerminator()->getOperand(index));
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (skip && skip->isAncestor(def))
      continue;
    Operation *top = block->findAncestorOpInBlock(*def);
    if (!top || !seen.insert(top).second)
      continue;
    if (!isMemoryEffectFree(top) ||
        llvm::any_of(top->getResultTypes(), isTensorLike))
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

/// Whether `v` is defined in `block`, as one of its arguments or inside one
/// of its ops.
bool definedIn(Value v, Block *block) {
  Operation *where;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() == block)
      return true;
    where = arg.getOwner()->getParentOp();
  } else {
    where = v.getDefiningOp();
  }
  return where && block->findAncestorOpInBlock(*where);
}

/// The values the ops of `slice` (ops of `block`) read from above it.
SmallVector<Value> readFromAbove(const OpSlice &slice, Block *block) {
  SmallVector<Value> values;
  for (Operation *op : slice)
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        if (!definedIn(v, block))
          values.push_back(v);
    });
  return values;
}

/// Whether every warp of the program, the producer's included, may run
/// `op`: scalar work, a tensor map's encoding, constants.
bool runsInEveryWarp(Operation &op) {
  if (op.hasTrait<OpTrait::ConstantLike>())
    return true; // tensors included: materialized where used
  if (op.getNumRegions() != 0 ||
      llvm::any_of(op.getResultTypes(), isTensorLike))
    return false;
  return isMemoryEffectFree(&op) || isa<kiln::MakeTensorMapOp>(op);
}

Value i32Const(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(int32_t(v)));
}

Operation *topOf(kiln::WarpSpecializedLoop &l) {
  return l.outer ? l.outer.getOperation() : l.loop.getOperation();
}

/// What the producer computes for one loop: in its body the boxes'
/// offsets, in the loop around it (if any) what they and the loop's bounds
/// read, and the carried values these take.
struct ProducerSlices {
  OpSlice inner, outer;
  CarriedSet innerCarried, outerCarried;
};

/// The loop's roots in the block around it: bounds, and the initial values
/// of the carried values the producer keeps.
SmallVector<Value> loopRoots(scf::ForOp loop, const CarriedSet &carried) {
  SmallVector<Value> roots{loop.getLowerBound(), loop.getUpperBound(),
                           loop.getStep()};
  for (unsigned index : carried)
    roots.push_back(loop.getInitArgs()[index]);
  return roots;
}

} // namespace

bool kiln::warpSpecialize(MutableArrayRef<WarpSpecializedLoop> loops,
                          unsigned numWarps) {
  if (loops.empty() || numWarps % 4 != 0)
    return false;
  auto func = dyn_cast<func::FuncOp>(topOf(loops.front())->getParentOp());
  if (!func || !func.getBody().hasOneBlock())
    return false;
  Block &entry = func.getBody().front();
  SmallVector<WarpSpecializedLoop *> order;
  for (WarpSpecializedLoop &l : loops) {
    if (topOf(l)->getBlock() != &entry || l.operands.empty())
      return false;
    order.push_back(&l);
  }
  llvm::sort(order, [](auto *a, auto *b) {
    return topOf(*a)->isBeforeInBlock(topOf(*b));
  });
  for (unsigned i = 1; i < order.size(); ++i)
    if (topOf(*order[i - 1]) == topOf(*order[i]))
      return false;

  // Each loop's operands: a ring's load in the loop's body, read by one
  // dot operand, through a map the kernel gets or encodes up front; a tile
  // loaded once, before the loop in the program's block.
  Operation *splitAfter = nullptr;
  llvm::SmallSetVector<Value, 4> encoded;
  for (WarpSpecializedLoop *l : order) {
    SmallVector<unsigned> reads(l->operands.size(), 0);
    for (const SpecializedDot &d : l->dots)
      for (int source : d.source)
        if (source >= 0)
          ++reads[unsigned(source)];
    for (auto [index, operand] : llvm::enumerate(l->operands)) {
      if (operand.once) {
        if (operand.load->getBlock() != &entry ||
            !operand.load->isBeforeInBlock(topOf(*l)))
          return false;
        continue;
      }
      if (operand.load->getBlock() != l->loop.getBody() || reads[index] != 1)
        return false;
      Value map = operand.load.getTensorMap();
      if (!map)
        return false;
      if (auto arg = dyn_cast<BlockArgument>(map)) {
        if (arg.getOwner() != &entry)
          return false;
        continue;
      }
      auto make = map.getDefiningOp<MakeTensorMapOp>();
      if (!make || make->getBlock() != &entry)
        return false;
      encoded.insert(map);
      if (!splitAfter || splitAfter->isBeforeInBlock(make))
        splitAfter = make;
    }
  }
  // Before the split every warp runs the program: pure tensor code there
  // that nothing else before it reads moves to the consumers.
  SmallVector<Operation *> toConsumers;
  if (splitAfter)
    for (Operation &op : entry) {
      if (&op == splitAfter)
        break;
      if (runsInEveryWarp(op))
        continue;
      bool readBefore = llvm::any_of(op.getUsers(), [&](Operation *user) {
        Operation *at = entry.findAncestorOpInBlock(*user);
        return at && (at == splitAfter || at->isBeforeInBlock(splitAfter));
      });
      if (!isMemoryEffectFree(&op) || readBefore)
        return false;
      toConsumers.push_back(&op);
    }

  // The producer's slices of each loop, and of the program's block before
  // them: what none of the code before the split computes is cloned.
  SmallVector<ProducerSlices, 2> slices(order.size());
  OpSlice entrySlice;
  for (auto [l, s] : llvm::zip(order, slices)) {
    SmallVector<Value> offsets;
    for (RingOperand &operand : l->operands)
      if (!operand.once)
        llvm::append_range(offsets, operand.load.getBoxOffsets());
    Block *body = l->loop.getBody();
    if (!sliceOf(body, offsets, nullptr, s.inner, &s.innerCarried))
      return false;
    // What the loop reads from above: the next roots, with offsets that
    // are computed outside the body (each level's sliceOf skips values
    // defined in the loop below it).
    SmallVector<Value> roots = loopRoots(l->loop, s.innerCarried);
    llvm::append_range(roots, readFromAbove(s.inner, body));
    llvm::append_range(roots, offsets);
    if (l->outer) {
      Block *outerBody = l->outer.getBody();
      if (!sliceOf(outerBody, roots, l->loop, s.outer, &s.outerCarried))
        return false;
      // The inner loop's roots from above the outer one stay roots.
      llvm::append_range(roots, loopRoots(l->outer, s.outerCarried));
      llvm::append_range(roots, readFromAbove(s.outer, outerBody));
    }
    if (!sliceOf(&entry, roots, topOf(*l), entrySlice, nullptr))
      return false;
  }

  MLIRContext *ctx = func.getContext();
  Location loc = topOf(*order.front())->getLoc();
  unsigned consumerThreads = numWarps * TargetInfo::kThreadsPerWarp;
  OpBuilder b(ctx);
  if (splitAfter)
    b.setInsertionPointAfter(splitAfter);
  else
    b.setInsertionPointToStart(&entry);

  // Each loop's ring loads in body order (the order of the producer's
  // copies), and for each the dot that reads it.
  SmallVector<SmallVector<RingOperand *, 2>, 2> copied(order.size());
  SmallVector<SmallVector<unsigned, 2>, 2> readers(order.size());
  for (auto [l, ringLoads, dotOf] : llvm::zip(order, copied, readers)) {
    for (RingOperand &operand : l->operands)
      if (!operand.once)
        ringLoads.push_back(&operand);
    llvm::sort(ringLoads, [](RingOperand *x, RingOperand *y) {
      return x->load->isBeforeInBlock(y->load);
    });
    for (RingOperand *operand : ringLoads)
      for (auto [index, d] : llvm::enumerate(l->dots))
        for (int source : d.source)
          if (source >= 0 && &l->operands[unsigned(source)] == operand)
            dotOf.push_back(unsigned(index));
  }
  // A loop that loads tiles of the same types as the one before it, read
  // the same way (attention's second loop when causal), reuses its rings
  // and barriers: the slot count runs on across both. Another starts
  // its own from 0.
  SmallVector<bool, 2> continues(order.size(), false);
  for (unsigned i = 1; i < order.size(); ++i)
    continues[i] = order[i]->stages == order[i - 1]->stages &&
                   readers[i] == readers[i - 1] &&
                   llvm::equal(copied[i], copied[i - 1], [](auto *x, auto *y) {
                     return x->ring == y->ring;
                   });

  // The rings, the tiles loaded once and the barriers, ready before either
  // role starts. The rings one dot reads share their empty barriers: their
  // slots are released together.
  struct Ring {
    Value tiles, full, empty;
  };
  llvm::DenseMap<Operation *, Ring> rings;
  llvm::DenseMap<Operation *, Value> onceTiles;
  for (auto [i, l] : llvm::enumerate(order)) {
    for (RingOperand &operand : l->operands)
      if (operand.once && !onceTiles.count(operand.load))
        onceTiles[operand.load] = tileOf(
            b, loc,
            gpu::LocalAllocOp::create(b, loc, operand.ring, IntegerAttr()),
            i32Const(b, loc, 0));
    if (continues[i]) {
      for (auto [operand, previous] : llvm::zip(copied[i], copied[i - 1]))
        rings[operand->load] = rings[previous->load];
      continue;
    }
    auto barrierRing = barrierRingType(ctx, l->stages);
    auto barriers = [&](unsigned count) {
      Value ring =
          gpu::LocalAllocOp::create(b, loc, barrierRing, IntegerAttr());
      for (unsigned j = 0; j < l->stages; ++j)
        gpu::InitBarrierOp::create(
            b, loc, tileOf(b, loc, ring, i32Const(b, loc, j)), count);
      return ring;
    };
    llvm::DenseMap<unsigned, Value> emptyOf;
    for (auto [operand, reader] : llvm::zip(copied[i], readers[i])) {
      Ring &ring = rings[operand->load];
      ring.tiles =
          gpu::LocalAllocOp::create(b, loc, operand->ring, IntegerAttr());
      ring.full = barriers(1);
      Value &empty = emptyOf[reader];
      if (!empty)
        empty = barriers(consumerThreads);
      ring.empty = empty;
    }
  }
  gpu::FenceAsyncSharedOp::create(b, loc);
  gpu::BarrierOp::create(b, loc);
  Value zero = i32Const(b, loc, 0);
  Value warp = gpu::WarpIndexOp::create(b, loc, b.getI32Type());
  Value consumerWarps = i32Const(b, loc, numWarps);
  Value isProducer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                           warp, consumerWarps);
  auto split = scf::IfOp::create(b, loc, TypeRange{}, isProducer,
                                 /*withElseRegion=*/true);

  // Slot and phase parity of a slot use counted by `count`.
  auto slotOf = [&](OpBuilder &at, Value count, unsigned stages) -> Value {
    return arith::RemUIOp::create(at, loc, count, i32Const(at, loc, stages));
  };
  auto parityOf = [&](OpBuilder &at, Value count, unsigned stages) -> Value {
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
    for (Value map : encoded)
      gpu::TensorMapAcquireOp::create(q, loc, map);
    Value yes = arith::ConstantOp::create(q, loc, q.getBoolAttr(true));
    IRMapping mapping;
    SmallVector<Operation *> entryOps(entrySlice.begin(), entrySlice.end());
    llvm::sort(entryOps, [](Operation *x, Operation *y) {
      return x->isBeforeInBlock(y);
    });
    for (Operation *op : entryOps)
      if (!op->isBeforeInBlock(split))
        q.clone(*op, mapping);
    Value count = zero;
    for (auto [i, l] : llvm::enumerate(order)) {
      ProducerSlices &s = slices[i];
      if (!continues[i])
        count = zero;
      // A loop with the given slice and carried values, counting from
      // `start`; `inside` emits the body's work and returns its count.
      auto emitLoop = [&](OpBuilder &ob, scf::ForOp loop, const OpSlice &slice,
                          const CarriedSet &carried, Value start,
                          function_ref<Value(OpBuilder &, Value)> inside) {
        SmallVector<Value> inits{start};
        for (unsigned index : carried)
          inits.push_back(mapping.lookupOrDefault(loop.getInitArgs()[index]));
        auto copy = scf::ForOp::create(
            ob, loc, mapping.lookupOrDefault(loop.getLowerBound()),
            mapping.lookupOrDefault(loop.getUpperBound()),
            mapping.lookupOrDefault(loop.getStep()), inits,
            [&](OpBuilder &ib, Location, Value iv, ValueRange args) {
              mapping.map(loop.getInductionVar(), iv);
              for (auto [index, arg] : llvm::zip(carried, args.drop_front()))
                mapping.map(loop.getRegionIterArgs()[index], arg);
              for (Operation *op : slice)
                ib.clone(*op, mapping);
              SmallVector<Value> yields{inside(ib, args.front())};
              Operation *yield = loop.getBody()->getTerminator();
              for (unsigned index : carried)
                yields.push_back(
                    mapping.lookupOrDefault(yield->getOperand(index)));
              scf::YieldOp::create(ib, loc, yields);
            });
        return copy.getResult(0);
      };
      auto copies = [&](OpBuilder &ib, Value c) -> Value {
        Value slot = slotOf(ib, c, l->stages);
        Value free = arith::XOrIOp::create(ib, loc, parityOf(ib, c, l->stages),
                                           i32Const(ib, loc, 1));
        Value waited;
        for (RingOperand *operand : copied[i]) {
          Ring &ring = rings[operand->load];
          if (ring.empty != waited)
            gpu::WaitBarrierOp::create(ib, loc,
                                       tileOf(ib, loc, ring.empty, slot), free);
          waited = ring.empty;
          SmallVector<Value> box;
          for (Value offset : operand->load.getBoxOffsets())
            box.push_back(mapping.lookupOrDefault(offset));
          auto copy = gpu::AsyncTmaCopyOp::create(
              ib, loc, operand->load.getTensorMap(), box,
              tileOf(ib, loc, ring.tiles, slot),
              tileOf(ib, loc, ring.full, slot), yes);
          copy->setAttr(gpu::AsyncTmaCopyOp::kWarpIssuedAttr, ib.getUnitAttr());
        }
        return arith::AddIOp::create(ib, loc, c, i32Const(ib, loc, 1));
      };
      auto inner = [&](OpBuilder &ob, Value start) {
        return emitLoop(ob, l->loop, s.inner, s.innerCarried, start, copies);
      };
      count = l->outer
                  ? emitLoop(q, l->outer, s.outer, s.outerCarried, count, inner)
                  : inner(q, count);
    }
  }

  // The consumers: the program.
  Block *consumer = split.elseBlock();
  {
    OpBuilder c = OpBuilder::atBlockBegin(consumer);
    // The count for one block per SM: kiln-to-llvm sets the final one once
    // the shared memory says how many blocks fit (warpSpecializedBlocks).
    gpu::SetMaxRegistersOp::create(
        c, loc, c.getI32IntegerAttr(consumerRegisters(numWarps)),
        c.getUnitAttr());
    Operation *yield = consumer->getTerminator();
    for (Operation *op : toConsumers)
      op->moveBefore(yield);
    Operation *end = entry.getTerminator();
    for (Operation *op = split->getNextNode(); op != end;) {
      Operation *next = op->getNextNode();
      op->moveBefore(yield);
      op = next;
    }
  }
  // A tile loaded once: from the consumers' registers to its buffer, ready
  // for the async proxy's reads.
  for (auto [load, tile] : onceTiles) {
    OpBuilder at(ctx);
    at.setInsertionPointAfter(load);
    gpu::LocalStoreOp::create(at, loc, load->getResult(0), tile);
    gpu::FenceAsyncSharedOp::create(at, loc);
    gpu::BarrierOp::create(at, loc);
  }

  IRRewriter rewriter(ctx);
  Value start = zero;
  for (auto [i, l] : llvm::enumerate(order)) {
    scf::ForOp countedOuter;
    if (!continues[i])
      start = zero;
    Value loopStart = start;
    if (l->outer) {
      rewriter.setInsertionPoint(l->outer);
      countedOuter = cast<scf::ForOp>(*l->outer.replaceWithAdditionalYields(
          rewriter, ValueRange{start}, /*replaceInitOperandUsesInLoop=*/false,
          [](OpBuilder &, Location, ArrayRef<BlockArgument> args) {
            return SmallVector<Value>(args.begin(), args.end());
          }));
      loopStart = countedOuter.getRegionIterArgs().back();
    }
    rewriter.setInsertionPoint(l->loop);
    auto counted = cast<scf::ForOp>(*l->loop.replaceWithAdditionalYields(
        rewriter, ValueRange{loopStart}, /*replaceInitOperandUsesInLoop=*/false,
        [](OpBuilder &, Location, ArrayRef<BlockArgument> args) {
          return SmallVector<Value>(args.begin(), args.end());
        }));
    Block *body = counted.getBody();
    Value count = counted.getRegionIterArgs().back();
    unsigned stages = l->stages;
    OpBuilder head = OpBuilder::atBlockBegin(body);
    Value slot = slotOf(head, count, stages);
    Value parity = parityOf(head, count, stages);

    // Every consumer thread arrives on the empty barriers of the rings
    // `d` reads: of the slot used at `used`, or at the use before it,
    // which the loop's first iteration has none of.
    auto release = [&](OpBuilder &at, const SpecializedDot &d, Value used,
                       bool previous) {
      Value empty;
      for (int source : d.source)
        if (source >= 0 && !l->operands[unsigned(source)].once)
          empty = rings[l->operands[unsigned(source)].load].empty;
      if (!empty)
        return;
      auto arrive = [&](OpBuilder &r, Value use) {
        gpu::ArriveBarrierOp::create(
            r, loc, tileOf(r, loc, empty, slotOf(r, use, stages)));
      };
      if (!previous) {
        arrive(at, used);
        return;
      }
      Value notFirst = arith::CmpIOp::create(at, loc, arith::CmpIPredicate::ne,
                                             used, loopStart);
      auto ifUsed = scf::IfOp::create(at, loc, TypeRange{}, notFirst,
                                      /*withElseRegion=*/false);
      OpBuilder r = ifUsed.getThenBodyBuilder();
      arrive(r, arith::AddIOp::create(r, loc, used,
                                      i32Const(r, loc, int64_t(stages) - 1)));
    };

    SmallVector<const SpecializedDot *> deferred;
    for (auto [index, d] : llvm::enumerate(l->dots)) {
      DotOp dot = d.dot;
      OpBuilder at(dot);
      Value operands[2] = {dot.getA(), dot.getB()};
      Value tiles[2];
      for (unsigned i = 0; i < 2; ++i) {
        if (d.source[i] < 0) {
          tiles[i] = operands[i];
          continue;
        }
        RingOperand &operand = l->operands[unsigned(d.source[i])];
        Value tile;
        if (operand.once) {
          tile = onceTiles[operand.load];
        } else {
          Ring &ring = rings[operand.load];
          gpu::WaitBarrierOp::create(at, loc, tileOf(at, loc, ring.full, slot),
                                     parity);
          tile = tileOf(at, loc, ring.tiles, slot);
        }
        tiles[i] = readView(at, loc, tile, d.viewTransposed[i]);
      }
      auto sharedDot = gpu::SharedDotOp::create(
          at, loc, dot.getType(), tiles[0], tiles[1], dot.getC(), Value(),
          at.getUnitAttr(), sharedDotPrecision(dot), UnitAttr(),
          dot.getMaxNumImpreciseAccAttr());
      Value result = sharedDot.getD();
      if (d.accumulates) {
        // At most this dot in flight: the previous one's slots are read.
        auto wait = gpu::DotWaitOp::create(at, loc, TypeRange{dot.getType()},
                                           ValueRange{result}, 1);
        result = wait.getOutputs()[0];
        release(at, d, count, /*previous=*/true);
        deferred.push_back(&d);
      } else if (d.waitedBy >= 0) {
        deferred.push_back(&d);
      } else {
        // Read in the iteration: wait for it, and for the previous
        // iteration's dots it completes, whose carried values it ties.
        SmallVector<Value> waitFor{result};
        SmallVector<const SpecializedDot *> tied;
        for (const SpecializedDot &other : l->dots)
          if (other.waitedBy == int(index)) {
            tied.push_back(&other);
            waitFor.push_back(counted.getRegionIterArgs()[other.carried]);
          }
        auto wait = gpu::DotWaitOp::create(
            at, loc, ValueRange(waitFor).getTypes(), waitFor, 0);
        result = wait.getOutputs()[0];
        for (auto [other, ready] :
             llvm::zip(tied, wait.getOutputs().drop_front())) {
          counted.getRegionIterArgs()[other->carried].replaceAllUsesExcept(
              ready, wait);
          release(at, *other, count, /*previous=*/true);
        }
        release(at, d, count, /*previous=*/false);
      }
      dot.getD().replaceAllUsesWith(result);
      dot->erase();
      for (unsigned i = 0; i < 2; ++i)
        if (d.source[i] >= 0)
          eraseOperandPath(operands[i]);
    }
    for (RingOperand &operand : l->operands)
      if (!operand.once && operand.load->use_empty())
        operand.load->erase();
    auto innerYield = cast<scf::YieldOp>(body->getTerminator());
    OpBuilder y(innerYield);
    innerYield->setOperand(
        innerYield.getNumOperands() - 1,
        arith::AddIOp::create(y, loc, count, i32Const(y, loc, 1)));

    // After it: the dots still in flight done, their slots released.
    OpBuilder after(counted->getBlock(), std::next(counted->getIterator()));
    Value end = counted.getResults().back();
    if (!deferred.empty()) {
      SmallVector<Value> results;
      for (const SpecializedDot *d : deferred)
        results.push_back(counted.getResult(d->carried));
      auto last = gpu::DotWaitOp::create(
          after, loc, ValueRange(results).getTypes(), results, 0);
      for (auto [result, ready] : llvm::zip(results, last.getOutputs()))
        result.replaceAllUsesExcept(ready, last);
      for (const SpecializedDot *d : deferred)
        release(after, *d, end, /*previous=*/true);
    }
    if (countedOuter) {
      auto outerYield =
          cast<scf::YieldOp>(countedOuter.getBody()->getTerminator());
      outerYield->setOperand(outerYield.getNumOperands() - 1, end);
      end = countedOuter.getResults().back();
    }
    start = end;
  }

  func->getParentOfType<ModuleOp>()->setAttr(
      gpu::KilnGPUDialect::kProducerWarpsAttrName,
      b.getI32IntegerAttr(int32_t(kProducerWarps)));
  return true;
}
