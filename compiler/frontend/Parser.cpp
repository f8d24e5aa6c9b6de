//===- Parser.cpp - parser for the Python subset Triton kernels use -------===//
//
// Recursive descent over the token stream, following Python's grammar for
// the statements and expressions kernels use. Module-level compound
// statements Kiln never interprets (class, with, try, ...) are skipped whole
// and recorded, so host code beside kernels does not stop the build. So is a
// module-level statement outside the subset (`def f(*args)`, a generator
// expression, ...) unless it is a @triton.jit function: its syntax error is
// kept and reported only if a kernel uses a name the statement defines.
//
//===----------------------------------------------------------------------===//
#include "compiler/frontend/Parser.h"

#include "compiler/frontend/Lexer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdlib>
#include <functional>

using namespace kiln::frontend;
using llvm::SMLoc;
using llvm::StringRef;

namespace {

class Parser {
public:
  Parser(llvm::SourceMgr &sourceMgr, std::vector<Token> tokens,
         unsigned bufferId)
      : sourceMgr(sourceMgr), tokens(std::move(tokens)), bufferId(bufferId) {}

  std::unique_ptr<Module> parse();

private:
  // Token access.
  const Token &tok() const { return tokens[pos]; }
  const Token &peek(size_t n = 1) const {
    return tokens[std::min(pos + n, tokens.size() - 1)];
  }
  void advance() {
    if (pos + 1 < tokens.size())
      ++pos;
  }
  bool consumeOp(StringRef op) {
    if (!tok().isOp(op))
      return false;
    advance();
    return true;
  }
  bool consumeKeyword(StringRef word) {
    if (!tok().isKeyword(word))
      return false;
    advance();
    return true;
  }
  bool expectOp(StringRef op, StringRef context);
  bool expectNewline();
  /// Records the first error; parse() reports it, or defers it for host
  /// code.
  bool error(SMLoc loc, const llvm::Twine &message) {
    if (!failed) {
      errorLoc = loc;
      errorMessage = message.str();
    }
    failed = true;
    return false;
  }
  std::string describe(const Token &t) const;

  // Statements.
  bool parseStatement(Block &out, bool topLevel);
  bool parseSimpleStatements(Block &out);
  StmtPtr parseSimpleStatement();
  bool parseBlock(Block &out);
  StmtPtr parseFunctionDef(std::vector<ExprPtr> decorators);
  StmtPtr parseIf();
  StmtPtr parseFor();
  StmtPtr parseWhile();
  StmtPtr parseImport();
  StmtPtr parseImportFrom();
  StmtPtr parseTry();
  StmtPtr parseRaise();
  StmtPtr parseClass();
  bool parseModuleLevel(Block &out, bool classBody);
  StmtPtr skipCompound(StringRef what);
  bool isStatementKeyword(const Token &t) const;
  bool isJitDefinition(size_t start) const;
  StmtPtr skipUnparsed(size_t start);

  // Expressions.
  ExprPtr parseTestList(bool allowTrailingTuple = true);
  ExprPtr parseTest();
  ExprPtr parseFormatField(const FormatField &field);
  ExprPtr parseOrTest();
  ExprPtr parseAndTest();
  ExprPtr parseNotTest();
  ExprPtr parseComparison();
  ExprPtr parseBinary(int level);
  ExprPtr parseFactor();
  ExprPtr parsePower();
  ExprPtr parseAtomWithTrailers();
  ExprPtr parseAtom();
  ExprPtr parseSubscriptItem();
  bool parseCallArguments(CallExpr &call);
  bool parseComprehension(ListCompExpr &comp);
  std::string dottedName();

  /// Bounds recursion: nesting deeper than kMaxDepth is an error, not a
  /// stack overflow.
  struct DepthGuard {
    Parser &parser;
    explicit DepthGuard(Parser &parser) : parser(parser) { ++parser.depth; }
    ~DepthGuard() { --parser.depth; }
    bool tooDeep() { return tooDeep(parser); }
    static bool tooDeep(Parser &parser) {
      if (parser.depth <= kMaxDepth)
        return false;
      parser.error(parser.tok().loc, "too deeply nested (more than " +
                                         llvm::Twine(kMaxDepth) + " levels)");
      return true;
    }
  };
  /// Left-associative chains (`a + b + c`, `x[0][1]`, `a.b.c`) are built in a
  /// loop but nest one tree level per link, and the emitter recurses over the
  /// tree: each link counts as a level until the chain is done.
  struct ChainDepth {
    Parser &parser;
    unsigned links = 0;
    explicit ChainDepth(Parser &parser) : parser(parser) {}
    ~ChainDepth() { parser.depth -= links; }
    bool tooDeep() {
      ++links;
      ++parser.depth;
      return DepthGuard::tooDeep(parser);
    }
  };
  static constexpr unsigned kMaxDepth = 200;

  llvm::SourceMgr &sourceMgr;
  std::vector<Token> tokens;
  size_t pos = 0;
  bool failed = false;
  // A @triton.jit definition failed to parse (its error printed): the
  // module does not parse, wherever the definition is.
  bool fatal = false;
  SMLoc errorLoc;
  std::string errorMessage;
  unsigned depth = 0;
  unsigned bufferId;
  unsigned functionDepth = 0; // enclosing defs: 0 is module-level code
};

} // namespace

std::string Parser::describe(const Token &t) const {
  switch (t.kind) {
  case TokenKind::Newline:
    return "end of line";
  case TokenKind::Indent:
    return "indentation";
  case TokenKind::Dedent:
    return "dedent";
  case TokenKind::Eof:
    return "end of file";
  default:
    return ("'" + t.text + "'").str();
  }
}

bool Parser::expectOp(StringRef op, StringRef context) {
  if (consumeOp(op))
    return true;
  return error(tok().loc, "expected '" + op + "' " + context + ", found " +
                              describe(tok()));
}

bool Parser::expectNewline() {
  if (tok().is(TokenKind::Newline)) {
    advance();
    return true;
  }
  if (tok().is(TokenKind::Eof) || tok().is(TokenKind::Dedent))
    return true;
  return error(tok().loc,
               "expected end of statement, found " + describe(tok()));
}

