//===- AsyncCopies.h - which loads cp.async can stage ---------------------===//
//
// kiln-pipeline-dots stages a dot operand's loads with cp.async when the
// copies can be 4, 8 or 16 bytes into lines an nvmma_shared ring can hold;
// kiln-flatten-loops fuses only loops whose loads it will stage. One test
// for both, so that they cannot disagree.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TRANSFORMS_ASYNCCOPIES_H
#define KILN_TRANSFORMS_ASYNCCOPIES_H

#include "compiler/ir/Dialects.h"
#include "compiler/transforms/AxisInfo.h"

#include <optional>

namespace kiln {

/// The attribute on kiln_gpu.async_copy giving its elements per cp.async,
/// decided from axis info on the load it replaces (kiln-pipeline-dots'
/// rings, kiln-stage-dots' copies at loads).
inline constexpr char kCopyVecAttr[] = "kiln_gpu.vec";

/// True when `v` is absent or a zero constant (a splat of 0, a dense zero),
/// possibly broadcast, reshaped or converted to another layout.
bool isZero(mlir::Value v);

/// Whether a tile whose contiguous lines have this many bytes can be staged
/// in an nvmma_shared ring: a power of two, at least the smallest (32-byte)
/// swizzle panel.
bool isSwizzlableLine(int64_t lineBytes);

/// How cp.async copies a load's tile: `vec` elements per copy along the
/// pointers' fastest dimension `dim`.
struct CpAsyncForm {
  unsigned vec;
  unsigned dim;
};

/// The cp.async form of `load`; none when cp.async cannot copy it (boundary
/// checks, volatile, padding other than zero, copies under 4 bytes, lines
/// no ring holds).
std::optional<CpAsyncForm> cpAsyncForm(LoadOp load, AxisInfoAnalysis &axisInfo);

} // namespace kiln

#endif // KILN_TRANSFORMS_ASYNCCOPIES_H
