//===- EarlyLoads.cpp - loads moved to an earlier iteration of a loop -----===//
#include "compiler/transforms/EarlyLoads.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace kiln {

namespace {

/// The kernel argument `v` (a pointer or a tensor of them) is computed from
/// by offsets and shape ops, through loop-carried values; null where it is
/// something else (a pointer loaded from memory, a select, several).
Value pointerRoot(Value v, llvm::SmallPtrSetImpl<Value> &visiting) {
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      Operation *owner = arg.getOwner()->getParentOp();
      if (isa<func::FuncOp>(owner))
        return arg;
      auto loop = dyn_cast<scf::ForOp>(owner);
      if (!loop || arg.getArgNumber() == 0)
        return {};
      // A carried pointer: its initial and next values must agree; the
      // carried value itself, reached again through its update, is no
      // other root.
      if (!visiting.insert(v).second)
        return v;
      unsigned index = arg.getArgNumber() - 1;
      Value init = pointerRoot(loop.getInitArgs()[index], visiting);
      Value next = pointerRoot(
          loop.getBody()->getTerminator()->getOperand(index), visiting);
      visiting.erase(v);
      if (!init || (next != init && next != v))
        return {};
      return init;
    }
    Operation *def = v.getDefiningOp();
    if (auto add = dyn_cast_or_null<AddPtrOp>(def)) {
      v = add.getPtr();
      continue;
    }
    if (isa_and_nonnull<SplatOp, BroadcastOp, ExpandDimsOp, ReshapeOp, TransOp,
                        gpu::ConvertLayoutOp>(def)) {
      v = def->getOperand(0);
      continue;
    }
    return {};
  }
}

Value pointerRoot(Value v) {
  llvm::SmallPtrSet<Value, 4> visiting;
  return pointerRoot(v, visiting);
}

/// Whether `op` runs in a loop within `root`, `root` included.
bool pollsWithin(Operation *op, Operation *root) {
  for (Operation *at = op; at != root;) {
    at = at->getParentOp();
    if (!at)
      return false;
    if (isa<LoopLikeOpInterface>(at))
      return true;
  }
  return false;
}

} // namespace

bool mayWriteMemoryReadBy(Operation *root, LoadOp load) {
  Value read = pointerRoot(load.getPtr());
  return root
      ->walk([&](Operation *op) {
        Value written;
        if (auto store = dyn_cast<StoreOp>(op))
          written = store.getPtr();
        else if (auto rmw = dyn_cast<AtomicRMWOp>(op))
          written = rmw.getPtr();
        else if (auto cas = dyn_cast<AtomicCASOp>(op))
          written = cas.getPtr();
        if (!written) {
          // Any other write (a barrier ordering other threads' writes, an
          // op whose effects are unknown) may be to what the load reads.
          // The pipeline's own shared-memory ops (the kiln_gpu dialect),
          // prints and asserts do not count; nor do loads. A volatile one
          // (Mamba-3's backward reloads its tiles so) is ordered as if it
          // wrote, but writes nothing, and upstream's pipeliner moves loads
          // across it; in a loop within `root` (or `root` itself), though,
          // it may poll for another block's writes (a flag spun on), which
          // a load after that loop must see.
          if (auto other = dyn_cast<LoadOp>(op))
            return other.getIsVolatile() && pollsWithin(op, root)
                       ? WalkResult::interrupt()
                       : WalkResult::advance();
          if (isa<PrintOp, AssertOp>(op) ||
              isa_and_nonnull<gpu::KilnGPUDialect>(op->getDialect()) ||
              op->hasTrait<OpTrait::IsTerminator>() ||
              op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
            return WalkResult::advance();
          auto effects = dyn_cast<MemoryEffectOpInterface>(op);
          return !effects || effects.hasEffect<MemoryEffects::Write>()
                     ? WalkResult::interrupt()
                     : WalkResult::advance();
        }
        Value root = pointerRoot(written);
        return !read || !root || root == read ? WalkResult::interrupt()
                                              : WalkResult::advance();
      })
      .wasInterrupted();
}

bool writesMemoryReadBy(scf::ForOp loop, LoadOp load) {
  return llvm::any_of(*loop.getBody(), [&](Operation &op) {
    return mayWriteMemoryReadBy(&op, load);
  });
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

std::optional<SmallVector<Operation *>> aheadAddressSlice(LoadOp load) {
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

bool reaches(Value value, llvm::function_ref<bool(OpOperand &)> accepts,
             llvm::function_ref<bool(OpOperand &)> stops) {
  SmallVector<Value> work{value};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      if (accepts(use))
        return true;
      Operation *user = use.getOwner();
      if (stops(use) || !seen.insert(user).second)
        continue;
      llvm::append_range(work, user->getResults());
    }
  }
  return false;
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
