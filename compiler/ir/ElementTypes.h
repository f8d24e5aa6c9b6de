//===- ElementTypes.h - questions about element types ----------*- C++ -*-===//
//
// Element-type predicates that layout assignment, the pipeliner and the
// lowerings all ask, answered in one place.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_ELEMENTTYPES_H
#define KILN_IR_ELEMENTTYPES_H

#include "mlir/IR/BuiltinTypes.h"

namespace kiln {

/// The 8-bit floats the tensor cores multiply (e4m3 and e5m2).
inline bool isFp8(mlir::Type type) {
  return mlir::isa<mlir::Float8E4M3FNType, mlir::Float8E5M2Type>(type);
}

/// tl.float8e4b15 (e4m3 with exponent bias 15, no inf or NaN), carried in
/// MLIR's f8E4M3B11FNUZ type: only loaded, stored and converted to and from
/// f16/f32 (Fp8CastsToLLVM.cpp), never computed on.
inline bool isFp8E4B15(mlir::Type type) {
  return mlir::isa<mlir::Float8E4M3B11FNUZType>(type);
}

} // namespace kiln

#endif // KILN_IR_ELEMENTTYPES_H
