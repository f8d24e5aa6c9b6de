//===- Value.h - values of the staged evaluator ---------------------------===//
//
// The front end evaluates kernel code in two stages: what is known at compile
// time (ints, floats, bools, None, strings, dtypes, tuples, references to
// functions and modules) is computed in C++; everything else is a run-time
// value, an MLIR value with its Triton type.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_VALUE_H
#define KILN_FRONTEND_VALUE_H

#include "compiler/frontend/PythonText.h"
#include "compiler/frontend/Types.h"

#include "mlir/IR/Value.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::frontend {

struct FunctionDefStmt;

struct FValue {
  enum class Kind {
    Runtime,  // value + type
    Int,      // intValue
    Float,    // floatValue
    Bool,     // intValue
    None,
    String,   // text
    DType,    // type (a scalar or pointer TritonType)
    Tuple,    // elements
    Module,   // text: canonical dotted path ("triton.language")
    Function, // function: a Python def (jit or not)
    Builtin,  // text: "tl.load", "range", "libdevice.exp", ...
    Method,   // text: method name, elements[0]: the receiver
    Marker,   // text: "triton.jit", "tl.constexpr", ... (decorators, annotations)
    Dict,     // elements: key, value, ...; text: a heuristic's name or ""
    // A tensor descriptor: value (!kiln.tensordesc) and type; elements: its
    // shape (i32) and strides (i64), two tuples of run-time scalars.
    Descriptor,
  };

  Kind kind = Kind::None;
  mlir::Value value;
  TritonType type;
  /// Python's ints are unbounded; 128 bits hold every compile-time integer
  /// Triton gives a type (up to uint64's 2**64 - 1) and the intermediate
  /// values that reach them (`2**63 - 1`, `(1 << 64) - 1`).
  __int128 intValue = 0;
  double floatValue = 0;
  std::string text;
  std::vector<FValue> elements;
  const FunctionDefStmt *function = nullptr;
  /// A python number that upstream holds as a scalar tensor of its own type
  /// (strongType): one assigned to a name or returned by a jit function.
  /// It stays a compile-time number, but beside a value it is typed, not
  /// weak: `s = 0.5; x_fp16 * s` is fp32 where `x_fp16 * 0.5` is fp16.
  bool typed = false;

  static FValue runtime(mlir::Value v, TritonType t) {
    FValue f;
    f.kind = Kind::Runtime;
    f.value = v;
    f.type = std::move(t);
    return f;
  }
  static FValue integer(__int128 v) {
    FValue f;
    f.kind = Kind::Int;
    f.intValue = v;
    return f;
  }
  static FValue floating(double v) {
    FValue f;
    f.kind = Kind::Float;
    f.floatValue = v;
    return f;
  }
  static FValue boolean(bool v) {
    FValue f;
    f.kind = Kind::Bool;
    f.intValue = v;
    return f;
  }
  static FValue none() { return FValue(); }
  static FValue string(std::string s) {
    FValue f;
    f.kind = Kind::String;
    f.text = std::move(s);
    return f;
  }
  static FValue dtype(TritonType t) {
    FValue f;
    f.kind = Kind::DType;
    f.type = std::move(t);
    return f;
  }
  static FValue named(Kind kind, std::string name) {
    FValue f;
    f.kind = kind;
    f.text = std::move(name);
    return f;
  }
  static FValue tuple(std::vector<FValue> elements) {
    FValue f;
    f.kind = Kind::Tuple;
    f.elements = std::move(elements);
    return f;
  }

  static FValue descriptor(mlir::Value v, TritonType t,
                           std::vector<FValue> shape,
                           std::vector<FValue> strides) {
    FValue f;
    f.kind = Kind::Descriptor;
    f.value = v;
    f.type = std::move(t);
    f.elements = {tuple(std::move(shape)), tuple(std::move(strides))};
    return f;
  }

  bool isRuntime() const { return kind == Kind::Runtime; }
  bool isDescriptor() const { return kind == Kind::Descriptor; }
  bool isInt() const { return kind == Kind::Int; }
  bool isNumber() const {
    return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool;
  }
  bool isNone() const { return kind == Kind::None; }
  /// This value with its numbers (in tuples too) typed, as upstream's
  /// assignments and returns make them tensors.
  FValue asTyped() const {
    FValue v = *this;
    if (isNumber())
      v.typed = true;
    if (kind == Kind::Tuple)
      for (FValue &e : v.elements)
        e = e.asTyped();
    return v;
  }
  /// A short description for diagnostics: "an int", "a block of fp32", ...
  std::string describe() const;
};

/// A run-time integer scalar whose value is known all the same (a `:1`
/// parameter, arith computed from it), as the compile-time value Triton's
/// JIT would have seen; nullopt for anything else.
std::optional<FValue> foldedInteger(const FValue &v);

} // namespace kiln::frontend

#endif // KILN_FRONTEND_VALUE_H
