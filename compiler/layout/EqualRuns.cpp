//===- EqualRuns.cpp - registers that hold equal values --------------------===//

#include "compiler/layout/EqualRuns.h"

namespace kiln::layout {

llvm::SmallVector<unsigned> registersOfEqualRuns(const LinearLayout &layout,
                                                 llvm::ArrayRef<int64_t> runs) {
  // An element's coordinates are the XOR of its register's basis vectors
  // and its thread's. A register basis vector below a run's length (a
  // power of two dividing it, so runs of it nest inside the aligned runs)
  // along every dimension changes no coordinate's run, whatever the thread.
  int32_t bits = layout.getInDimSizeLog2(kRegister);
  unsigned inside = 0;
  for (int32_t i = 0; i < bits; ++i) {
    llvm::ArrayRef<int32_t> basis = layout.getBasis(kRegister, i);
    bool staysInRun = basis.size() == runs.size();
    for (size_t d = 0; staysInRun && d < runs.size(); ++d)
      staysInRun = runs[d] > 0 && basis[d] < (runs[d] & -runs[d]);
    if (staysInRun)
      inside |= 1u << i;
  }
  llvm::SmallVector<unsigned> representative(size_t(1) << bits);
  for (size_t k = 0; k < representative.size(); ++k)
    representative[k] = unsigned(k) & ~inside;
  return representative;
}

unsigned distinctRegisters(const LinearLayout &layout,
                           llvm::ArrayRef<int64_t> runs) {
  llvm::SmallVector<unsigned> representative =
      registersOfEqualRuns(layout, runs);
  unsigned distinct = 0;
  for (size_t k = 0; k < representative.size(); ++k)
    distinct += representative[k] == k;
  return distinct;
}

} // namespace kiln::layout
