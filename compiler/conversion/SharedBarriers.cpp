//===- SharedBarriers.cpp - drop barriers that order nothing --------------===//
//
// Lowerings that stage data in shared memory (layout conversions,
// reductions, scans, unpipelined dots, atomics' results, the software
// pipeline's ring) each put a `bar.sync 0` before they write, so that no
// thread overwrites what another still reads, and one after, so that every
// write lands before anyone reads. Each lowering sees only itself: the
// first staging op of a kernel, or one right after another op's closing
// barrier, gets a barrier that orders nothing.
//
// This pass finds them with two dataflows over each function's CFG. Forward:
// whether some path reaches a point with a shared-memory access (read or
// write, synchronous or asynchronous) since the last barrier or the
// kernel's start; a barrier reached with none orders nothing (everything
// before it was already ordered by an earlier barrier) and goes. Then,
// backward on what is left: whether some path from a point reaches an
// access before the next barrier or the kernel's end; a barrier from which
// none does goes too (the next barrier orders what it would have: a
// reduction's closing barrier before the kernel's global stores). The join
// is "or" both ways. Barriers from tl.debug_barrier stay (they order global
// memory too), but they do order shared memory.
//
// What counts as a shared access is decided conservatively: loads, stores
// and atomics through pointers that are not provably global, constant or
// parameter memory; inline PTX that names shared memory or an asynchronous
// unit (cp.async, wgmma, ldmatrix, mbarrier, fences, barriers); calls other
// than libdevice's; and any other op with memory effects.
//
// Except a proxy fence in the backward sweep. A fence orders its own
// thread's earlier generic-proxy writes before later async-proxy reads, so
// it must stay before the barrier that follows it (forward, it counts), but
// it is no access another thread waits for: of `bar; fence.proxy.async; bar`
// (a dot's closing barrier, the next dot's opening fence and barrier) the
// first goes, as if nothing stood between them.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/SharedBarriers.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace {

/// Whether a pointer of this type may point into shared memory.
bool mayBeShared(Type type) {
  auto pointer = dyn_cast<LLVM::LLVMPointerType>(type);
  if (!pointer)
    return true;
  unsigned space = pointer.getAddressSpace();
  return !(space == 1 || space == 4 || space == 101);
}

bool isBarrier(Operation *op) { return isa<NVVM::Barrier0Op>(op); }

/// Whether `op` may read or write shared memory.
bool accessesShared(Operation *op) {
  if (auto load = dyn_cast<LLVM::LoadOp>(op))
    return mayBeShared(load.getAddr().getType());
  if (auto store = dyn_cast<LLVM::StoreOp>(op))
    return mayBeShared(store.getAddr().getType());
  if (auto rmw = dyn_cast<LLVM::AtomicRMWOp>(op))
    return mayBeShared(rmw.getPtr().getType());
  if (auto cas = dyn_cast<LLVM::AtomicCmpXchgOp>(op))
    return mayBeShared(cas.getPtr().getType());
  if (auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op)) {
    StringRef text = asmOp.getAsmString();
    for (StringRef word : {"shared", "cp.async", "wgmma", "ldmatrix",
                           "stmatrix", "mbarrier", "fence", "bar.", "barrier",
                           "tensormap", "atom", "red."})
      if (text.contains(word))
        return true;
    return false;
  }
  if (auto call = dyn_cast<LLVM::CallOp>(op)) {
    std::optional<StringRef> callee = call.getCallee();
    return !(callee && (callee->starts_with("__nv_") ||
                        callee->starts_with("llvm.")));
  }
  return !isMemoryEffectFree(op);
}

/// Whether `op` is only a fence between the generic and async proxies.
bool isProxyFence(Operation *op) {
  auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op);
  return asmOp && asmOp.getAsmString().starts_with("fence.proxy.async") &&
         asmOp.getAsmString().count(';') <= 1;
}

struct RemoveRedundantBarriersPass
    : PassWrapper<RemoveRedundantBarriersPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(RemoveRedundantBarriersPass)

  StringRef getArgument() const override {
    return "kiln-remove-redundant-barriers";
  }
  StringRef getName() const override { return "KilnRemoveRedundantBarriers"; }
  StringRef getDescription() const override {
    return "Remove shared-memory barriers that order no access";
  }

  void runOnOperation() override {
    getOperation().walk([&](LLVM::LLVMFuncOp func) { run(func); });
  }

  /// The state past `block`'s ops in the direction of the walk (forward:
  /// an access since the last barrier; backward: an access before the next
  /// one), given the state at its other end; erases the barriers that order
  /// nothing when `erase`.
  static bool transfer(Block &block, bool dirty, bool erase, bool forward) {
    auto visit = [&](Operation &op) {
      if (isBarrier(&op)) {
        if (!dirty && erase && !op.hasAttr(kiln::kUserBarrierAttr))
          op.erase();
        dirty = false;
        return;
      }
      if (!dirty && accessesShared(&op) && (forward || !isProxyFence(&op)))
        dirty = true;
    };
    if (forward)
      for (Operation &op : llvm::make_early_inc_range(block))
        visit(op);
    else
      for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
        visit(op);
    return dirty;
  }

  /// One direction's dataflow to a fixed point, then the erasures.
  static void sweep(LLVM::LLVMFuncOp func, bool forward) {
    llvm::DenseMap<Block *, bool> in, out;
    llvm::SetVector<Block *> work;
    for (Block &block : func.getBody())
      work.insert(&block);
    auto sources = [&](Block *block) {
      return forward ? SmallVector<Block *>(block->getPredecessors())
                     : SmallVector<Block *>(block->getSuccessors());
    };
    auto sinks = [&](Block *block) {
      return forward ? SmallVector<Block *>(block->getSuccessors())
                     : SmallVector<Block *>(block->getPredecessors());
    };
    while (!work.empty()) {
      Block *block = work.front();
      work.remove(block);
      bool state = false;
      for (Block *source : sources(block))
        state |= out.lookup(source);
      in[block] = state;
      bool after = transfer(*block, state, /*erase=*/false, forward);
      auto it = out.find(block);
      if (it != out.end() && it->second == after)
        continue;
      out[block] = after;
      for (Block *sink : sinks(block))
        work.insert(sink);
    }
    for (Block &block : func.getBody())
      transfer(block, in.lookup(&block), /*erase=*/true, forward);
  }

  static void run(LLVM::LLVMFuncOp func) {
    if (func.isExternal())
      return;
    // Ops with regions of their own (none after kiln-to-llvm) would hide
    // accesses from the CFG walk: leave such a function alone.
    bool nested = false;
    func.walk([&](Operation *op) {
      if (op != func && op->getNumRegions() != 0)
        nested = true;
    });
    if (nested)
      return;
    // A barrier orders nothing when no access precedes it since the last
    // barrier, or none follows it before the next one. The second sweep
    // runs on what the first left, so that of two barriers with nothing
    // between them only one goes.
    sweep(func, /*forward=*/true);
    sweep(func, /*forward=*/false);
    func.walk([](NVVM::Barrier0Op barrier) {
      barrier->removeAttr(kiln::kUserBarrierAttr);
    });
  }
};

} // namespace

std::unique_ptr<Pass> kiln::createRemoveRedundantBarriers() {
  return std::make_unique<RemoveRedundantBarriersPass>();
}

void kiln::registerRemoveRedundantBarriers() {
  PassRegistration<RemoveRedundantBarriersPass>();
}
