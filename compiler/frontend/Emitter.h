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
#include "compiler/frontend/Signature.h"
#include "compiler/frontend/Value.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"

#include <optional>

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

class Emitter {
public:
  Emitter(llvm::SourceMgr &sourceMgr, mlir::MLIRContext &context,
          const Module &module);

  /// The @triton.jit function called `name`; or, if `name` is empty, the
  /// only one no other jit function calls. Reports an error if none fits.
  const FunctionDefStmt *findKernel(llvm::StringRef name);

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
  /// Calls any callable value (builtin, jit function, method, dtype).
  std::optional<FValue> call(const FValue &callee, CallArgs &args);

  /// Attribute access on a value (`x.dtype`, `tl.load`, ...).
  std::optional<FValue> getAttribute(const FValue &value, llvm::StringRef attr,
                                     llvm::SMLoc loc);

  bool debugEnabled() const { return debug; }
  void setDebug(bool enabled) { debug = enabled; }
  /// Bounds the statements one kernel may replay through unrolled
  /// tl.static_range loops and inlined helpers (default: 2^20).
  void setStatementBudget(size_t budget) { statementBudget = budget; }

private:
  using Scope = llvm::StringMap<FValue>;

  void collectGlobals();
  std::optional<FValue> lookup(llvm::StringRef name, llvm::SMLoc loc);
  std::optional<FValue> evaluateGlobal(llvm::StringRef name, llvm::SMLoc loc);

  // Statements: return false after an error.
  bool emitBlock(const Block &block);
  /// The descriptor a `tensordesc` kernel parameter of `type` arrives as:
  /// its ABI arguments (tensor map, base, shape, strides) start at `first`.
  FValue descriptorParameter(mlir::func::FuncOp func, unsigned first,
                             const TritonType &type, llvm::SMLoc loc);
  bool emitStatement(const Stmt &stmt);
  bool emitAssign(const Expr &target, const FValue &value);
  // Control flow (ControlFlow.cpp).
  bool emitIf(const IfStmt &stmt);
  bool emitFor(const ForStmt &stmt);
  bool emitWhile(const WhileStmt &stmt);
  /// `if cond: ...; return` on a run-time condition, followed by `rest`: one
  /// scf.if whose else branch holds the if's else and then `rest`. Returns
  /// false when the condition is known at compile time (nothing emitted),
  /// std::nullopt after an error.
  std::optional<bool> emitIfWithReturn(const IfStmt &stmt,
                                       Block::const_iterator rest,
                                       Block::const_iterator end);
  /// A loop's carried names (from probeRebound): their types and initial
  /// values from the scope before the loop.
  bool carriedInits(const std::vector<std::string> &names, const Scope &before,
                    llvm::SMLoc loc, std::vector<TritonType> &types,
                    llvm::SmallVectorImpl<mlir::Value> &inits);
  /// Ends a loop body with the carried names' values.
  bool yieldCarried(const std::vector<std::string> &names,
                    const std::vector<TritonType> &types, llvm::SMLoc loc);
  /// Binds the carried names to `values` (block arguments or op results).
  void bindCarried(const std::vector<std::string> &names,
                   const std::vector<TritonType> &types,
                   mlir::ValueRange values);
  /// `a if cond else b` on a run-time scalar condition: an scf.if.
  std::optional<FValue> emitConditionalExpr(const IfExpExpr &expr,
                                            const FValue &cond);
  bool emitStaticFor(const ForStmt &stmt, const Expr &target,
                     const std::vector<FValue> &bounds);
  /// Emits `body` into a detached block with the current scope and returns
  /// the names it rebinds (that were bound before) — the values a structured
  /// op must carry. The block is then discarded.
  std::optional<std::vector<std::string>>
  probeRebound(const Block &body, const Expr *target, mlir::Type ivType);
  /// One probe of `body`, with `assumeRuntime` bound to run-time
  /// placeholders of the types the loop would carry them with.
  std::optional<std::vector<std::string>>
  probeOnce(const Block &body, const Expr *target, mlir::Type ivType,
            const std::vector<std::string> &assumeRuntime);
  /// The value `name` has after a region whose scope is `scope`, typed as
  /// `type` (compile-time numbers are materialized).
  std::optional<FValue> carriedValue(const Scope &scope, llvm::StringRef name,
                                     const TritonType &type, llvm::SMLoc loc);

  // Expressions.
  std::optional<FValue> evaluate(const Expr &expr);
  std::optional<FValue> evaluateCall(const CallExpr &expr);
  std::optional<FValue> evaluateCompare(const CompareExpr &expr);
  std::optional<FValue> evaluateBoolOp(const BoolOpExpr &expr);
  std::optional<FValue> evaluateSubscript(const SubscriptExpr &expr);
  std::optional<FValue> inlineCall(const FunctionDefStmt &function,
                                   CallArgs &args);
  bool isJit(const FunctionDefStmt &function);
  std::optional<bool> truthiness(const FValue &v, llvm::SMLoc loc);

  llvm::SourceMgr &sourceMgr;
  mlir::MLIRContext &context;
  const Module &module;
  mlir::OpBuilder builder;
  std::string filename;
  bool debug = false;

  llvm::StringMap<const Stmt *> globalDefs; // module-level name → statement
  llvm::StringMap<FValue> globals;          // evaluated module-level names
  llvm::StringMap<bool> evaluatingGlobals;

  std::vector<Scope> scopes; // innermost last; one per inlined function
  Scope probed;              // probeRebound's view of rebound names
  struct Frame {
    const FunctionDefStmt *function;
    llvm::SMLoc callLoc;
    std::optional<FValue> returnValue;
    bool returned = false;
  };
  std::vector<Frame> frames;

  static constexpr size_t kMaxInlineDepth = 64;
  size_t statementBudget = size_t(1) << 20;
  size_t statementsEmitted = 0;
};

} // namespace kiln::frontend

#endif // KILN_FRONTEND_EMITTER_H
