//===- LoopWrites.h - whether a loop may write what a load reads ----------===//
//
// Passes that move a loop's loads to an earlier iteration (kiln-pipeline-dots
// for the index loads of a gather, kiln-prefetch-loads) may only do so in a
// loop that writes no memory the load could read.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TRANSFORMS_LOOPWRITES_H
#define KILN_TRANSFORMS_LOOPWRITES_H

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace kiln {

/// Whether the loop may write memory a load could read (a store, an
/// atomic, a barrier ordering other threads' writes, an op whose effects
/// are unknown). The pipeline's own shared-memory ops (the kiln_gpu
/// dialect), prints and asserts do not count.
bool writesMemory(mlir::scf::ForOp loop);

} // namespace kiln

#endif // KILN_TRANSFORMS_LOOPWRITES_H
