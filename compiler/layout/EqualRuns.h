//===- EqualRuns.h - registers that hold equal values ------------*- C++ -*-===//
//
// A tensor whose values come in aligned runs of equal values along each
// dimension (axis info's constancy: a row compare `rows < M` with M a
// multiple of 16 is constant over 16-row runs) holds the same value in
// several of a thread's registers. Lowerings compute one of them and reuse
// it, as upstream does; layout assignment counts the distinct ones.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LAYOUT_EQUALRUNS_H
#define KILN_LAYOUT_EQUALRUNS_H

#include "compiler/layout/LinearLayout.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace kiln::layout {

/// For each of a thread's registers of `layout`, the first register that
/// holds an element of the same run, in every thread, when the values come
/// in aligned runs of `runs[d]` equal values along each output dimension d:
/// register k with the bits cleared whose basis vectors stay inside a run.
/// Registers that map to themselves start a run.
llvm::SmallVector<unsigned> registersOfEqualRuns(const LinearLayout &layout,
                                                 llvm::ArrayRef<int64_t> runs);

/// How many of a thread's registers start a run (registersOfEqualRuns).
unsigned distinctRegisters(const LinearLayout &layout,
                           llvm::ArrayRef<int64_t> runs);

} // namespace kiln::layout

#endif // KILN_LAYOUT_EQUALRUNS_H
