//===- Emitter.h - staged evaluation of kernel source into kiln IR --------===//
//
// Evaluates a @triton.jit function for one KernelSpec: compile-time values
// are computed, run-time values become kiln/arith IR in a func.func whose
// arguments are the kernel's non-constexpr parameters. Helpers are inlined.
// Every Triton builtin is an entry of the table in Builtins.cpp; the typing
// rules (promotion, broadcasting) live in Semantics.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_EMITTER_H
#define KILN_FRONTEND_EMITTER_H

#include "compiler/frontend/AST.h"
#include "compiler/frontend/HostEval.h"
#include "compiler/frontend/Signature.h"
#include "compiler/frontend/Value.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"

#include <map>
#include <memory>
#include <optional>
#include <set>

namespace llvm {
class SourceMgr;
}

namespace kiln::frontend {

class Emitter;

/// The evaluated arguments of a call.
struct CallArgs {
  llvm::SMLoc loc;
  std::string callee;
  std::vector<FValue> args;
  std::vector<llvm::SMLoc> argLocs;
  std::vector<std::pair<std::string, FValue>> keywords;
  std::vector<llvm::SMLoc> keywordLocs;
};

/// One builtin: checks its arguments, emits IR, returns the result or
/// std::nullopt after reporting an error.
using BuiltinFn = std::optional<FValue> (*)(Emitter &, const CallArgs &);

/// Looks up a builtin by its canonical name ("tl.load", "range", ...).
BuiltinFn lookupBuiltin(llvm::StringRef name);

/// Compile-time values to and from the signature's constexpr literals
/// (std::nullopt for values a signature cannot hold).
std::optional<ConstexprLiteral> valueToLiteral(const FValue &v);
FValue literalToValue(const ConstexprLiteral &lit);

/// One Python module a kernel reaches: the kernel's file, or a file of its
/// sources that it imports. Module-level names are resolved on first use, so
/// host code beside the kernels is never evaluated unless a kernel reaches it.
struct ModuleScope {
  const Module *ast = nullptr;
  std::unique_ptr<Module> owned;            // imported modules
  std::string path;                         // absolute, normalized
  llvm::StringMap<const Stmt *> globalDefs; // assignments, unparsed code
  llvm::StringMap<FValue> globals;          // evaluated names
  /// `from M import n as alias` (and `import M as alias`, name empty):
  /// resolved when a kernel first uses alias.
  struct Import {
    std::string module; // with its leading dots
    std::string name;
    llvm::SMLoc loc;
  };
  llvm::StringMap<Import> imports;
  /// The binding a module-level assignment replaces (an earlier assignment,
  /// an import or a function), which its own value reads: `f = wrap(f)`.
  struct Shadowed {
    const Stmt *def = nullptr;
    std::optional<Import> import;
    std::optional<FValue> value;
  };
  std::map<std::pair<const Stmt *, std::string>, Shadowed> shadowed;
  /// The (assignment, name) pairs being evaluated.
  std::set<std::pair<const Stmt *, std::string>> evaluating;
  /// Names bound under a module-level `if` whose condition Kiln could not
  /// evaluate when compiling (both branches can run, as far as Kiln
  /// knows): using one is an error naming the `if` and why.
  struct Undecided {
    llvm::SMLoc ifLoc;
    std::string why;
  };
  llvm::StringMap<Undecided> undecided;
  /// What the module-level names are bound to, at one point of collecting.
  struct Bindings {
    llvm::StringMap<FValue> globals;
    llvm::StringMap<Import> imports;
    llvm::StringMap<const Stmt *> globalDefs;
    llvm::StringMap<Undecided> undecided;
  };
  Bindings bindings() const {
    return {globals, imports, globalDefs, undecided};
  }
  void setBindings(Bindings b) {
    globals = std::move(b.globals);
    imports = std::move(b.imports);
    globalDefs = std::move(b.globalDefs);
    undecided = std::move(b.undecided);
  }
  /// `from M import *` (name "*"), in source order: M's public names, looked
  /// up when no other module-level binding has them.
  std::vector<Import> starImports;
  /// A class body's scope (`Cls.f`): its name, and the module whose
  /// globals its functions' bodies see (Python's class scope is not theirs).
  std::string className;
  ModuleScope *enclosing = nullptr;