// `f = wrap(f)` at module level, after `def f`: Python's decorator applied
// by hand (`k = my_autotune(k)`, `k = triton.heuristics({...})(k)`), often
// under a platform `if`. The call becomes f's outermost decorator and the
// assignment goes, so that f stays the jit function kernels and the readers
// of decorators (autotune configs, heuristics) see.
static void
applyDecoratorsByAssignment(Block &block,
                            llvm::StringMap<FunctionDefStmt *> &defs) {
  for (auto it = block.begin(); it != block.end();) {
    Stmt *stmt = it->get();
    if (auto *def = llvm::dyn_cast<FunctionDefStmt>(stmt)) {
      defs[def->name] = def;
    } else if (auto *ifStmt = llvm::dyn_cast<IfStmt>(stmt)) {
      applyDecoratorsByAssignment(ifStmt->thenBody, defs);
      applyDecoratorsByAssignment(ifStmt->elseBody, defs);
    } else if (auto *tryStmt = llvm::dyn_cast<TryStmt>(stmt)) {
      applyDecoratorsByAssignment(tryStmt->body, defs);
      for (TryStmt::Handler &handler : tryStmt->handlers)
        applyDecoratorsByAssignment(handler.body, defs);
      applyDecoratorsByAssignment(tryStmt->elseBody, defs);
      applyDecoratorsByAssignment(tryStmt->finallyBody, defs);
    } else if (auto *assign = llvm::dyn_cast<AssignStmt>(stmt)) {
      auto *target = assign->targets.size() == 1
                         ? llvm::dyn_cast<NameExpr>(assign->targets[0].get())
                         : nullptr;
      auto *call = llvm::dyn_cast_or_null<CallExpr>(assign->value.get());
      auto *arg = call && call->args.size() == 1 && call->keywords.empty()
                      ? llvm::dyn_cast<NameExpr>(call->args[0].get())
                      : nullptr;
      auto def = target ? defs.find(target->name) : defs.end();
      if (arg && def != defs.end() && arg->name == target->name) {
        std::vector<ExprPtr> &decorators = def->second->decorators;
        decorators.insert(decorators.begin(), std::move(call->callee));
        it = block.erase(it);
        continue;
      }
      for (const ExprPtr &t : assign->targets)
        if (auto *name = llvm::dyn_cast<NameExpr>(t.get()))
          defs.erase(name->name);
    }
    ++it;
  }
}

std::unique_ptr<Module> Parser::parse() {
  auto module = std::make_unique<Module>();
  module->filename =
      sourceMgr.getMemoryBuffer(bufferId)->getBufferIdentifier().str();
  if (!parseModuleLevel(module->body, /*classBody=*/false))
    return nullptr;
  llvm::StringMap<FunctionDefStmt *> defs;
  applyDecoratorsByAssignment(module->body, defs);
  return module;
}

const CallExpr *kiln::frontend::decoratorCall(const Module &module,
                                              const Expr &decorator) {
  if (auto *call = llvm::dyn_cast<CallExpr>(&decorator))
    return call;
  auto *name = llvm::dyn_cast<NameExpr>(&decorator);
  if (!name)
    return nullptr;
  // The last module-level `name = f(...)` (branches of module-level if/try
  // included): `my_autotune = triton.autotune(configs=..., key=...)`.
  const CallExpr *found = nullptr;
  std::function<void(const Block &)> visit = [&](const Block &block) {
    for (const StmtPtr &stmt : block) {
      if (auto *assign = llvm::dyn_cast<AssignStmt>(stmt.get())) {
        if (assign->targets.size() == 1)
          if (auto *target = llvm::dyn_cast<NameExpr>(assign->targets[0].get()))
            if (target->name == name->name)
              found = llvm::dyn_cast<CallExpr>(assign->value.get());
      } else if (auto *ifStmt = llvm::dyn_cast<IfStmt>(stmt.get())) {
        visit(ifStmt->thenBody);
        visit(ifStmt->elseBody);
      } else if (auto *tryStmt = llvm::dyn_cast<TryStmt>(stmt.get())) {
        visit(tryStmt->body);
        for (const TryStmt::Handler &handler : tryStmt->handlers)
          visit(handler.body);
      }
    }
  };
  visit(module.body);
  return found;
}

// Module-level statements, up to the end of the file or of a class body
// (its dedent). False after a @triton.jit definition that does not parse.
bool Parser::parseModuleLevel(Block &out, bool classBody) {
  while (!tok().is(TokenKind::Eof)) {
    if (classBody && tok().is(TokenKind::Dedent)) {
      advance();
      return true;
    }
    if (tok().is(TokenKind::Newline)) {
      advance();
      continue;
    }
    if (tok().is(TokenKind::Indent)) {
      sourceMgr.PrintMessage(tok().loc, llvm::SourceMgr::DK_Error,
                             "unexpected indent");
      fatal = true;
      return false;
    }
    size_t start = pos, statements = out.size();
    if (parseStatement(out, /*topLevel=*/true))
      continue;
    if (fatal)
      return false;
    // Host code outside the subset, or a jit function that does not parse:
    // skipped, its error kept for where a kernel uses it, so that one
    // function Kiln cannot read does not fail the file's other kernels.
    bool jit = isJitDefinition(start);
    out.resize(statements);
    out.push_back(skipUnparsed(start));
    llvm::cast<OtherStmt>(*out.back()).jitDefinition = jit;
    failed = false;
  }
  return true;
}

// `class NAME(BASES):` at module level: its body is parsed as module-level
// code (its @triton.jit static methods are kernels and helpers). A class
// written otherwise (on one line) is host code, skipped by the caller.
StmtPtr Parser::parseClass() {
  auto stmt = std::make_unique<ClassDefStmt>(tok().loc);
  advance(); // class
  if (!tok().is(TokenKind::Name)) {
    error(tok().loc, "expected a class name, found " + describe(tok()));
    return nullptr;
  }
  stmt->name = tok().text.str();
  advance();
  if (tok().isOp("(")) {
    int depth = 0;
    do {
      if (tok().isOp("("))
        ++depth;
      else if (tok().isOp(")"))
        --depth;
      advance();
    } while (depth > 0 && !tok().is(TokenKind::Eof));
  }
  if (!expectOp(":", "after the class name"))
    return nullptr;
  if (!tok().is(TokenKind::Newline) || !peek().is(TokenKind::Indent)) {
    error(tok().loc, "expected the class body on the lines below");
    return nullptr;
  }
  advance();
  advance();
  if (!parseModuleLevel(stmt->body, /*classBody=*/true))
    return nullptr;
  return stmt;
}

