//===- TritonTypes.h - Triton parameter types and their C++ types ---------===//
//
// The type mapping of the generated launchers (docs/architecture.md section
// 4): pointers become typed pointers, scalars are passed by value.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_TRITONTYPES_H
#define KILN_CODEGEN_TRITONTYPES_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::codegen {

/// A tensor-descriptor type, `tensordesc<fp16[128,64]>`: element type and
/// block shape.
struct DescriptorType {
  std::string element; // "fp16"
  std::vector<int64_t> blockShape;
};

/// Parses `tensordesc<T[d0,d1,...]>` (spaces allowed): T an element type,
/// 1 to 5 positive dimensions. None otherwise.
std::optional<DescriptorType> parseDescriptorType(llvm::StringRef type);

/// The C++ type a launcher takes for Triton type `type`: "*fp32" -> "float*",
/// "*fp16" -> "kiln::half*", "i32" -> "int32_t", "*i1" -> "bool*",
/// "tensordesc<fp16[128,64]>" -> "const kiln::TensorDescriptor<kiln::half,
/// 2>&". None when `type` is not a Triton parameter type.
std::optional<std::string> cppTypeFor(llvm::StringRef type);

/// What launcher overloads are told apart by: the type, except that a
/// descriptor's block shape is not part of its C++ type ("tensordesc<fp16>2").
std::string overloadTypeKey(llvm::StringRef type);

/// The entries of a signature: split at the commas outside brackets, trimmed,
/// empty ones dropped.
std::vector<llvm::StringRef> splitSignatureEntries(llvm::StringRef signature);

/// Whether `type` is a pointer type ("*fp32").
bool isPointerType(llvm::StringRef type);

/// The libraries whose element types launchers also accept, without casts,
/// for Kiln's storage types (kiln/float_types.h declares them).
enum class ForeignTypes { Cuda, Torch };

/// For a pointer to fp16, bf16 or an fp8 type: the pointer type of that
/// element in `family` ("__half*", "c10::BFloat16*"); none otherwise.
std::optional<std::string> foreignPointerType(llvm::StringRef type,
                                              ForeignTypes family);

/// Whether `type` is an integer scalar type other than i1: the scalars whose
/// divisibility by 16 a variant may assume.
bool isIntegerType(llvm::StringRef type);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_TRITONTYPES_H