  /// The module whose globals this scope's functions see: itself, or a
  /// class body's module.
  ModuleScope &module() { return enclosing ? *enclosing : *this; }
};

class Emitter {
public:
  /// `sourceFiles`: the files the kernel's module may import from (`kilnc
  /// --src`, the `triton_kernel` srcs after the first), read and parsed when
  /// an import that a kernel reaches names them, by Python's rules (`from
  /// .utils import f` beside the importing file; `from pkg.utils import f`
  /// as the source whose path ends in pkg/utils.py or pkg/utils/__init__.py).
  /// Given here, before the module's globals are collected: which branch of
  /// a module-level `try` or `if` is taken depends on whether its relative
  /// imports resolve among them. `hostTarget`: the GPU that host code
  /// (module-level conditions and values computed by host functions) sees,
  /// as `kilnc --arch` names it.
  Emitter(llvm::SourceMgr &sourceMgr, mlir::MLIRContext &context,
          const Module &module, std::vector<std::string> sourceFiles = {},
          HostTarget hostTarget = {});
  ~Emitter();

  /// The @triton.jit function called `name` (`kernel`, or `Cls.kernel` for a
  /// class's static method); or, if `name` is empty, the file's only one.
  /// Sets `*qualifiedName`, when given, to the name it answers to
  /// ("Cls.kernel"). Reports an error if none fits.
  const FunctionDefStmt *findKernel(llvm::StringRef name,
                                    std::string *qualifiedName = nullptr);

  /// Parameter declarations of `kernel`, for signature parsing.
  std::optional<std::vector<ParamDecl>>
  paramDecls(const FunctionDefStmt &kernel);

  /// Gives each parameter the signature left to @triton.heuristics its
  /// value: the heuristic's lambda evaluated over the parameters known when
  /// compiling (constexprs, and earlier heuristics' results). Reports an
  /// error (naming the parameter) and returns false if one reads a run-time
  /// parameter or does not give a constant.
  bool applyHeuristics(const FunctionDefStmt &kernel, KernelSpec &spec);
  /// The lambda @triton.heuristics gives for `param`, if any.
  const LambdaExpr *heuristicFor(const FunctionDefStmt &kernel,
                                 llvm::StringRef param);

  /// Emits `kernel` specialized for `spec` into a new module.
  mlir::OwningOpRef<mlir::ModuleOp> emitKernel(const FunctionDefStmt &kernel,
                                               const KernelSpec &spec);

  //===--------------------------------------------------------------------===//
  // Services for builtins and semantics.
  //===--------------------------------------------------------------------===//

  /// Reports `file:line:col: error: message` (plus a note for every inlined
  /// call on the stack) and returns std::nullopt.
  std::nullopt_t error(llvm::SMLoc loc, const llvm::Twine &message);
  mlir::Location location(llvm::SMLoc loc);
  mlir::OpBuilder &getBuilder() { return builder; }
  mlir::MLIRContext *getContext() { return &context; }

