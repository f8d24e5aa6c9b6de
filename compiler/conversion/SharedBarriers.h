//===- SharedBarriers.h - drop barriers that order nothing ------*- C++ -*-===//
//
// kiln-remove-redundant-barriers, on the LLVM dialect after kiln-to-llvm.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CONVERSION_SHAREDBARRIERS_H
#define KILN_CONVERSION_SHAREDBARRIERS_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace kiln {

/// The attribute that marks a barrier the kernel's source asked for
/// (tl.debug_barrier): it also orders global memory, so it always stays.
inline constexpr llvm::StringLiteral kUserBarrierAttr = "kiln_user_barrier";

/// Removes every `bar.sync 0` that a lowering placed to order shared-memory
/// accesses when, on every path into it, no shared-memory access happened
/// since the previous barrier or the kernel's start, or, on every path out
/// of it, none happens before the next barrier or the kernel's end.
std::unique_ptr<mlir::Pass> createRemoveRedundantBarriers();

void registerRemoveRedundantBarriers();

} // namespace kiln

#endif // KILN_CONVERSION_SHAREDBARRIERS_H
