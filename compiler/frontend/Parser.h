//===- Parser.h - parser for the Python subset Triton kernels use ---------===//
#ifndef KILN_FRONTEND_PARSER_H
#define KILN_FRONTEND_PARSER_H

#include "compiler/frontend/AST.h"

#include <memory>

namespace llvm {
class SourceMgr;
}

namespace kiln::frontend {

/// Parses the main buffer of `sourceMgr`. On a syntax error, reports
/// `file:line:col: error: ...` with the source line and a caret through
/// `sourceMgr` and returns null.
std::unique_ptr<Module> parseModule(llvm::SourceMgr &sourceMgr);
/// Parses buffer `bufferId` of `sourceMgr` (a module another one imports).
std::unique_ptr<Module> parseModule(llvm::SourceMgr &sourceMgr,
                                    unsigned bufferId);

/// The call a decorator makes: itself for `@f(...)`; for `@name`, the value
/// of a module-level `name = f(...)` (`my_autotune = triton.autotune(...)`
/// then `@my_autotune`); null otherwise.
const CallExpr *decoratorCall(const Module &module, const Expr &decorator);

} // namespace kiln::frontend

#endif // KILN_FRONTEND_PARSER_H
