//===- BuiltinSupport.h - helpers for writing Triton builtins -------------===//
//
// Every builtin family lives in its own Builtins*.cpp file and registers its
// entries with a `add*Builtins(BuiltinTable &)` function called from
// Builtins.cpp. ArgReader binds a call's arguments Python-style and words
// argument errors uniformly: "argument 'mask' of tl.load must be ...".
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_BUILTINSUPPORT_H
#define KILN_FRONTEND_BUILTINSUPPORT_H

#include "compiler/frontend/Emitter.h"

#include "llvm/ADT/StringMap.h"

#include <functional>

namespace kiln::frontend {

using BuiltinTable = llvm::StringMap<BuiltinFn>;
using llvm::SMLoc;
using llvm::StringRef;

/// Binds a call's positional and keyword arguments to a builtin's parameter
/// names, Python style.
class ArgReader {
public:
  ArgReader(Emitter &emitter, const CallArgs &args, StringRef builtin,
            llvm::ArrayRef<StringRef> params)
      : emitter(emitter), args(args), builtin(builtin), params(params),
        values(params.size(), nullptr), locs(params.size(), args.loc) {
    if (args.args.size() > params.size()) {
      emitter.error(args.argLocs[params.size()],
                    builtin + " takes at most " +
                        std::to_string(params.size()) + " arguments, got " +
                        std::to_string(args.args.size()));
      ok = false;
      return;
    }
    for (size_t i = 0; i < args.args.size(); ++i) {
      values[i] = &args.args[i];
      locs[i] = args.argLocs[i];
    }
    for (size_t k = 0; k < args.keywords.size(); ++k) {
      StringRef name = args.keywords[k].first;
      auto it = llvm::find(params, name);
      if (it == params.end()) {
        std::string names;
        for (StringRef p : params)
          names += (names.empty() ? "" : ", ") + p.str();
        emitter.error(args.keywordLocs[k], builtin + " has no argument '" +
                                               name + "' (arguments: " + names +
                                               ")");
        ok = false;
        return;
      }
      size_t index = it - params.begin();
      if (values[index]) {
        emitter.error(args.keywordLocs[k],
                      builtin + " got argument '" + name + "' twice");
        ok = false;
        return;
      }
      values[index] = &args.keywords[k].second;
      locs[index] = args.keywordLocs[k];
    }
  }

