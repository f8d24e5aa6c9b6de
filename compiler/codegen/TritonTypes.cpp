//===- TritonTypes.cpp - Triton parameter types and their C++ types -------===//

#include "TritonTypes.h"

#include "compiler/signature/SignatureEntries.h"

#include "llvm/ADT/SmallVector.h"
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
      // No C++ type has tl.float8e4b15's encoding: its bytes.
      .Case("fp8e4b15", "uint8_t")
      .Default(nullptr);
}

} // namespace

std::optional<DescriptorType> parseDescriptorType(StringRef type) {
  StringRef body = type.trim();
  if (!body.consume_front("tensordesc"))
    return std::nullopt;
  body = body.ltrim();
  if (!body.consume_front("<") || !body.consume_back(">"))
    return std::nullopt;
  size_t open = body.find('[');
  if (open == StringRef::npos)
    return std::nullopt;
  DescriptorType result;
  result.element = body.take_front(open).trim().str();
  StringRef dims = body.drop_front(open + 1).rtrim();
  if (!dims.consume_back("]") || !elementType(result.element) ||
      result.element == "i1")
    return std::nullopt;
  SmallVector<StringRef> parts;
  dims.split(parts, ',');
  for (StringRef part : parts) {
    int64_t d;
    if (part.trim().getAsInteger(10, d) || d <= 0)
      return std::nullopt;
    result.blockShape.push_back(d);
  }
  if (result.blockShape.size() > 5)
    return std::nullopt;
  return result;
}

std::optional<std::string> cppTypeFor(StringRef type) {
  if (std::optional<DescriptorType> desc = parseDescriptorType(type))
    return "const kiln::TensorDescriptor<" +
           std::string(elementType(desc->element)) + ", " +
           std::to_string(desc->blockShape.size()) + ">&";
  bool pointer = type.consume_front("*");
  const char *element = elementType(type);
  if (!element)
    return std::nullopt;
  return pointer ? std::string(element) + "*" : std::string(element);
}

bool isPointerType(StringRef type) { return type.starts_with("*"); }

std::optional<std::string> foreignPointerType(StringRef type,
                                              ForeignTypes family) {
  if (!type.consume_front("*"))
    return std::nullopt;
  bool cuda = family == ForeignTypes::Cuda;
  const char *element =
      StringSwitch<const char *>(type)
          .Case("fp16", cuda ? "__half" : "c10::Half")
          .Case("bf16", cuda ? "__nv_bfloat16" : "c10::BFloat16")
          .Case("fp8e4nv", cuda ? "__nv_fp8_e4m3" : "c10::Float8_e4m3fn")
          .Case("fp8e5", cuda ? "__nv_fp8_e5m2" : "c10::Float8_e5m2")
          .Default(nullptr);
  if (!element)
    return std::nullopt;
  return std::string(element) + "*";
}

bool isIntegerType(StringRef type) {
  return StringSwitch<bool>(type)
      .Cases({"i8", "i16", "i32", "i64"}, true)
      .Cases({"u8", "u16", "u32", "u64"}, true)
      .Default(false);
}

} // namespace kiln::codegen

namespace kiln::codegen {

std::string overloadTypeKey(StringRef type) {
  if (std::optional<DescriptorType> desc = parseDescriptorType(type))
    return "tensordesc<" + desc->element + ">" +
           std::to_string(desc->blockShape.size());
  return type.str();
}

std::vector<StringRef> splitSignatureEntries(StringRef signature) {
  llvm::SmallVector<StringRef> entries = kiln::splitSignatureEntries(signature);
  return std::vector<StringRef>(entries.begin(), entries.end());
}

} // namespace kiln::codegen