  /// A run-time scalar or block from a compile-time number, typed `type`.
  FValue constant(const FValue &number, const TritonType &type,
                  llvm::SMLoc loc);
  /// `number` as upstream's tensor of its own type (strongType: int32, fp32,
  /// ...) where it stands beside a numeric run-time value `other`; else
  /// `number` as it is. Comparisons do this to every python number, other
  /// operators to typed ones (FValue::typed).
  FValue numberAsOwnType(const FValue &number, const FValue &other,
                         llvm::SMLoc loc);
  /// Makes `v` a run-time value; numbers get Triton's literal types
  /// (int → i32 or i64 by value, float → fp32, bool → i1).
  std::optional<FValue> materialize(const FValue &v, llvm::SMLoc loc);
  /// Broadcasts a run-time value to `shape` as numpy does: scalars splat,
  /// blocks gain leading size-1 dimensions and repeat along size-1 ones
  /// (identity when already that shape).
  std::optional<FValue>
  broadcastTo(const FValue &v, llvm::ArrayRef<int64_t> shape, llvm::SMLoc loc);
  /// The shape two operands of these shapes broadcast to (numpy rules: align
  /// trailing dimensions; a size-1 or missing dimension takes the other's).
  std::optional<llvm::SmallVector<int64_t>>
  broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b,
                  llvm::SMLoc loc);
  /// Converts a run-time value's elements to `dtype` (value conversion).
  FValue castTo(const FValue &v, DType dtype, llvm::SMLoc loc);
  /// Reinterprets the bits of a run-time value as `dtype` (same width).
  std::optional<FValue> bitcastTo(const FValue &v, const TritonType &type,
                                  llvm::SMLoc loc);
  /// `lhs op rhs` with Triton's typing rules; `op` is a Python operator.
  std::optional<FValue> binary(llvm::StringRef op, const FValue &lhs,
                               const FValue &rhs, llvm::SMLoc loc);
  std::optional<FValue> unary(llvm::StringRef op, const FValue &operand,
                              llvm::SMLoc loc);
  /// `lhs op rhs` as the Python operator is written: binary, a comparison's
  /// python numbers first made values of their own type, as upstream's
  /// comparison operators make them tensors (an fp16 block compares with 0.1
  /// in fp32, not with 0.1 rounded to fp16).
  std::optional<FValue> pythonOperator(llvm::StringRef op, const FValue &lhs,
                                       const FValue &rhs, llvm::SMLoc loc);
  /// Calls any callable value (builtin, jit function, method, dtype).
  std::optional<FValue> call(const FValue &callee, CallArgs &args);

  /// Attribute access on a value (`x.dtype`, `tl.load`, ...).
  std::optional<FValue> getAttribute(const FValue &value, llvm::StringRef attr,
                                     llvm::SMLoc loc);
  /// The same, without diagnostics: std::nullopt where there is no such
  /// attribute (Python's hasattr and getattr with a default).
  std::optional<FValue> findAttribute(const FValue &value, llvm::StringRef attr,
                                      llvm::SMLoc loc);

  const HostTarget &getHostTarget() const { return hostTarget; }
  /// The warps the kernel being emitted is specialized for. Reading them
  /// (tl.extra.cuda.num_warps) fixes them: the module is marked
  /// `kiln.fixed_warps`, and the driver keeps them.
  /// The same, for the compiler's own choices (which do not fix them).
  unsigned numWarps() const { return kernelNumWarps; }
  unsigned readNumWarps() {
    readsNumWarps = true;
    return kernelNumWarps;
  }

  bool debugEnabled() const { return debug; }
  void setDebug(bool enabled) { debug = enabled; }
  /// Bounds the statements one kernel may replay through unrolled
  /// tl.static_range loops and inlined helpers (default: 2^20).
  void setStatementBudget(size_t budget) { statementBudget = budget; }

private:
  using Scope = llvm::StringMap<FValue>;

