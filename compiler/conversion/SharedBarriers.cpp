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
// This pass finds them with a forward dataflow over each function's CFG.
// The state at a point is whether some path reaches it with a shared-memory
// access (read or write, synchronous or asynchronous) since the last barrier
// or the kernel's start; the join is "or", so loops reach a fixed point in
// two rounds. A barrier whose incoming state is false orders no access with
// any later one (everything before it was already ordered by an earlier
// barrier), so it goes. Barriers from tl.debug_barrier stay (they order
// global memory too), but they do order shared memory.
//
// What counts as a shared access is decided conservatively: loads, stores
// and atomics through pointers that are not provably global, constant or
// parameter memory; inline PTX that names shared memory or an asynchronous
// unit (cp.async, wgmma, ldmatrix, mbarrier, fences, barriers); calls other
// than libdevice's; and any other op with memory effects.
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

struct RemoveRedundantBarriersPass
    : PassWrapper<RemoveRedundantBarriersPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(RemoveRedundantBarriersPass)

  StringRef getArgument() const override {
    return "kiln-remove-redundant-barriers";
  }
  StringRef getDescription() const override {
    return "Remove shared-memory barriers that order no access";
  }

  void runOnOperation() override {
    getOperation().walk([&](LLVM::LLVMFuncOp func) { run(func); });
  }

  /// The state after `block`'s ops, given the state before them; erases
  /// the redundant barriers when `erase`.
  static bool transfer(Block &block, bool dirty, bool erase) {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (isBarrier(&op)) {
        if (!dirty && erase && !op.hasAttr(kiln::kUserBarrierAttr))
          op.erase();
        dirty = false;
        continue;
      }
      if (!dirty && accessesShared(&op))
        dirty = true;
    }
    return dirty;
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
    llvm::DenseMap<Block *, bool> in, out;
    llvm::SetVector<Block *> work;
    for (Block &block : func.getBody())
      work.insert(&block);
    while (!work.empty()) {
      Block *block = work.front();
      work.remove(block);
      bool state = false;
      for (Block *pred : block->getPredecessors())
        state |= out.lookup(pred);
      in[block] = state;
      bool after = transfer(*block, state, /*erase=*/false);
      auto it = out.find(block);
      if (it != out.end() && it->second == after)
        continue;
      out[block] = after;
      for (Block *succ : block->getSuccessors())
        work.insert(succ);
    }
    for (Block &block : func.getBody())
      transfer(block, in.lookup(&block), /*erase=*/true);
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
