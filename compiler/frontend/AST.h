//===- AST.h - syntax tree of the Python subset ---------------------------===//
//
// The parser's output. Nodes own their children; every node keeps the source
// location of its first token (and binary operators the location of the
// operator) for diagnostics.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_AST_H
#define KILN_FRONTEND_AST_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/SMLoc.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::frontend {

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

class Expr {
public:
  enum class Kind {
    Name,
    Int,
    Float,
    String,
    Bool,
    None,
    Attribute,
    Call,
    Binary,
    Unary,
    Compare,
    BoolOp,
    IfExp,
    Subscript,
    Tuple,
    List,
    Dict,
    Slice,
    Lambda,
    Ellipsis,
    ListComp,
    Starred,
    FString,
  };
  Expr(Kind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
  virtual ~Expr() = default;
  Kind getKind() const { return kind; }
  llvm::SMLoc getLoc() const { return loc; }

private:
  Kind kind;
  llvm::SMLoc loc;
};
using ExprPtr = std::unique_ptr<Expr>;

template <Expr::Kind K> class ExprBase : public Expr {
public:
  explicit ExprBase(llvm::SMLoc loc) : Expr(K, loc) {}
  static bool classof(const Expr *e) { return e->getKind() == K; }
};

struct NameExpr : ExprBase<Expr::Kind::Name> {
  NameExpr(llvm::SMLoc loc, std::string name) : ExprBase(loc), name(name) {}
  std::string name;
};
struct IntExpr : ExprBase<Expr::Kind::Int> {
  IntExpr(llvm::SMLoc loc, std::string digits)
      : ExprBase(loc), digits(digits) {}
  std::string digits; // as written; the evaluator decides its width
};
struct FloatExpr : ExprBase<Expr::Kind::Float> {
  FloatExpr(llvm::SMLoc loc, double value) : ExprBase(loc), value(value) {}
  double value;
};
struct StringExpr : ExprBase<Expr::Kind::String> {
  StringExpr(llvm::SMLoc loc, std::string value)
      : ExprBase(loc), value(value) {}
  std::string value;
};
/// An f-string: literal text with the values of `fields` inserted, each
/// formatted as Python's "{}" (or "{!r}") formats it.
struct FStringExpr : ExprBase<Expr::Kind::FString> {
  struct Field {
    size_t offset; // where in `text` the value goes
    ExprPtr value;
    char conversion; // 'r', 's', 'a' or 0
  };
  FStringExpr(llvm::SMLoc loc, std::string text)
      : ExprBase(loc), text(std::move(text)) {}
  std::string text;
  std::vector<Field> fields; // in order of offset