// Whether the statement at `start` defines a function decorated with
// anything named `jit` (triton.jit, jit, triton.jit(...)): kernel code, whose
// syntax errors are always reported.
bool Parser::isJitDefinition(size_t start) const {
  bool decorated = false;
  for (size_t i = start; i < tokens.size(); ++i) {
    const Token &t = tokens[i];
    if (t.isOp("@"))
      decorated = true;
    else if (!decorated)
      return false;
    else if (t.isKeyword("jit"))
      return true;
    else if (t.isKeyword("def") || t.isKeyword("class") ||
             t.is(TokenKind::Indent) || t.is(TokenKind::Eof))
      return false;
  }
  return false;
}

// Skips the module-level statement at `start` (its decorators, its line and
// its indented blocks, with elif/else/except/finally clauses) and records it
// with the names it would define and its syntax error.
StmtPtr Parser::skipUnparsed(size_t start) {
  pos = start;
  SMLoc loc = tok().loc;
  while (tok().isOp("@")) { // decorator lines
    while (!tok().is(TokenKind::Newline) && !tok().is(TokenKind::Eof))
      advance();
    advance();
  }
  auto stmt = std::make_unique<OtherStmt>(loc);
  stmt->what = "host code";
  stmt->syntaxErrorLoc = errorLoc;
  stmt->syntaxError = errorMessage;
  if ((tok().isKeyword("def") || tok().isKeyword("class")) &&
      peek().is(TokenKind::Name)) {
    stmt->definedNames.push_back(peek().text.str());
  } else {
    // `a = ...`, `a, b = ...`, `a: T = ...`: the names before the first '='.
    std::vector<std::string> names;
    size_t i = pos;
    for (; tokens[i].is(TokenKind::Name) || tokens[i].isOp(","); ++i)
      if (tokens[i].is(TokenKind::Name))
        names.push_back(tokens[i].text.str());
    if (tokens[i].isOp("=") || tokens[i].isOp(":"))
      stmt->definedNames = std::move(names);
  }
  int level = 0;
  while (!tok().is(TokenKind::Eof)) {
    if (tok().is(TokenKind::Indent)) {
      ++level;
    } else if (tok().is(TokenKind::Dedent)) {
      if (--level == 0) {
        advance();
        if (tok().isKeyword("elif") || tok().isKeyword("else") ||
            tok().isKeyword("except") || tok().isKeyword("finally"))
          continue;
        break;
      }
    } else if (tok().is(TokenKind::Newline) && level == 0 &&
               !peek().is(TokenKind::Indent)) {
      advance();
      break;
    }
    advance();
  }
  return stmt;
}

bool Parser::isStatementKeyword(const Token &t) const {
  static const char *const kSkipped[] = {"class", "with",   "try",
                                         "async", "global", "nonlocal",
                                         "del",   "yield",  "await"};
  return t.kind == TokenKind::Name && llvm::is_contained(kSkipped, t.text);
}

bool Parser::parseStatement(Block &out, bool topLevel) {
  DepthGuard guard(*this);
  if (guard.tooDeep())
    return false;
  const Token &t = tok();
  if (t.isOp("@")) {
    std::vector<ExprPtr> decorators;
    while (consumeOp("@")) {
      ExprPtr d = parseTest();
      if (!d || !expectNewline())
        return false;
      decorators.push_back(std::move(d));
    }
    if (!tok().isKeyword("def")) {
      if (topLevel && tok().isKeyword("class")) {
        StmtPtr cls = parseClass();
        if (!cls)
          return false;
        out.push_back(std::move(cls));
        return true;
      }
      return error(tok().loc,
                   "expected 'def' after decorator, found " + describe(tok()));
    }
    StmtPtr def = parseFunctionDef(std::move(decorators));
    if (!def)
      return false;
    out.push_back(std::move(def));
    return true;
  }
  StmtPtr stmt;
  if (t.isKeyword("def"))
    stmt = parseFunctionDef({});
  else if (t.isKeyword("if"))
    stmt = parseIf();
  else if (t.isKeyword("for"))
    stmt = parseFor();
  else if (t.isKeyword("while"))
    stmt = parseWhile();
  else if (t.isKeyword("try")) // in host functions too; kernels reject it
    stmt = parseTry();
  else if (t.isKeyword("class") && topLevel && functionDepth == 0)
    stmt = parseClass();
  else if (isStatementKeyword(t)) {
    if (!topLevel &&
        (functionDepth > 0 || t.isKeyword("yield") || t.isKeyword("await")))
      return error(t.loc, "'" + t.text +
                              "' statements are not supported in "
                              "Triton kernels");
    stmt = skipCompound(t.text);
  } else
    return parseSimpleStatements(out);
  if (!stmt)
    return false;
  out.push_back(std::move(stmt));
  return true;
}

// `try:` with its except/else/finally clauses: in module-level code (where
// imports fall back: `try: from A import f` / `except ImportError: ...`)
// and host functions (`try: return target.backend / except: return "cpu"`).
StmtPtr Parser::parseTry() {
  auto stmt = std::make_unique<TryStmt>(tok().loc);
  advance(); // try
  if (!parseBlock(stmt->body))
    return nullptr;
  while (tok().isKeyword("except")) {
    advance();
    TryStmt::Handler handler;
    if (!tok().isOp(":")) {
      handler.type = parseTest();
      if (!handler.type)
        return nullptr;
      if (consumeKeyword("as")) {
        if (!tok().is(TokenKind::Name)) {
          error(tok().loc, "expected a name after 'as'");
          return nullptr;
        }
        handler.name = tok().text.str();
        advance();
      }
    }
    if (!parseBlock(handler.body))
      return nullptr;
    stmt->handlers.push_back(std::move(handler));
  }
  if (consumeKeyword("else") && !parseBlock(stmt->elseBody))
    return nullptr;
  if (consumeKeyword("finally") && !parseBlock(stmt->finallyBody))
    return nullptr;
  if (stmt->handlers.empty() && stmt->finallyBody.empty()) {
    error(stmt->getLoc(), "'try' needs an 'except' or 'finally' clause");
    return nullptr;
  }
  return stmt;
}

