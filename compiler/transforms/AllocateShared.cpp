//===- AllocateShared.cpp - offsets for shared buffers, by liveness -------===//
//
// Each kiln_gpu.local_alloc lives from its definition to the end of its last
// use, where a use inside a loop that the buffer was defined outside of
// extends to the end of that loop (the next iteration reads it again). In
// the order of first definition, each buffer takes the lowest
// 1024-byte-aligned offset (what the 128-byte swizzle and wgmma descriptors
// need; 16 bytes for smaller buffers, such as mbarriers) that no buffer live
// at the same time holds: kiln::SharedPlacement (SharedBudget.h), which the
// passes adding buffers before this one also ask.
//
// Lowerings also take scratch arrays for single ops (layout conversions,
// reductions, scans, dots, atomics, tensor maps, gathers, histograms:
// LoweringUtils' allocateSharedArray; kiln::usesScratch lists them). An op
// inside some buffer's life gets `kiln_gpu.scratch_base`, the first byte past
// the buffers live there, so that its scratch never overlaps them; elsewhere
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
    kiln::SharedPlacement placement(func);
    int64_t end = placement.place();
    for (const kiln::SharedPlacement::Buffer &buffer : placement.buffers()) {
      kiln::gpu::LocalAllocOp alloc = buffer.alloc;
      alloc.setOffsetAttr(
          IntegerAttr::get(IntegerType::get(&getContext(), 64), buffer.offset));
    }

    // Scratch of ops inside a buffer's life starts past the live buffers.
    for (auto [i, op] : llvm::enumerate(placement.order())) {
      int64_t base = 0;
      for (const kiln::SharedPlacement::Buffer &buffer : placement.buffers())
        if (buffer.live.first <= int64_t(i) && int64_t(i) <= buffer.live.last)
          base = std::max(base, buffer.offset + buffer.bytes);
      if (base > 0 && kiln::usesScratch(op))
        op->setAttr("kiln_gpu.scratch_base",
                    IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                     llvm::alignTo(base, 16)));
    }
    return end;
  }
};

} // namespace
