//===- DropClosingBarriers.cpp - barriers the next barrier makes redundant ===//
//
// kiln-stage-dots closes each staged dot with a barrier, so that no warp
// writes the bytes of the dot's tiles while another still reads them: the
// tiles die there and kiln-allocate-shared may give their bytes to later
// buffers or scratch. Where the ops after such a barrier, up to the next
// barrier, touch no byte the ops before it (since the barrier before it)
// wrote and write no byte they read, the next barrier orders those accesses
// just as well, and the first one orders nothing. Attention backward
// kernels run several staged dots an iteration, each closed so: ring-
// attention-pytorch's backward had twelve barriers an iteration where
// Triton's has eight (its membar analysis places barriers by the bytes
// buffers share).
//
// Outside loops, where a barrier costs once a block and also shapes ptxas'
// schedule, only a barrier after pure reads goes, before ops that take no
// scratch.
//
// Byte ranges come from kiln-allocate-shared's offsets, so this runs after
// it: tiles (through their views) and the scratch of ops that take it, which
// starts past every buffer live at the op. Ops with regions and ops of
// kiln_gpu not listed count as touching every byte. A wait for copies or a
// proxy fence before a barrier keeps it: the barrier publishes them. At the
// end of a loop body the next barrier is the first of the next iteration,
// and the last iteration's accesses get one barrier after the loop where
// the code there needs it: once a loop instead of once an iteration.
//
// First, a proxy fence that follows another with no generic-proxy access
// to shared memory between them goes (a group of staged wgmma dots fenced
// before each dot), so that the barriers beside it may go too.
//
// Last, in loops, each barrier left, and each wait for copies, moves below
// the global loads just after it, so that ptxas may issue them before the
// wait (it moves no load across one).
//
//===----------------------------------------------------------------------===//
#include "compiler/ir/Dialects.h"
#include "compiler/ir/SharedDotForm.h"
#include "compiler/transforms/Passes.h"
#include "compiler/transforms/SharedBudget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

