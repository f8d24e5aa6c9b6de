//===- TritonTypes.cpp - Triton parameter types and their C++ types -------===//

#include "TritonTypes.h"

#include "llvm/ADT/StringSwitch.h"

using namespace llvm;

namespace kiln::codegen {

namespace {

/// The C++ type of a Triton element (scalar) type, or null.
const char *elementType(StringRef type) {
  return StringSwitch<const char *>(type)
      .Case("i1", "bool")
      .Case("i8", "int8_t")
      .Case("i16", "int16_t")
      .Case("i32", "int32_t")
      .Case("i64", "int64_t")
      .Case("u8", "uint8_t")
      .Case("u16", "uint16_t")
      .Case("u32", "uint32_t")
      .Case("u64", "uint64_t")
      .Case("fp16", "kiln::half")
      .Case("bf16", "kiln::bfloat16")
      .Case("fp32", "float")
      .Case("fp64", "double")
      .Case("fp8e4nv", "kiln::float8_e4m3")
      .Case("fp8e5", "kiln::float8_e5m2")
      .Default(nullptr);
}

} // namespace

std::optional<std::string> cppTypeFor(StringRef type) {
  bool pointer = type.consume_front("*");
  const char *element = elementType(type);
  if (!element)
    return std::nullopt;
  return pointer ? std::string(element) + "*" : std::string(element);
}

bool isPointerType(StringRef type) { return type.starts_with("*"); }

bool isIntegerType(StringRef type) {
  return StringSwitch<bool>(type)
      .Cases({"i8", "i16", "i32", "i64"}, true)
      .Cases({"u8", "u16", "u32", "u64"}, true)
      .Default(false);
}

} // namespace kiln::codegen