  /// The text with `pieceOf(field)` inserted for each field; nullopt where
  /// a field has none (pieceOf has said why).
  template <typename PieceOf>
  std::optional<std::string> format(PieceOf &&pieceOf) const {
    std::string out;
    size_t at = 0;
    for (const Field &field : fields) {
      out += text.substr(at, field.offset - at);
      at = field.offset;
      std::optional<std::string> piece = pieceOf(field);
      if (!piece)
        return std::nullopt;
      out += *piece;
    }
    return out + text.substr(at);
  }
};
struct BoolExpr : ExprBase<Expr::Kind::Bool> {
  BoolExpr(llvm::SMLoc loc, bool value) : ExprBase(loc), value(value) {}
  bool value;
};
struct NoneExpr : ExprBase<Expr::Kind::None> {
  using ExprBase::ExprBase;
};
struct EllipsisExpr : ExprBase<Expr::Kind::Ellipsis> {
  using ExprBase::ExprBase;
};
struct AttributeExpr : ExprBase<Expr::Kind::Attribute> {
  AttributeExpr(llvm::SMLoc loc, ExprPtr value, std::string attr)
      : ExprBase(loc), value(std::move(value)), attr(attr) {}
  ExprPtr value;
  std::string attr;
};
/// `name=value` in a call; `**value` (a dict unpacked) has an empty name.
struct Keyword {
  llvm::SMLoc loc;
  std::string name;
  ExprPtr value;
};
/// `*value` among a call's positional arguments: the items of a tuple or
/// list, unpacked.
struct StarredExpr : ExprBase<Expr::Kind::Starred> {
  StarredExpr(llvm::SMLoc loc, ExprPtr value)
      : ExprBase(loc), value(std::move(value)) {}
  ExprPtr value;
};
struct CallExpr : ExprBase<Expr::Kind::Call> {
  CallExpr(llvm::SMLoc loc, ExprPtr callee)
      : ExprBase(loc), callee(std::move(callee)) {}
  ExprPtr callee;
  std::vector<ExprPtr> args;
  std::vector<Keyword> keywords;
};
struct BinaryExpr : ExprBase<Expr::Kind::Binary> {
  BinaryExpr(llvm::SMLoc loc, std::string op, ExprPtr lhs, ExprPtr rhs)
      : ExprBase(loc), op(op), lhs(std::move(lhs)), rhs(std::move(rhs)) {}
  std::string op; // + - * / // % ** << >> & | ^ @
  ExprPtr lhs, rhs;
};
struct UnaryExpr : ExprBase<Expr::Kind::Unary> {
  UnaryExpr(llvm::SMLoc loc, std::string op, ExprPtr operand)
      : ExprBase(loc), op(op), operand(std::move(operand)) {}
  std::string op; // - + ~ not
  ExprPtr operand;
};
/// `a < b <= c`: operands.size() == ops.size() + 1.
struct CompareExpr : ExprBase<Expr::Kind::Compare> {
  using ExprBase::ExprBase;
  std::vector<ExprPtr> operands;
  std::vector<std::string> ops; // < <= > >= == != is "is not" in "not in"
  std::vector<llvm::SMLoc> opLocs;
};
struct BoolOpExpr : ExprBase<Expr::Kind::BoolOp> {
  BoolOpExpr(llvm::SMLoc loc, bool isAnd) : ExprBase(loc), isAnd(isAnd) {}
  bool isAnd;
  std::vector<ExprPtr> operands;
};
struct IfExpExpr : ExprBase<Expr::Kind::IfExp> {
  using ExprBase::ExprBase;
  ExprPtr cond, thenValue, elseValue;
};
struct SubscriptExpr : ExprBase<Expr::Kind::Subscript> {
  using ExprBase::ExprBase;
  ExprPtr value;
  std::vector<ExprPtr> indices; // one per comma-separated item
};
struct SliceExpr : ExprBase<Expr::Kind::Slice> {
  using ExprBase::ExprBase;
  ExprPtr lower, upper, step; // each may be null
};
struct TupleExpr : ExprBase<Expr::Kind::Tuple> {
  using ExprBase::ExprBase;
  std::vector<ExprPtr> elements;
};
struct ListExpr : ExprBase<Expr::Kind::List> {
  using ExprBase::ExprBase;
  std::vector<ExprPtr> elements;
};
struct DictExpr : ExprBase<Expr::Kind::Dict> {
  using ExprBase::ExprBase;
  std::vector<ExprPtr> keys, values;
};
struct LambdaExpr : ExprBase<Expr::Kind::Lambda> {
  using ExprBase::ExprBase;
  std::vector<std::string> params;
  ExprPtr body;
};
/// One `for target in iter if cond ...` clause of a comprehension.
struct Comprehension {
  llvm::SMLoc loc; // of 'for'
  ExprPtr target, iter;
  std::vector<ExprPtr> conditions;
};
/// `[element for ... in ... if ...]`, the generator expression
/// `(element for ...)` (`all(k % 2 == 0 for k in ks)`), or the dict
/// comprehension `{key: element for ...}`: host code (autotune config
/// lists, heuristics, constexpr functions) uses them; kernels cannot.
struct ListCompExpr : ExprBase<Expr::Kind::ListComp> {
  using ExprBase::ExprBase;
  bool generator = false;
  ExprPtr key; // a dict comprehension's; null otherwise
  ExprPtr element;
  std::vector<Comprehension> generators;
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class Stmt {
public:
  enum class Kind {
    Expr,
    Assign,
    AugAssign,
    AnnAssign,
    Return,
    Pass,
    Break,
    Continue,
    If,
    For,
    While,
    FunctionDef,
    Import,
    ImportFrom,
    Assert,
    Try,
    Raise,
    ClassDef,
    Other,
  };
  Stmt(Kind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
  virtual ~Stmt() = default;
  Kind getKind() const { return kind; }
  llvm::SMLoc getLoc() const { return loc; }

private:
  Kind kind;
  llvm::SMLoc loc;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

template <Stmt::Kind K> class StmtBase : public Stmt {
public:
  explicit StmtBase(llvm::SMLoc loc) : Stmt(K, loc) {}
  static bool classof(const Stmt *s) { return s->getKind() == K; }
};

struct ExprStmt : StmtBase<Stmt::Kind::Expr> {
  using StmtBase::StmtBase;
  ExprPtr value;
};
/// `a = b = value`: every target receives the value.
struct AssignStmt : StmtBase<Stmt::Kind::Assign> {
  using StmtBase::StmtBase;
  std::vector<ExprPtr> targets;
  ExprPtr value;
};
struct AugAssignStmt : StmtBase<Stmt::Kind::AugAssign> {
  using StmtBase::StmtBase;
  std::string op; // the binary operator: + for +=
  ExprPtr target, value;
};
struct AnnAssignStmt : StmtBase<Stmt::Kind::AnnAssign> {
  using StmtBase::StmtBase;
  ExprPtr target, annotation, value; // value may be null
};
struct ReturnStmt : StmtBase<Stmt::Kind::Return> {
  using StmtBase::StmtBase;
  ExprPtr value; // may be null
};
struct PassStmt : StmtBase<Stmt::Kind::Pass> {
  using StmtBase::StmtBase;
};
struct BreakStmt : StmtBase<Stmt::Kind::Break> {
  using StmtBase::StmtBase;
};
struct ContinueStmt : StmtBase<Stmt::Kind::Continue> {
  using StmtBase::StmtBase;
};
struct IfStmt : StmtBase<Stmt::Kind::If> {
  using StmtBase::StmtBase;
  ExprPtr cond;
  Block thenBody, elseBody; // elif is an If inside elseBody
};
struct ForStmt : StmtBase<Stmt::Kind::For> {
  using StmtBase::StmtBase;
  ExprPtr target, iter;
  Block body, elseBody;
};
struct WhileStmt : StmtBase<Stmt::Kind::While> {
  using StmtBase::StmtBase;
  ExprPtr cond;
  Block body, elseBody;
};
struct AssertStmt : StmtBase<Stmt::Kind::Assert> {
  using StmtBase::StmtBase;
  ExprPtr cond, message;
};
struct Param {
  llvm::SMLoc loc;
  std::string name;
  ExprPtr annotation;   // may be null
  ExprPtr defaultValue; // may be null
};
struct FunctionDefStmt : StmtBase<Stmt::Kind::FunctionDef> {
  using StmtBase::StmtBase;
  std::string name;
  llvm::SMLoc nameLoc;
  std::vector<ExprPtr> decorators;
  std::vector<Param> params;
  /// Host functions only (a @triton.jit function cannot have them):
  /// `*args` and `**kwargs` (empty names when absent), and the index of the
  /// first keyword-only parameter (those after `*` or `*args`).
  std::string varArgs, kwArgs;
  size_t keywordOnlyFrom = SIZE_MAX;
  ExprPtr returns; // may be null
  Block body;
};
/// `import a.b as c`: one alias per imported module.
struct ImportStmt : StmtBase<Stmt::Kind::Import> {
  using StmtBase::StmtBase;
  std::vector<std::pair<std::string, std::string>> modules; // (dotted, alias)
};
/// `from a.b import c as d, e`.
struct ImportFromStmt : StmtBase<Stmt::Kind::ImportFrom> {
  using StmtBase::StmtBase;
  std::string module;
  std::vector<std::pair<std::string, std::string>> names; // (name, alias)
};
/// `try: ... except T as e: ... else: ... finally: ...` (module-level code
/// only: kernels cannot catch exceptions).
struct TryStmt : StmtBase<Stmt::Kind::Try> {
  using StmtBase::StmtBase;
  struct Handler {
    ExprPtr type; // may be null (bare except)
    std::string name;
    Block body;
  };
  Block body;
  std::vector<Handler> handlers;
  Block elseBody, finallyBody;
};
/// `raise EXC`: an error where a kernel reaches it.
struct RaiseStmt : StmtBase<Stmt::Kind::Raise> {
  using StmtBase::StmtBase;
  ExprPtr exception; // may be null
};
/// A module-level `class NAME(...):`, a namespace of functions: its
/// @triton.jit static methods (trident's kernels, launched as
/// `Ops.kernel[grid](...)`) and the rest of its body, host code kept as in a
/// module.
struct ClassDefStmt : StmtBase<Stmt::Kind::ClassDef> {
  using StmtBase::StmtBase;
  std::string name;
  Block body;
};
/// A module-level statement Kiln does not interpret (try, with, ...),
/// or host code it cannot parse: kept so that using a name it defines gives a
/// clear error.
struct OtherStmt : StmtBase<Stmt::Kind::Other> {
  using StmtBase::StmtBase;
  std::string what;
  std::vector<std::string> definedNames;
  /// For code that does not parse: the parser's first error, reported only
  /// if a kernel or its decorators use a name the statement defines (as
  /// upstream parses a jit function when it is first compiled).
  llvm::SMLoc syntaxErrorLoc;
  std::string syntaxError;
  /// Whether the statement is a @jit definition (its error is the user's
  /// kernel code's, reported as an error where used).
  bool jitDefinition = false;
};

/// A parsed source file.
struct Module {
  std::string filename;
  Block body;
};

} // namespace kiln::frontend

#endif // KILN_FRONTEND_AST_H
