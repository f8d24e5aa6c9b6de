//===- HostEval.h - the host Python that a kernel's decorators need -------===//
//
// Upstream Triton imports a kernel's file like any Python module, so
// `@triton.autotune(configs=get_autotune_config(), ...)` sees whatever the
// file's host code computes. Kiln compiles without Python: HostEvaluator runs
// the module-level statements that come before the kernel, and the host
// functions they and the decorator call, over a small model of Python (None,
// bools, ints, floats, strings, lists, tuples, dicts, functions, lambdas,
// comprehensions) and of the few host APIs that config lists read:
// `triton.Config`, the target (`triton.runtime.driver.active.
// get_current_target()`, whose backend is "cuda"), `torch.cuda.
// get_device_capability()`. A module-level statement it cannot run (a torch
// call, say) leaves the names it binds unknown; only using an unknown name is
// an error, reported with the reason.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_HOSTEVAL_H
#define KILN_FRONTEND_HOSTEVAL_H

#include "compiler/frontend/AST.h"

#include "llvm/ADT/StringMap.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace llvm {
class SourceMgr;
}

namespace kiln::frontend {

/// What host code sees of the GPU it compiles for: upstream's GPUTarget.
struct HostTarget {
  std::string backend = "cuda";
  /// The compute capability as GPUTarget.arch gives it (90 for sm_90a);
  /// 0 when no arch is given (reading it is then an error).
  int arch = 0;
  int warpSize = 32;

  /// The target of `--arch ARCH` ("sm_90a"); an empty arch leaves arch 0.
  static HostTarget forArch(llvm::StringRef arch);
};

/// An error of host code: where, what, and notes (the calls it happened in).
struct HostError {
  llvm::SMLoc loc;
  std::string message;
  std::vector<std::pair<llvm::SMLoc, std::string>> notes;
};

/// A value of host Python. Lists and dicts are shared, as in Python, so
/// that `configs.append(...)` changes every name bound to the list.
struct HostValue {
  enum class Kind {
    None,
    Bool,
    Int,
    Float,
    String,
    List,     // items
    Tuple,    // items
    Dict,     // items: key, value, key, value, ...
    Config,   // triton.Config; items: {values dict, options dict}
    Function, // function
    Lambda,   // lambda
    Object,   // text: a dotted path ("torch.cuda"), or "GPUTarget"
    Builtin,  // text: a Python builtin ("len", "range", ...)
    Method,   // text: the method; items[0]: the receiver
    Unknown,  // reason: why the value is not known
  };

  Kind kind = Kind::None;
  int64_t intValue = 0; // Int, Bool
  double floatValue = 0;
  std::string text;
  std::shared_ptr<std::vector<HostValue>> items;
  const FunctionDefStmt *function = nullptr;
  const LambdaExpr *lambda = nullptr;
  std::shared_ptr<const HostError> reason;
  llvm::SMLoc loc; // where the value was written (a Config: its call)

  /// "the int 3", "a list of 4", "triton.Config", ...
  std::string describe() const;
};

/// What a platform probe called by name, without arguments, answers on a
/// CUDA GPU: `is_cuda`, `is_cuda_alike`, `is_nvidia`, `has_triton` are true;
/// `is_rocm`, `is_hip`, `is_xpu`, ... false (vLLM's
/// `current_platform.is_rocm()`, SGLang's `is_hip()`); nullopt for any other
/// name.
std::optional<bool> platformProbeByName(llvm::StringRef name);

/// What host code reads from beyond its own module, answered by the front
/// end, which knows the kernel's other sources and Kiln's Triton modules.
struct HostModuleLinks {
  /// The value that `from module import name` binds (module as written, with
  /// its leading dots), where module is one of the kernel's sources and the
  /// value is a plain one; nullopt otherwise, and the name stays an object.
  std::function<std::optional<HostValue>(llvm::StringRef module,
                                         llvm::StringRef name)>
      importedValue;
  /// `hasattr(M, name)` of a Triton module path ("triton.language"): whether
  /// Kiln's M has it; nullopt when the path is not a Triton module.
  std::function<std::optional<bool>(llvm::StringRef path, llvm::StringRef name)>
      hasAttribute;
  /// Calls `name` of `module` (as the importing file writes it), a host
  /// function of another of the kernel's sources; nullopt where it is not
  /// one, with `error` set where it is but the call fails.
  std::function<std::optional<HostValue>(
      llvm::StringRef module, llvm::StringRef name, std::vector<HostValue> args,
      HostError &error)>
      callImported;
};

class HostEvaluator {
public:
  HostEvaluator(llvm::SourceMgr &sourceMgr, const Module &module,
                HostTarget target, HostModuleLinks links = {});

  /// Runs the module-level statements before `stop` (a statement of the
  /// module, normally the kernel's def; null: all of them), as Python would
  /// have when it reaches `stop`.
  void runModuleUntil(const Stmt *stop);

  /// Evaluates `expr` in the module's scope. On failure, reports the error
  /// (`file:line:col: error: ...` and notes) and returns std::nullopt.
  std::optional<HostValue> evaluate(const Expr &expr);