  bool isOk() const { return ok; }
  /// The argument, or null when omitted (or None).
  const FValue *get(size_t i) const {
    return values[i] && !values[i]->isNone() ? values[i] : nullptr;
  }
  SMLoc loc(size_t i) const { return locs[i]; }
  /// Reports that argument `i` is missing.
  std::nullopt_t missing(size_t i) const {
    return emitter.error(args.loc, builtin + " needs the argument '" +
                                       params[i].str() + "'");
  }
  std::nullopt_t bad(size_t i, const llvm::Twine &expectation) const {
    const FValue *v = values[i];
    return emitter.error(locs[i],
                         "argument '" + params[i] + "' of " + builtin +
                             " must be " + expectation + ", got " +
                             (v ? v->describe() : std::string("nothing")));
  }
  /// A required compile-time int.
  std::optional<int64_t> constInt(size_t i) const {
    const FValue *v = get(i);
    if (!v) {
      missing(i);
      return std::nullopt;
    }
    if (!v->isInt()) {
      if (std::optional<FValue> folded = foldedInteger(*v);
          folded && folded->isInt())
        return folded->intValue;
      bad(i, "a compile-time int (tl.constexpr)");
      return std::nullopt;
    }
    return v->intValue;
  }
  /// An optional compile-time int with a default.
  std::optional<int64_t> constInt(size_t i, int64_t defaultValue) const {
    if (!get(i))
      return defaultValue;
    return constInt(i);
  }

private:
  Emitter &emitter;
  const CallArgs &args;
  std::string builtin;
  llvm::ArrayRef<StringRef> params;
  std::vector<const FValue *> values;
  std::vector<SMLoc> locs;
  bool ok = true;
};

/// A shape argument: an int or a tuple/list of positive powers of two.
std::optional<llvm::SmallVector<int64_t>>
readShape(Emitter &e, const FValue &v, llvm::SMLoc loc, llvm::StringRef what);

/// Converts the operands of an element-wise builtin to one dtype and shape,
/// as an arithmetic operator would (numpy broadcasting; python numbers
/// weakly typed, or, with weakNumbers false, typed by strongType as upstream
/// types the operands of tl.maximum, tl.fma, ...). Pointers must all have
/// one type and take no numbers.
std::optional<std::vector<FValue>>
legalizeOperands(Emitter &e, llvm::ArrayRef<FValue> operands, llvm::SMLoc loc,
                 llvm::StringRef builtin, bool weakNumbers = true);

/// The operands with bf16 values widened to fp32 (tl.maximum, tl.minimum and
/// tl.clamp compute bf16 in fp32 upstream).
std::vector<FValue> bf16AsF32(Emitter &e, llvm::ArrayRef<FValue> operands,
                              llvm::SMLoc loc);

/// `<`, `<=`, `>`, `>=`, `==` or `!=`.
bool isComparison(llvm::StringRef op);

/// The type upstream gives a python number it makes a tensor of before
/// typing an operation (comparisons, tl.maximum, tl.fma, ...): int32, uint32
/// or int64 by its range, fp32 (fp64 outside fp32's normal range), int1.
DType strongType(const FValue &number);

/// The high half of the unsigned product of two integer values of one type
/// and shape (tl.umulhi): through a double-width product up to 32 bits,
/// arith.mului_extended for 64.
FValue emitUMulHi(Emitter &e, const FValue &a, const FValue &b,
                  llvm::SMLoc loc);

/// A dimension argument of a block of rank `rank`: a compile-time int in
/// [-rank, rank), returned in [0, rank).
std::optional<int64_t> readAxis(Emitter &e, const FValue &v, int64_t rank,
                                llvm::SMLoc loc, llvm::StringRef what);

/// The ints of a shape-like argument given either as one tuple or as
/// several positional arguments (tl.reshape(x, (2, 8)), tl.reshape(x, 2, 8)).
std::vector<FValue> flattenVarargs(llvm::ArrayRef<FValue> args);

/// `v` with a size-1 dimension inserted at `axis` (a scalar becomes [1]).
FValue expandDims(Emitter &e, const FValue &v, int64_t axis, llvm::SMLoc loc);
/// `v`'s elements in `shape` (same count, checked by the caller).
FValue reshapeTo(Emitter &e, const FValue &v, llvm::ArrayRef<int64_t> shape,
                 bool allowReorder, llvm::SMLoc loc);
/// `v` with its dimensions permuted: result dimension i is `order[i]`.
FValue permuteDims(Emitter &e, const FValue &v, llvm::ArrayRef<int32_t> order,
                   llvm::SMLoc loc);
/// The number of elements of a shape.
int64_t numElements(llvm::ArrayRef<int64_t> shape);
/// "[16, 32]", for diagnostics.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// A combine function for reductions and scans: from the accumulated values
/// and the next ones (run-time scalars), the combined values.
using CombineFn = std::function<std::optional<std::vector<FValue>>(
    Emitter &, llvm::ArrayRef<FValue> lhs, llvm::ArrayRef<FValue> rhs)>;

/// Emits kiln.reduce of `inputs` (blocks of one shape) along `axis` (all
/// dimensions when absent, through a reshape to 1-D); reducing a 1-D block
/// gives scalars. `keepDims` keeps the reduced dimensions with size 1.
std::optional<std::vector<FValue>>
emitReduce(Emitter &e, std::vector<FValue> inputs, std::optional<int64_t> axis,
           bool keepDims, const CombineFn &combine, llvm::SMLoc loc,
           llvm::StringRef builtin);

/// Emits kiln.assert of `condition` (a bool, or a number compared with 0) at
/// `loc`: used by tl.device_assert and by `assert` on run-time values, in
/// debug builds. Reports an error and returns false on a bad condition.
bool emitDeviceAssert(Emitter &e, const FValue &condition,
                      const std::string &message, llvm::SMLoc loc,
                      llvm::SMLoc condLoc);

/// Calls the builtin `name` as a kernel would, on values already checked
/// (every argument located at `loc`).
std::optional<FValue>
callBuiltin(Emitter &e, llvm::StringRef name, std::vector<FValue> positional,
            std::vector<std::pair<std::string, FValue>> keywords,
            llvm::SMLoc loc);

// Families of builtins, one file each.
void addCoreBuiltins(BuiltinTable &table);   // Builtins.cpp
void addShapeBuiltins(BuiltinTable &table);  // BuiltinsShape.cpp
void addReduceBuiltins(BuiltinTable &table); // BuiltinsReduce.cpp
void addMathBuiltins(BuiltinTable &table);   // BuiltinsMath.cpp
void addMemoryBuiltins(BuiltinTable &table); // BuiltinsMemory.cpp (+ tl.dot)
void addRandomBuiltins(BuiltinTable &table); // BuiltinsRandom.cpp
void addDescriptorBuiltins(BuiltinTable &table); // BuiltinsDescriptor.cpp
void addScaledDotBuiltins(BuiltinTable &table);  // BuiltinsScaledDot.cpp

} // namespace kiln::frontend

#endif // KILN_FRONTEND_BUILTINSUPPORT_H