// `raise [EXC [from CAUSE]]`: an error only where a kernel reaches it (a
// branch that constexpr evaluation removes is never emitted).
StmtPtr Parser::parseRaise() {
  auto stmt = std::make_unique<RaiseStmt>(tok().loc);
  advance(); // raise
  if (!tok().is(TokenKind::Newline) && !tok().is(TokenKind::Eof) &&
      !tok().isOp(";")) {
    stmt->exception = parseTest();
    if (!stmt->exception)
      return nullptr;
    if (consumeKeyword("from") && !parseTest())
      return nullptr;
  }
  return stmt;
}

// Skips a statement Kiln does not interpret, with its indented body if any.
StmtPtr Parser::skipCompound(StringRef what) {
  auto stmt = std::make_unique<OtherStmt>(tok().loc);
  stmt->what = what.str();
  if (what == "class" && peek().is(TokenKind::Name))
    stmt->definedNames.push_back(peek().text.str());
  int depth = 0;
  while (!tok().is(TokenKind::Eof)) {
    if (tok().is(TokenKind::Indent))
      ++depth;
    else if (tok().is(TokenKind::Dedent)) {
      --depth;
      if (depth == 0) {
        advance();
        // Continuation clauses of try/with at the same level.
        if (tok().isKeyword("except") || tok().isKeyword("finally") ||
            tok().isKeyword("else"))
          continue;
        break;
      }
    } else if (tok().is(TokenKind::Newline) && depth == 0 &&
               !peek().is(TokenKind::Indent)) {
      advance();
      break;
    }
    advance();
  }
  return stmt;
}

bool Parser::parseSimpleStatements(Block &out) {
  while (true) {
    StmtPtr stmt = parseSimpleStatement();
    if (!stmt)
      return false;
    out.push_back(std::move(stmt));
    if (!consumeOp(";"))
      break;
    if (tok().is(TokenKind::Newline))
      break;
  }
  return expectNewline();
}

StmtPtr Parser::parseSimpleStatement() {
  SMLoc loc = tok().loc;
  if (tok().isKeyword("raise"))
    return parseRaise();
  if (consumeKeyword("pass"))
    return std::make_unique<PassStmt>(loc);
  if (consumeKeyword("break"))
    return std::make_unique<BreakStmt>(loc);
  if (consumeKeyword("continue"))
    return std::make_unique<ContinueStmt>(loc);
  if (tok().isKeyword("import"))
    return parseImport();
  if (tok().isKeyword("from"))
    return parseImportFrom();
  if (consumeKeyword("return")) {
    auto ret = std::make_unique<ReturnStmt>(loc);
    if (!tok().is(TokenKind::Newline) && !tok().isOp(";") &&
        !tok().is(TokenKind::Eof)) {
      ret->value = parseTestList();
      if (!ret->value)
        return nullptr;
    }
    return ret;
  }
  if (consumeKeyword("assert")) {
    auto stmt = std::make_unique<AssertStmt>(loc);
    stmt->cond = parseTest();
    if (!stmt->cond)
      return nullptr;
    if (consumeOp(",")) {
      stmt->message = parseTest();
      if (!stmt->message)
        return nullptr;
    }
    return stmt;
  }

  ExprPtr first = parseTestList();
  if (!first)
    return nullptr;
  // Annotated assignment: `x: T = value`.
  if (tok().isOp(":")) {
    advance();
    auto stmt = std::make_unique<AnnAssignStmt>(loc);
    stmt->target = std::move(first);
    stmt->annotation = parseTest();
    if (!stmt->annotation)
      return nullptr;
    if (consumeOp("=")) {
      stmt->value = parseTestList();
      if (!stmt->value)
        return nullptr;
    }
    return stmt;
  }
  // Augmented assignment.
  static const char *const kAugOps[] = {
      "+=",  "-=",  "*=", "/=", "//=", "%=", "**=",
      "<<=", ">>=", "&=", "|=", "^=",  "@="};
  for (const char *op : kAugOps) {
    if (tok().isOp(op)) {
      auto stmt = std::make_unique<AugAssignStmt>(tok().loc);
      advance();
      stmt->op = StringRef(op).drop_back().str();
      stmt->target = std::move(first);
      stmt->value = parseTestList();
      if (!stmt->value)
        return nullptr;
      return stmt;
    }
  }
  if (tok().isOp("=")) {
    auto stmt = std::make_unique<AssignStmt>(loc);
    stmt->targets.push_back(std::move(first));
    while (consumeOp("=")) {
      ExprPtr next = parseTestList();
      if (!next)
        return nullptr;
      stmt->targets.push_back(std::move(next));
    }
    stmt->value = std::move(stmt->targets.back());
    stmt->targets.pop_back();
    return stmt;
  }
  auto stmt = std::make_unique<ExprStmt>(loc);
  stmt->value = std::move(first);
  return stmt;
}

bool Parser::parseBlock(Block &out) {
  if (!expectOp(":", "to open a block"))
    return false;
  if (!tok().is(TokenKind::Newline))
    return parseSimpleStatements(out); // `if x: y = 1`
  advance();
  if (!tok().is(TokenKind::Indent))
    return error(tok().loc, "expected an indented block");
  advance();
  while (!tok().is(TokenKind::Dedent) && !tok().is(TokenKind::Eof)) {
    if (tok().is(TokenKind::Newline)) {
      advance();
      continue;
    }
    size_t start = pos, statements = out.size();
    if (parseStatement(out, /*topLevel=*/false))
      continue;
    // Host code outside the subset inside module-level code (a host
    // function's set comprehension under `if has_triton():`): skipped as at
    // the top level, so that the kernels beside it stay; a kernel's own
    // syntax error is reported where the kernel is used.
    if (functionDepth > 0)
      return false;
    bool jit = isJitDefinition(start);
    out.resize(statements);
    out.push_back(skipUnparsed(start));
    llvm::cast<OtherStmt>(*out.back()).jitDefinition = jit;
    failed = false;
  }
  if (tok().is(TokenKind::Dedent))
    advance();
  return true;
}

