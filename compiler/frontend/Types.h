//===- Types.h - Triton-language data types -------------------------------===//
//
// Triton's scalar dtypes carry signedness, which MLIR's signless integers do
// not, so the front end tracks a TritonType beside every MLIR value.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_TYPES_H
#define KILN_FRONTEND_TYPES_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace kiln::frontend {

enum class ScalarKind {
  I1,
  I8,
  I16,
  I32,
  I64,
  U8,
  U16,
  U32,
  U64,
  F8E4NV,
  F8E5,
  F8E4B15,
  F16,
  BF16,
  F32,
  F64,
};

/// A Triton scalar dtype (tl.int32, tl.float16, ...).
class DType {
public:
  constexpr DType(ScalarKind kind = ScalarKind::I32) : kind(kind) {}
  ScalarKind getKind() const { return kind; }
  bool isBool() const { return kind == ScalarKind::I1; }
  bool isInteger() const { return kind <= ScalarKind::U64; }
  bool isSigned() const { return kind <= ScalarKind::I64; }
  /// int8..int64: Triton's signed integers (int1 is unsigned there).
  bool isSignedInteger() const { return isSigned() && !isBool(); }
  bool isUnsigned() const {
    return kind >= ScalarKind::U8 && kind <= ScalarKind::U64;
  }
  bool isFloat() const { return !isInteger(); }
  /// An 8-bit float: fp8e4nv, fp8e5 or fp8e4b15.
  bool isFp8() const { return isFloat() && getBitWidth() == 8; }
  unsigned getBitWidth() const;
  /// The short name used in signatures: i32, u8, fp16, bf16, fp8e4nv, ...
  llvm::StringRef getShortName() const;
  /// The tl.* name: int32, uint8, float16, bfloat16, float8e4nv, ...
  llvm::StringRef getLanguageName() const;
  mlir::Type toMLIR(mlir::MLIRContext *context) const;

  /// Parses a short name (`i32`, `fp16`, also `f32`, `bf16`, `u8`) or a
  /// language name (`int32`, `float16`).
  static std::optional<DType> parse(llvm::StringRef name);
  /// Parses a torch dtype attribute name (`float32`, `bfloat16`, `half`,
  /// `long`, `float8_e4m3fn`, ...), as upstream maps torch dtypes.
  static std::optional<DType> parseTorch(llvm::StringRef name);
  /// The signed integer type of `bits` bits (8, 16, 32, 64): what a value of
  /// that width is bitcast to for integer work on its bits.
  static constexpr DType signedInteger(unsigned bits) {
    return DType(bits == 8    ? ScalarKind::I8
                 : bits == 16 ? ScalarKind::I16
                 : bits == 32 ? ScalarKind::I32
                              : ScalarKind::I64);
  }

  bool operator==(const DType &other) const { return kind == other.kind; }
  bool operator!=(const DType &other) const { return kind != other.kind; }

private:
  ScalarKind kind;
};

/// The type of a run-time value: a scalar, a pointer, or a block (tensor) of
/// either; or a block pointer (tl.make_block_ptr), a scalar handle to a block
/// of `blockShape` elements; or a tensor descriptor
/// (tl.make_tensor_descriptor, a `tensordesc<fp16[128,64]>` parameter) of
/// `element`s moved in blocks of `blockShape`.
struct TritonType {
  DType element;         // the pointee type for pointers
  bool isPointer = false;
  llvm::SmallVector<int64_t> shape; // empty for scalars
  llvm::SmallVector<int64_t> blockShape; // block pointers and descriptors
  bool isDescriptor = false;

  bool isBlock() const { return !shape.empty(); }
  bool isBlockPointer() const { return !blockShape.empty() && !isDescriptor; }
  bool isTensorDescriptor() const { return isDescriptor; }
  /// A descriptor type: `tensordesc<element[blockShape]>`.
  static TritonType tensorDescriptor(DType element,
                                     llvm::ArrayRef<int64_t> blockShape) {
    TritonType t;
    t.element = element;
    t.blockShape.assign(blockShape.begin(), blockShape.end());
    t.isDescriptor = true;
    return t;
  }
  /// The same type with a different shape (scalar when `shape` is empty).
  TritonType withShape(llvm::ArrayRef<int64_t> newShape) const {
    TritonType t = *this;
    t.shape.assign(newShape.begin(), newShape.end());
    return t;
  }
  TritonType scalar() const { return withShape({}); }
  mlir::Type toMLIR(mlir::MLIRContext *context) const;
  /// `fp32`, `*fp16`, `<1024xi32>`, `<128x*fp32>`,
  /// `tensordesc<fp16[128,64]>`.
  std::string str() const;
  bool operator==(const TritonType &other) const {
    return element == other.element && isPointer == other.isPointer &&
           shape == other.shape && blockShape == other.blockShape &&
           isDescriptor == other.isDescriptor;
  }
  bool operator!=(const TritonType &other) const { return !(*this == other); }
};

/// Upstream's `dtype.name`: integers as `int32`, `uint8`, `int1`; floats as
/// `fp32`, `bf16`, `fp8e4nv`.
std::string upstreamDTypeName(DType d);

} // namespace kiln::frontend

#endif // KILN_FRONTEND_TYPES_H
