//===- LauncherArguments.h - The arguments a generated launcher takes -----===//
//
// A launcher takes one C++ argument per non-constexpr kernel parameter. A
// tuple parameter (upstream's `x.stride()` passed as one argument) arrives in
// the metadata as its run-time elements, one parameter each, because that is
// what the entry point takes; the launcher takes them back as one argument:
// a std::array when the elements share a C++ type, else a std::tuple (nested
// tuples nest), read with std::get, so `{s0, s1, s2}` and std::make_tuple
// both work at the call site. A constexpr element keeps its slot, which the
// launcher checks against the compiled value (buildLauncherModel).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_LAUNCHERARGUMENTS_H
#define KILN_CODEGEN_LAUNCHERARGUMENTS_H

#include "VariantMetadata.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace kiln::codegen {

/// One argument of a launcher.
struct LauncherArgument {
  /// The Triton parameter's name (the launcher's C++ name is derived from it).
  std::string name;
  /// "int32_t", "float*", "std::array<int32_t, 4>", "std::tuple<float*,
  /// int64_t>".
  std::string cppType;
  /// The Triton type as messages write it: "i32", "(i32, (*fp32, i64))",
  /// constexpr elements as their values: "(i32, 1)".
  std::string tritonType;
  /// The indices into VariantMetadata::params that it passes, in order: one
  /// for a parameter, a tuple's elements for a tuple.
  std::vector<unsigned> params;
  bool isTuple = false;
};

/// The launcher arguments of `m`, in order. `m` must have passed
/// parseVariantMetadata's checks, and its constexpr tuple elements must be
/// slots (a KernelModel's variants).
std::vector<LauncherArgument> launcherArguments(const VariantMetadata &m);

/// The C++ type a launcher takes for parameter or tuple slot `p`:
/// cppTypeFor(p.type), std::nullptr_t for a None element.
std::string launcherCppType(const ParamMetadata &p);

/// The initializers that make `argument` of `m` from its parameters:
/// `element(i)` for parameter i; for a tuple, one per element of the
/// outermost tuple, a nested tuple braced into its C++ type
/// ("std::tuple<int64_t, int32_t>{e2, e3}").
std::vector<std::string>
argumentInitializers(const VariantMetadata &m, const LauncherArgument &argument,
                     llvm::function_ref<std::string(unsigned)> element);

/// The C++ expression that reads element `tupleIndex` of argument `argument`:
/// "std::get<2>(stride)", nested for nested tuples; `argument` itself for an
/// empty index.
std::string elementExpression(llvm::StringRef argument,
                              llvm::ArrayRef<int64_t> tupleIndex);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_LAUNCHERARGUMENTS_H
