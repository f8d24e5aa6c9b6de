//===- SharedBudget.h - shared-memory bytes before kiln-allocate-shared ---===//
//
// Passes that add a buffer before kiln-allocate-shared places them
// (kiln-stage-dots, kiln-tma-stores) first check that it fits beside the
// function's other buffers, each counted as the allocator aligns it at most.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TRANSFORMS_SHAREDBUDGET_H
#define KILN_TRANSFORMS_SHAREDBUDGET_H

#include "compiler/ir/Dialects.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLFunctionalExtras.h"

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

} // namespace kiln

#endif // KILN_TRANSFORMS_SHAREDBUDGET_H
