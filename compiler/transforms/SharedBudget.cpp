//===- SharedBudget.cpp - shared-memory bytes before kiln-allocate-shared -===//
#include "compiler/transforms/SharedBudget.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace kiln {

int64_t alignedBufferBytes(int64_t bytes) {
  return int64_t(llvm::alignTo(bytes, kBufferAlignment));
}

int64_t bufferBytes(FunctionOpInterface func,
                    llvm::function_ref<bool(gpu::LocalAllocOp)> skip) {
  int64_t bytes = 0;
  func->walk([&](gpu::LocalAllocOp alloc) {
    if (!skip || !skip(alloc))
      bytes += alignedBufferBytes(
          cast<gpu::MemDescType>(alloc.getType()).getSizeInBytes());
  });
  return bytes;
}

SharedPlacement::SharedPlacement(FunctionOpInterface func) {
  func->walk<WalkOrder::PreOrder>([&](Operation *op) {
    index_[op] = int64_t(order_.size());
    order_.push_back(op);
  });
  func->walk<WalkOrder::PostOrder>([&](Operation *op) {
    int64_t last = index_[op];
    for (Region &region : op->getRegions())
      for (Operation &inner : region.getOps())
        last = std::max(last, lastNested_[&inner]);
    lastNested_[op] = last;
  });
  func->walk([&](gpu::LocalAllocOp alloc) {
    Life live{index_[alloc], index_[alloc]};
    SmallVector<Value> work{alloc.getResult()};
    while (!work.empty()) {
      Value v = work.pop_back_val();
      for (Operation *user : v.getUsers()) {
        if (isa<gpu::MemDescIndexOp, gpu::MemDescTransOp>(user))
          work.push_back(user->getResult(0));
        // The user's ancestor in the buffer's block: a loop around the use
        // keeps the buffer alive to its end.
        Operation *at = alloc->getBlock()->findAncestorOpInBlock(*user);
        if (!at)
          at = user;
        live.last = std::max(live.last, lastNested_[at]);
      }
    }
    buffers_.push_back(
        {alloc, live,
         cast<gpu::MemDescType>(alloc.getType()).getSizeInBytes()});
  });
}

void SharedPlacement::plan(Operation *from, Operation *to, int64_t bytes) {
  buffers_.push_back(
      {gpu::LocalAllocOp(), Life{index(from), lastNested(to)}, bytes});
}

int64_t SharedPlacement::place() {
  // In order of definition: a planned buffer where it would be allocated.
  llvm::stable_sort(buffers_, [](const Buffer &a, const Buffer &b) {
    return a.live.first < b.live.first;
  });
  int64_t end = 0;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    Buffer &buffer = buffers_[i];
    // First fit among the earlier buffers that overlap this one's life.
    SmallVector<std::pair<int64_t, int64_t>> taken;
    for (size_t j = 0; j < i; ++j)
      if (buffers_[j].live.overlaps(buffer.live))
        taken.push_back(
            {buffers_[j].offset, buffers_[j].offset + buffers_[j].bytes});
    llvm::sort(taken);
    // Buffers smaller than a swizzle pattern (mbarriers) need no more than
    // 16-byte alignment.
    int64_t alignment = buffer.bytes < kBufferAlignment ? 16 : kBufferAlignment;
    int64_t offset = 0;
    for (auto [begin, stop] : taken) {
      if (offset + buffer.bytes <= begin)
        break;
      offset = std::max(offset, int64_t(llvm::alignTo(stop, alignment)));
    }
    buffer.offset = offset;
    end = std::max(end, offset + buffer.bytes);
  }
  return end;
}

bool usesScratch(mlir::Operation *op) {
  return mlir::isa<gpu::ConvertLayoutOp, ReshapeOp, JoinOp, SplitOp, CatOp,
                   ReduceOp, ScanOp, DotOp, AtomicRMWOp, AtomicCASOp,
                   MakeTensorMapOp, GatherOp, HistogramOp>(op);
}

} // namespace kiln