StmtPtr Parser::parseFunctionDef(std::vector<ExprPtr> decorators) {
  auto def = std::make_unique<FunctionDefStmt>(tok().loc);
  advance(); // def
  if (!tok().is(TokenKind::Name)) {
    error(tok().loc, "expected a function name after 'def'");
    return nullptr;
  }
  def->name = tok().text.str();
  def->nameLoc = tok().loc;
  def->decorators = std::move(decorators);
  advance();
  if (!expectOp("(", "after the function name"))
    return nullptr;
  // Whether a decorator names `jit`: kernel code, where `*args` and the
  // like are errors.
  bool jit = false;
  for (const ExprPtr &d : def->decorators) {
    const Expr *e = d.get();
    if (auto *call = llvm::dyn_cast<CallExpr>(e))
      e = call->callee.get();
    if (auto *attr = llvm::dyn_cast<AttributeExpr>(e))
      jit |= attr->attr == "jit";
    else if (auto *name = llvm::dyn_cast<NameExpr>(e))
      jit |= name->name == "jit";
  }
  while (!tok().isOp(")")) {
    if (tok().isOp("*") || tok().isOp("**") || tok().isOp("/")) {
      if (jit || functionDepth > 0) {
        error(tok().loc, "'" + tok().text +
                             "' parameters are not supported in Triton "
                             "kernels");
        return nullptr;
      }
      // Host code: `*args`, a bare `*`, `**kwargs`, `/`.
      std::string marker = tok().text.str();
      advance();
      if (marker != "/" && tok().is(TokenKind::Name)) {
        (marker == "*" ? def->varArgs : def->kwArgs) = tok().text.str();
        advance();
        if (consumeOp(":") && !parseTest())
          return nullptr;
      }
      if (marker == "*")
        def->keywordOnlyFrom = def->params.size();
      if (!consumeOp(","))
        break;
      continue;
    }
    if (!tok().is(TokenKind::Name)) {
      error(tok().loc, "expected a parameter name, found " + describe(tok()));
      return nullptr;
    }
    Param param;
    param.loc = tok().loc;
    param.name = tok().text.str();
    advance();
    if (consumeOp(":")) {
      param.annotation = parseTest();
      if (!param.annotation)
        return nullptr;
    }
    if (consumeOp("=")) {
      param.defaultValue = parseTest();
      if (!param.defaultValue)
        return nullptr;
    }
    def->params.push_back(std::move(param));
    if (!consumeOp(","))
      break;
  }
  if (!expectOp(")", "to close the parameter list"))
    return nullptr;
  if (consumeOp("->")) {
    def->returns = parseTest();
    if (!def->returns)
      return nullptr;
  }
  ++functionDepth;
  bool parsed = parseBlock(def->body);
  --functionDepth;
  if (!parsed)
    return nullptr;
  return def;
}

StmtPtr Parser::parseIf() {
  auto stmt = std::make_unique<IfStmt>(tok().loc);
  advance(); // if / elif
  stmt->cond = parseTest();
  if (!stmt->cond || !parseBlock(stmt->thenBody))
    return nullptr;
  if (tok().isKeyword("elif")) {
    StmtPtr elif = parseIf();
    if (!elif)
      return nullptr;
    stmt->elseBody.push_back(std::move(elif));
  } else if (consumeKeyword("else")) {
    if (!parseBlock(stmt->elseBody))
      return nullptr;
  }
  return stmt;
}

StmtPtr Parser::parseFor() {
  auto stmt = std::make_unique<ForStmt>(tok().loc);
  advance();
  // The target is an expression list up to 'in' (no comparisons).
  auto target = std::make_unique<TupleExpr>(tok().loc);
  do {
    ExprPtr e = parseBinary(0);
    if (!e)
      return nullptr;
    target->elements.push_back(std::move(e));
  } while (consumeOp(","));
  stmt->target = target->elements.size() == 1 ? std::move(target->elements[0])
                                              : std::move(target);
  if (!consumeKeyword("in")) {
    error(tok().loc,
          "expected 'in' in for statement, found " + describe(tok()));
    return nullptr;
  }
  stmt->iter = parseTestList();
  if (!stmt->iter || !parseBlock(stmt->body))
    return nullptr;
  if (consumeKeyword("else") && !parseBlock(stmt->elseBody))
    return nullptr;
  return stmt;
}

StmtPtr Parser::parseWhile() {
  auto stmt = std::make_unique<WhileStmt>(tok().loc);
  advance();
  stmt->cond = parseTest();
  if (!stmt->cond || !parseBlock(stmt->body))
    return nullptr;
  if (consumeKeyword("else") && !parseBlock(stmt->elseBody))
    return nullptr;
  return stmt;
}

std::string Parser::dottedName() {
  std::string name;
  while (true) {
    if (!tok().is(TokenKind::Name)) {
      error(tok().loc, "expected a module name, found " + describe(tok()));
      return "";
    }
    name += tok().text.str();
    advance();
    if (!consumeOp("."))
      return name;
    name += ".";
  }
}

StmtPtr Parser::parseImport() {
  auto stmt = std::make_unique<ImportStmt>(tok().loc);
  advance();
  do {
    std::string module = dottedName();
    if (module.empty())
      return nullptr;
    std::string alias = module.substr(0, module.find('.'));
    if (consumeKeyword("as")) {
      if (!tok().is(TokenKind::Name)) {
        error(tok().loc, "expected a name after 'as'");
        return nullptr;
      }
      alias = tok().text.str();
      advance();
    }
    stmt->modules.push_back({module, alias});
  } while (consumeOp(","));
  return stmt;
}