  void collectGlobals(ModuleScope &scope, const Block &body);
  /// The value of a module-level `if`'s condition, as Python would find it
  /// running the module (`top`: the module-level statement it is in, or
  /// null for one in a host function's body, run after the whole module);
  /// or nullopt, with `why` set, where Kiln cannot evaluate it.
  std::optional<bool> moduleCondition(ModuleScope &scope, const Stmt *top,
                                      const Expr &cond, std::string &why);
  /// Host evaluation of `expr`, a module-level value of `scope` (`top`: the
  /// module-level statement it is in), after the statements before `top`
  /// ran (all of them where `top` is null); nullopt, with `error` set, where
  /// that fails or the value is not one kernels can hold.
  std::optional<FValue> hostModuleValue(ModuleScope &scope, const Stmt *top,
                                        const Expr &expr, HostError &error);
  /// What host code of `scope` reads from the kernel's other sources and
  /// Kiln's Triton modules.
  HostModuleLinks hostLinks(ModuleScope &scope);
  std::optional<FValue> lookup(llvm::StringRef name, llvm::SMLoc loc);
  /// A module-level name of `current` (nullopt without an error when the
  /// module does not define it and `quiet`).
  std::optional<FValue> lookupGlobal(llvm::StringRef name, llvm::SMLoc loc,
                                     bool &found);
  /// `name` through `current`'s `from M import *` of source modules (found
  /// false when none of them defines it).
  std::optional<FValue> lookupStarImport(llvm::StringRef name, llvm::SMLoc loc,
                                         bool &found);
  std::optional<FValue> evaluateGlobal(llvm::StringRef name, llvm::SMLoc loc);
  std::optional<FValue> evaluateBinding(llvm::StringRef name, const Stmt *stmt,
                                        llvm::SMLoc loc);
  /// The value of a constexpr parameter: its literal's, or the function a
  /// Function literal names (resolveFunctionName); nullopt after an error.
  std::optional<FValue> constexprValue(const ConstexprLiteral &lit,
                                       llvm::StringRef param, llvm::SMLoc loc);
  std::optional<FValue> resolveFunctionName(llvm::StringRef text,
                                            llvm::StringRef param,
                                            llvm::SMLoc loc);
  std::optional<FValue> resolveImport(const ModuleScope::Import &import,
                                      llvm::StringRef alias, llvm::SMLoc loc);
  /// Whether Kiln can import every module `block` imports (its chosen
  /// branch, for module-level if/try).
  bool importsResolve(const ModuleScope &scope, const Block &block);
  bool moduleResolves(const ModuleScope &scope, llvm::StringRef module);
  /// The file of source module `module` (leading dots: relative to `from`),
  /// or "" when it is not among the sources.
  std::string findModuleFile(const ModuleScope &from, llvm::StringRef module);
  /// The parsed module of `file` (parsed on first use); null after an error.
  ModuleScope *loadModule(const std::string &file, llvm::SMLoc loc);
  /// The value of a user module (an FValue of kind Module naming it).
  FValue moduleValue(const ModuleScope &scope);
  ModuleScope *scopeOfModuleValue(const FValue &value);

