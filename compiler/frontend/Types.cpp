//===- Types.cpp - Triton-language data types -----------------------------===//
#include "compiler/frontend/Types.h"

#include "compiler/ir/Dialects.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace kiln::frontend;

namespace {
struct DTypeNames {
  ScalarKind kind;
  const char *shortName;
  const char *languageName;
  unsigned bits;
};
constexpr DTypeNames kNames[] = {
    {ScalarKind::I1, "i1", "int1", 1},
    {ScalarKind::I8, "i8", "int8", 8},
    {ScalarKind::I16, "i16", "int16", 16},
    {ScalarKind::I32, "i32", "int32", 32},
    {ScalarKind::I64, "i64", "int64", 64},
    {ScalarKind::U8, "u8", "uint8", 8},
    {ScalarKind::U16, "u16", "uint16", 16},
    {ScalarKind::U32, "u32", "uint32", 32},
    {ScalarKind::U64, "u64", "uint64", 64},
    {ScalarKind::F8E4NV, "fp8e4nv", "float8e4nv", 8},
    {ScalarKind::F8E5, "fp8e5", "float8e5", 8},
    {ScalarKind::F8E4B15, "fp8e4b15", "float8e4b15", 8},
    {ScalarKind::F16, "fp16", "float16", 16},
    {ScalarKind::BF16, "bf16", "bfloat16", 16},
    {ScalarKind::F32, "fp32", "float32", 32},
    {ScalarKind::F64, "fp64", "float64", 64},
};
const DTypeNames &namesOf(ScalarKind kind) {
  return kNames[static_cast<int>(kind)];
}
} // namespace

unsigned DType::getBitWidth() const { return namesOf(kind).bits; }
llvm::StringRef DType::getShortName() const { return namesOf(kind).shortName; }
llvm::StringRef DType::getLanguageName() const {
  return namesOf(kind).languageName;
}

std::optional<DType> DType::parse(llvm::StringRef name) {
  for (const DTypeNames &n : kNames)
    if (name == n.shortName || name == n.languageName)
      return DType(n.kind);
  // Common aliases.
  return llvm::StringSwitch<std::optional<DType>>(name)
      .Case("f16", DType(ScalarKind::F16))
      .Case("f32", DType(ScalarKind::F32))
      .Case("f64", DType(ScalarKind::F64))
      .Case("bool", DType(ScalarKind::I1))
      .Case("float", DType(ScalarKind::F32))
      .Case("double", DType(ScalarKind::F64))
      .Case("half", DType(ScalarKind::F16))
      .Default(std::nullopt);
}

std::optional<DType> DType::parseTorch(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<DType>>(name)
      .Case("bool", DType(ScalarKind::I1))
      .Case("int8", DType(ScalarKind::I8))
      .Case("int16", DType(ScalarKind::I16))
      .Cases({"int32", "int"}, DType(ScalarKind::I32))
      .Cases({"int64", "long"}, DType(ScalarKind::I64))
      .Case("uint8", DType(ScalarKind::U8))
      .Case("uint16", DType(ScalarKind::U16))
      .Case("uint32", DType(ScalarKind::U32))
      .Case("uint64", DType(ScalarKind::U64))
      .Cases({"float16", "half"}, DType(ScalarKind::F16))
      .Case("bfloat16", DType(ScalarKind::BF16))
      .Cases({"float32", "float"}, DType(ScalarKind::F32))
      .Cases({"float64", "double"}, DType(ScalarKind::F64))
      .Case("float8_e4m3fn", DType(ScalarKind::F8E4NV))
      .Case("float8_e5m2", DType(ScalarKind::F8E5))
      .Default(std::nullopt);
}

mlir::Type DType::toMLIR(mlir::MLIRContext *context) const {
  switch (kind) {
  case ScalarKind::F8E4NV:
    return mlir::Float8E4M3FNType::get(context);
  case ScalarKind::F8E5:
    return mlir::Float8E5M2Type::get(context);
  case ScalarKind::F8E4B15:
    // MLIR has no e4m3 with bias 15: its bias-11 e4m3 stands in, as a byte
    // type only (kiln::isFp8E4B15); the conversions are Kiln's own.
    return mlir::Float8E4M3B11FNUZType::get(context);
  case ScalarKind::F16:
    return mlir::Float16Type::get(context);
  case ScalarKind::BF16:
    return mlir::BFloat16Type::get(context);
  case ScalarKind::F32:
    return mlir::Float32Type::get(context);
  case ScalarKind::F64:
    return mlir::Float64Type::get(context);
  default:
    return mlir::IntegerType::get(context, getBitWidth());
  }
}

mlir::Type TritonType::toMLIR(mlir::MLIRContext *context) const {
  mlir::Type scalarType = element.toMLIR(context);
  if (isDescriptor)
    return kiln::TensorDescType::get(
        mlir::RankedTensorType::get(blockShape, scalarType));
  if (isBlockPointer())
    return kiln::BlockPointerType::get(
        mlir::RankedTensorType::get(blockShape, scalarType));
  if (isPointer)
    scalarType = kiln::PointerType::get(scalarType);
  if (shape.empty())
    return scalarType;
  return mlir::RankedTensorType::get(shape, scalarType);
}

std::string kiln::frontend::upstreamDTypeName(DType d) {
  return (d.isInteger() ? d.getLanguageName() : d.getShortName()).str();
}

std::string TritonType::str() const {
  if (isDescriptor) {
    std::string s = "tensordesc<" + element.getShortName().str() + "[";
    for (size_t i = 0; i < blockShape.size(); ++i)
      s += (i ? "," : "") + std::to_string(blockShape[i]);
    return s + "]>";
  }
  if (isBlockPointer()) {
    std::string s = "*<";
    for (int64_t d : blockShape)
      s += std::to_string(d) + "x";
    return s + element.getShortName().str() + ">";
  }
  std::string scalar = (isPointer ? "*" : "") + element.getShortName().str();
  if (shape.empty())
    return scalar;
  std::string s = "<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + scalar + ">";
}
