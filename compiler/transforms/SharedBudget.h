//===- SharedBudget.h - shared-memory bytes before kiln-allocate-shared ---===//
//
// Passes that add a buffer before kiln-allocate-shared places them
// (kiln-stage-dots, kiln-tma-stores) first check that it fits beside the
// function's other buffers: either all of them, each counted as the
// allocator aligns it at most (bufferBytes), or the placement the allocator
// would make with the new buffer among them (SharedPlacement), which lets a
// loop reuse the bytes of buffers that died before it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TRANSFORMS_SHAREDBUDGET_H
#define KILN_TRANSFORMS_SHAREDBUDGET_H

#include "compiler/ir/Dialects.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace kiln {

/// kiln-allocate-shared's alignment of buffers (what the 128-byte swizzle
/// and wgmma descriptors need); those smaller than it (mbarriers) get 16.
inline constexpr int64_t kBufferAlignment = 1024;

/// `bytes` rounded up to kBufferAlignment: the most a buffer of that size
/// takes with its padding.
int64_t alignedBufferBytes(int64_t bytes);

/// The aligned bytes of every local_alloc of `func` but those `skip` names:
/// an upper bound on what lives at once.
int64_t bufferBytes(mlir::FunctionOpInterface func,
                    llvm::function_ref<bool(gpu::LocalAllocOp)> skip = nullptr);

/// Whether `op`'s lowering takes scratch arrays in shared memory
/// (LoweringUtils' allocateSharedArray): layout conversions, reductions,
/// scans, dots, atomics, tensor maps, gathers, histograms. kiln-allocate-
/// shared gives those inside a buffer's life a scratch base.
bool usesScratch(mlir::Operation *op);

/// kiln-allocate-shared's placement of a function's buffers. Each
/// local_alloc lives from its definition to the end of its last use, where
/// a use inside a loop that the buffer was defined outside of extends to
/// the end of that loop (the next iteration reads it again). In the order
/// of definition, each buffer takes the lowest aligned offset that no
/// buffer live at the same time holds (first fit).
class SharedPlacement {
public:
  /// Op indices in program order (a pre-order walk), inclusive.
  struct Life {
    int64_t first, last;
    bool overlaps(const Life &other) const {
      return first <= other.last && other.first <= last;
    }
  };
  struct Buffer {
    gpu::LocalAllocOp alloc; // null for a planned buffer
    Life live;
    int64_t bytes, offset = 0;
  };

  explicit SharedPlacement(mlir::FunctionOpInterface func);

  /// A buffer not allocated yet: `bytes` live from `from` to the end of
  /// `to` (with everything nested in it), placed among the others as if
  /// defined at `from`.
  void plan(mlir::Operation *from, mlir::Operation *to, int64_t bytes);

  /// Places every buffer; returns the end of the highest.
  int64_t place();

  llvm::ArrayRef<Buffer> buffers() const { return buffers_; }
  /// The function's ops in program order (indices of Life).
  llvm::ArrayRef<mlir::Operation *> order() const { return order_; }
  int64_t index(mlir::Operation *op) const { return index_.lookup(op); }
  /// The index of the last op nested in `op` (its own where it has none).
  int64_t lastNested(mlir::Operation *op) const {
    return lastNested_.lookup(op);
  }

private:
  llvm::DenseMap<mlir::Operation *, int64_t> index_, lastNested_;
  llvm::SmallVector<mlir::Operation *> order_;
  llvm::SmallVector<Buffer> buffers_;
};

} // namespace kiln

#endif // KILN_TRANSFORMS_SHAREDBUDGET_H