namespace kiln {
#define GEN_PASS_DEF_KILNDROPCLOSINGBARRIERS
#include "compiler/transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Bytes [begin, end) of shared memory.
struct ByteRange {
  int64_t begin = 0;
  int64_t end = 0;
  bool overlaps(const ByteRange &other) const {
    return begin < other.end && other.begin < end;
  }
};

/// The bytes of the buffer a memdesc views, through views of it; nothing
/// where its allocation has no offset yet.
std::optional<ByteRange> bytesOf(Value memdesc) {
  while (Operation *def = memdesc.getDefiningOp()) {
    if (auto view = dyn_cast<kiln::gpu::MemDescTransOp>(def)) {
      memdesc = view.getSrc();
      continue;
    }
    if (auto view = dyn_cast<kiln::gpu::MemDescIndexOp>(def)) {
      memdesc = view.getSrc();
      continue;
    }
    auto alloc = dyn_cast<kiln::gpu::LocalAllocOp>(def);
    if (!alloc || !alloc.getOffset())
      return std::nullopt;
    int64_t begin = int64_t(*alloc.getOffset());
    return ByteRange{
        begin,
        begin + cast<kiln::gpu::MemDescType>(alloc.getType()).getSizeInBytes()};
  }
  return std::nullopt;
}

/// What `op` does to shared memory, as far as this pass needs to know.
struct SharedEffect {
  bool unknown = false;
  SmallVector<ByteRange> reads, writes;
};

/// `scratchBytes`: scratch from the op's base on; otherwise scratch counts
/// as touching every byte.
SharedEffect effectOf(Operation *op, bool scratchBytes = true) {
  SharedEffect effect;
  auto read = [&](Value memdesc) {
    if (!isa<kiln::gpu::MemDescType>(memdesc.getType()))
      return;
    if (std::optional<ByteRange> range = bytesOf(memdesc))
      effect.reads.push_back(*range);
    else
      effect.unknown = true;
  };
  auto write = [&](Value memdesc) {
    if (std::optional<ByteRange> range = bytesOf(memdesc))
      effect.writes.push_back(*range);
    else
      effect.unknown = true;
  };
  if (op->getNumRegions() != 0) {
    effect.unknown = true;
  } else if (kiln::usesScratch(op) && !scratchBytes) {
    effect.unknown = true;
  } else if (kiln::usesScratch(op)) {
    // Its scratch from its base on: past every buffer live at it
    // (kiln-allocate-shared), or from byte 0 without one.
    auto base = op->getAttrOfType<IntegerAttr>("kiln_gpu.scratch_base");
    effect.writes.push_back(
        {base ? base.getInt() : 0, std::numeric_limits<int64_t>::max()});
  } else if (isa<kiln::gpu::SharedDotOp>(op)) {
    for (Value operand : op->getOperands())
      read(operand);
  } else if (auto load = dyn_cast<kiln::gpu::LocalLoadOp>(op)) {
    read(load.getSrc());
  } else if (auto store = dyn_cast<kiln::gpu::LocalStoreOp>(op)) {
    write(store.getDst());
  } else if (auto copy = dyn_cast<kiln::gpu::AsyncCopyOp>(op)) {
    write(copy.getDst());
  } else if (auto copy = dyn_cast<kiln::gpu::AsyncTmaCopyOp>(op)) {
    write(copy.getDst());
    write(copy.getBarrier());
  } else if (isa<kiln::gpu::LocalAllocOp, kiln::gpu::MemDescTransOp,
                 kiln::gpu::MemDescIndexOp, kiln::gpu::DotWaitOp,
                 kiln::gpu::AsyncCommitGroupOp, kiln::gpu::AsyncWaitOp,
                 kiln::gpu::FenceAsyncSharedOp, kiln::gpu::WarpIndexOp>(op)) {
    // No bytes of their own (a wait completes copies already counted where
    // they were issued).
  } else if (op->getDialect() &&
             op->getDialect()->getNamespace() ==
                 kiln::gpu::KilnGPUDialect::getDialectNamespace()) {
    effect.unknown = true;
  } else if (isa<kiln::InlineAsmElementwiseOp, kiln::BarrierOp>(op)) {
    effect.unknown = true;
  }
  return effect;
}

/// Whether `later` touches bytes `earlier` wrote, or writes bytes it read.
bool conflicts(const SharedEffect &earlier, const SharedEffect &later) {
  auto anyOverlap = [](ArrayRef<ByteRange> xs, ArrayRef<ByteRange> ys) {
    return llvm::any_of(xs, [&](const ByteRange &x) {
      return llvm::any_of(ys,
                          [&](const ByteRange &y) { return x.overlaps(y); });
    });
  };
  return anyOverlap(earlier.writes, later.reads) ||
         anyOverlap(earlier.writes, later.writes) ||
         anyOverlap(earlier.reads, later.writes);
}

struct DropClosingBarriersPass
    : kiln::impl::KilnDropClosingBarriersBase<DropClosingBarriersPass> {
  void runOnOperation() override {
    SmallVector<kiln::gpu::FenceAsyncSharedOp> fences;
    getOperation().walk(
        [&](kiln::gpu::FenceAsyncSharedOp fence) { fences.push_back(fence); });
    for (kiln::gpu::FenceAsyncSharedOp fence : fences)
      if (repeatsFence(fence))
        fence->erase();
    SmallVector<kiln::gpu::BarrierOp> barriers;
    getOperation().walk(
        [&](kiln::gpu::BarrierOp barrier) { barriers.push_back(barrier); });
    for (kiln::gpu::BarrierOp barrier : barriers)
      dropIfOrdered(barrier);
    // The barriers left, then the waits for copies (a pipelined loop's
    // gathered vector waited for the ring's copies): a wait just before a
    // barrier moves once the barrier has.
    SmallVector<Operation *> left, waits;
    getOperation().walk([&](Operation *op) {
      if (isa<kiln::gpu::BarrierOp>(op))
        left.push_back(op);
      else if (isa<kiln::gpu::AsyncWaitOp>(op))
        waits.push_back(op);
    });
    llvm::append_range(left, waits);
    for (Operation *wait : left)
      sinkPastGlobalLoads(wait);
  }

  /// Whether `op` runs in a loop, where a barrier costs every iteration.
  static bool inLoop(Operation *op) {
    return op->getParentOfType<scf::ForOp>() ||
           op->getParentOfType<scf::WhileOp>();
  }

  /// Moves `wait`, a barrier or a wait for copies, below the global loads
  /// that follow it (with the pure arithmetic of their addresses), up to
  /// the first op that touches shared memory. Both order shared memory only
  /// (a kernel's own tl.debug_barrier is kiln.barrier, which stays), but
  /// ptxas moves no load across either: a load just after one waited it out
  /// before it was issued. Ring-attention-pytorch's backward (flash-attn's
  /// Triton backward) loads its fp32 dq block after the dk dot's closing
  /// barrier, which the conversion of that block into the accumulator's
  /// layout needs; Triton's membar analysis puts the barrier at the
  /// conversion, and ptxas issues the loads among the dk dot's wgmma
  /// instructions.
  static void sinkPastGlobalLoads(Operation *wait) {
    // In loops only, as for the drops: outside them a barrier's place also
    // shapes ptxas' straight-line schedule, untimed here.
    if (!inLoop(wait))
      return;
    Operation *lastLoad = nullptr;
    for (Operation *op = wait->getNextNode(); op; op = op->getNextNode()) {
      if (auto load = dyn_cast<kiln::LoadOp>(op)) {
        if (load.getIsVolatile())
          break;
        lastLoad = op;
        continue;
      }
      if (op->getNumRegions() != 0 || !isMemoryEffectFree(op) ||
          kiln::usesScratch(op))
        break;
      SharedEffect effect = effectOf(op);
      if (effect.unknown || !effect.reads.empty() || !effect.writes.empty())
        break;
    }
    if (lastLoad)
      wait->moveAfter(lastLoad);
  }

  /// Whether `fence` follows another of its block with no shared-memory
  /// access of the generic proxy between them: the fence orders a thread's
  /// generic accesses before its async-proxy ones (wgmma, TMA), and the
  /// first one did that for all of them. A staged dot on wgmma fences its
  /// tiles' stores; the next dot of the group, with nothing stored between,
  /// fenced again, and the barrier after that fence could not go.
  static bool repeatsFence(kiln::gpu::FenceAsyncSharedOp fence) {
    for (Operation *before = fence->getPrevNode(); before;
         before = before->getPrevNode()) {
      if (isa<kiln::gpu::FenceAsyncSharedOp>(before))
        return true;
      if (touchesGenericShared(before))
        return false;
    }
    return false;
  }

  /// Whether `op` may access shared memory through the generic proxy, or
  /// complete copies (cp.async) issued before a fence that then missed them.
  static bool touchesGenericShared(Operation *op) {
    if (auto dot = dyn_cast<kiln::gpu::SharedDotOp>(op))
      return !kiln::takesWgmma(dot);
    if (isa<kiln::gpu::BarrierOp, kiln::gpu::DotWaitOp>(op))
      return false;
    if (isa<kiln::gpu::AsyncWaitOp, kiln::gpu::AsyncCommitGroupOp>(op))
      return true;
    SharedEffect effect = effectOf(op);
    return effect.unknown || !effect.reads.empty() || !effect.writes.empty();
  }

  /// How a walk from an op to the next barrier of its block ended.
  enum class Walk { Barrier, Conflict, BlockEnd };

  /// Walks from `op` on to the next barrier of its block, stopping at a
  /// conflict with `before` (or at `self`, the barrier to drop).
  static Walk walkToBarrier(Operation *op, const SharedEffect &before,
                            Operation *self, bool scratchBytes) {
    for (; op; op = op->getNextNode()) {
      if (op == self)
        return Walk::Conflict;
      if (isa<kiln::gpu::BarrierOp>(op))
        return Walk::Barrier;
      SharedEffect effect = effectOf(op, scratchBytes);
      if (effect.unknown || conflicts(before, effect))
        return Walk::Conflict;
    }
    return Walk::BlockEnd;
  }

  /// Drops `barrier` where the barriers after it order what it does: no op
  /// between it and the next barrier touches bytes the ops since the
  /// barrier before it wrote, or writes bytes they read. At the end of a
  /// loop body the walk goes on through the next iteration, and a barrier
  /// just after the loop (added where the code there conflicts) orders the
  /// last iteration's accesses.
  static void dropIfOrdered(kiln::gpu::BarrierOp barrier) {
    // Outside loops a barrier costs once a block, and it also shapes
    // ptxas' schedule: modded-nanogpt's straight-line backward qk kernel,
    // its closing barrier dropped before a layout conversion's scratch, ran
    // at 0.95 of Triton instead of 1.00 (H100). There only a barrier after
    // pure reads goes, before ops that take no scratch; in loops, where a
    // barrier costs every iteration, every rule below applies.
    const bool looped = inLoop(barrier);
    SharedEffect before;
    Operation *op = barrier->getPrevNode();
    for (; op && !isa<kiln::gpu::BarrierOp>(op); op = op->getPrevNode()) {
      // Copies completed by a wait are published to the other threads by
      // this barrier (their bytes were counted where they were issued), and
      // so is a proxy fence: the other threads' wgmma or TMA after it may
      // read what this thread wrote before the barrier before.
      if (isa<kiln::gpu::AsyncWaitOp, kiln::gpu::FenceAsyncSharedOp>(op))
        return;
      SharedEffect effect = effectOf(op, looped);
      if (effect.unknown || (!looped && !effect.writes.empty()))
        return;
      llvm::append_range(before.reads, effect.reads);
      llvm::append_range(before.writes, effect.writes);
    }
    // At the block's start, the accesses before it are not known; after
    // another barrier and no access, it orders nothing.
    if (!op)
      return;
    if (before.reads.empty() && before.writes.empty()) {
      if (looped)
        barrier->erase();
      return;
    }
    switch (walkToBarrier(barrier->getNextNode(), before, barrier, looped)) {
    case Walk::Barrier:
      barrier->erase();
      return;
    case Walk::Conflict:
      return;
    case Walk::BlockEnd:
      break;
    }
    // A loop body's end: the next iteration, up to its first barrier, and
    // the code after the loop, up to a barrier there or one added.
    auto loop = dyn_cast<scf::ForOp>(barrier->getParentOp());
    if (!loop || walkToBarrier(&loop.getBody()->front(), before, barrier,
                               looped) != Walk::Barrier)
      return;
    if (walkToBarrier(loop->getNextNode(), before, nullptr, looped) !=
        Walk::Barrier) {
      OpBuilder after(loop->getContext());
      after.setInsertionPointAfter(loop);
      kiln::gpu::BarrierOp::create(after, barrier.getLoc());
    }
    barrier->erase();
  }
};

} // namespace