StmtPtr Parser::parseImportFrom() {
  auto stmt = std::make_unique<ImportFromStmt>(tok().loc);
  advance();
  std::string prefix;
  // The lexer reads `...` as one token (Ellipsis): `from ...pkg import x`
  // and `from ....pkg import x` climb three and four packages.
  while (tok().isOp(".") || tok().isOp("...")) {
    prefix += tok().isOp("...") ? "..." : ".";
    advance();
  }
  // `from . import x`: no module name after the dots.
  stmt->module =
      prefix + (tok().is(TokenKind::Name) && !tok().isKeyword("import")
                    ? dottedName()
                    : "");
  if (failed)
    return nullptr;
  if (!consumeKeyword("import")) {
    error(tok().loc, "expected 'import', found " + describe(tok()));
    return nullptr;
  }
  bool paren = consumeOp("(");
  do {
    if (paren && tok().isOp(")"))
      break;
    if (tok().isOp("*")) {
      stmt->names.push_back({"*", "*"});
      advance();
      continue;
    }
    if (!tok().is(TokenKind::Name)) {
      error(tok().loc, "expected a name to import, found " + describe(tok()));
      return nullptr;
    }
    std::string name = tok().text.str(), alias = name;
    advance();
    if (consumeKeyword("as")) {
      alias = tok().text.str();
      advance();
    }
    stmt->names.push_back({name, alias});
  } while (consumeOp(","));
  if (paren && !expectOp(")", "to close the import list"))
    return nullptr;
  return stmt;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

// A comma-separated list of tests; more than one (or a trailing comma)
// makes a tuple.
ExprPtr Parser::parseTestList(bool allowTrailingTuple) {
  SMLoc loc = tok().loc;
  ExprPtr first = parseTest();
  if (!first || !tok().isOp(","))
    return first;
  auto tuple = std::make_unique<TupleExpr>(loc);
  tuple->elements.push_back(std::move(first));
  while (consumeOp(",")) {
    if (tok().is(TokenKind::Newline) || tok().isOp("=") || tok().isOp(")") ||
        tok().isOp(":") || tok().is(TokenKind::Eof))
      break;
    ExprPtr e = parseTest();
    if (!e)
      return nullptr;
    tuple->elements.push_back(std::move(e));
  }
  (void)allowTrailingTuple;
  return tuple;
}

ExprPtr Parser::parseTest() {
  DepthGuard guard(*this);
  if (guard.tooDeep())
    return nullptr;
  SMLoc loc = tok().loc;
  if (consumeKeyword("lambda")) {
    auto lambda = std::make_unique<LambdaExpr>(loc);
    while (tok().is(TokenKind::Name)) {
      lambda->params.push_back(tok().text.str());
      advance();
      if (!consumeOp(","))
        break;
    }
    if (!expectOp(":", "after lambda parameters"))
      return nullptr;
    lambda->body = parseTest();
    if (!lambda->body)
      return nullptr;
    return lambda;
  }
  ExprPtr value = parseOrTest();
  if (!value || !tok().isKeyword("if"))
    return value;
  // Stop at `for x in y if cond` (comprehension filters are not expressions).
  auto ifExp = std::make_unique<IfExpExpr>(tok().loc);
  advance();
  ifExp->cond = parseOrTest();
  if (!ifExp->cond)
    return nullptr;
  if (!consumeKeyword("else")) {
    error(tok().loc, "expected 'else' in conditional expression, found " +
                         describe(tok()));
    return nullptr;
  }
  ifExp->elseValue = parseTest();
  if (!ifExp->elseValue)
    return nullptr;
  ifExp->thenValue = std::move(value);
  return ifExp;
}

ExprPtr Parser::parseOrTest() {
  SMLoc loc = tok().loc;
  ExprPtr first = parseAndTest();
  if (!first || !tok().isKeyword("or"))
    return first;
  auto op = std::make_unique<BoolOpExpr>(loc, /*isAnd=*/false);
  op->operands.push_back(std::move(first));
  while (consumeKeyword("or")) {
    ExprPtr e = parseAndTest();
    if (!e)
      return nullptr;
    op->operands.push_back(std::move(e));
  }
  return op;
}

ExprPtr Parser::parseAndTest() {
  SMLoc loc = tok().loc;
  ExprPtr first = parseNotTest();
  if (!first || !tok().isKeyword("and"))
    return first;
  auto op = std::make_unique<BoolOpExpr>(loc, /*isAnd=*/true);
  op->operands.push_back(std::move(first));
  while (consumeKeyword("and")) {
    ExprPtr e = parseNotTest();
    if (!e)
      return nullptr;
    op->operands.push_back(std::move(e));
  }
  return op;
}

ExprPtr Parser::parseNotTest() {
  DepthGuard guard(*this);
  if (guard.tooDeep())
    return nullptr;
  SMLoc loc = tok().loc;
  if (consumeKeyword("not")) {
    ExprPtr operand = parseNotTest();
    if (!operand)
      return nullptr;
    return std::make_unique<UnaryExpr>(loc, "not", std::move(operand));
  }
  return parseComparison();
}

ExprPtr Parser::parseComparison() {
  SMLoc loc = tok().loc;
  ExprPtr first = parseBinary(0);
  if (!first)
    return nullptr;
  std::unique_ptr<CompareExpr> cmp;
  while (true) {
    std::string op;
    SMLoc opLoc = tok().loc;
    if (tok().isOp("<") || tok().isOp("<=") || tok().isOp(">") ||
        tok().isOp(">=") || tok().isOp("==") || tok().isOp("!=")) {
      op = tok().text.str();
      advance();
    } else if (tok().isKeyword("in")) {
      op = "in";
      advance();
    } else if (tok().isKeyword("not") && peek().isKeyword("in")) {
      op = "not in";
      advance();
      advance();
    } else if (tok().isKeyword("is")) {
      advance();
      op = consumeKeyword("not") ? "is not" : "is";
    } else {
      break;
    }
    if (!cmp) {
      cmp = std::make_unique<CompareExpr>(loc);
      cmp->operands.push_back(std::move(first));
    }
    ExprPtr rhs = parseBinary(0);
    if (!rhs)
      return nullptr;
    cmp->ops.push_back(op);
    cmp->opLocs.push_back(opLoc);
    cmp->operands.push_back(std::move(rhs));
  }
  if (cmp)
    return cmp;
  return first;
}

// Binary operator levels, loosest first: | ^ & shifts additive multiplicative.
ExprPtr Parser::parseBinary(int level) {
  static const std::vector<std::vector<StringRef>> kLevels = {
      {"|"},        {"^"},      {"&"},
      {"<<", ">>"}, {"+", "-"}, {"*", "/", "//", "%", "@"}};
  if (level == static_cast<int>(kLevels.size()))
    return parseFactor();
  ExprPtr lhs = parseBinary(level + 1);
  ChainDepth chain(*this);
  while (lhs) {
    const Token &t = tok();
    if (t.kind != TokenKind::Op || !llvm::is_contained(kLevels[level], t.text))
      break;
    if (chain.tooDeep())
      return nullptr;
    std::string op = t.text.str();
    SMLoc opLoc = t.loc;
    advance();
    ExprPtr rhs = parseBinary(level + 1);
    if (!rhs)
      return nullptr;
    lhs =
        std::make_unique<BinaryExpr>(opLoc, op, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseFactor() {
  DepthGuard guard(*this);
  if (guard.tooDeep())
    return nullptr;
  SMLoc loc = tok().loc;
  if (tok().isOp("-") || tok().isOp("+") || tok().isOp("~")) {
    std::string op = tok().text.str();
    advance();
    ExprPtr operand = parseFactor();
    if (!operand)
      return nullptr;
    return std::make_unique<UnaryExpr>(loc, op, std::move(operand));
  }
  return parsePower();
}

ExprPtr Parser::parsePower() {
  ExprPtr base = parseAtomWithTrailers();
  if (!base || !tok().isOp("**"))
    return base;
  SMLoc opLoc = tok().loc;
  advance();
  ExprPtr exponent = parseFactor();
  if (!exponent)
    return nullptr;
  return std::make_unique<BinaryExpr>(opLoc, "**", std::move(base),
                                      std::move(exponent));
}

ExprPtr Parser::parseAtomWithTrailers() {
  ExprPtr value = parseAtom();
  ChainDepth chain(*this);
  while (value) {
    if ((tok().isOp("(") || tok().isOp("[") || tok().isOp(".")) &&
        chain.tooDeep())
      return nullptr;
    if (consumeOp("(")) {
      auto call = std::make_unique<CallExpr>(value->getLoc(), std::move(value));
      if (!parseCallArguments(*call))
        return nullptr;
      value = std::move(call);
    } else if (consumeOp("[")) {
      auto sub = std::make_unique<SubscriptExpr>(value->getLoc());
      sub->value = std::move(value);
      do {
        if (tok().isOp("]"))
          break;
        ExprPtr item = parseSubscriptItem();
        if (!item)
          return nullptr;
        sub->indices.push_back(std::move(item));
      } while (consumeOp(","));
      if (!expectOp("]", "to close the subscript"))
        return nullptr;
      value = std::move(sub);
    } else if (consumeOp(".")) {
      if (!tok().is(TokenKind::Name)) {
        error(tok().loc,
              "expected an attribute name after '.', found " + describe(tok()));
        return nullptr;
      }
      std::string attr = tok().text.str();
      advance();
      SMLoc start = value->getLoc();
      value = std::make_unique<AttributeExpr>(start, std::move(value), attr);
    } else {
      break;
    }
  }
  return value;
}

ExprPtr Parser::parseSubscriptItem() {
  SMLoc loc = tok().loc;
  ExprPtr lower;
  if (!tok().isOp(":")) {
    lower = parseTest();
    if (!lower)
      return nullptr;
    if (!tok().isOp(":"))
      return lower;
  }
  auto slice = std::make_unique<SliceExpr>(loc);
  slice->lower = std::move(lower);
  advance(); // ':'
  if (!tok().isOp(":") && !tok().isOp(",") && !tok().isOp("]")) {
    slice->upper = parseTest();
    if (!slice->upper)
      return nullptr;
  }
  if (consumeOp(":") && !tok().isOp(",") && !tok().isOp("]")) {
    slice->step = parseTest();
    if (!slice->step)
      return nullptr;
  }
  return slice;
}

bool Parser::parseCallArguments(CallExpr &call) {
  while (!tok().isOp(")")) {
    if (tok().isOp("**")) {
      // `**kwargs`: a dict's items as keywords.
      Keyword kw;
      kw.loc = tok().loc;
      advance();
      kw.value = parseTest();
      if (!kw.value)
        return false;
      call.keywords.push_back(std::move(kw));
    } else if (tok().isOp("*")) {
      SMLoc loc = tok().loc;
      advance();
      ExprPtr value = parseTest();
      if (!value)
        return false;
      call.args.push_back(std::make_unique<StarredExpr>(loc, std::move(value)));
    } else if (tok().is(TokenKind::Name) && peek().isOp("=")) {
      Keyword kw;
      kw.loc = tok().loc;
      kw.name = tok().text.str();
      advance();
      advance();
      kw.value = parseTest();
      if (!kw.value)
        return false;
      call.keywords.push_back(std::move(kw));
    } else {
      if (!call.keywords.empty())
        return error(tok().loc, "positional argument follows keyword argument");
      SMLoc loc = tok().loc;
      ExprPtr arg = parseTest();
      if (!arg)
        return false;
      if (tok().isKeyword("for")) {
        // `f(x for x in xs)`: a generator expression as the only argument.
        if (!call.args.empty())
          return error(tok().loc, "a generator expression must be "
                                  "parenthesized unless it is the only "
                                  "argument");
        auto comp = std::make_unique<ListCompExpr>(loc);
        comp->generator = true;
        comp->element = std::move(arg);
        if (!parseComprehension(*comp))
          return false;
        if (!tok().isOp(")"))
          return error(tok().loc, "a generator expression must be "
                                  "parenthesized unless it is the only "
                                  "argument");
        arg = std::move(comp);
      }
      call.args.push_back(std::move(arg));
    }
    if (!consumeOp(","))
      break;
  }
  return expectOp(")", "to close the argument list");
}

// The `for ... in ... if ...` clauses after a comprehension's element.
bool Parser::parseComprehension(ListCompExpr &comp) {
  while (tok().isKeyword("for")) {
    Comprehension clause;
    clause.loc = tok().loc;
    advance();
    auto target = std::make_unique<TupleExpr>(tok().loc);
    do {
      ExprPtr e = parseBinary(0);
      if (!e)
        return false;
      target->elements.push_back(std::move(e));
    } while (consumeOp(",") && !tok().isKeyword("in"));
    clause.target = target->elements.size() == 1
                        ? std::move(target->elements[0])
                        : std::move(target);
    if (!consumeKeyword("in"))
      return error(tok().loc,
                   "expected 'in' in comprehension, found " + describe(tok()));
    clause.iter = parseOrTest();
    if (!clause.iter)
      return false;
    while (consumeKeyword("if")) {
      ExprPtr cond = parseOrTest();
      if (!cond)
        return false;
      clause.conditions.push_back(std::move(cond));
    }
    comp.generators.push_back(std::move(clause));
  }
  return true;
}

ExprPtr Parser::parseAtom() {
  const Token &t = tok();
  SMLoc loc = t.loc;
  switch (t.kind) {
  case TokenKind::Name: {
    if (t.text == "True" || t.text == "False") {
      bool v = t.text == "True";
      advance();
      return std::make_unique<BoolExpr>(loc, v);
    }
    if (t.text == "None") {
      advance();
      return std::make_unique<NoneExpr>(loc);
    }
    static const char *const kReserved[] = {
        "def",    "if", "elif", "else",  "for", "while",
        "return", "in", "and",  "or",    "not", "import",
        "from",   "as", "pass", "class", "is",  "lambda"};
    for (const char *word : kReserved)
      if (t.text == word) {
        error(loc, "expected an expression, found keyword '" + t.text + "'");
        return nullptr;
      }
    std::string name = t.text.str();
    advance();
    return std::make_unique<NameExpr>(loc, name);
  }
  case TokenKind::Int: {
    std::string digits;
    for (char c : t.text)
      if (c != '_')
        digits += c;
    advance();
    return std::make_unique<IntExpr>(loc, digits);
  }
  case TokenKind::Float: {
    std::string digits;
    for (char c : t.text)
      if (c != '_')
        digits += c;
    advance();
    return std::make_unique<FloatExpr>(loc,
                                       std::strtod(digits.c_str(), nullptr));
  }
  case TokenKind::String: {
    std::string value;
    std::vector<FStringExpr::Field> fields;
    bool formatted = false;
    while (tok().is(TokenKind::String)) { // adjacent literals concatenate
      const Token &s = tok();
      formatted |= s.formatted;
      for (const FormatField &field : s.fields) {
        ExprPtr expr = parseFormatField(field);
        if (!expr)
          return nullptr;
        fields.push_back(
            {value.size() + field.offset, std::move(expr), field.conversion});
      }
      value += s.value;
      advance();
    }
    if (!formatted)
      return std::make_unique<StringExpr>(loc, value);
    auto fstring = std::make_unique<FStringExpr>(loc, value);
    fstring->fields = std::move(fields);
    return fstring;
  }
  case TokenKind::Op:
    if (t.text == "...") {
      advance();
      return std::make_unique<EllipsisExpr>(loc);
    }
    if (t.text == "(") {
      advance();
      if (consumeOp(")"))
        return std::make_unique<TupleExpr>(loc);
      ExprPtr first = parseTest();
      if (!first)
        return nullptr;
      if (tok().isKeyword("for")) {
        auto comp = std::make_unique<ListCompExpr>(loc);
        comp->generator = true;
        comp->element = std::move(first);
        if (!parseComprehension(*comp) ||
            !expectOp(")", "to close the generator expression"))
          return nullptr;
        return comp;
      }
      if (consumeOp(")"))
        return first; // parenthesized expression
      auto tuple = std::make_unique<TupleExpr>(loc);
      tuple->elements.push_back(std::move(first));
      while (consumeOp(",")) {
        if (tok().isOp(")"))
          break;
        ExprPtr e = parseTest();
        if (!e)
          return nullptr;
        tuple->elements.push_back(std::move(e));
      }
      if (!expectOp(")", "to close the parenthesis"))
        return nullptr;
      return tuple;
    }
    if (t.text == "[") {
      advance();
      auto list = std::make_unique<ListExpr>(loc);
      while (!tok().isOp("]")) {
        ExprPtr e = parseTest();
        if (!e)
          return nullptr;
        if (list->elements.empty() && tok().isKeyword("for")) {
          auto comp = std::make_unique<ListCompExpr>(loc);
          comp->element = std::move(e);
          if (!parseComprehension(*comp) ||
              !expectOp("]", "to close the list comprehension"))
            return nullptr;
          return comp;
        }
        list->elements.push_back(std::move(e));
        if (!consumeOp(","))
          break;
      }
      if (!expectOp("]", "to close the list"))
        return nullptr;
      return list;
    }
    if (t.text == "{") {
      advance();
      auto dict = std::make_unique<DictExpr>(loc);
      while (!tok().isOp("}")) {
        ExprPtr key = parseTest();
        if (!key || !expectOp(":", "in dict display"))
          return nullptr;
        ExprPtr value = parseTest();
        if (!value)
          return nullptr;
        if (dict->keys.empty() && tok().isKeyword("for")) {
          auto comp = std::make_unique<ListCompExpr>(loc);
          comp->key = std::move(key);
          comp->element = std::move(value);
          if (!parseComprehension(*comp) ||
              !expectOp("}", "to close the dict comprehension"))
            return nullptr;
          return comp;
        }
        dict->keys.push_back(std::move(key));
        dict->values.push_back(std::move(value));
        if (!consumeOp(","))
          break;
      }
      if (!expectOp("}", "to close the dict"))
        return nullptr;
      return dict;
    }
    break;
  default:
    break;
  }
  error(loc, "expected an expression, found " + describe(t));
  return nullptr;
}

std::unique_ptr<Module>
kiln::frontend::parseModule(llvm::SourceMgr &sourceMgr) {
  return parseModule(sourceMgr, sourceMgr.getMainFileID());
}

// An f-string field's expression, parsed from its place in the source.
ExprPtr Parser::parseFormatField(const FormatField &field) {
  std::vector<Token> fieldTokens;
  if (!tokenizeExpression(sourceMgr, field.expr, fieldTokens)) {
    failed = true;
    return nullptr;
  }
  Parser sub(sourceMgr, std::move(fieldTokens), bufferId);
  ExprPtr expr = sub.parseTest();
  if (expr && !sub.tok().is(TokenKind::Newline) &&
      !sub.tok().is(TokenKind::Eof))
    sub.error(sub.tok().loc, "expected '}' after an f-string's expression");
  if (sub.failed)
    return error(sub.errorLoc, sub.errorMessage), nullptr;
  return expr;
}

std::unique_ptr<Module> kiln::frontend::parseModule(llvm::SourceMgr &sourceMgr,
                                                    unsigned bufferId) {
  std::vector<Token> tokens;
  if (!tokenize(sourceMgr, tokens, bufferId))
    return nullptr;
  return Parser(sourceMgr, std::move(tokens), bufferId).parse();
}
