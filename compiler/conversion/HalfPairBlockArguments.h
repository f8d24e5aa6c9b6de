//===- HalfPairBlockArguments.h - carried fp16 in f16x2 words -*- C++ -*-===//
//
// A tensor of fp16 values becomes a struct of scalars; carried around a
// loop, its elements reach the block argument one by one, each taken out of
// the 32-bit register an instruction wrote two of them in. For an fp16
// accumulator that register is a wgmma's, still being written while the
// next iteration's wgmma is issued: unpacking it there reads it before the
// wait, which makes ptxas serialize every wgmma of the kernel. Carried as
// pairs (vector<2xf16>, one 32-bit register each), the halves are taken out
// only where they are used; LLVM folds the repacking of values that were
// pairs already.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CONVERSION_HALFPAIRBLOCKARGUMENTS_H
#define KILN_CONVERSION_HALFPAIRBLOCKARGUMENTS_H

#include "mlir/IR/BuiltinOps.h"

namespace kiln {

/// Rewrites every non-entry block argument of the LLVM functions in
/// `module` that is a struct of an even number of f16 fields into a struct
/// of two-element vectors of them (fields 2i and 2i + 1 in vector i),
/// packing at each branch into the block and unpacking at its start.
void pairHalfBlockArguments(mlir::ModuleOp module);

} // namespace kiln

#endif // KILN_CONVERSION_HALFPAIRBLOCKARGUMENTS_H
