//===- TritonTypes.h - Triton parameter types and their C++ types ---------===//
//
// The type mapping of the generated launchers (docs/architecture.md section
// 4): pointers become typed pointers, scalars are passed by value.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_TRITONTYPES_H
#define KILN_CODEGEN_TRITONTYPES_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace kiln::codegen {

/// The C++ type a launcher takes for Triton type `type`: "*fp32" -> "float*",
/// "*fp16" -> "kiln::half*", "i32" -> "int32_t", "*i1" -> "bool*". None when
/// `type` is not a Triton parameter type.
std::optional<std::string> cppTypeFor(llvm::StringRef type);

/// Whether `type` is a pointer type ("*fp32").
bool isPointerType(llvm::StringRef type);

/// Whether `type` is an integer scalar type other than i1: the scalars whose
/// divisibility by 16 a variant may assume.
bool isIntegerType(llvm::StringRef type);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_TRITONTYPES_H