  // Statements: return false after an error.
  bool emitBlock(const Block &block);
  /// The statements [begin, end) of one block, in order, until one returns.
  bool emitStatements(Block::const_iterator begin, Block::const_iterator end);
  /// The descriptor a `tensordesc` kernel parameter of `type` arrives as:
  /// its ABI arguments (tensor map, base, shape, strides) start at `first`;
  /// its extents divisible by `extentDivisibility`.
  FValue descriptorParameter(mlir::func::FuncOp func, unsigned first,
                             const TritonType &type,
                             unsigned extentDivisibility, llvm::SMLoc loc);
  bool emitStatement(const Stmt &stmt);
  bool emitAssign(const Expr &target, const FValue &value);
  // Control flow (ControlFlow.cpp).
  bool emitIf(const IfStmt &stmt);
  bool emitFor(const ForStmt &stmt);
  bool emitWhile(const WhileStmt &stmt);
  bool unwrapWhileCondition(const Expr *&cond,
                            std::optional<bool> &disableLicm);
  /// An `if` with a `return` somewhere in its branches, outside loops. On a
  /// run-time condition it becomes one scf.if whose every path ends the
  /// function: each branch is followed by the rest of the function (the
  /// frame's pending statements), and the paths' return values become the
  /// scf.if's results. Upstream branches to the function's end instead; the
  /// structured form duplicates the code after the `if` on the paths that
  /// fall through.
  bool emitReturningIf(const IfStmt &stmt);
  /// One path of emitReturningIf: `body`, then the pending statements of
  /// `pending` (innermost block first) until the path returns.
  bool emitPath(
      const Block &body,
      const std::vector<std::pair<Block::const_iterator, Block::const_iterator>>
          &pending);
  /// A name that control flow carries, or one leaf of the (nested) tuple
  /// a name holds, and the type it is carried with.
  struct CarriedName {
    std::string name;
    /// Indices into the tuples `name` holds; empty: the name's value itself.
    std::vector<unsigned> path;
    TritonType type;
    /// "acc", or "acc[1]" for a leaf of a tuple.
    std::string display() const;
    bool operator==(const CarriedName &other) const {
      return name == other.name && path == other.path && type == other.type;
    }
  };
  /// The initial values of a loop's carried names, from the scope before the
  /// loop, as `carried`'s types.
  bool carriedInits(const std::vector<CarriedName> &carried,
                    const Scope &before, llvm::SMLoc loc,
                    llvm::SmallVectorImpl<mlir::Value> &inits);
  /// Ends a loop body with the carried names' values.
  bool yieldCarried(const std::vector<CarriedName> &carried, llvm::SMLoc loc);
  /// Binds the carried names to `values` (block arguments or op results).
  void bindCarried(const std::vector<CarriedName> &carried,
                   mlir::ValueRange values);
  /// A scalar pointer used as a condition: whether it is not null (upstream
  /// converts a pointer to int1 so); any other value unchanged.
  FValue pointerTruth(const FValue &cond, llvm::SMLoc loc);
  /// `a if cond else b` on a run-time scalar condition: an scf.if.
  std::optional<FValue> emitConditionalExpr(const IfExpExpr &expr,
                                            const FValue &cond);
  bool emitStaticFor(const ForStmt &stmt, const Expr &target,
                     const std::vector<FValue> &bounds);
  /// The names a loop over `body` must carry (those it rebinds that were
  /// bound before), with their types: a fixed point of probing, where
  /// emitting `body` with the names bound to run-time placeholders of those
  /// types rebinds no other name and gives each the type it started with.
  /// Each probe emits `body` into a detached block that is then discarded.
  /// Reports an error at `loc` if the types do not settle.
  std::optional<std::vector<CarriedName>> probeRebound(const Block &body,
                                                       const Expr *target,
                                                       mlir::Type ivType,
                                                       llvm::SMLoc loc);
  /// One probe of `body`, with `assumed` bound to run-time placeholders.
  /// Appends to `rebound` the names (or tuple leaves) it rebinds, with their
  /// new values; their types are left unset.
  bool probeOnce(const Block &body, const Expr *target, mlir::Type ivType,
                 const std::vector<CarriedName> &assumed,
                 std::vector<std::pair<CarriedName, FValue>> &rebound);
  /// The value `slot` has after a region whose scope is `scope`, typed as
  /// the slot's type (compile-time numbers are materialized).
  std::optional<FValue> carriedValue(const Scope &scope,
                                     const CarriedName &slot, llvm::SMLoc loc);

