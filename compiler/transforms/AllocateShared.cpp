//===- AllocateShared.cpp - offsets for shared buffers, by liveness -------===//
//
// Each kiln_gpu.local_alloc lives from its definition to the end of its last
// use, where a use inside a loop that the buffer was defined outside of
// extends to the end of that loop (the next iteration reads it again). In
// the order of first definition, each buffer takes the lowest
// 1024-byte-aligned offset (what the 128-byte swizzle and wgmma descriptors
// need; 16 bytes for smaller buffers, such as mbarriers) that no buffer live
// at the same time holds.
//
// Lowerings also take scratch arrays for single ops (layout conversions,
// reductions, scans, dots, atomics, tensor maps, gathers, histograms:
// LoweringUtils' allocateSharedArray; usesScratch below lists them). An op inside some
// buffer's life gets `kiln_gpu.scratch_base`, the first byte past the
// buffers live there, so that its scratch never overlaps them; elsewhere
// scratch starts at 0 and may reuse a dead buffer's bytes. The module gets
// `kiln_gpu.buffer_bytes`, the end of the highest buffer.
//
//===----------------------------------------------------------------------===//
#include "compiler/transforms/Passes.h"
#include "compiler/transforms/SharedBudget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/MathExtras.h"

namespace kiln {
#define GEN_PASS_DEF_KILNALLOCATESHARED
#include "compiler/transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct Interval {
  int64_t first, last; // op indices, inclusive
};

/// Ops whose lowering takes scratch arrays (allocateSharedArray).
bool usesScratch(Operation *op) {
  return isa<kiln::gpu::ConvertLayoutOp, kiln::ReshapeOp, kiln::JoinOp,
             kiln::SplitOp, kiln::CatOp, kiln::ReduceOp, kiln::ScanOp,
             kiln::DotOp, kiln::AtomicRMWOp, kiln::AtomicCASOp,
             kiln::MakeTensorMapOp, kiln::GatherOp, kiln::HistogramOp>(op);
}

struct AllocateSharedPass
    : kiln::impl::KilnAllocateSharedBase<AllocateSharedPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t end = 0;
    module.walk(
        [&](func::FuncOp func) { end = std::max(end, allocate(func)); });
    module->setAttr("kiln_gpu.buffer_bytes",
                    IntegerAttr::get(IntegerType::get(&getContext(), 64), end));
  }

  /// Assigns the function's buffers; returns the end of the highest.
  int64_t allocate(func::FuncOp func) {
    // Program order, and for each op the index of its last nested op.
    llvm::DenseMap<Operation *, int64_t> index, lastNested;
    SmallVector<Operation *> order;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      index[op] = int64_t(order.size());
      order.push_back(op);
    });
    func.walk<WalkOrder::PostOrder>([&](Operation *op) {
      int64_t last = index[op];
      for (Region &region : op->getRegions())
        for (Operation &inner : region.getOps())
          last = std::max(last, lastNested[&inner]);
      lastNested[op] = last;
    });

    struct Buffer {
      kiln::gpu::LocalAllocOp alloc;
      Interval live;
      int64_t bytes, offset = 0;
    };
    SmallVector<Buffer> buffers;
    func.walk([&](kiln::gpu::LocalAllocOp alloc) {
      Interval live{index[alloc], index[alloc]};
      SmallVector<Value> work{alloc.getResult()};
      while (!work.empty()) {
        Value v = work.pop_back_val();
        for (Operation *user : v.getUsers()) {
          if (isa<kiln::gpu::MemDescIndexOp, kiln::gpu::MemDescTransOp>(user))
            work.push_back(user->getResult(0));
          // The user's ancestor in the buffer's block: a loop around the use
          // keeps the buffer alive to its end.
          Operation *at = alloc->getBlock()->findAncestorOpInBlock(*user);
          if (!at)
            at = user;
          live.last = std::max(live.last, lastNested[at]);
        }
      }
      buffers.push_back(
          {alloc, live,
           cast<kiln::gpu::MemDescType>(alloc.getType()).getSizeInBytes()});
    });

    int64_t end = 0;
    for (size_t i = 0; i < buffers.size(); ++i) {
      Buffer &buffer = buffers[i];
      // First fit among the earlier buffers that overlap this one's life.
      SmallVector<std::pair<int64_t, int64_t>> taken;
      for (size_t j = 0; j < i; ++j)
        if (buffers[j].live.first <= buffer.live.last &&
            buffer.live.first <= buffers[j].live.last)
          taken.push_back(
              {buffers[j].offset, buffers[j].offset + buffers[j].bytes});
      llvm::sort(taken);
      // Buffers smaller than a swizzle pattern (mbarriers) need no more
      // than 16-byte alignment.
      int64_t alignment =
          buffer.bytes < kiln::kBufferAlignment ? 16 : kiln::kBufferAlignment;
      int64_t offset = 0;
      for (auto [begin, stop] : taken) {
        if (offset + buffer.bytes <= begin)
          break;
        offset = std::max(offset, int64_t(llvm::alignTo(stop, alignment)));
      }
      buffer.offset = offset;
      buffer.alloc.setOffsetAttr(
          IntegerAttr::get(IntegerType::get(&getContext(), 64), offset));
      end = std::max(end, offset + buffer.bytes);
    }

    // Scratch of ops inside a buffer's life starts past the live buffers.
    for (auto [i, op] : llvm::enumerate(order)) {
      int64_t base = 0;
      for (const Buffer &buffer : buffers)
        if (buffer.live.first <= int64_t(i) && int64_t(i) <= buffer.live.last)
          base = std::max(base, buffer.offset + buffer.bytes);
      if (base > 0 && usesScratch(op))
        op->setAttr("kiln_gpu.scratch_base",
                    IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                     llvm::alignTo(base, 16)));
    }
    return end;
  }
};

} // namespace
