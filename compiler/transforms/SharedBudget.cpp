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

} // namespace kiln