  // Expressions.
  std::optional<FValue> evaluate(const Expr &expr);
  std::optional<FValue> evaluateFString(const FStringExpr &expr);
  std::string assertMessage(const Expr *message);
  std::optional<FValue> evaluateCall(const CallExpr &expr);
  std::optional<FValue> evaluateCompare(const CompareExpr &expr);
  std::optional<FValue> evaluateBoolOp(const BoolOpExpr &expr);
  std::optional<FValue> evaluateDict(const DictExpr &expr);
  std::optional<FValue> evaluateSubscript(const SubscriptExpr &expr);
  /// Runs a (non-jit) host function that a module-level assignment calls,
  /// through HostEvaluator: `s: tl.constexpr = make_asm(4)`.
  std::optional<FValue> callHostFunction(const FunctionDefStmt &function,
                                         const CallArgs &args);
  std::optional<FValue> inlineCall(const FunctionDefStmt &function,
                                   CallArgs &args);
  bool isJit(const FunctionDefStmt &function);
  /// Whether a decorator of `function` (called or not) is named so that
  /// `named` accepts it, or is a name bound to triton.jit (namesMarker).
  bool decoratedWith(const FunctionDefStmt &function,
                     llvm::function_ref<bool(llvm::StringRef)> named);
  /// `f(lambda: triton.jit)`: the Triton decorator the lambda returns.
  std::optional<FValue> deferredDecorator(const Expr &valueExpr);
  /// Whether `e`, a name the syntax does not show to be `jit` or
  /// `constexpr`, is bound in `function`'s module to Triton's `marker`
  /// ("triton.jit", "tl.constexpr").
  bool namesMarker(const Expr *e, const FunctionDefStmt &function,
                   llvm::StringRef marker);
  /// `tl.constexpr`, or an alias of it in `function`'s module.
  bool isConstexprAnnotation(const Expr *annotation,
                             const FunctionDefStmt *function);
  /// Decorated @triton.constexpr_function: plain Python upstream.
  bool isConstexprFunction(const FunctionDefStmt &function);
  /// A constexpr function called with host-representable arguments,
  /// evaluated as host Python (loops over lists, comprehensions, dicts);
  /// nullopt, with nothing reported, where that fails (then it is inlined).
  std::optional<FValue> hostConstexprCall(const FunctionDefStmt &function,
                                          const CallArgs &args);
  std::optional<bool> truthiness(const FValue &v, llvm::SMLoc loc);

  llvm::SourceMgr &sourceMgr;
  mlir::MLIRContext &context;
  const Module &module;
  mlir::OpBuilder builder;
  std::string filename;
  bool debug = false;

  std::vector<std::unique_ptr<ModuleScope>> modules; // [0]: the kernel's
  ModuleScope *current = nullptr; // the module whose code is evaluated
  llvm::SmallPtrSet<ModuleScope *, 4> starVisiting; // lookupStarImport
  // (module, name) pairs resolveImport is looking up: a package's
  // `from . import sub` names the package itself, whose `sub` is then the
  // submodule, not the import again.
  std::set<std::pair<const ModuleScope *, std::string>> importsResolving;
  llvm::DenseMap<const FunctionDefStmt *, ModuleScope *> functionModules;
  /// The module-level assignments being evaluated, innermost last: calls of
  /// host functions made while one is evaluated run as host Python.
  std::vector<std::pair<ModuleScope *, const Stmt *>> globalsInProgress;
  /// The module-level statement that collectGlobals is in.
  const Stmt *collectingTop = nullptr;
  /// Host functions of other sources being run (hostLinks' callImported),
  /// bounded: modules whose host code calls each other's.
  unsigned hostCallDepth = 0;
  static constexpr unsigned kMaxHostCallDepth = 8;
  HostTarget hostTarget;
  unsigned kernelNumWarps = 4;
  bool readsNumWarps = false;
  std::vector<std::string> sourceFiles; // absolute, normalized

  std::vector<Scope> scopes; // innermost last; one per inlined function
  struct Frame {
    const FunctionDefStmt *function;
    llvm::SMLoc callLoc;
    std::optional<FValue> returnValue;
    bool returned = false;
    /// The statements still to run after the current one, one range per
    /// enclosing block emitted in line (outermost first): what follows a
    /// returning `if` on its paths that fall through.
    std::vector<std::pair<Block::const_iterator, Block::const_iterator>>
        pending;
    /// Loops around the current statement (a `return` inside one is an
    /// error, as upstream).
    unsigned loopDepth = 0;
    /// Induction variables of run-time loops that ended, by name, with the
    /// loop's location: named after their loop, they have no value (upstream
    /// leaves an undefined one), which the error says.
    llvm::StringMap<llvm::SMLoc> endedInductionVariables;
  };
  std::vector<Frame> frames;

  static constexpr size_t kMaxInlineDepth = 64;
  size_t statementBudget = size_t(1) << 20;
  size_t statementsEmitted = 0;
};

} // namespace kiln::frontend

#endif // KILN_FRONTEND_EMITTER_H
