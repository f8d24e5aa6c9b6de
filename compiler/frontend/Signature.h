//===- Signature.h - a kernel variant's parameter types and values --------===//
//
// Parses the `-s` signature of kilnc against a kernel's parameter list. Two
// forms are accepted: upstream Triton's positional AOT form
// ("*fp32:16, i32, 1024") and a named form ("x=*fp32, n=i32, BLOCK=1024,
// num_warps=8") used by the build rules. As upstream's, a type may carry a
// hint: `:16` (divisible by 16) or, for integers, `:1` (equal to 1: the
// argument is the constant 1, folded into the code and left out of the
// entry point's parameters). A tensor-descriptor parameter (a host
// TensorDescriptor argument upstream) is typed `tensordesc<T[d0,d1,...]>`:
// its element type and block shape; it takes no hint. A tuple parameter
// (upstream's `x.stride()` passed as one argument) is written as a
// parenthesized list of its elements, `stride=(i32, i32:16, 1)`: types with
// their hints, constexpr values, or nested tuples; its run-time elements are
// the entry point's parameters in order, as upstream flattens them.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_SIGNATURE_H
#define KILN_FRONTEND_SIGNATURE_H

#include "compiler/frontend/Types.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::frontend {

struct FunctionDefStmt;

/// A compile-time value written in a signature: 1024, 0.5, True, "ieee", or
/// a function (`score_mod`, `pkg.mod.score_mod`: a @triton.jit function the
/// kernel calls through a constexpr parameter, resolved when it is emitted).
struct ConstexprLiteral {
  enum class Kind {
    Int,
    Float,
    Bool,
    String,
    None,
    DType,
    Function
  } kind = Kind::None;
  int64_t intValue = 0;
  double floatValue = 0;
  std::string text; // strings; also the literal as written
  DType dtype;
  /// Of a function given as a default (`f: tl.constexpr = helper`): its
  /// definition; null for a name a signature writes (resolved by name).
  const FunctionDefStmt *function = nullptr;
};

struct ParamSpec {
  std::string name;
  bool isConstexpr = false;
  TritonType type;           // run-time parameters
  unsigned divisibility = 1; // 16 when the variant assumes it (of a
                             // descriptor: of its extents)
  /// `:1`: the variant is compiled for the integer argument equal to 1. The
  /// kernel sees the constant 1 of `type`, and the entry point does not take
  /// the argument (the launcher checks it instead).
  bool equalToOne = false;
  ConstexprLiteral value; // constexpr parameters
  bool fromDefault = false;
  bool pendingHeuristic = false; // left out: @triton.heuristics decides
  /// A tuple parameter: its elements, each a type, a constexpr value or a
  /// tuple. The elements carry the tuple's name and their position in
  /// `tupleIndex` (outermost first).
  bool isTuple = false;
  std::vector<ParamSpec> elements;
  std::vector<unsigned> tupleIndex; // of an element: where it is

  /// Whether the compiled entry point takes this argument (a tuple's
  /// elements are taken one by one; see KernelSpec::leaves).
  bool isKernelArgument() const {
    return !isConstexpr && !equalToOne && !isTuple;
  }
  /// The name as errors and the launcher write it: `stride[1]` for an
  /// element of tuple `stride`.
  std::string displayName() const;
};

struct KernelSpec {
  std::vector<ParamSpec> params;
  unsigned numWarps = 4;
  unsigned numStages = 3;
  unsigned numCtas = 1;
  /// Whether the signature set the launch option (-w/-ns then do not).
  bool numWarpsGiven = false, numStagesGiven = false;

  /// The positional form of this spec, as upstream's AOT tool writes it.
  std::string str() const;
  /// The parameters with each tuple replaced by its elements, recursively,
  /// in order: the order of the entry point's parameters.
  std::vector<const ParamSpec *> leaves() const;
};

/// What the parser needs to know about each kernel parameter.
struct ParamDecl {
  std::string name;
  bool isConstexpr;
  std::optional<ConstexprLiteral> defaultValue; // constexpr defaults only
  bool fromHeuristic = false; // a @triton.heuristics key: may be left out
  /// A constexpr default that could not be evaluated (host code Kiln does
  /// not run, such as `torch.finfo(...)`): its diagnostics, reported only
  /// when the signature leaves the parameter out.
  std::string defaultError;
  /// A run-time parameter whose default is None: left out, it is None.
  bool defaultsToNone = false;
};

/// Parses `signature` for a kernel with `params`. `aligned` marks every
/// pointer and integer parameter divisible by 16, except those written `:1`.
/// Errors name the parameter and the expectation.
llvm::Expected<KernelSpec> parseSignature(llvm::StringRef signature,
                                          llvm::ArrayRef<ParamDecl> params,
                                          bool aligned);

/// Marks every pointer parameter and pointer tuple element of `spec`
/// divisible by 16 (its address 16-byte aligned), assuming nothing more of the
/// integers: the build's aligned-pointers variant, for calls whose counts or
/// strides are not multiples of 16 (a batch of 1, 12 heads, 1000 tokens) but
/// whose tensors come from an allocator.
void assumeAlignedPointers(KernelSpec &spec);

/// Errors when `spec` asks for a launch option Kiln does not compile
/// (num_ctas other than 1).
llvm::Error checkLaunchOptionsSupported(const KernelSpec &spec);

/// `signature` with the type of each parameter in `names` written `T:1`
/// (replacing any hint it had), in the form `signature` uses. The names must
/// be those of run-time parameters that `signature` gives a type.
std::string withEqualToOne(llvm::StringRef signature,
                           llvm::ArrayRef<ParamDecl> params,
                           llvm::ArrayRef<std::string> names);

/// Whether `signature` is of the named form: its first entry is
/// `name=value` (a quoted string holding '=' is a positional value).
bool isNamedSignature(llvm::StringRef signature);

/// The entries of a signature: split at the commas outside brackets (a
/// `tensordesc<fp16[128,64]>` or a tuple `(i32, i32)` is one entry), trimmed,
/// empty ones dropped.
llvm::SmallVector<llvm::StringRef> splitSignature(llvm::StringRef signature);

/// Parses one constexpr literal (also used for defaults).
std::optional<ConstexprLiteral> parseConstexprLiteral(llvm::StringRef text);

} // namespace kiln::frontend

#endif // KILN_FRONTEND_SIGNATURE_H