  /// The same, without reporting: a failure is returned in `error`.
  std::optional<HostValue> tryEvaluate(const Expr &expr, HostError &error);

  /// Calls the host function `function` (of this module) with `args`, as
  /// module code would after runModuleUntil. On failure, reports the error
  /// and returns std::nullopt.
  std::optional<HostValue> callHostFunction(const FunctionDefStmt &function,
                                            std::vector<HostValue> args,
                                            llvm::SMLoc loc);

  /// Calls `callee`, a function or lambda value, with `args`. Unlike
  /// callHostFunction, a failure is not reported but returned in `error`,
  /// for callers that fall back (prune_configs_by reading the launch's
  /// arguments).
  std::optional<HostValue> tryCall(const HostValue &callee,
                                   std::vector<HostValue> args, llvm::SMLoc loc,
                                   HostError &error);

  /// A value that is not known when compiling: reading it fails, with
  /// `why` as the note at `loc`.
  static HostValue unknownValue(llvm::SMLoc loc, std::string why);

  /// Reports `error` through the SourceMgr.
  void report(const HostError &error) const;

private:
  enum class Flow { Normal, Return, Break, Continue, Failed };
  struct Frame {
    llvm::StringMap<HostValue> locals;
    std::optional<HostValue> returnValue;
  };

  std::nullopt_t fail(llvm::SMLoc loc, const llvm::Twine &message);
  bool step(llvm::SMLoc loc);

  // Statements.
  Flow execBlock(const Block &block);
  Flow execStatement(const Stmt &stmt);
  bool assign(const Expr &target, const HostValue &value);
  void bind(llvm::StringRef name, HostValue value);
  void poisonWrittenNames(const Stmt &stmt,
                          const std::shared_ptr<const HostError> &reason);

  // Expressions.
  std::optional<HostValue> eval(const Expr &expr);
  std::optional<HostValue> lookup(llvm::StringRef name, llvm::SMLoc loc);
  std::optional<HostValue> evalCall(const CallExpr &expr);
  std::optional<HostValue> evalListComp(const ListCompExpr &expr);
  std::optional<HostValue>
  call(const HostValue &callee, std::vector<HostValue> &args,
       std::vector<std::pair<std::string, HostValue>> &keywords,
       llvm::SMLoc loc);
  std::optional<HostValue>
  callFunction(const HostValue &callee, std::vector<HostValue> &args,
               std::vector<std::pair<std::string, HostValue>> &keywords,
               llvm::SMLoc loc);
  std::optional<HostValue>
  callObject(const HostValue &callee, std::vector<HostValue> &args,
             std::vector<std::pair<std::string, HostValue>> &keywords,
             llvm::SMLoc loc);
  std::optional<HostValue>
  callBuiltin(llvm::StringRef name, std::vector<HostValue> &args,
              std::vector<std::pair<std::string, HostValue>> &keywords,
              llvm::SMLoc loc);
  std::optional<HostValue> callMethod(const HostValue &method,
                                      std::vector<HostValue> &args,
                                      llvm::SMLoc loc);
  /// `self.format(*args, **keywords)`: {} / {N} / {name} fields.
  std::optional<HostValue>
  formatString(const HostValue &self, std::vector<HostValue> &args,
               std::vector<std::pair<std::string, HostValue>> &keywords,
               llvm::SMLoc loc);
  /// join, split, strip, replace, startswith, endswith of a string; nullopt
  /// without a failure when `name` is none of these.
  std::optional<HostValue> stringMethod(const HostValue &self,
                                        llvm::StringRef name,
                                        std::vector<HostValue> &args,
                                        llvm::SMLoc loc);
  std::optional<HostValue> attribute(const HostValue &value,
                                     llvm::StringRef attr, llvm::SMLoc loc);
  std::optional<HostValue> binary(llvm::StringRef op, const HostValue &lhs,
                                  const HostValue &rhs, llvm::SMLoc loc);
  std::optional<HostValue> compare(llvm::StringRef op, const HostValue &lhs,
                                   const HostValue &rhs, llvm::SMLoc loc);
  std::optional<HostValue> subscript(const HostValue &base,
                                     const SubscriptExpr &expr);
  std::optional<bool> truth(const HostValue &value, llvm::SMLoc loc);
  std::optional<std::vector<HostValue>> iterate(const HostValue &value,
                                                llvm::SMLoc loc);

  llvm::SourceMgr &sourceMgr;
  const Module &module;
  HostTarget target;
  HostModuleLinks links;
  llvm::StringMap<HostValue> globals;
  /// Module-level names bound by `from M import n`, (M, n), asked of
  /// links.importedValue when first read.
  llvm::StringMap<std::pair<std::string, std::string>> importedFrom;
  std::vector<Frame> frames; // function calls, innermost last
  std::optional<HostError> failure;
  size_t steps = 0;

  static constexpr size_t kMaxSteps = 1000000;
  static constexpr size_t kMaxCallDepth = 64;
};

} // namespace kiln::frontend

#endif // KILN_FRONTEND_HOSTEVAL_H
