//===- DropClosingBarriers.cpp - barriers after reads no write follows ----===//
//
// kiln-stage-dots closes each staged dot with a barrier, so that no warp
// writes the bytes of the dot's tiles while another still reads them: the
// tiles die there and kiln-allocate-shared may give their bytes to later
// buffers or scratch. Where the ops after such a barrier, up to the next
// barrier of the same block, write no byte the barrier's reads cover, the
// next barrier orders those reads before every later write just as well,
// and the first one orders nothing. Attention backward kernels run several
// staged dots an iteration, each closed so: ring-attention-pytorch's
// backward had twelve barriers an iteration where Triton's has eight (its
// membar analysis places barriers by the bytes buffers share).
//
// Byte ranges come from kiln-allocate-shared's offsets, so this runs after
// it. A barrier goes only when everything between it and the barrier before
// it in its block reads shared memory at known bytes (shared dots, local
// loads, views of tiles) and writes none, and everything between it and the
// next barrier of its block writes at known bytes (local stores, cp.async
// and TMA copies into tiles) none of those, or touches no shared memory at
// all. Ops that take scratch (their lowering's arrays), ops with regions and
// ops of kiln_gpu not listed count as writing every byte.
//
//===----------------------------------------------------------------------===//
#include "compiler/ir/Dialects.h"
#include "compiler/transforms/Passes.h"
#include "compiler/transforms/SharedBudget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

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

SharedEffect effectOf(Operation *op) {
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
  if (op->getNumRegions() != 0 || op->hasAttr("kiln_gpu.scratch_base")) {
    effect.unknown = true;
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
  } else if (kiln::usesScratch(op) ||
             isa<kiln::InlineAsmElementwiseOp, kiln::BarrierOp>(op)) {
    // Scratch from byte 0 (no scratch_base), or anything at all.
    effect.unknown = true;
  }
  return effect;
}

struct DropClosingBarriersPass
    : kiln::impl::KilnDropClosingBarriersBase<DropClosingBarriersPass> {
  void runOnOperation() override {
    SmallVector<kiln::gpu::BarrierOp> barriers;
    getOperation().walk(
        [&](kiln::gpu::BarrierOp barrier) { barriers.push_back(barrier); });
    for (kiln::gpu::BarrierOp barrier : barriers)
      if (ordersNothing(barrier))
        barrier->erase();
  }

  /// Whether the next barrier of `barrier`'s block orders what it does.
  static bool ordersNothing(kiln::gpu::BarrierOp barrier) {
    // The reads since the barrier before it; none may be a write.
    SmallVector<ByteRange> reads;
    Operation *before = barrier->getPrevNode();
    for (; before && !isa<kiln::gpu::BarrierOp>(before);
         before = before->getPrevNode()) {
      // A wait for copies, or a proxy fence, is published to the other
      // threads by this barrier.
      if (isa<kiln::gpu::AsyncWaitOp, kiln::gpu::FenceAsyncSharedOp>(before))
        return false;
      SharedEffect effect = effectOf(before);
      if (effect.unknown || !effect.writes.empty())
        return false;
      llvm::append_range(reads, effect.reads);
    }
    // At the block's start, the reads before it are not known.
    if (!before || reads.empty())
      return false;
    for (Operation *after = barrier->getNextNode(); after;
         after = after->getNextNode()) {
      if (isa<kiln::gpu::BarrierOp>(after))
        return true;
      SharedEffect effect = effectOf(after);
      if (effect.unknown)
        return false;
      for (const ByteRange &written : effect.writes)
        for (const ByteRange &range : reads)
          if (written.overlaps(range))
            return false;
    }
    // The block ends (a loop's next iteration, the code after an if) before
    // another barrier.
    return false;
  }
};

} // namespace
