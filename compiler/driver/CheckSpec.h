//===- CheckSpec.h - checks specializations against a kernel --------------===//
//
// `kilnc check-spec`: the build rules' one question about a kernel's
// specializations, asked before anything compiles. Each signature is parsed
// against the kernel's parameter list by the same code `kilnc compile` uses
// (compiler/frontend/Signature.h), so the rules need no parser of their own
// for Python or for signatures.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DRIVER_CHECKSPEC_H
#define KILN_DRIVER_CHECKSPEC_H

#include <string>
#include <vector>

namespace kiln {

struct CheckSpecOptions {
  std::string sourcePath;
  std::string kernelName; // empty: the file's only kernel
  std::vector<std::string> signatures;
  /// The rule's variants are the kernel's @triton.autotune configs: each
  /// signature names the parameters and leaves the constexprs the configs
  /// set, and every launch option, to them.
  bool autotune = false;
  /// What each error calls a signature, before its index:
  /// "<where> <i> (\"<signature>\"): <error>".
  std::string where = "specialization";
  /// When set and every signature is good, this file receives them, one per
  /// line: a build system's record that the check passed (a Bazel action
  /// must write its outputs).
  std::string stampPath;
};

/// Checks every signature of `options`; prints one error per wrong one to
/// stderr and nothing on success. Returns the process exit status.
int checkSpecializations(const CheckSpecOptions &options);

} // namespace kiln

#endif // KILN_DRIVER_CHECKSPEC_H
