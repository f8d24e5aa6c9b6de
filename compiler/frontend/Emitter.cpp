//===- Emitter.cpp - staged evaluation of kernel source into kiln IR ------===//
#include "compiler/frontend/Emitter.h"

#include "compiler/frontend/BuiltinSupport.h"

#include "compiler/ir/Dialects.h"

#include "compiler/frontend/HostEval.h"
#include "compiler/frontend/Parser.h"
#include "compiler/frontend/UpstreamNames.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/STLExtras.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <algorithm>
#include <functional>
#include <limits>

using namespace kiln::frontend;
using llvm::SMLoc;
using llvm::StringRef;

std::string FValue::describe() const {
  switch (kind) {
  case Kind::Runtime:
    if (type.isBlock())
      return "a block of type " + type.str();
    return "a run-time scalar of type " + type.str();
  case Kind::Int:
    return "the int " + intText(intValue);
  case Kind::Float:
    return "a float";
  case Kind::Bool:
    return intValue ? "True" : "False";
  case Kind::None:
    return "None";
  case Kind::String:
    return "the string \"" + text + "\"";
  case Kind::DType:
    return "the dtype " + type.str();
  case Kind::Tuple:
    return "a tuple of " + std::to_string(elements.size());
  case Kind::Module:
    return "the module " + text;
  case Kind::Function:
    return "a function";
  case Kind::Builtin:
    return "the builtin " + text;
  case Kind::Method:
    return "the method " + text;
  case Kind::Marker:
    return text;
  case Kind::Dict:
    return "a dict of " + std::to_string(elements.size() / 2);
  case Kind::Descriptor:
    return "a tensor descriptor of type " + type.str();
  }
  return "a value";
}

// A file's absolute path without `.` and `..`: how modules and sources
// are matched.
static std::string normalizedPath(StringRef file) {
  llvm::SmallString<256> path(file);
  llvm::sys::fs::make_absolute(path);
  llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
  return path.str().str();
}

Emitter::Emitter(llvm::SourceMgr &sourceMgr, mlir::MLIRContext &context,
                 const Module &module, std::vector<std::string> sources,
                 HostTarget target)
    : sourceMgr(sourceMgr), context(context), module(module), builder(&context),
      filename(module.filename), hostTarget(std::move(target)) {
  for (const std::string &file : sources)
    sourceFiles.push_back(normalizedPath(file));
  auto main = std::make_unique<ModuleScope>();
  main->ast = &module;
  main->path = normalizedPath(module.filename);
  current = main.get();
  modules.push_back(std::move(main));
  collectGlobals(*current, module.body);
}

Emitter::~Emitter() = default;

namespace {
/// While alive, the source manager's diagnostics go into `out` instead of
/// stderr: evaluations whose failure is reported later, or not at all.
class CapturedDiagnostics {
public:
  CapturedDiagnostics(llvm::SourceMgr &sourceMgr, std::string &out)
      : sourceMgr(sourceMgr), os(out), savedHandler(sourceMgr.getDiagHandler()),
        savedContext(sourceMgr.getDiagContext()) {
    sourceMgr.setDiagHandler(
        [](const llvm::SMDiagnostic &d, void *stream) {
          d.print(nullptr, *static_cast<llvm::raw_ostream *>(stream));
        },
        &os);
  }
  ~CapturedDiagnostics() {
    sourceMgr.setDiagHandler(savedHandler, savedContext);
  }

private:
  llvm::SourceMgr &sourceMgr;
  llvm::raw_string_ostream os;
  llvm::SourceMgr::DiagHandlerTy savedHandler;
  void *savedContext;
};

/// While alive, the source manager's diagnostics are held back: an
/// evaluation tried first, whose errors are reported (release) only if the
/// fallback fails too.
class HeldDiagnostics {
public:
  explicit HeldDiagnostics(llvm::SourceMgr &sourceMgr)
      : sourceMgr(sourceMgr), savedHandler(sourceMgr.getDiagHandler()),
        savedContext(sourceMgr.getDiagContext()) {
    sourceMgr.setDiagHandler(
        [](const llvm::SMDiagnostic &d, void *held) {
          static_cast<std::vector<llvm::SMDiagnostic> *>(held)->push_back(d);
        },
        &held);
  }
  ~HeldDiagnostics() { restore(); }

  /// Reports what was held, as it would have been, and stops holding.
  void release() {
    restore();
    for (const llvm::SMDiagnostic &d : held) {
      if (savedHandler)
        savedHandler(d, savedContext);
      else
        d.print(nullptr, llvm::errs());
    }
    held.clear();
  }

private:
  void restore() { sourceMgr.setDiagHandler(savedHandler, savedContext); }

  llvm::SourceMgr &sourceMgr;
  std::vector<llvm::SMDiagnostic> held;
  llvm::SourceMgr::DiagHandlerTy savedHandler;
  void *savedContext;
};
} // namespace

/// A torch dtype in kernel code: Kiln's dtype of that type (it makes
/// tensors of it), marked so that it compares unequal to every tl dtype, as
/// upstream's torch.dtype objects do (`dtype == torch.float16` is False in a
/// kernel; two torch dtypes compare as usual).
static FValue torchDType(DType dtype) {
  FValue v = FValue::dtype(TritonType{dtype, false, {}});
  v.text = "torch";
  return v;
}

std::nullopt_t Emitter::error(SMLoc loc, const llvm::Twine &message) {
  sourceMgr.PrintMessage(loc, llvm::SourceMgr::DK_Error, message);
  // The inlined calls, innermost first; of a deep chain (a recursion) the
  // four innermost and the four outermost.
  llvm::SmallVector<const Frame *> calls;
  for (auto it = frames.rbegin(); it != frames.rend(); ++it)
    if (it->callLoc.isValid())
      calls.push_back(&*it);
  constexpr size_t kEnds = 4;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (calls.size() > 2 * kEnds + 1 && i == kEnds) {
      sourceMgr.PrintMessage(calls[i]->callLoc, llvm::SourceMgr::DK_Note,
                             "... and " +
                                 llvm::Twine(calls.size() - 2 * kEnds) +
                                 " more inlined calls, the outermost below");
      i = calls.size() - kEnds - 1;
      continue;
    }
    sourceMgr.PrintMessage(calls[i]->callLoc, llvm::SourceMgr::DK_Note,
                           "in the inlined call to '" +
                               calls[i]->function->name + "' here");
  }
  return std::nullopt;
}

mlir::Location Emitter::location(SMLoc loc) {
  if (!loc.isValid())
    return builder.getUnknownLoc();
  unsigned buffer = sourceMgr.FindBufferContainingLoc(loc);
  auto [line, col] = sourceMgr.getLineAndColumn(loc, buffer);
  StringRef file = filename;
  if (buffer && buffer != sourceMgr.getMainFileID())
    file = sourceMgr.getMemoryBuffer(buffer)->getBufferIdentifier();
  return mlir::FileLineColLoc::get(&context, file, line, col);
}

//===----------------------------------------------------------------------===//
// Module-level names
//===----------------------------------------------------------------------===//

// Canonical module paths: the language module is "triton.language" whatever
// alias it is imported under (tl.math.exp is tl.exp).
static std::string canonicalModule(StringRef path) {
  if (path == "triton.language.extra.cuda.libdevice" ||
      path == "triton.language.extra.libdevice")
    return "libdevice";
  if (path == "triton.language.math" || path == "triton.language.core" ||
      path == "triton.language.standard")
    return "triton.language";
  return path.str();
}

// The error for a call of a name no builtin implements: a triton.language
// name Triton 3.6 does not have is rejected upstream too (matmulfreellm's
// `tl.math.round`), and where libdevice has the function that is the place
// to call it from; another is one Kiln does not implement yet.
static std::string unknownBuiltin(StringRef text) {
  StringRef name = text;
  if (!name.consume_front("tl.") || isTritonLanguageName(name))
    return "'" + text.str() + "' is not supported by Kiln yet";
  std::string message = "triton.language has no '" + name.str() +
                        "' in Triton 3.6, the release whose language Kiln "
                        "compiles (upstream rejects it too)";
  if (lookupBuiltin("libdevice." + name.str()))
    message += "; libdevice has it: tl.extra.cuda.libdevice." + name.str();
  return message;
}

static bool isTritonModule(StringRef module) {
  return module == "triton" || module.starts_with("triton.");
}

// The modules of Triton 3.6 that kernel files import (an import of another
// triton module, `triton.language.libdevice` of old releases say, fails as
// it would there, so a try/except falls back).
static bool isKnownTritonModule(StringRef module) {
  static const char *const kModules[] = {
      "triton",
      "triton.language",
      "triton.language.core",
      "triton.language.math",
      "triton.language.standard",
      "triton.language.target_info",
      "triton.language.extra",
      "triton.language.extra.libdevice",
      "triton.language.extra.cuda",
      "triton.language.extra.cuda.libdevice",
      "triton.runtime",
      "triton.runtime.driver",
      "triton.knobs",
      "triton.runtime.jit",
      "triton.runtime.autotuner",
      "triton.testing",
      "triton.tools",
      "triton.tools.tensor_descriptor",
      "triton.compiler",
      "triton.backends",
      "triton.backends.compiler",
  };
  return llvm::is_contained(kModules, module);
}

std::string Emitter::findModuleFile(const ModuleScope &from, StringRef module) {
  size_t level = 0;
  while (level < module.size() && module[level] == '.')
    ++level;
  std::string rel = module.drop_front(level).str();
  std::replace(rel.begin(), rel.end(), '.', '/');
  auto known = [&](const std::string &candidate) {
    return candidate == modules.front()->path ||
           llvm::is_contained(sourceFiles, candidate);
  };
  if (level > 0) {
    // Relative to the importing module's package: its directory, then one
    // directory up per further dot.
    llvm::SmallString<256> base = llvm::sys::path::parent_path(from.path);
    for (size_t i = 1; i < level; ++i)
      base = llvm::sys::path::parent_path(base);
    for (const char *suffix : {".py", "/__init__.py"}) {
      std::string candidate =
          rel.empty() ? (suffix[0] == '/' ? base.str().str() + suffix : "")
                      : (base + "/" + rel + suffix).str();
      if (!candidate.empty() && known(candidate))
        return candidate;
    }
    return "";
  }
  // Absolute: the source whose path ends in the module's path.
  std::vector<std::string> candidates = sourceFiles;
  candidates.insert(candidates.begin(), modules.front()->path);
  for (const char *suffix : {".py", "/__init__.py"}) {
    std::string tail = "/" + rel + suffix;
    for (const std::string &candidate : candidates)
      if (StringRef(candidate).ends_with(tail))
        return candidate;
  }
  return "";
}

ModuleScope *Emitter::loadModule(const std::string &file, SMLoc loc) {
  for (auto &m : modules)
    if (m->path == file && !m->enclosing)
      return m.get();
  auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/true);
  if (!buffer) {
    error(loc, "cannot read " + file + ": " + buffer.getError().message());
    return nullptr;
  }
  unsigned id = sourceMgr.AddNewSourceBuffer(std::move(*buffer), loc);
  std::unique_ptr<Module> ast = parseModule(sourceMgr, id);
  if (!ast) {
    sourceMgr.PrintMessage(loc, llvm::SourceMgr::DK_Note,
                           "in the module imported here");
    return nullptr;
  }
  auto scope = std::make_unique<ModuleScope>();
  scope->ast = ast.get();
  scope->owned = std::move(ast);
  scope->path = file;
  ModuleScope *result = scope.get();
  modules.push_back(std::move(scope));
  collectGlobals(*result, result->ast->body);
  return result;
}

FValue Emitter::moduleValue(const ModuleScope &scope) {
  for (size_t i = 0; i < modules.size(); ++i)
    if (modules[i].get() == &scope)
      return FValue::named(FValue::Kind::Module, "@" + std::to_string(i));
  return FValue::none();
}

ModuleScope *Emitter::scopeOfModuleValue(const FValue &value) {
  StringRef text = value.text;
  size_t index;
  if (value.kind != FValue::Kind::Module || !text.consume_front("@") ||
      text.getAsInteger(10, index) || index >= modules.size())
    return nullptr;
  return modules[index].get();
}

bool Emitter::moduleResolves(const ModuleScope &scope, StringRef module) {
  if (!module.starts_with(".") && isTritonModule(module))
    return isKnownTritonModule(module);
  // A source module, or a host library Kiln does not look into (an error
  // only if a kernel uses a name from it).
  return module.starts_with(".") ? !findModuleFile(scope, module).empty()
                                 : true;
}

/// Whether `expr` names a module of Triton that CUDA builds do not have
/// (`tl.extra.intel.libdevice.tanh`, `triton.language.extra.hip`): as an
/// import of it would, that fails upstream, so a module-level `if` whose
/// branch does so is not the branch a CUDA build takes.
static bool usesUnknownTritonModule(const ModuleScope &scope,
                                    const Expr *expr) {
  if (!expr)
    return false;
  switch (expr->getKind()) {
  case Expr::Kind::Attribute: {
    llvm::SmallVector<StringRef> parts;
    const Expr *e = expr;
    while (auto *attr = llvm::dyn_cast<AttributeExpr>(e)) {
      parts.push_back(attr->attr);
      e = attr->value.get();
    }
    if (auto *name = llvm::dyn_cast<NameExpr>(e)) {
      auto it = scope.globals.find(name->name);
      if (it != scope.globals.end() &&
          it->second.kind == FValue::Kind::Module) {
        std::string path = it->second.text;
        if (path == "libdevice")
          path = "triton.language.extra.libdevice";
        for (auto part = parts.rbegin(); part != parts.rend(); ++part) {
          if (StringRef(path).count('.') == 3)
            break; // triton.language.extra.X
          path += "." + part->str();
        }
        if (StringRef(path).starts_with("triton.language.extra.") &&
            StringRef(path).count('.') == 3 && !isKnownTritonModule(path))
          return true;
      }
    }
    return usesUnknownTritonModule(scope, e);
  }
  case Expr::Kind::Call: {
    auto &call = llvm::cast<CallExpr>(*expr);
    if (usesUnknownTritonModule(scope, call.callee.get()))
      return true;
    for (const ExprPtr &a : call.args)
      if (usesUnknownTritonModule(scope, a.get()))
        return true;
    for (const Keyword &kw : call.keywords)
      if (usesUnknownTritonModule(scope, kw.value.get()))
        return true;
    return false;
  }
  case Expr::Kind::Binary: {
    auto &b = llvm::cast<BinaryExpr>(*expr);
    return usesUnknownTritonModule(scope, b.lhs.get()) ||
           usesUnknownTritonModule(scope, b.rhs.get());
  }
  case Expr::Kind::Unary:
    return usesUnknownTritonModule(scope,
                                   llvm::cast<UnaryExpr>(*expr).operand.get());
  case Expr::Kind::Starred:
    return usesUnknownTritonModule(scope,
                                   llvm::cast<StarredExpr>(*expr).value.get());
  case Expr::Kind::IfExp: {
    auto &i = llvm::cast<IfExpExpr>(*expr);
    return usesUnknownTritonModule(scope, i.thenValue.get()) ||
           usesUnknownTritonModule(scope, i.elseValue.get());
  }
  case Expr::Kind::Tuple:
  case Expr::Kind::List: {
    const auto &elements = expr->getKind() == Expr::Kind::Tuple
                               ? llvm::cast<TupleExpr>(*expr).elements
                               : llvm::cast<ListExpr>(*expr).elements;
    for (const ExprPtr &e : elements)
      if (usesUnknownTritonModule(scope, e.get()))
        return true;
    return false;
  }
  default:
    return false;
  }
}

bool Emitter::importsResolve(const ModuleScope &scope, const Block &block) {
  for (const StmtPtr &stmt : block) {
    if (auto *assign = llvm::dyn_cast<AssignStmt>(stmt.get())) {
      if (usesUnknownTritonModule(scope, assign->value.get()))
        return false;
    } else if (auto *ann = llvm::dyn_cast<AnnAssignStmt>(stmt.get())) {
      if (usesUnknownTritonModule(scope, ann->value.get()))
        return false;
    } else if (auto *imp = llvm::dyn_cast<ImportStmt>(stmt.get())) {
      for (auto &[path, alias] : imp->modules)
        if (!moduleResolves(scope, path))
          return false;
    } else if (auto *from = llvm::dyn_cast<ImportFromStmt>(stmt.get())) {
      if (!moduleResolves(scope, from->module))
        return false;
    } else if (auto *ifStmt = llvm::dyn_cast<IfStmt>(stmt.get())) {
      if (!importsResolve(scope, ifStmt->thenBody) &&
          !importsResolve(scope, ifStmt->elseBody))
        return false;
    } else if (auto *tryStmt = llvm::dyn_cast<TryStmt>(stmt.get())) {
      bool any = importsResolve(scope, tryStmt->body);
      for (const TryStmt::Handler &h : tryStmt->handlers)
        any = any || importsResolve(scope, h.body);
      if (!any)
        return false;
    }
  }
  return true;
}

// A module-level condition that probes the platform by a function's name
// (vLLM's `current_platform.is_rocm()`, `is_hip()`, `torch.version.hip`
// tests go through getAttribute): its value on a CUDA GPU, or nullopt.
static std::optional<bool>
platformProbe(const Expr *cond,
              llvm::function_ref<const Expr *(StringRef)> globalValue = {}) {
  if (!cond)
    return std::nullopt;
  // `_is_hip = is_hip()` at module level, then `if _is_hip:` (SGLang).
  if (auto *n = llvm::dyn_cast<NameExpr>(cond)) {
    const Expr *value = globalValue ? globalValue(n->name) : nullptr;
    return value && !llvm::isa<NameExpr>(value) ? platformProbe(value)
                                                : std::nullopt;
  }
  if (auto *u = llvm::dyn_cast<UnaryExpr>(cond)) {
    if (u->op != "not")
      return std::nullopt;
    std::optional<bool> v = platformProbe(u->operand.get(), globalValue);
    return v ? std::optional<bool>(!*v) : std::nullopt;
  }
  if (auto *b = llvm::dyn_cast<BoolOpExpr>(cond)) {
    // Decided when one operand decides it (False in an `and`, True in an
    // `or`) or all are known.
    bool all = true;
    for (const ExprPtr &operand : b->operands) {
      std::optional<bool> v = platformProbe(operand.get(), globalValue);
      if (v && *v != b->isAnd)
        return !b->isAnd;
      all = all && v.has_value();
    }
    return all ? std::optional<bool>(b->isAnd) : std::nullopt;
  }
  auto *call = llvm::dyn_cast<CallExpr>(cond);
  if (!call || !call->args.empty())
    return std::nullopt;
  StringRef name;
  if (auto *n = llvm::dyn_cast<NameExpr>(call->callee.get()))
    name = n->name;
  else if (auto *a = llvm::dyn_cast<AttributeExpr>(call->callee.get()))
    name = a->attr;
  return platformProbeByName(name);
}

/// Appends the module-level names that `block` binds (imports, defs,
/// classes, assignments, in nested `if`s and `try`s too).
static void namesBoundBy(const Block &block, std::vector<std::string> &names) {
  for (const StmtPtr &stmt : block) {
    if (auto *imp = llvm::dyn_cast<ImportStmt>(stmt.get())) {
      for (auto &[path, alias] : imp->modules)
        names.push_back(alias);
    } else if (auto *from = llvm::dyn_cast<ImportFromStmt>(stmt.get())) {
      for (auto &[name, alias] : from->names)
        if (name != "*")
          names.push_back(alias);
    } else if (auto *def = llvm::dyn_cast<FunctionDefStmt>(stmt.get())) {
      names.push_back(def->name);
    } else if (auto *cls = llvm::dyn_cast<ClassDefStmt>(stmt.get())) {
      names.push_back(cls->name);
    } else if (auto *assign = llvm::dyn_cast<AssignStmt>(stmt.get())) {
      for (const ExprPtr &target : assign->targets)
        if (auto *name = llvm::dyn_cast<NameExpr>(target.get()))
          names.push_back(name->name);
    } else if (auto *ann = llvm::dyn_cast<AnnAssignStmt>(stmt.get())) {
      if (auto *name = llvm::dyn_cast<NameExpr>(ann->target.get()))
        names.push_back(name->name);
    } else if (auto *other = llvm::dyn_cast<OtherStmt>(stmt.get())) {
      llvm::append_range(names, other->definedNames);
    } else if (auto *nested = llvm::dyn_cast<IfStmt>(stmt.get())) {
      namesBoundBy(nested->thenBody, names);
      namesBoundBy(nested->elseBody, names);
    } else if (auto *tryStmt = llvm::dyn_cast<TryStmt>(stmt.get())) {
      namesBoundBy(tryStmt->body, names);
      for (const TryStmt::Handler &h : tryStmt->handlers)
        namesBoundBy(h.body, names);
      namesBoundBy(tryStmt->elseBody, names);
      namesBoundBy(tryStmt->finallyBody, names);
    }
  }
}

/// Whether `name` is bound alike in `a` and in `scope`: to the same module,
/// function, import or assignment, or a number or string of equal value.
static bool sameBinding(const ModuleScope::Bindings &a, const ModuleScope &b,
                        StringRef name) {
  auto ga = a.globals.find(name), gb = b.globals.find(name);
  auto ia = a.imports.find(name), ib = b.imports.find(name);
  auto da = a.globalDefs.find(name), db = b.globalDefs.find(name);
  bool inA = ga != a.globals.end(), inB = gb != b.globals.end();
  if (inA != inB || (ia != a.imports.end()) != (ib != b.imports.end()) ||
      (da != a.globalDefs.end()) != (db != b.globalDefs.end()) ||
      a.undecided.count(name) || b.undecided.count(name))
    return false;
  if (inA) {
    const FValue &x = ga->second, &y = gb->second;
    if (x.kind != y.kind || x.text != y.text || x.function != y.function)
      return false;
    if (x.kind != FValue::Kind::Module && x.kind != FValue::Kind::Function &&
        x.kind != FValue::Kind::Builtin && x.kind != FValue::Kind::String &&
        !((x.isNumber() || x.kind == FValue::Kind::None) &&
          x.intValue == y.intValue && x.floatValue == y.floatValue))
      return false;
  }
  if (ia != a.imports.end() && (ia->second.module != ib->second.module ||
                                ia->second.name != ib->second.name))
    return false;
  return da == a.globalDefs.end() || da->second == db->second;
}

/// The statement of `body` that is `stmt` or holds it (in an `if`, `try` or
/// class body); null if none does.
static const Stmt *statementHolding(const Block &body, const Stmt *stmt) {
  auto holds = [&](const Block &b) {
    return statementHolding(b, stmt) != nullptr;
  };
  for (const StmtPtr &s : body) {
    if (s.get() == stmt)
      return s.get();
    bool inside = false;
    if (auto *i = llvm::dyn_cast<IfStmt>(s.get()))
      inside = holds(i->thenBody) || holds(i->elseBody);
    else if (auto *c = llvm::dyn_cast<ClassDefStmt>(s.get()))
      inside = holds(c->body);
    else if (auto *t = llvm::dyn_cast<TryStmt>(s.get()))
      inside = holds(t->body) || holds(t->elseBody) || holds(t->finallyBody) ||
               llvm::any_of(t->handlers, [&](const TryStmt::Handler &h) {
                 return holds(h.body);
               });
    if (inside)
      return s.get();
  }
  return nullptr;
}

// Module-level code runs as Python would run it, as far as what kernels can
// reach goes: imports bind names (resolved on use), defs bind functions,
// assignments are evaluated on first use. A module-level `if` takes the
// branch its condition chooses (moduleCondition); where Kiln cannot evaluate
// the condition, the branch whose imports resolve when only one does, and
// otherwise neither: the names either branch binds are an error to use. Of
// a `try`, its body when its imports resolve, else the first handler whose
// imports do (`try: from triton.language.extra.libdevice import rsqrt /
// except ImportError: ...`).
void Emitter::collectGlobals(ModuleScope &scope, const Block &body) {
  bool topLevel = !scope.enclosing && &body == &scope.ast->body;
  const Stmt *savedTop = collectingTop;
  llvm::scope_exit restoreTop([&] { collectingTop = savedTop; });
  for (const StmtPtr &stmt : body) {
    if (topLevel)
      collectingTop = stmt.get();
    if (auto *imp = llvm::dyn_cast<ImportStmt>(stmt.get())) {
      for (auto &[path, alias] : imp->modules) {
        // `import a.b` binds `a`; `import a.b as c` binds c to a.b.
        bool aliased = alias != StringRef(path).split('.').first;
        std::string bound =
            aliased ? path : StringRef(path).split('.').first.str();
        scope.globalDefs.erase(alias);
        scope.globals.erase(alias);
        scope.undecided.erase(alias);
        if (isTritonModule(bound))
          scope.globals[alias] =
              FValue::named(FValue::Kind::Module, canonicalModule(bound));
        else
          scope.imports[alias] = {bound, "", imp->getLoc()};
      }
    } else if (auto *from = llvm::dyn_cast<ImportFromStmt>(stmt.get())) {
      for (auto &[name, alias] : from->names) {
        if (name == "*") {
          scope.starImports.push_back({from->module, name, from->getLoc()});
          continue;
        }
        scope.globalDefs.erase(alias);
        scope.globals.erase(alias);
        scope.undecided.erase(alias);
        scope.imports[alias] = {from->module, name, from->getLoc()};
      }
    } else if (auto *def = llvm::dyn_cast<FunctionDefStmt>(stmt.get())) {
      FValue f;
      f.kind = FValue::Kind::Function;
      f.function = def;
      scope.globalDefs.erase(def->name);
      scope.imports.erase(def->name);
      scope.undecided.erase(def->name);
      scope.globals[def->name] = f;
      functionModules[def] = &scope.module();
    } else if (auto *cls = llvm::dyn_cast<ClassDefStmt>(stmt.get())) {
      // A namespace: `Cls.f` looks f up in the class body's scope.
      auto classScope = std::make_unique<ModuleScope>();
      classScope->ast = scope.ast;
      classScope->path = scope.path;
      classScope->className = scope.className.empty()
                                  ? cls->name
                                  : scope.className + "." + cls->name;
      classScope->enclosing = &scope.module();
      ModuleScope *inner = classScope.get();
      modules.push_back(std::move(classScope));
      collectGlobals(*inner, cls->body);
      scope.globalDefs.erase(cls->name);
      scope.imports.erase(cls->name);
      scope.undecided.erase(cls->name);
      scope.globals[cls->name] = moduleValue(*inner);
    } else if (auto *ifStmt = llvm::dyn_cast<IfStmt>(stmt.get())) {
      std::string why;
      std::optional<bool> taken =
          moduleCondition(scope, collectingTop, *ifStmt->cond, why);
      // Not evaluated, but only one branch imports what the sources have:
      // that one runs where the kernels do (`if HAS_VLLM: from vllm ...`).
      bool thenResolves = importsResolve(scope, ifStmt->thenBody);
      if (!taken && thenResolves != importsResolve(scope, ifStmt->elseBody))
        taken = thenResolves;
      if (taken) {
        collectGlobals(scope, *taken ? ifStmt->thenBody : ifStmt->elseBody);
      } else {
        // Either branch may have run: a name they leave bound differently
        // is not known (one both bind alike, as `import triton.language as
        // tl` again, is).
        ModuleScope::Bindings before = scope.bindings();
        collectGlobals(scope, ifStmt->thenBody);
        ModuleScope::Bindings afterThen = scope.bindings();
        scope.setBindings(std::move(before));
        collectGlobals(scope, ifStmt->elseBody);
        std::vector<std::string> names;
        namesBoundBy(ifStmt->thenBody, names);
        namesBoundBy(ifStmt->elseBody, names);
        for (const std::string &name : names) {
          if (sameBinding(afterThen, scope, name))
            continue;
          // A Triton module in one branch, something else in the other
          // (vLLM's `if TYPE_CHECKING or HAS_TRITON: import triton.language
          // as tl / else: tl = TritonLanguagePlaceholder()`): the kernels
          // can only have been written against the module.
          auto tritonModule = [&](const llvm::StringMap<FValue> &globals)
              -> std::optional<FValue> {
            auto it = globals.find(name);
            if (it == globals.end() ||
                it->second.kind != FValue::Kind::Module ||
                !(isTritonModule(it->second.text) ||
                  it->second.text == "libdevice"))
              return std::nullopt;
            return it->second;
          };
          std::optional<FValue> inThen = tritonModule(afterThen.globals);
          std::optional<FValue> inElse = tritonModule(scope.globals);
          if (inThen.has_value() != inElse.has_value()) {
            scope.imports.erase(name);
            scope.globalDefs.erase(name);
            scope.undecided.erase(name);
            scope.globals[name] = inThen ? *inThen : *inElse;
            continue;
          }
          scope.globals.erase(name);
          scope.imports.erase(name);
          scope.globalDefs.erase(name);
          scope.undecided[name] = {ifStmt->getLoc(), why};
        }
      }
    } else if (auto *tryStmt = llvm::dyn_cast<TryStmt>(stmt.get())) {
      const Block *chosen = &tryStmt->body;
      if (!importsResolve(scope, tryStmt->body))
        for (const TryStmt::Handler &h : tryStmt->handlers)
          if (importsResolve(scope, h.body)) {
            chosen = &h.body;
            break;
          }
      collectGlobals(scope, *chosen);
      if (chosen == &tryStmt->body)
        collectGlobals(scope, tryStmt->elseBody);
      collectGlobals(scope, tryStmt->finallyBody);
    } else {
      std::vector<std::string> names;
      if (auto *assign = llvm::dyn_cast<AssignStmt>(stmt.get())) {
        for (const ExprPtr &target : assign->targets)
          if (auto *name = llvm::dyn_cast<NameExpr>(target.get()))
            names.push_back(name->name);
      } else if (auto *ann = llvm::dyn_cast<AnnAssignStmt>(stmt.get())) {
        if (auto *name = llvm::dyn_cast<NameExpr>(ann->target.get()))
          if (ann->value)
            names.push_back(name->name);
      } else if (auto *other = llvm::dyn_cast<OtherStmt>(stmt.get())) {
        names = other->definedNames;
      }
      for (const std::string &name : names) {
        // What lookupGlobal would have found before this binding.
        ModuleScope::Shadowed before;
        if (auto g = scope.globals.find(name); g != scope.globals.end())
          before.value = g->second;
        else if (auto i = scope.imports.find(name); i != scope.imports.end())
          before.import = i->second;
        else if (auto d = scope.globalDefs.find(name);
                 d != scope.globalDefs.end())
          before.def = d->second;
        if (before.value || before.import || before.def)
          scope.shadowed[{stmt.get(), name}] = std::move(before);
        scope.globals.erase(name);
        scope.imports.erase(name);
        scope.undecided.erase(name);
        scope.globalDefs[name] = stmt.get();
      }
    }
  }
}

// `from M import n`: n of a Triton module, of a source module (a name it
// defines, or its submodule n), or an error naming M when M is not among the
// sources.
std::optional<FValue> Emitter::resolveImport(const ModuleScope::Import &import,
                                             StringRef alias, SMLoc loc) {
  StringRef module = import.module;
  if (!module.starts_with(".") && isTritonModule(module)) {
    FValue value = FValue::named(FValue::Kind::Module, "triton");
    llvm::SmallVector<StringRef> parts;
    module.split(parts, '.');
    if (!import.name.empty())
      parts.push_back(import.name);
    for (StringRef part : llvm::ArrayRef(parts).drop_front()) {
      std::optional<FValue> next = getAttribute(value, part, import.loc);
      if (!next)
        return std::nullopt;
      value = *next;
    }
    return value;
  }
  std::string file = findModuleFile(*current, module);
  std::string described = module.str();
  if (file.empty()) {
    // `from . import utils`, `from pkg import utils`: a submodule.
    if (!import.name.empty()) {
      std::string sub = module.ends_with(".")
                            ? module.str() + import.name
                            : module.str() + "." + import.name;
      file = findModuleFile(*current, sub);
      if (!file.empty()) {
        ModuleScope *scope = loadModule(file, import.loc);
        if (!scope)
          return std::nullopt;
        return moduleValue(*scope);
      }
    }
    static const char *const kHostLibraries[] = {
        "torch",       "numpy",      "math",      "os",        "sys",
        "typing",      "functools",  "itertools", "operator",  "dataclasses",
        "enum",        "warnings",   "logging",   "importlib", "packaging",
        "collections", "contextlib", "abc",       "re"};
    std::string top = module.split('.').first.str();
    if (llvm::is_contained(kHostLibraries, top)) {
      if (import.name.empty()) // `import torch`: torch.float32 is a dtype
        return FValue::named(FValue::Kind::Module, module.str());
      if (module == "torch")
        if (auto dtype = DType::parseTorch(import.name))
          return torchDType(*dtype);
      return error(loc, "'" + alias + "' comes from the host module '" +
                            described + "', which Triton kernels cannot use");
    }
    error(loc, "'" + alias + "' is imported from module '" + described +
                   "', which is not among the kernel's sources; add its file "
                   "to the triton_kernel srcs (kilnc --src FILE)");
    sourceMgr.PrintMessage(import.loc, llvm::SourceMgr::DK_Note,
                           "imported here");
    return std::nullopt;
  }
  ModuleScope *scope = loadModule(file, import.loc);
  if (!scope)
    return std::nullopt;
  if (import.name.empty())
    return moduleValue(*scope);
  ModuleScope *saved = current;
  current = scope;
  bool found = false;
  std::optional<FValue> value;
  auto key =
      std::make_pair(static_cast<const ModuleScope *>(scope), import.name);
  if (importsResolving.insert(key).second) {
    value = lookupGlobal(import.name, loc, found);
    importsResolving.erase(key);
  }
  if (!found && !value) {
    // Not defined there: a submodule of the package.
    std::string sub = findModuleFile(*scope, "." + import.name);
    current = saved;
    if (!sub.empty() && StringRef(file).ends_with("__init__.py")) {
      ModuleScope *subScope = loadModule(sub, import.loc);
      if (!subScope)
        return std::nullopt;
      return moduleValue(*subScope);
    }
    error(loc, "module '" + described + "' (" + file + ") has no name '" +
                   import.name + "'");
    sourceMgr.PrintMessage(import.loc, llvm::SourceMgr::DK_Note,
                           "imported here");
    return std::nullopt;
  }
  current = saved;
  return value;
}

// Module-level assignments are evaluated on first use, at compile time only.
std::optional<FValue> Emitter::evaluateGlobal(StringRef name, SMLoc loc) {
  auto it = current->globalDefs.find(name);
  if (it == current->globalDefs.end())
    return std::nullopt;
  // Read inside its own definition, the name is the earlier binding: not
  // the global's value, so not cached.
  bool inOwnDefinition = current->evaluating.count({it->second, name.str()});
  std::optional<FValue> value = evaluateBinding(name, it->second, loc);
  if (value && !inOwnDefinition)
    current->globals[name] = *value;
  return value;
}

// The value `stmt` binds to `name`. Where that value reads the name itself
// (`f = triton.constexpr_function(f)`), the name is the binding before it,
// as in Python.
std::optional<FValue> Emitter::evaluateBinding(StringRef name, const Stmt *stmt,
                                               SMLoc loc) {
  if (auto *other = llvm::dyn_cast<OtherStmt>(stmt)) {
    if (other->syntaxError.empty())
      return error(loc, "'" + name + "' is defined by a module-level '" +
                            other->what +
                            "' statement, which Triton kernels cannot use");
    if (other->jitDefinition) {
      sourceMgr.PrintMessage(other->syntaxErrorLoc, llvm::SourceMgr::DK_Error,
                             other->syntaxError);
      sourceMgr.PrintMessage(loc, llvm::SourceMgr::DK_Note,
                             "in '" + name + "', used here");
      return std::nullopt;
    }
    error(loc, "'" + name +
                   "' is defined by module-level code that Kiln cannot parse");
    sourceMgr.PrintMessage(other->syntaxErrorLoc, llvm::SourceMgr::DK_Note,
                           other->syntaxError);
    return std::nullopt;
  }
  std::pair<const Stmt *, std::string> key{stmt, name.str()};
  if (current->evaluating.count(key)) {
    auto before = current->shadowed.find(key);
    if (before == current->shadowed.end())
      return error(loc,
                   "the global '" + name + "' is defined in terms of itself");
    const ModuleScope::Shadowed &was = before->second;
    if (was.value)
      return *was.value;
    if (was.import) {
      ModuleScope *module = current;
      std::optional<FValue> value = resolveImport(*was.import, name, loc);
      current = module;
      return value;
    }
    return evaluateBinding(name, was.def, loc);
  }
  current->evaluating.insert(key);
  const Expr *valueExpr = nullptr;
  if (auto *assign = llvm::dyn_cast<AssignStmt>(stmt))
    valueExpr = assign->value.get();
  else
    valueExpr = llvm::cast<AnnAssignStmt>(stmt)->value.get();
  // Evaluate in a scope of its own: globals never see kernel locals.
  std::vector<Scope> savedScopes;
  std::swap(savedScopes, scopes);
  scopes.emplace_back();
  ModuleScope *module = current;
  globalsInProgress.emplace_back(current, stmt);
  // A platform probe (`_is_hip = is_hip()`) has its CUDA value: the
  // function comes from host code Kiln does not run.
  std::optional<bool> probe = platformProbe(valueExpr);
  std::optional<FValue> value;
  if (probe) {
    value = FValue::boolean(*probe);
  } else {
    // As kernel code first; what that cannot evaluate, as host Python
    // (`IS_BLACKWELL = get_device_capability()[0] in (10, 12)` after host
    // functions with try/except), reporting the first errors if both fail.
    HeldDiagnostics held(sourceMgr);
    value = evaluate(*valueExpr);
    HostError hostError;
    if (!value)
      if (const Stmt *top = statementHolding(module->ast->body, stmt)) {
        current = module;
        value = hostModuleValue(*module, top, *valueExpr, hostError);
      }
    // A Triton decorator a host factory defers (Fast-LLM's
    // `triton_jit = try_decorate(lambda: triton.jit)`, whose wrapper
    // applies it when called): the decorator itself.
    if (!value)
      value = deferredDecorator(*valueExpr);
    if (!value) {
      held.release();
      if (!hostError.message.empty())
        sourceMgr.PrintMessage(hostError.loc, llvm::SourceMgr::DK_Note,
                               "as host Python: " + hostError.message);
    }
  }
  globalsInProgress.pop_back();
  current = module;
  std::swap(savedScopes, scopes);
  current->evaluating.erase(key);
  if (!value)
    return std::nullopt;
  if (value->isRuntime())
    return error(loc, "the global '" + name +
                          "' is not a compile-time constant; kernels may only "
                          "use constant globals");
  return value;
}

std::optional<FValue> Emitter::deferredDecorator(const Expr &valueExpr) {
  auto *call = llvm::dyn_cast<CallExpr>(&valueExpr);
  if (!call)
    return std::nullopt;
  for (const ExprPtr &arg : call->args) {
    auto *lambda = llvm::dyn_cast<LambdaExpr>(arg.get());
    if (!lambda || !lambda->params.empty())
      continue;
    HeldDiagnostics held(sourceMgr);
    std::optional<FValue> value = evaluate(*lambda->body);
    if (value && value->kind == FValue::Kind::Marker &&
        StringRef(value->text).starts_with("triton."))
      return value;
  }
  return std::nullopt;
}

std::optional<FValue> Emitter::lookupGlobal(StringRef name, SMLoc loc,
                                            bool &found) {
  found = true;
  auto g = current->globals.find(name);
  if (g != current->globals.end())
    return g->second;
  auto imp = current->imports.find(name);
  if (imp != current->imports.end()) {
    ModuleScope::Import import = imp->second;
    ModuleScope *module = current;
    std::optional<FValue> value = resolveImport(import, name, loc);
    current = module;
    if (value)
      current->globals[name] = *value;
    return value;
  }
  if (current->globalDefs.count(name))
    return evaluateGlobal(name, loc);
  if (auto u = current->undecided.find(name); u != current->undecided.end()) {
    // A flag of whether Triton can run, that host checks of the machine's
    // drivers may clear (vLLM's HAS_TRITON): Kiln builds kernels for a
    // machine where it runs, as the kernels' own code assumes.
    if (name == "HAS_TRITON" || name == "TRITON_AVAILABLE" ||
        name == "_HAS_TRITON" || name == "IS_TRITON_AVAILABLE")
      return FValue::boolean(true);
    error(loc, "'" + name +
                   "' is bound under a module-level 'if' whose condition Kiln "
                   "cannot evaluate when compiling, so which binding upstream "
                   "Triton would use is not known");
    sourceMgr.PrintMessage(u->second.ifLoc, llvm::SourceMgr::DK_Note,
                           "the condition: " + u->second.why);
    return std::nullopt;
  }
  // A class body's code sees its module's globals.
  if (ModuleScope *module = current->enclosing) {
    ModuleScope *cls = current;
    current = module;
    std::optional<FValue> value = lookupGlobal(name, loc, found);
    current = cls;
    return value;
  }
  return lookupStarImport(name, loc, found);
}

std::optional<FValue> Emitter::lookupStarImport(StringRef name, SMLoc loc,
                                                bool &found) {
  found = false;
  if (name.starts_with("_"))
    return std::nullopt; // `import *` skips private names
  ModuleScope *importer = current;
  // The last star import binds last: it wins.
  for (size_t i = importer->starImports.size(); i-- > 0;) {
    ModuleScope::Import import = importer->starImports[i];
    std::string file = findModuleFile(*importer, import.module);
    if (file.empty())
      continue;
    ModuleScope *module = loadModule(file, import.loc);
    if (!module) {
      found = true;
      return std::nullopt;
    }
    // A module that star-imports itself, or a cycle of them: not again.
    if (module == importer || !starVisiting.insert(module).second)
      continue;
    current = module;
    std::optional<FValue> value = lookupGlobal(name, loc, found);
    current = importer;
    starVisiting.erase(module);
    if (found) {
      if (value)
        importer->globals[name] = *value;
      return value;
    }
  }
  return std::nullopt;
}

std::optional<FValue> Emitter::lookup(StringRef name, SMLoc loc) {
  if (!scopes.empty()) {
    auto it = scopes.back().find(name);
    if (it != scopes.back().end())
      return it->second;
  }
  bool found = false;
  std::optional<FValue> value = lookupGlobal(name, loc, found);
  if (found)
    return value;
  static const char *const kPythonBuiltins[] = {
      "range",   "min",     "max",   "len",        "int",
      "float",   "bool",    "print", "isinstance", "abs",
      "getattr", "hasattr", "tuple", "list",       "str"};
  if (llvm::is_contained(kPythonBuiltins, name))
    return FValue::named(FValue::Kind::Builtin, name.str());
  if (!frames.empty()) {
    auto ended = frames.back().endedInductionVariables.find(name);
    if (ended != frames.back().endedInductionVariables.end()) {
      error(loc, "name '" + name +
                     "' is the induction variable of a run-time loop that "
                     "has ended: it has no value after the loop (upstream "
                     "Triton leaves it undefined); keep the value in another "
                     "name inside the loop");
      sourceMgr.PrintMessage(ended->second, llvm::SourceMgr::DK_Note,
                             "the loop is here");
      return std::nullopt;
    }
  }
  return error(loc, "name '" + name + "' is not defined");
}

bool Emitter::isJit(const FunctionDefStmt &function) {
  // Compare syntactically: `triton.jit`, `jit` imported from triton. A
  // `@tl.constexpr` (or `@triton.constexpr_function`) helper computes
  // compile-time values from compile-time arguments: it is evaluated the
  // same way, inlined.
  return decoratedWith(function, [](StringRef name) {
    return name == "jit" || name == "constexpr" || name == "constexpr_function";
  });
}

bool Emitter::decoratedWith(const FunctionDefStmt &function,
                            llvm::function_ref<bool(StringRef)> named) {
  for (const ExprPtr &decorator : function.decorators) {
    const Expr *callee = decorator.get();
    if (auto *call = llvm::dyn_cast<CallExpr>(callee))
      callee = call->callee.get();
    if (auto *attr = llvm::dyn_cast<AttributeExpr>(callee)) {
      if (named(attr->attr))
        return true;
    } else if (auto *name = llvm::dyn_cast<NameExpr>(callee)) {
      if (named(name->name) || namesMarker(name, function, "triton.jit"))
        return true;
    }
  }
  return false;
}

// Aliases the syntax does not show: `triton_jit = triton.jit`
// (ArcticTraining), `tl_constexpr = tl.constexpr` imported from the
// library's own module, and a decorator a host factory defers (Fast-LLM's
// `triton_jit = try_decorate(lambda: triton.jit)`, evaluateBinding).
bool Emitter::namesMarker(const Expr *e, const FunctionDefStmt &function,
                          StringRef marker) {
  auto *name = llvm::dyn_cast_or_null<NameExpr>(e);
  auto module = functionModules.find(&function);
  if (!name || module == functionModules.end())
    return false;
  // Not an alias (an unbound name, a host value): no error of its own.
  HeldDiagnostics held(sourceMgr);
  ModuleScope *saved = current;
  current = module->second;
  bool found = false;
  std::optional<FValue> value = lookupGlobal(name->name, name->getLoc(), found);
  current = saved;
  return value && value->kind == FValue::Kind::Marker && value->text == marker;
}

const FunctionDefStmt *Emitter::findKernel(StringRef name,
                                           std::string *qualifiedName) {
  // By name: `kernel`, or `Cls.kernel` for a class's static method.
  std::vector<std::pair<std::string, const FunctionDefStmt *>> jitFunctions;
  auto decoratedJit = [&](const FunctionDefStmt &def) {
    return decoratedWith(def, [](StringRef n) { return n == "jit"; });
  };
  // The module's own jit functions: its top-level defs and those of the
  // module-level `if`/`try` branches collectGlobals took (`if has_triton():`
  // around the kernels), the ones the module's names are bound to.
  ModuleScope &main = *modules.front();
  auto bound = [&](const ModuleScope &scope, const FunctionDefStmt *def) {
    auto it = scope.globals.find(def->name);
    return it != scope.globals.end() &&
           it->second.kind == FValue::Kind::Function &&
           it->second.function == def;
  };
  std::vector<const FunctionDefStmt *> hostFunctions;
  std::function<void(const Block &, ModuleScope &, const std::string &)> visit =
      [&](const Block &block, ModuleScope &scope, const std::string &prefix) {
        for (const StmtPtr &stmt : block) {
          if (auto *def = llvm::dyn_cast<FunctionDefStmt>(stmt.get())) {
            if (!decoratedJit(*def)) {
              if (prefix.empty())
                hostFunctions.push_back(def);
            } else if (bound(scope, def)) {
              jitFunctions.push_back({prefix + def->name, def});
            }
          } else if (auto *cls = llvm::dyn_cast<ClassDefStmt>(stmt.get())) {
            auto it = scope.globals.find(cls->name);
            if (it == scope.globals.end())
              continue;
            if (ModuleScope *inner = scopeOfModuleValue(it->second))
              if (inner->enclosing)
                visit(cls->body, *inner, prefix + cls->name + ".");
          } else if (auto *ifStmt = llvm::dyn_cast<IfStmt>(stmt.get())) {
            visit(ifStmt->thenBody, scope, prefix);
            visit(ifStmt->elseBody, scope, prefix);
          } else if (auto *tryStmt = llvm::dyn_cast<TryStmt>(stmt.get())) {
            visit(tryStmt->body, scope, prefix);
            for (const TryStmt::Handler &h : tryStmt->handlers)
              visit(h.body, scope, prefix);
            visit(tryStmt->elseBody, scope, prefix);
            visit(tryStmt->finallyBody, scope, prefix);
          }
        }
      };
  visit(module.body, main, "");
  // A kernel a host function defines and returns (a factory that imports
  // triton lazily): its body's names (imports, defs, assignments) are the
  // kernel's globals, as the closure's would be.
  if (!name.empty() && llvm::none_of(jitFunctions, [&](const auto &f) {
        return f.first == name;
      }))
    for (const FunctionDefStmt *host : hostFunctions)
      for (const StmtPtr &stmt : host->body)
        if (auto *def = llvm::dyn_cast<FunctionDefStmt>(stmt.get()))
          if (def->name == name && decoratedJit(*def)) {
            collectGlobals(main, host->body);
            if (qualifiedName)
              *qualifiedName = def->name;
            return def;
          }
  // A jit function that did not parse: its syntax error, if it is the one
  // asked for (or, unnamed, the file's only jit function).
  const OtherStmt *unparsed = nullptr;
  unsigned unparsedCount = 0;
  for (const StmtPtr &stmt : module.body)
    if (auto *other = llvm::dyn_cast<OtherStmt>(stmt.get()))
      if (other->jitDefinition && !other->definedNames.empty()) {
        ++unparsedCount;
        if (name.empty() || other->definedNames.front() == name)
          unparsed = unparsed ? unparsed : other;
      }
  bool parsed = llvm::any_of(jitFunctions,
                             [&](const auto &f) { return f.first == name; });
  if (unparsed && !parsed &&
      (!name.empty() || (jitFunctions.empty() && unparsedCount == 1))) {
    sourceMgr.PrintMessage(unparsed->syntaxErrorLoc, llvm::SourceMgr::DK_Error,
                           unparsed->syntaxError);
    return nullptr;
  }
  std::string names;
  for (const auto &f : jitFunctions)
    names += (names.empty() ? "" : ", ") + f.first;
  SMLoc fileStart = SMLoc::getFromPointer(
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBufferStart());
  if (!name.empty()) {
    for (const auto &f : jitFunctions)
      if (f.first == name) {
        if (qualifiedName)
          *qualifiedName = f.first;
        return f.second;
      }
    error(fileStart,
          "no @triton.jit function named '" + name + "' in " + filename +
              (names.empty() ? " (it has none)" : " (it has: " + names + ")"));
    return nullptr;
  }
  if (jitFunctions.size() == 1) {
    if (qualifiedName)
      *qualifiedName = jitFunctions.front().first;
    return jitFunctions.front().second;
  }
  error(fileStart, jitFunctions.empty()
                       ? "no @triton.jit function in " + filename
                       : "several @triton.jit functions in " + filename + " (" +
                             names + "); choose one with -n");
  return nullptr;
}

bool Emitter::isConstexprAnnotation(const Expr *annotation,
                                    const FunctionDefStmt *function) {
  if (!annotation)
    return false;
  if (auto *attr = llvm::dyn_cast<AttributeExpr>(annotation))
    return attr->attr == "constexpr";
  if (auto *name = llvm::dyn_cast<NameExpr>(annotation))
    return name->name == "constexpr" ||
           (function && namesMarker(name, *function, "tl.constexpr"));
  if (auto *str = llvm::dyn_cast<StringExpr>(annotation))
    return StringRef(str->value).ends_with("constexpr");
  return false;
}

std::optional<ConstexprLiteral>
kiln::frontend::valueToLiteral(const FValue &v) {
  ConstexprLiteral lit;
  switch (v.kind) {
  case FValue::Kind::Int:
    lit.kind = ConstexprLiteral::Kind::Int;
    lit.intValue = v.intValue;
    lit.text = intText(v.intValue);
    return lit;
  case FValue::Kind::Bool:
    lit.kind = ConstexprLiteral::Kind::Bool;
    lit.intValue = v.intValue;
    lit.text = v.intValue ? "True" : "False";
    return lit;
  case FValue::Kind::Float:
    lit.kind = ConstexprLiteral::Kind::Float;
    lit.floatValue = v.floatValue;
    lit.text = std::to_string(v.floatValue);
    return lit;
  case FValue::Kind::String:
    lit.kind = ConstexprLiteral::Kind::String;
    lit.text = v.text;
    return lit;
  case FValue::Kind::None:
    lit.kind = ConstexprLiteral::Kind::None;
    lit.text = "None";
    return lit;
  case FValue::Kind::Function: // `score_mod: tl.constexpr = helper`
    lit.kind = ConstexprLiteral::Kind::Function;
    lit.function = v.function;
    lit.text = v.function->name;
    return lit;
  case FValue::Kind::DType: // `acc_dtype: tl.constexpr = tl.float32`
    if (v.type.isPointer || v.type.isBlock())
      return std::nullopt;
    lit.kind = ConstexprLiteral::Kind::DType;
    lit.dtype = v.type.element;
    lit.text = ("tl." + v.type.element.getLanguageName()).str();
    return lit;
  default:
    return std::nullopt;
  }
}

std::optional<std::vector<ParamDecl>>
Emitter::paramDecls(const FunctionDefStmt &kernel) {
  std::vector<ParamDecl> decls;
  for (const Param &p : kernel.params) {
    ParamDecl decl{
        p.name, isConstexprAnnotation(p.annotation.get(), &kernel), {}};
    decl.fromHeuristic =
        decl.isConstexpr && heuristicFor(kernel, p.name) != nullptr;
    if (!decl.isConstexpr && p.defaultValue &&
        llvm::isa<NoneExpr>(p.defaultValue.get()))
      decl.defaultsToNone = true;
    if (decl.isConstexpr && p.defaultValue) {
      // Evaluated now, reported only if the signature leaves it out: a
      // default computed by host code (`FP8_MAX: tl.constexpr =
      // torch.finfo(...).max`) does not matter when the value is given.
      std::string diagnostics;
      {
        CapturedDiagnostics captured(sourceMgr, diagnostics);
        scopes.emplace_back();
        std::optional<FValue> v = evaluate(*p.defaultValue);
        scopes.pop_back();
        std::optional<ConstexprLiteral> lit =
            v ? valueToLiteral(*v) : std::nullopt;
        if (v && !lit)
          error(p.defaultValue->getLoc(),
                "unsupported default value for a tl.constexpr parameter");
        if (lit)
          decl.defaultValue = *lit;
      }
      if (!decl.defaultValue)
        decl.defaultError =
            diagnostics.empty() ? "(no diagnostic)" : diagnostics;
    }
    decls.push_back(std::move(decl));
  }
  return decls;
}

FValue kiln::frontend::literalToValue(const ConstexprLiteral &lit) {
  switch (lit.kind) {
  case ConstexprLiteral::Kind::Int:
    return FValue::integer(lit.intValue);
  case ConstexprLiteral::Kind::Float:
    return FValue::floating(lit.floatValue);
  case ConstexprLiteral::Kind::Bool:
    return FValue::boolean(lit.intValue);
  case ConstexprLiteral::Kind::String:
    return FValue::string(lit.text);
  case ConstexprLiteral::Kind::DType:
    return FValue::dtype(TritonType{lit.dtype, false, {}});
  case ConstexprLiteral::Kind::None:
    return FValue::none();
  case ConstexprLiteral::Kind::Function:
    if (lit.function) {
      FValue f;
      f.kind = FValue::Kind::Function;
      f.function = lit.function;
      return f;
    }
    return FValue::none(); // a name: Emitter::constexprValue resolves it
  }
  return FValue::none();
}

std::optional<FValue> Emitter::constexprValue(const ConstexprLiteral &lit,
                                              StringRef param, SMLoc loc) {
  if (lit.kind != ConstexprLiteral::Kind::Function || lit.function)
    return literalToValue(lit);
  ModuleScope *saved = current;
  std::optional<FValue> value = resolveFunctionName(lit.text, param, loc);
  current = saved;
  return value;
}

// A function a signature names for a constexpr parameter, as Python would
// find the object the caller passes: a name or dotted path the kernel's
// module sees (`helper`, `mods.helper`); else `pkg.mod.helper` among the
// sources; else, for a bare name, the one source module that defines a jit
// function of that name.
std::optional<FValue> Emitter::resolveFunctionName(StringRef text,
                                                   StringRef param, SMLoc loc) {
  auto notJit = [&](const FValue &v) -> std::optional<FValue> {
    if (v.kind == FValue::Kind::Function && isJit(*v.function))
      return v;
    return error(
        loc,
        "parameter '" + param + "' = " + text + ": " +
            (v.kind == FValue::Kind::Function
                 ? "'" + v.function->name + "' is not a @triton.jit function"
                 : "names " + v.describe() + ", not a @triton.jit function"));
  };
  llvm::SmallVector<StringRef> parts;
  text.split(parts, '.');
  current = modules.front().get();
  bool found = false;
  std::optional<FValue> value = lookupGlobal(parts.front(), loc, found);
  if (found) {
    if (!value)
      return std::nullopt;
    for (StringRef attr : llvm::ArrayRef(parts).drop_front()) {
      value = getAttribute(*value, attr, loc);
      if (!value)
        return std::nullopt;
    }
    return notJit(*value);
  }
  std::string name = parts.back().str();
  auto definedIn = [&](ModuleScope &scope) -> std::optional<FValue> {
    auto it = scope.globals.find(name);
    if (it == scope.globals.end())
      return std::nullopt;
    return it->second;
  };
  if (parts.size() > 1) {
    std::string moduleName = llvm::join(llvm::ArrayRef(parts).drop_back(), ".");
    std::string file = findModuleFile(*modules.front(), moduleName);
    if (file.empty())
      return error(loc, "parameter '" + param + "' = " + text +
                            ": no source module '" + moduleName +
                            "' (pass its file with --src)");
    ModuleScope *scope = loadModule(file, loc);
    if (!scope)
      return std::nullopt;
    std::optional<FValue> f = definedIn(*scope);
    if (!f)
      return error(loc, "parameter '" + param + "' = " + text + ": module '" +
                            moduleName + "' defines no '" + name + "'");
    return notJit(*f);
  }
  // A bare name the kernel's module does not bind: the sources that define
  // it (read first, so that only those are parsed).
  std::vector<std::pair<std::string, FValue>> candidates;
  std::string pattern = "def " + name + "(";
  for (const std::string &file : sourceFiles) {
    auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/true);
    if (!buffer || !(*buffer)->getBuffer().contains(pattern))
      continue;
    ModuleScope *scope = loadModule(file, loc);
    if (!scope)
      continue;
    if (std::optional<FValue> f = definedIn(*scope);
        f && f->kind == FValue::Kind::Function && isJit(*f->function))
      candidates.push_back({file, *f});
  }
  if (candidates.size() == 1)
    return candidates.front().second;
  if (candidates.empty())
    return error(loc, "parameter '" + param +
                          "' is tl.constexpr and needs "
                          "a value (an int, float, bool, string, tl dtype or "
                          "@triton.jit function); '" +
                          text +
                          "' is none of those: no @triton.jit function of "
                          "that name in the kernel's module or the sources");
  std::string files;
  for (const auto &c : candidates)
    files += "\n  " + c.first;
  return error(loc, "parameter '" + param + "' = " + text +
                        ": several source modules define a @triton.jit '" +
                        name + "'; write the module's dotted path:" + files);
}

mlir::OwningOpRef<mlir::ModuleOp>
Emitter::emitKernel(const FunctionDefStmt &kernel, const KernelSpec &spec) {
  mlir::OwningOpRef<mlir::ModuleOp> moduleOp =
      mlir::ModuleOp::create(location(kernel.getLoc()));
  builder.setInsertionPointToEnd(moduleOp->getBody());
  kernelNumWarps = spec.numWarps;
  readsNumWarps = false;

  llvm::SmallVector<mlir::Type> argTypes;
  for (const ParamSpec *leaf : spec.leaves()) {
    const ParamSpec &p = *leaf;
    if (!p.isKernelArgument())
      continue;
    if (p.type.isTensorDescriptor()) {
      // The descriptor ABI (docs/architecture.md): tensor map, base pointer,
      // shape (i32 each), strides (i64 each).
      size_t rank = p.type.blockShape.size();
      argTypes.push_back(kiln::TensorMapType::get(&context));
      argTypes.push_back(
          kiln::PointerType::get(p.type.element.toMLIR(&context)));
      argTypes.append(rank, builder.getI32Type());
      argTypes.append(rank, builder.getI64Type());
      continue;
    }
    argTypes.push_back(p.type.toMLIR(&context));
  }
  auto funcType = builder.getFunctionType(argTypes, {});
  auto func = mlir::func::FuncOp::create(builder, location(kernel.nameLoc),
                                         kernel.name, funcType);
  func.setPublic();
  mlir::Block *entry = func.addEntryBlock();
  builder.setInsertionPointToStart(entry);

  scopes.emplace_back();
  frames.push_back({&kernel, SMLoc(), std::nullopt, false});
  unsigned argIndex = 0;
  bool bound = true;
  // A parameter's value; a tuple's elements take the entry point's arguments
  // in order, as KernelSpec::leaves lists them.
  std::function<FValue(const ParamSpec &)> bind = [&](const ParamSpec &p) {
    if (p.isTuple) {
      std::vector<FValue> elements;
      for (const ParamSpec &element : p.elements)
        elements.push_back(bind(element));
      return FValue::tuple(std::move(elements));
    }
    if (p.isConstexpr) {
      SMLoc loc = kernel.nameLoc;
      for (const Param &param : kernel.params)
        if (param.name == p.name)
          loc = param.loc;
      std::optional<FValue> value =
          constexprValue(p.value, p.displayName(), loc);
      bound = bound && value;
      return value.value_or(FValue::none());
    }
    // `:1`: the constant 1 of the parameter's own type, so that the code
    // types exactly as in the variants that take the argument.
    if (p.equalToOne)
      return constant(FValue::integer(1), p.type, kernel.nameLoc);
    if (p.type.isTensorDescriptor()) {
      FValue descriptor = descriptorParameter(func, argIndex, p.type,
                                              p.divisibility, kernel.nameLoc);
      argIndex += 2 + 2 * p.type.blockShape.size();
      return descriptor;
    }
    if (p.divisibility > 1)
      func.setArgAttr(argIndex, "kiln.divisibility",
                      builder.getI32IntegerAttr(p.divisibility));
    return FValue::runtime(entry->getArgument(argIndex++), p.type);
  };
  for (const ParamSpec &p : spec.params)
    scopes.back()[p.name] = bind(p);
  bool ok = bound && emitBlock(kernel.body);
  if (ok && frames.back().returnValue && !frames.back().returnValue->isNone()) {
    error(kernel.getLoc(), "a kernel cannot return a value");
    ok = false;
  }
  frames.pop_back();
  scopes.pop_back();
  if (!ok)
    return nullptr;
  builder.setInsertionPointToEnd(entry);
  mlir::func::ReturnOp::create(builder, location(kernel.getLoc()));
  if (readsNumWarps)
    (*moduleOp)->setAttr("kiln.fixed_warps", builder.getUnitAttr());
  return moduleOp;
}

FValue Emitter::descriptorParameter(mlir::func::FuncOp func, unsigned first,
                                    const TritonType &type,
                                    unsigned extentDivisibility, SMLoc loc) {
  // The launcher checks what upstream's host TensorDescriptor asserts: the
  // base is 16-byte aligned, the strides but the last are multiples of 16
  // bytes, the last is 1. The code may assume it, and the extents' hint
  // (`:16`, the aligned variant's, which the launcher checks too): without
  // it a block's bounds mask varies within every vector along the
  // contiguous dimension, and its loads cannot be vectorized or pipelined.
  size_t rank = type.blockShape.size();
  mlir::Block &entry = func.getBody().front();
  mlir::Value tensorMap = entry.getArgument(first);
  mlir::Value base = entry.getArgument(first + 1);
  func.setArgAttr(first + 1, "kiln.divisibility",
                  builder.getI32IntegerAttr(16));
  int64_t strideDivisibility =
      std::max<int64_t>(1, 128 / type.element.getBitWidth());
  std::vector<FValue> shape, strides;
  llvm::SmallVector<mlir::Value> shapeValues, strideValues;
  for (size_t d = 0; d < rank; ++d) {
    mlir::Value extent = entry.getArgument(first + 2 + d);
    if (extentDivisibility > 1)
      func.setArgAttr(first + 2 + d, "kiln.divisibility",
                      builder.getI32IntegerAttr(extentDivisibility));
    shapeValues.push_back(extent);
    shape.push_back(
        FValue::runtime(extent, TritonType{DType(ScalarKind::I32), false, {}}));
  }
  TritonType i64{DType(ScalarKind::I64), false, {}};
  for (size_t d = 0; d < rank; ++d) {
    unsigned index = first + 2 + rank + d;
    FValue stride = FValue::runtime(entry.getArgument(index), i64);
    if (d + 1 == rank)
      stride = constant(FValue::integer(1), i64, loc);
    else if (strideDivisibility > 1)
      func.setArgAttr(index, "kiln.divisibility",
                      builder.getI32IntegerAttr(strideDivisibility));
    strideValues.push_back(stride.value);
    strides.push_back(stride);
  }
  mlir::Value desc = kiln::MakeTensorDescOp::create(
      builder, location(loc), type.toMLIR(&context), base, shapeValues,
      strideValues, tensorMap, kiln::PaddingOption::Zero);
  return FValue::descriptor(desc, type, std::move(shape), std::move(strides));
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

/// Whether `body` has a `return` statement, in nested blocks too (not in
/// nested function definitions).
static bool containsReturn(const Block &body) {
  for (const StmtPtr &stmt : body) {
    switch (stmt->getKind()) {
    case Stmt::Kind::Return:
      return true;
    case Stmt::Kind::If: {
      auto &s = llvm::cast<IfStmt>(*stmt);
      if (containsReturn(s.thenBody) || containsReturn(s.elseBody))
        return true;
      break;
    }
    case Stmt::Kind::For: {
      auto &s = llvm::cast<ForStmt>(*stmt);
      if (containsReturn(s.body) || containsReturn(s.elseBody))
        return true;
      break;
    }
    case Stmt::Kind::While: {
      auto &s = llvm::cast<WhileStmt>(*stmt);
      if (containsReturn(s.body) || containsReturn(s.elseBody))
        return true;
      break;
    }
    default:
      break;
    }
  }
  return false;
}

bool Emitter::emitBlock(const Block &block) {
  return emitStatements(block.begin(), block.end());
}

bool Emitter::emitStatements(Block::const_iterator begin,
                             Block::const_iterator end) {
  for (auto it = begin; it != end; ++it) {
    // Code after a return that was taken (at compile time, or on every path
    // of a returning if) is dead.
    if (frames.back().returned)
      return true;
    Frame &frame = frames.back();
    frame.pending.emplace_back(std::next(it), end);
    auto *ifStmt = llvm::dyn_cast<IfStmt>(it->get());
    bool ok = ifStmt && frame.loopDepth == 0 &&
                      (containsReturn(ifStmt->thenBody) ||
                       containsReturn(ifStmt->elseBody))
                  ? emitReturningIf(*ifStmt)
                  : emitStatement(**it);
    frames.back().pending.pop_back();
    if (!ok)
      return false;
  }
  return true;
}

bool Emitter::emitAssign(const Expr &target, const FValue &value) {
  if (auto *name = llvm::dyn_cast<NameExpr>(&target)) {
    scopes.back()[name->name] = value;
    return true;
  }
  const std::vector<ExprPtr> *elements = nullptr;
  if (auto *tuple = llvm::dyn_cast<TupleExpr>(&target))
    elements = &tuple->elements;
  else if (auto *list = llvm::dyn_cast<ListExpr>(&target))
    elements = &list->elements;
  if (elements) {
    if (value.kind != FValue::Kind::Tuple)
      return error(target.getLoc(),
                   "cannot unpack " + value.describe() + " into " +
                       std::to_string(elements->size()) + " names"),
             false;
    if (value.elements.size() != elements->size())
      return error(target.getLoc(),
                   "cannot unpack a tuple of " +
                       std::to_string(value.elements.size()) + " into " +
                       std::to_string(elements->size()) + " names"),
             false;
    for (size_t i = 0; i < elements->size(); ++i)
      if (!emitAssign(*(*elements)[i], value.elements[i]))
        return false;
    return true;
  }
  return error(target.getLoc(),
               "only names and tuples of names can be assigned to in a "
               "Triton kernel"),
         false;
}

bool Emitter::emitStatement(const Stmt &stmt) {
  // Unrolled tl.static_range loops and inlined helpers replay statements; a
  // budget keeps a runaway unroll an error instead of a compile that never
  // ends.
  if (++statementsEmitted > statementBudget)
    return error(stmt.getLoc(),
                 "the kernel is too large: more than " +
                     std::to_string(statementBudget) +
                     " statements after unrolling tl.static_range loops and "
                     "inlining helpers"),
           false;
  switch (stmt.getKind()) {
  case Stmt::Kind::Expr: {
    auto &s = llvm::cast<ExprStmt>(stmt);
    if (llvm::isa<StringExpr>(s.value.get()))
      return true; // docstring
    return evaluate(*s.value).has_value();
  }
  case Stmt::Kind::Assign: {
    auto &s = llvm::cast<AssignStmt>(stmt);
    std::optional<FValue> value = evaluate(*s.value);
    if (!value)
      return false;
    // Upstream makes an assigned python number a tensor of its own type.
    for (const ExprPtr &target : s.targets)
      if (!emitAssign(*target, value->asTyped()))
        return false;
    return true;
  }
  case Stmt::Kind::AnnAssign: {
    auto &s = llvm::cast<AnnAssignStmt>(stmt);
    if (!s.value)
      return true;
    std::optional<FValue> value = evaluate(*s.value);
    if (!value)
      return false;
    // `x: tl.constexpr = 0.5` stays a weak number; any other annotation is
    // an ordinary assignment upstream.
    bool constexprAnnotated = isConstexprAnnotation(
        s.annotation.get(), frames.empty() ? nullptr : frames.back().function);
    return emitAssign(*s.target,
                      constexprAnnotated ? *value : value->asTyped());
  }
  case Stmt::Kind::AugAssign: {
    auto &s = llvm::cast<AugAssignStmt>(stmt);
    if (!llvm::isa<NameExpr>(s.target.get()))
      return error(s.target->getLoc(),
                   "augmented assignment needs a plain name as its target"),
             false;
    std::optional<FValue> current = evaluate(*s.target);
    std::optional<FValue> rhs = current ? evaluate(*s.value) : std::nullopt;
    if (!rhs)
      return false;
    std::optional<FValue> result = binary(s.op, *current, *rhs, s.getLoc());
    return result && emitAssign(*s.target, result->asTyped());
  }
  case Stmt::Kind::Return: {
    auto &s = llvm::cast<ReturnStmt>(stmt);
    FValue value = FValue::none();
    if (s.value) {
      std::optional<FValue> v = evaluate(*s.value);
      if (!v)
        return false;
      // A jit function returns numbers as tensors (a constexpr function
      // returns them as they are).
      const FunctionDefStmt *function = frames.back().function;
      value = function && !isConstexprFunction(*function) ? v->asTyped() : *v;
    }
    frames.back().returnValue = value;
    frames.back().returned = true;
    return true;
  }
  case Stmt::Kind::Pass:
    return true;
  case Stmt::Kind::If:
    return emitIf(llvm::cast<IfStmt>(stmt));
  case Stmt::Kind::For: {
    // `frames` may grow while the loop is emitted: index it.
    size_t frame = frames.size() - 1;
    ++frames[frame].loopDepth;
    bool ok = emitFor(llvm::cast<ForStmt>(stmt));
    --frames[frame].loopDepth;
    return ok;
  }
  case Stmt::Kind::While: {
    // `frames` may grow while the loop is emitted: index it.
    size_t frame = frames.size() - 1;
    ++frames[frame].loopDepth;
    bool ok = emitWhile(llvm::cast<WhileStmt>(stmt));
    --frames[frame].loopDepth;
    return ok;
  }
  case Stmt::Kind::Assert: {
    auto &s = llvm::cast<AssertStmt>(stmt);
    std::optional<FValue> cond = evaluate(*s.cond);
    if (!cond)
      return false;
    if (cond->isRuntime()) {
      // Run-time asserts are device_asserts, kept in debug builds only.
      if (!debug)
        return true;
      std::string message = assertMessage(s.message.get());
      return emitDeviceAssert(*this, *cond, message, s.getLoc(),
                              s.cond->getLoc());
    }
    std::optional<bool> truth = truthiness(*cond, s.cond->getLoc());
    if (!truth)
      return false;
    if (!*truth) {
      std::string message = "assertion failed";
      if (s.message)
        message += ": " + assertMessage(s.message.get());
      if (debug)
        return error(s.getLoc(), message), false;
      // Upstream makes every kernel `assert` a device_assert, which builds
      // without debug drop: the kernel compiles, so Kiln's does too, and says
      // so.
      sourceMgr.PrintMessage(
          s.getLoc(), llvm::SourceMgr::DK_Warning,
          message + " (false at compile time; dropped as upstream drops "
                    "asserts without debug, an error with kilnc --debug)");
    }
    return true;
  }
  case Stmt::Kind::Break:
  case Stmt::Kind::Continue:
    return error(stmt.getLoc(), "'break' and 'continue' are not supported in "
                                "Triton kernels"),
           false;
  case Stmt::Kind::FunctionDef:
    return error(stmt.getLoc(), "nested function definitions are not supported "
                                "in Triton kernels"),
           false;
  case Stmt::Kind::Import:
  case Stmt::Kind::ImportFrom:
    return error(stmt.getLoc(), "imports inside a kernel are not supported"),
           false;
  case Stmt::Kind::Raise:
    // Reached: upstream rejects it too (a raise in a branch that constexpr
    // evaluation removes is never emitted).
    return error(stmt.getLoc(), "'raise' is not supported in Triton kernels "
                                "(only in a branch that tl.constexpr values "
                                "rule out)"),
           false;
  case Stmt::Kind::Try:
    return error(stmt.getLoc(), "'try' statements are not supported in Triton "
                                "kernels"),
           false;
  case Stmt::Kind::ClassDef:
  case Stmt::Kind::Other:
    return error(stmt.getLoc(), "this statement is not supported in Triton "
                                "kernels"),
           false;
  }
  return false;
}

std::optional<bool> Emitter::truthiness(const FValue &v, SMLoc loc) {
  switch (v.kind) {
  case FValue::Kind::Int:
  case FValue::Kind::Bool:
    return v.intValue != 0;
  case FValue::Kind::Float:
    return v.floatValue != 0;
  case FValue::Kind::None:
    return false;
  case FValue::Kind::String:
    return !v.text.empty();
  case FValue::Kind::Tuple:
    return !v.elements.empty();
  case FValue::Kind::Runtime:
    error(loc, "a run-time value cannot be used as a compile-time condition");
    return std::nullopt;
  default:
    return true;
  }
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

static std::optional<__int128> parseIntLiteral(StringRef digits) {
  llvm::APInt v;
  if (digits.getAsInteger(0, v) || v.getActiveBits() > 127)
    return std::nullopt;
  v = v.zextOrTrunc(128); // its width may exceed its active bits
  return __int128(v.extractBitsAsZExtValue(64, 64)) << 64 |
         v.extractBitsAsZExtValue(64, 0);
}

// Python's str() (repr() with `repr`) of a compile-time value, as
// upstream formats an f-string's fields; nullopt for other values.
static std::optional<std::string> pythonText(const FValue &v, bool repr) {
  switch (v.kind) {
  case FValue::Kind::Int:
    return intText(v.intValue);
  case FValue::Kind::Bool:
    return std::string(v.intValue ? "True" : "False");
  case FValue::Kind::None:
    return std::string("None");
  case FValue::Kind::String:
    return repr ? "'" + v.text + "'" : v.text;
  case FValue::Kind::Float:
    return floatText(v.floatValue);
  case FValue::Kind::DType:
    if (v.type.isPointer && !v.type.isBlockPointer() && v.type.shape.empty())
      return "pointer<" + v.type.element.getShortName().str() + ">";
    return v.type.str();
  case FValue::Kind::Tuple: {
    std::string text = "(";
    for (size_t i = 0; i < v.elements.size(); ++i) {
      std::optional<std::string> element = pythonText(v.elements[i], true);
      if (!element)
        return std::nullopt;
      text += (i ? ", " : "") + *element;
    }
    return text + (v.elements.size() == 1 ? ",)" : ")");
  }
  default:
    return std::nullopt;
  }
}

// An `assert`'s message: a string literal, or an f-string of compile-time
// values; other messages are not shown.
std::string Emitter::assertMessage(const Expr *message) {
  if (!message)
    return "";
  if (auto *str = llvm::dyn_cast<StringExpr>(message))
    return str->value;
  if (auto *fstring = llvm::dyn_cast<FStringExpr>(message))
    if (std::optional<FValue> text = evaluateFString(*fstring))
      return text->text;
  return "";
}

std::optional<FValue> Emitter::evaluateFString(const FStringExpr &expr) {
  std::optional<std::string> text = expr.format(
      [&](const FStringExpr::Field &field) -> std::optional<std::string> {
        std::optional<FValue> value = evaluate(*field.value);
        if (!value)
          return std::nullopt;
        std::optional<std::string> piece = pythonText(
            *value, field.conversion == 'r' || field.conversion == 'a');
        if (!piece)
          return error(field.value->getLoc(),
                       "an f-string in a kernel formats compile-time values "
                       "only (as upstream Triton), not " +
                           value->describe());
        return piece;
      });
  if (!text)
    return std::nullopt;
  return FValue::string(*text);
}

std::optional<FValue> Emitter::evaluate(const Expr &expr) {
  switch (expr.getKind()) {
  case Expr::Kind::Name:
    return lookup(llvm::cast<NameExpr>(expr).name, expr.getLoc());
  case Expr::Kind::Int: {
    auto v = parseIntLiteral(llvm::cast<IntExpr>(expr).digits);
    if (!v)
      return error(expr.getLoc(), "integer literal does not fit in 128 bits");
    return FValue::integer(*v);
  }
  case Expr::Kind::Float:
    return FValue::floating(llvm::cast<FloatExpr>(expr).value);
  case Expr::Kind::String:
    return FValue::string(llvm::cast<StringExpr>(expr).value);
  case Expr::Kind::FString:
    return evaluateFString(llvm::cast<FStringExpr>(expr));
  case Expr::Kind::Bool:
    return FValue::boolean(llvm::cast<BoolExpr>(expr).value);
  case Expr::Kind::None:
    return FValue::none();
  case Expr::Kind::Ellipsis:
    return error(expr.getLoc(), "'...' is not supported in Triton kernels");
  case Expr::Kind::Attribute: {
    auto &e = llvm::cast<AttributeExpr>(expr);
    std::optional<FValue> base = evaluate(*e.value);
    if (!base)
      return std::nullopt;
    return getAttribute(*base, e.attr, e.getLoc());
  }
  case Expr::Kind::Call:
    return evaluateCall(llvm::cast<CallExpr>(expr));
  case Expr::Kind::Binary: {
    auto &e = llvm::cast<BinaryExpr>(expr);
    std::optional<FValue> lhs = evaluate(*e.lhs);
    std::optional<FValue> rhs = lhs ? evaluate(*e.rhs) : std::nullopt;
    if (!rhs)
      return std::nullopt;
    return binary(e.op, *lhs, *rhs, e.getLoc());
  }
  case Expr::Kind::Unary: {
    auto &e = llvm::cast<UnaryExpr>(expr);
    std::optional<FValue> operand = evaluate(*e.operand);
    if (!operand)
      return std::nullopt;
    return unary(e.op, *operand, e.getLoc());
  }
  case Expr::Kind::Compare:
    return evaluateCompare(llvm::cast<CompareExpr>(expr));
  case Expr::Kind::BoolOp:
    return evaluateBoolOp(llvm::cast<BoolOpExpr>(expr));
  case Expr::Kind::IfExp: {
    auto &e = llvm::cast<IfExpExpr>(expr);
    std::optional<FValue> cond = evaluate(*e.cond);
    if (!cond)
      return std::nullopt;
    if (cond->isRuntime())
      return emitConditionalExpr(e, *cond);
    std::optional<bool> truth = truthiness(*cond, e.cond->getLoc());
    if (!truth)
      return std::nullopt;
    return evaluate(*truth ? *e.thenValue : *e.elseValue);
  }
  case Expr::Kind::Subscript:
    return evaluateSubscript(llvm::cast<SubscriptExpr>(expr));
  case Expr::Kind::Tuple:
  case Expr::Kind::List: {
    const auto &elements = expr.getKind() == Expr::Kind::Tuple
                               ? llvm::cast<TupleExpr>(expr).elements
                               : llvm::cast<ListExpr>(expr).elements;
    std::vector<FValue> values;
    for (const ExprPtr &e : elements) {
      std::optional<FValue> v = evaluate(*e);
      if (!v)
        return std::nullopt;
      values.push_back(*v);
    }
    return FValue::tuple(std::move(values));
  }
  case Expr::Kind::Dict:
    return evaluateDict(llvm::cast<DictExpr>(expr));
  case Expr::Kind::Slice:
    return error(expr.getLoc(), "a slice is only valid inside a subscript");
  case Expr::Kind::Lambda:
    return error(expr.getLoc(), "lambdas are not supported in Triton kernels");
  case Expr::Kind::ListComp: {
    auto &comp = llvm::cast<ListCompExpr>(expr);
    return error(comp.generators.front().loc,
                 std::string(comp.generator ? "generator expressions"
                             : comp.key     ? "dict comprehensions"
                                            : "list comprehensions") +
                     " are not supported in Triton kernels");
  }
  case Expr::Kind::Starred:
    return error(expr.getLoc(),
                 "'*' unpacking is only valid among a call's arguments");
  }
  return std::nullopt;
}

std::optional<FValue> Emitter::evaluateCompare(const CompareExpr &expr) {
  std::optional<FValue> lhs = evaluate(*expr.operands[0]);
  if (!lhs)
    return std::nullopt;
  std::optional<FValue> result;
  for (size_t i = 0; i < expr.ops.size(); ++i) {
    std::optional<FValue> rhs = evaluate(*expr.operands[i + 1]);
    if (!rhs)
      return std::nullopt;
    std::optional<FValue> cmp =
        pythonOperator(expr.ops[i], *lhs, *rhs, expr.opLocs[i]);
    if (!cmp)
      return std::nullopt;
    // Chained comparisons combine like `and`: `a < b < c` is (a<b) & (b<c).
    result = result ? binary("&", *result, *cmp, expr.opLocs[i]) : cmp;
    if (!result)
      return std::nullopt;
    lhs = rhs;
  }
  return result;
}

std::optional<FValue> Emitter::pythonOperator(StringRef op, const FValue &lhs,
                                              const FValue &rhs, SMLoc loc) {
  if (!isComparison(op))
    return binary(op, lhs, rhs, loc);
  return binary(op, numberAsOwnType(lhs, rhs, loc),
                numberAsOwnType(rhs, lhs, loc), loc);
}

std::optional<FValue> Emitter::evaluateBoolOp(const BoolOpExpr &expr) {
  // Compile-time operands follow Python: the first operand that decides the
  // result, else the last one. From the first run-time value on, the
  // operands are booleans (int1 scalars or blocks) combined with & or |,
  // broadcast (no short circuit): upstream's logical_and / logical_or. A
  // compile-time operand still decides there, as upstream's short circuit
  // on constexprs (`if i == n - 1 and HAS_STATE:` with HAS_STATE False is
  // `if False:`, its branch never emitted); one that does not is dropped.
  // A lone run-time operand is the result as it is (`FLAG and n` is n, an
  // int32, with FLAG true), as upstream returns it.
  StringRef op = expr.isAnd ? "&" : "|";
  std::optional<FValue> last;
  std::optional<FValue> combined; // the run-time boolean so far
  std::optional<FValue> lone;     // the first run-time operand, uncast
  unsigned runtimeOperands = 0;
  for (const ExprPtr &operand : expr.operands) {
    last = evaluate(*operand);
    if (!last)
      return std::nullopt;
    SMLoc loc = operand->getLoc();
    if (last->isRuntime() && last->type.isPointer)
      return error(loc, std::string("'") + (expr.isAnd ? "and" : "or") +
                            "' needs booleans or numbers, got " +
                            last->describe());
    if (combined || last->isRuntime()) {
      if (!last->isRuntime()) {
        std::optional<bool> truth = truthiness(*last, loc);
        if (!truth)
          return std::nullopt;
        if (expr.isAnd != *truth)
          return last;
        continue;
      }
      if (++runtimeOperands == 1)
        lone = *last;
      std::optional<FValue> b = castTo(*last, DType(ScalarKind::I1), loc);
      combined = combined ? binary(op, *combined, *b, loc) : b;
      if (!combined)
        return std::nullopt;
      continue;
    }
    std::optional<bool> truth = truthiness(*last, loc);
    if (!truth)
      return std::nullopt;
    if (expr.isAnd != *truth)
      return last;
  }
  if (runtimeOperands == 1)
    return lone;
  return combined ? combined : last;
}

/// Whether `a` and `b` are the same dict key, as Python compares them:
/// numbers by value (`1 == 1.0 == True`), strings by text, dtypes by type.
static bool sameDictKey(const FValue &a, const FValue &b) {
  if (a.isNumber() && b.isNumber()) {
    if (a.kind == FValue::Kind::Float || b.kind == FValue::Kind::Float) {
      auto asDouble = [](const FValue &v) {
        return v.kind == FValue::Kind::Float ? v.floatValue
                                             : double(v.intValue);
      };
      return asDouble(a) == asDouble(b);
    }
    return a.intValue == b.intValue;
  }
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case FValue::Kind::String:
    return a.text == b.text;
  case FValue::Kind::None:
    return true;
  case FValue::Kind::DType:
    return a.type == b.type;
  case FValue::Kind::Tuple:
    return a.elements.size() == b.elements.size() &&
           std::equal(a.elements.begin(), a.elements.end(), b.elements.begin(),
                      sameDictKey);
  default:
    return false;
  }
}

/// The index of `key`'s value in `dict`'s elements (key, value, key, ...),
/// or none.
static std::optional<size_t> dictValueIndex(const FValue &dict,
                                            const FValue &key) {
  for (size_t i = 0; i + 1 < dict.elements.size(); i += 2)
    if (sameDictKey(dict.elements[i], key))
      return i + 1;
  return std::nullopt;
}

/// Whether `v` can key a compile-time dict: Python's hashable constants.
static bool isDictKey(const FValue &v) {
  switch (v.kind) {
  case FValue::Kind::Tuple:
    return llvm::all_of(v.elements, isDictKey);
  case FValue::Kind::Int:
  case FValue::Kind::Float:
  case FValue::Kind::Bool:
  case FValue::Kind::None:
  case FValue::Kind::String:
  case FValue::Kind::DType:
    return true;
  default:
    return false;
  }
}

// A dict display of compile-time keys (`{tl.float16: "fp16", ...}` in a
// constexpr function), looked up by a compile-time key. A later entry with
// an equal key replaces the earlier one, as in Python.
std::optional<FValue> Emitter::evaluateDict(const DictExpr &expr) {
  FValue dict = FValue::named(FValue::Kind::Dict, "");
  for (size_t i = 0; i < expr.keys.size(); ++i) {
    if (!expr.keys[i])
      return error(expr.values[i]->getLoc(),
                   "'**' unpacking in a dict is not supported in Triton "
                   "kernels");
    std::optional<FValue> key = evaluate(*expr.keys[i]);
    if (!key)
      return std::nullopt;
    if (!isDictKey(*key))
      return error(expr.keys[i]->getLoc(),
                   "a dict key must be a compile-time number, string, None, "
                   "dtype or tuple of them, not " +
                       key->describe());
    std::optional<FValue> value = evaluate(*expr.values[i]);
    if (!value)
      return std::nullopt;
    if (std::optional<size_t> at = dictValueIndex(dict, *key)) {
      dict.elements[*at] = *value;
      continue;
    }
    dict.elements.push_back(*key);
    dict.elements.push_back(*value);
  }
  return dict;
}

std::optional<FValue> Emitter::evaluateSubscript(const SubscriptExpr &expr) {
  std::optional<FValue> base = evaluate(*expr.value);
  if (!base)
    return std::nullopt;
  if (base->kind == FValue::Kind::Dict) {
    std::optional<FValue> key =
        expr.indices.size() == 1 ? evaluate(*expr.indices[0]) : std::nullopt;
    if (!key)
      return expr.indices.size() == 1
                 ? std::nullopt
                 : error(expr.getLoc(), "a dict takes one key");
    if (std::optional<size_t> at = dictValueIndex(*base, *key)) {
      const FValue &value = base->elements[*at];
      if (value.kind == FValue::Kind::Marker && value.text == "run-time")
        return error(expr.indices[0]->getLoc(),
                     "the heuristic for '" + base->text + "' reads '" +
                         key->text +
                         "', a run-time parameter whose value is not known "
                         "when compiling: give " +
                         base->text + " in the signature");
      return value;
    }
    if (base->text.empty())
      return error(expr.indices[0]->getLoc(),
                   "KeyError: " + key->describe() + " is not in the dict");
    return error(expr.indices[0]->getLoc(),
                 "no parameter " + key->describe() + " in the arguments");
  }
  if (base->kind == FValue::Kind::Tuple) {
    if (expr.indices.size() != 1)
      return error(expr.getLoc(), "a tuple takes one index");
    if (auto *slice = llvm::dyn_cast<SliceExpr>(expr.indices[0].get())) {
      // t[a:b:c] with compile-time bounds, as Python slices.
      int64_t n = base->elements.size();
      std::optional<int64_t> parts[3];
      const ExprPtr *exprs[3] = {&slice->lower, &slice->upper, &slice->step};
      for (int k = 0; k < 3; ++k) {
        if (!*exprs[k])
          continue;
        std::optional<FValue> v = evaluate(**exprs[k]);
        if (!v)
          return std::nullopt;
        if (v->isNone())
          continue;
        if (!v->isInt())
          return error((*exprs[k])->getLoc(),
                       "a tuple slice's bounds must be compile-time ints, "
                       "got " +
                           v->describe());
        parts[k] = v->intValue;
      }
      int64_t step = parts[2].value_or(1);
      if (step == 0)
        return error(slice->getLoc(), "a slice step cannot be zero");
      auto clampBound = [&](std::optional<int64_t> b, int64_t dflt) {
        if (!b)
          return dflt;
        int64_t v = *b < 0 ? *b + n : *b;
        return step > 0 ? std::clamp<int64_t>(v, 0, n)
                        : std::clamp<int64_t>(v, -1, n - 1);
      };
      int64_t lo = clampBound(parts[0], step > 0 ? 0 : n - 1);
      int64_t hi = clampBound(parts[1], step > 0 ? n : -1);
      std::vector<FValue> picked;
      for (int64_t i = lo; step > 0 ? i < hi : i > hi; i += step)
        picked.push_back(base->elements[i]);
      return FValue::tuple(std::move(picked));
    }
    std::optional<FValue> index = evaluate(*expr.indices[0]);
    if (!index)
      return std::nullopt;
    if (!index->isInt())
      return error(expr.indices[0]->getLoc(),
                   "a tuple index must be a compile-time int, got " +
                       index->describe());
    int64_t n = base->elements.size(), i = index->intValue;
    if (i < 0)
      i += n;
    if (i < 0 || i >= n)
      return error(expr.indices[0]->getLoc(),
                   "tuple index " + intText(index->intValue) +
                       " out of range for a tuple of " + std::to_string(n));
    return base->elements[i];
  }
  if (base->isRuntime()) {
    // x[:, None]: the builtin "__subscript__" takes the base and each index,
    // a slice being a Marker "slice" with its (lower, upper, step).
    CallArgs args;
    args.loc = expr.getLoc();
    args.callee = "__subscript__";
    args.args.push_back(*base);
    args.argLocs.push_back(expr.value->getLoc());
    for (const ExprPtr &index : expr.indices) {
      FValue value;
      if (auto *slice = llvm::dyn_cast<SliceExpr>(index.get())) {
        value = FValue::named(FValue::Kind::Marker, "slice");
        for (const ExprPtr *part :
             {&slice->lower, &slice->upper, &slice->step}) {
          std::optional<FValue> v =
              *part ? evaluate(**part) : std::optional<FValue>(FValue::none());
          if (!v)
            return std::nullopt;
          value.elements.push_back(*v);
        }
      } else {
        std::optional<FValue> v = evaluate(*index);
        if (!v)
          return std::nullopt;
        value = *v;
      }
      args.args.push_back(value);
      args.argLocs.push_back(index->getLoc());
    }
    return call(FValue::named(FValue::Kind::Builtin, "__subscript__"), args);
  }
  return error(expr.getLoc(), "cannot index " + base->describe());
}

std::optional<FValue> Emitter::evaluateCall(const CallExpr &expr) {
  std::optional<FValue> callee = evaluate(*expr.callee);
  if (!callee)
    return std::nullopt;
  CallArgs args;
  args.loc = expr.getLoc();
  if (auto *attr = llvm::dyn_cast<AttributeExpr>(expr.callee.get()))
    args.callee = attr->attr;
  else if (auto *name = llvm::dyn_cast<NameExpr>(expr.callee.get()))
    args.callee = name->name;
  for (const ExprPtr &arg : expr.args) {
    if (auto *starred = llvm::dyn_cast<StarredExpr>(arg.get())) {
      // `f(*t)`: a tuple's items as positional arguments.
      std::optional<FValue> v = evaluate(*starred->value);
      if (!v)
        return std::nullopt;
      if (v->kind != FValue::Kind::Tuple)
        return error(starred->value->getLoc(),
                     "'*' unpacks a tuple, got " + v->describe());
      for (const FValue &item : v->elements) {
        args.args.push_back(item);
        args.argLocs.push_back(starred->value->getLoc());
      }
      continue;
    }
    std::optional<FValue> v = evaluate(*arg);
    if (!v)
      return std::nullopt;
    args.args.push_back(*v);
    args.argLocs.push_back(arg->getLoc());
  }
  for (const Keyword &kw : expr.keywords) {
    if (kw.name.empty())
      return error(kw.loc, "'**' arguments are not supported in Triton "
                           "kernels");
    std::optional<FValue> v = evaluate(*kw.value);
    if (!v)
      return std::nullopt;
    args.keywords.push_back({kw.name, *v});
    args.keywordLocs.push_back(kw.loc);
  }
  return call(*callee, args);
}

std::optional<FValue> Emitter::call(const FValue &callee, CallArgs &args) {
  switch (callee.kind) {
  case FValue::Kind::DType: {
    // `tl.float32(x)`: a scalar of the dtype (upstream's dtype call).
    if (args.args.size() != 1 || !args.keywords.empty() ||
        callee.type.isPointer || callee.type.isBlock())
      return error(args.loc, "calling " + callee.describe() +
                                 " takes one value: a number or a scalar");
    const FValue &arg = args.args[0];
    if (arg.isNumber())
      return constant(arg, callee.type, args.argLocs[0]);
    if (arg.isRuntime() && !arg.type.isPointer)
      return castTo(arg, callee.type.element, args.argLocs[0]);
    return error(args.argLocs[0], "calling " + callee.describe() +
                                      " needs a number or a run-time value, "
                                      "got " +
                                      arg.describe());
  }
  case FValue::Kind::Builtin:
  case FValue::Kind::Method: {
    std::string name = callee.kind == FValue::Kind::Method
                           ? "method." + callee.text
                           : callee.text;
    BuiltinFn fn = lookupBuiltin(name);
    if (!fn)
      return error(args.loc, unknownBuiltin(callee.text));
    // A libdevice function bound to another name (`triton_tanh =
    // libdevice.tanh`) is still that function.
    if (StringRef(callee.text).starts_with("libdevice."))
      args.callee = callee.text.substr(10); // after "libdevice."
    if (StringRef(callee.text).starts_with("math."))
      args.callee = callee.text;
    if (callee.kind == FValue::Kind::Method) {
      args.args.insert(args.args.begin(), callee.elements[0]);
      args.argLocs.insert(args.argLocs.begin(), args.loc);
    }
    return fn(*this, args);
  }
  case FValue::Kind::Marker:
    // Markers that are also callable (tl.constexpr(3)) are builtins.
    if (BuiltinFn fn = lookupBuiltin(callee.text))
      return fn(*this, args);
    return error(args.loc, callee.describe() + " is not callable");
  case FValue::Kind::Function:
    if (!isJit(*callee.function) && !globalsInProgress.empty())
      return callHostFunction(*callee.function, args);
    // A constexpr function's body is plain Python run when compiling: the
    // helpers it calls are too (FlagGems' `unwrap_if_constexpr`).
    if (!isJit(*callee.function) && llvm::any_of(frames, [&](const Frame &f) {
          return f.function && isConstexprFunction(*f.function);
        }))
      return inlineCall(*callee.function, args);
    if (!isJit(*callee.function))
      return error(args.loc, "'" + callee.function->name +
                                 "' is not a @triton.jit function, so a kernel "
                                 "cannot call it");
    if (isConstexprFunction(*callee.function))
      if (std::optional<FValue> v = hostConstexprCall(*callee.function, args))
        return v;
    return inlineCall(*callee.function, args);
  default:
    return error(args.loc, callee.describe() + " is not callable");
  }
}

/// A compile-time value as host Python sees it; nullopt for run-time ones.
static std::optional<HostValue> toHostValue(const FValue &v) {
  HostValue h;
  switch (v.kind) {
  case FValue::Kind::Int:
    h.kind = HostValue::Kind::Int;
    h.intValue = v.intValue;
    return h;
  case FValue::Kind::Bool:
    h.kind = HostValue::Kind::Bool;
    h.intValue = v.intValue;
    return h;
  case FValue::Kind::Float:
    h.kind = HostValue::Kind::Float;
    h.floatValue = v.floatValue;
    return h;
  case FValue::Kind::String:
    h.kind = HostValue::Kind::String;
    h.text = v.text;
    return h;
  case FValue::Kind::None:
    return h;
  case FValue::Kind::Tuple: {
    h.kind = HostValue::Kind::Tuple;
    h.items = std::make_shared<std::vector<HostValue>>();
    for (const FValue &e : v.elements) {
      std::optional<HostValue> item = toHostValue(e);
      if (!item)
        return std::nullopt;
      h.items->push_back(*item);
    }
    return h;
  }
  default:
    return std::nullopt;
  }
}

/// A host result as a compile-time value; nullopt for kinds kernels cannot
/// hold (dicts, functions, unknowns).
static std::optional<FValue> fromHostValue(const HostValue &h) {
  switch (h.kind) {
  case HostValue::Kind::Int:
    return FValue::integer(h.intValue);
  case HostValue::Kind::Bool:
    return FValue::boolean(h.intValue != 0);
  case HostValue::Kind::Float:
    return FValue::floating(h.floatValue);
  case HostValue::Kind::String:
    return FValue::string(h.text);
  case HostValue::Kind::None:
    return FValue::none();
  case HostValue::Kind::Tuple:
  case HostValue::Kind::List: {
    std::vector<FValue> elements;
    for (const HostValue &item : *h.items) {
      std::optional<FValue> e = fromHostValue(item);
      if (!e)
        return std::nullopt;
      elements.push_back(*e);
    }
    return FValue::tuple(std::move(elements));
  }
  default:
    return std::nullopt;
  }
}

HostModuleLinks Emitter::hostLinks(ModuleScope &scope) {
  HostModuleLinks links;
  links.importedValue = [this,
                         &scope](StringRef module,
                                 StringRef name) -> std::optional<HostValue> {
    if ((!module.starts_with(".") && isTritonModule(module)) ||
        findModuleFile(scope, module).empty())
      return std::nullopt;
    std::string discarded;
    CapturedDiagnostics captured(sourceMgr, discarded);
    ModuleScope *saved = current;
    current = &scope;
    std::optional<FValue> value =
        resolveImport({module.str(), name.str(), SMLoc()}, name, SMLoc());
    current = saved;
    if (!value)
      return std::nullopt;
    // Triton's modules re-exported (`from vllm.triton_utils import triton`)
    // are those modules to host code too (`triton.__version__`).
    if (value->kind == FValue::Kind::Module &&
        (isTritonModule(value->text) || value->text == "libdevice")) {
      HostValue object;
      object.kind = HostValue::Kind::Object;
      object.text = value->text == "libdevice"
                        ? "triton.language.extra.libdevice"
                        : value->text;
      return object;
    }
    return toHostValue(*value);
  };
  links.hasAttribute = [this](StringRef path,
                              StringRef name) -> std::optional<bool> {
    if (!isTritonModule(path))
      return std::nullopt;
    std::string discarded;
    CapturedDiagnostics captured(sourceMgr, discarded);
    std::optional<FValue> module =
        resolveImport({path.str(), "", SMLoc()}, "", SMLoc());
    if (!module)
      return std::nullopt;
    return findAttribute(*module, name, SMLoc()).has_value();
  };
  links.callImported = [this,
                        &scope](StringRef module, StringRef name,
                                std::vector<HostValue> args,
                                HostError &error) -> std::optional<HostValue> {
    if ((!module.starts_with(".") && isTritonModule(module)) ||
        hostCallDepth >= kMaxHostCallDepth)
      return std::nullopt;
    std::string file = findModuleFile(scope, module);
    if (file.empty()) {
      // A module of the kernel's own package (its path names the package)
      // that the sources leave out: say so, it is what to fix.
      StringRef package = module.ltrim('.').split('.').first;
      if (module.starts_with(".") ||
          StringRef(scope.path).contains(("/" + package + "/").str()))
        error = HostError{SMLoc(),
                          "'" + name.str() + "' comes from module '" +
                              module.str() +
                              "', which is not among the kernel's sources; "
                              "add its file to the triton_kernel srcs "
                              "(kilnc --src FILE) for Kiln to run it",
                          {}};
      return std::nullopt;
    }
    std::string discarded;
    CapturedDiagnostics captured(sourceMgr, discarded);
    ModuleScope *other = loadModule(file, SMLoc());
    if (!other)
      return std::nullopt;
    ModuleScope *saved = current;
    current = other;
    bool found = false;
    std::optional<FValue> f = lookupGlobal(name, SMLoc(), found);
    current = saved;
    if (!f || f->kind != FValue::Kind::Function || !f->function ||
        isJit(*f->function))
      return std::nullopt;
    ModuleScope *owner = functionModules.lookup(f->function);
    if (!owner)
      return std::nullopt;
    ++hostCallDepth;
    llvm::scope_exit leave([&] { --hostCallDepth; });
    HostEvaluator host(sourceMgr, *owner->ast, hostTarget, hostLinks(*owner));
    host.runModuleUntil(nullptr);
    HostValue callee;
    callee.kind = HostValue::Kind::Function;
    callee.function = f->function;
    return host.tryCall(callee, std::move(args), f->function->getLoc(), error);
  };
  return links;
}

std::optional<FValue> Emitter::hostModuleValue(ModuleScope &scope,
                                               const Stmt *top,
                                               const Expr &expr,
                                               HostError &error) {
  ModuleScope &module = scope.module();
  std::string discarded;
  CapturedDiagnostics captured(sourceMgr, discarded);
  HostEvaluator host(sourceMgr, *module.ast, hostTarget, hostLinks(module));
  host.runModuleUntil(top);
  std::optional<HostValue> h = host.tryEvaluate(expr, error);
  if (!h)
    return std::nullopt;
  std::optional<FValue> value = fromHostValue(*h);
  if (!value)
    error = HostError{expr.getLoc(),
                      "its value, " + h->describe() +
                          ", is not one that kernels can use",
                      {}};
  return value;
}

std::optional<bool> Emitter::moduleCondition(ModuleScope &scope,
                                             const Stmt *top, const Expr &cond,
                                             std::string &why) {
  // A platform probe by name (`if current_platform.is_rocm():`), directly or
  // through a global bound to one (`_is_hip = is_hip()`).
  std::optional<bool> probe =
      platformProbe(&cond, [&](StringRef name) -> const Expr * {
        auto it = scope.globalDefs.find(name);
        if (it == scope.globalDefs.end())
          return nullptr;
        if (auto *assign = llvm::dyn_cast<AssignStmt>(it->second))
          return assign->targets.size() == 1 ? assign->value.get() : nullptr;
        return nullptr;
      });
  if (probe)
    return probe;
  // As kernel code sees it: constants, Kiln's Triton modules
  // (`hasattr(tl, "gather")`), globals of this and the other sources.
  std::string kernelError;
  {
    std::string discarded;
    llvm::scope_exit firstError([&] {
      StringRef text = discarded;
      size_t at = text.find("error: ");
      if (at != StringRef::npos)
        kernelError = text.drop_front(at + 7).split('\n').first.str();
    });
    CapturedDiagnostics captured(sourceMgr, discarded);
    ModuleScope *saved = current;
    current = &scope;
    std::vector<Scope> savedScopes;
    std::swap(savedScopes, scopes);
    scopes.emplace_back();
    std::optional<FValue> value = evaluate(cond);
    std::optional<bool> truth;
    if (value && !value->isRuntime())
      truth = truthiness(*value, cond.getLoc());
    std::swap(savedScopes, scopes);
    current = saved;
    if (truth)
      return truth;
  }
  // As host Python, after the module's statements before it ran: host
  // functions, `os.environ.get(name, default)` (the environment of a build
  // is empty), `torch.cuda.get_device_capability()` (the target's).
  HostError error;
  std::optional<FValue> value = hostModuleValue(scope, top, cond, error);
  // An object host code cannot look into (a name of a module that is not
  // among the sources): what kernel code found says more.
  if (!value &&
      error.message.find("is not one that kernels can use") !=
          std::string::npos &&
      !kernelError.empty())
    error.message = kernelError;
  if (value && !value->isRuntime()) {
    std::string discarded;
    CapturedDiagnostics captured(sourceMgr, discarded);
    if (std::optional<bool> truth = truthiness(*value, cond.getLoc()))
      return truth;
  }
  why = error.message.empty() ? "its value has no truth value Kiln knows"
                              : error.message;
  return std::nullopt;
}

std::optional<FValue> Emitter::callHostFunction(const FunctionDefStmt &function,
                                                const CallArgs &args) {
  if (!args.keywords.empty())
    return error(args.keywordLocs[0],
                 "keyword arguments to the host function '" + function.name +
                     "' are not evaluated when compiling");
  std::vector<HostValue> hostArgs;
  for (size_t i = 0; i < args.args.size(); ++i) {
    std::optional<HostValue> h = toHostValue(args.args[i]);
    if (!h)
      return error(args.argLocs[i],
                   "the host function '" + function.name + "' cannot take " +
                       args.args[i].describe() + " when compiling");
    hostArgs.push_back(*h);
  }
  // Python has run the function's module up to the assignment being
  // evaluated when it is that module; all of it when it was imported.
  ModuleScope *owner = functionModules.lookup(&function);
  if (!owner)
    owner = current;
  const Stmt *stop = nullptr;
  for (const auto &[module, stmt] : globalsInProgress)
    if (module == owner)
      stop = stmt;
  HostEvaluator host(sourceMgr, *owner->ast, hostTarget);
  host.runModuleUntil(stop);
  std::optional<HostValue> result =
      host.callHostFunction(function, std::move(hostArgs), args.loc);
  if (!result) {
    sourceMgr.PrintMessage(args.loc, llvm::SourceMgr::DK_Note,
                           "in the host call to '" + function.name +
                               "' that computes a module-level value");
    return std::nullopt;
  }
  std::optional<FValue> value = fromHostValue(*result);
  if (!value)
    return error(args.loc, "the host function '" + function.name +
                               "' returned " + result->describe() +
                               ", which a kernel cannot use");
  return value;
}

bool Emitter::isConstexprFunction(const FunctionDefStmt &function) {
  for (const ExprPtr &decorator : function.decorators) {
    const Expr *callee = decorator.get();
    if (auto *call = llvm::dyn_cast<CallExpr>(callee))
      callee = call->callee.get();
    // `@triton.constexpr_function`, and `@tl.constexpr` on a def (FlagGems'
    // sort helpers), which upstream calls as plain Python too.
    auto constexprName = [](StringRef name) {
      return name == "constexpr_function" || name == "constexpr";
    };
    if (auto *attr = llvm::dyn_cast<AttributeExpr>(callee);
        attr && constexprName(attr->attr))
      return true;
    if (auto *name = llvm::dyn_cast<NameExpr>(callee);
        name && constexprName(name->name))
      return true;
  }
  return false;
}

std::optional<FValue>
Emitter::hostConstexprCall(const FunctionDefStmt &function,
                           const CallArgs &args) {
  if (!args.keywords.empty())
    return std::nullopt;
  std::vector<HostValue> hostArgs;
  for (const FValue &arg : args.args) {
    std::optional<HostValue> h = toHostValue(arg);
    if (!h)
      return std::nullopt; // a dtype or a tensor: inlined instead
    hostArgs.push_back(*h);
  }
  ModuleScope *owner = functionModules.lookup(&function);
  if (!owner)
    owner = current;
  // Quietly: where host evaluation fails, inlining reports what it finds.
  std::string discarded;
  std::optional<HostValue> result;
  {
    CapturedDiagnostics captured(sourceMgr, discarded);
    HostEvaluator host(sourceMgr, *owner->ast, hostTarget);
    host.runModuleUntil(nullptr);
    result = host.callHostFunction(function, std::move(hostArgs), args.loc);
  }
  if (!result)
    return std::nullopt;
  return fromHostValue(*result);
}

std::optional<FValue> Emitter::inlineCall(const FunctionDefStmt &function,
                                          CallArgs &args) {
  // Helpers are inlined, so recursion must end at compile time (a helper
  // calling itself with N - 1 under `if N > 0:`, N a tl.constexpr), as
  // upstream's specializations do.
  if (frames.size() > kMaxInlineDepth) {
    if (llvm::any_of(frames, [&](const Frame &frame) {
          return frame.function == &function;
        }))
      return error(args.loc,
                   "the recursion of '" + function.name +
                       "' does not end at compile time (more than " +
                       std::to_string(kMaxInlineDepth) +
                       " nested calls); Kiln inlines helpers, so a recursive "
                       "one must stop on a compile-time condition, such as "
                       "`if N > 0:` with N a tl.constexpr argument");
    return error(args.loc, "helper calls are nested more than " +
                               std::to_string(kMaxInlineDepth) +
                               " deep at this call to '" + function.name + "'");
  }
  if (args.args.size() > function.params.size())
    return error(args.loc, "'" + function.name + "' takes " +
                               std::to_string(function.params.size()) +
                               " arguments but " +
                               std::to_string(args.args.size()) +
                               " were given");
  // The helper's names are those of its own module.
  ModuleScope *caller = current;
  if (ModuleScope *owner = functionModules.lookup(&function))
    current = owner;
  llvm::scope_exit restore([&] { current = caller; });
  Scope scope;
  std::vector<bool> bound(function.params.size(), false);
  for (size_t i = 0; i < args.args.size(); ++i) {
    scope[function.params[i].name] = args.args[i];
    bound[i] = true;
  }
  for (size_t k = 0; k < args.keywords.size(); ++k) {
    auto &[name, value] = args.keywords[k];
    auto it = llvm::find_if(function.params,
                            [&](const Param &p) { return p.name == name; });
    if (it == function.params.end())
      return error(args.keywordLocs[k],
                   "'" + function.name + "' has no parameter '" + name + "'");
    size_t index = it - function.params.begin();
    if (bound[index])
      return error(args.keywordLocs[k], "parameter '" + name + "' of '" +
                                            function.name + "' is given twice");
    scope[name] = value;
    bound[index] = true;
  }
  for (size_t i = 0; i < function.params.size(); ++i) {
    const Param &p = function.params[i];
    if (!bound[i]) {
      if (!p.defaultValue)
        return error(args.loc, "missing argument '" + p.name +
                                   "' in the call "
                                   "to '" +
                                   function.name + "'");
      scopes.emplace_back();
      std::optional<FValue> v = evaluate(*p.defaultValue);
      scopes.pop_back();
      if (!v)
        return std::nullopt;
      scope[p.name] = *v;
    }
    // A helper's `tl.constexpr` annotation does not constrain its argument:
    // as in upstream Triton, what is passed decides (tutorial 06 passes
    // blocks to `offs_m: tl.constexpr`).
  }
  scopes.push_back(std::move(scope));
  frames.push_back({&function, args.loc, std::nullopt, false});
  bool ok = emitBlock(function.body);
  std::optional<FValue> result = frames.back().returnValue;
  frames.pop_back();
  scopes.pop_back();
  if (!ok)
    return std::nullopt;
  return result ? *result : FValue::none();
}

std::optional<FValue> Emitter::findAttribute(const FValue &value,
                                             StringRef attr, SMLoc loc) {
  // Feature tests of triton.language answer as upstream's (getAttribute
  // names any attribute of it, to report unsupported ones where used).
  if (value.kind == FValue::Kind::Module && value.text == "triton.language" &&
      !isTritonLanguageName(attr))
    return std::nullopt;
  std::string discarded;
  CapturedDiagnostics captured(sourceMgr, discarded);
  return getAttribute(value, attr, loc);
}

std::optional<FValue> Emitter::getAttribute(const FValue &value, StringRef attr,
                                            SMLoc loc) {
  // `c.value` of a tl.constexpr: the compile-time value itself.
  if (attr == "value" &&
      (value.isNumber() || value.kind == FValue::Kind::DType ||
       value.kind == FValue::Kind::String || value.kind == FValue::Kind::None))
    return value;
  // `n.to(dtype)` of a number: the literal converted, as tl.cast(n, dtype).
  // A loop first probes a name it carries with the number bound before it
  // (`i_t = 0`, then `i_t.to(tl.int64)` in the body).
  if (attr == "to" && value.isNumber()) {
    FValue method = FValue::named(FValue::Kind::Method, "to");
    method.elements.push_back(value);
    return method;
  }
  // A typed number (assigned, or returned by a jit function) is a scalar
  // tensor upstream: its dtype, methods and properties are those of the
  // scalar of its strongType.
  if (value.typed && value.isNumber() &&
      !lookupBuiltin("method.int." + attr.str()))
    return getAttribute(
        constant(value, TritonType{strongType(value), false, {}}, loc), attr,
        loc);
  switch (value.kind) {
  case FValue::Kind::Module: {
    if (ModuleScope *scope = scopeOfModuleValue(value)) {
      ModuleScope *saved = current;
      current = scope;
      bool found = false;
      std::optional<FValue> v = lookupGlobal(attr, loc, found);
      current = saved;
      if (found)
        return v;
      if (!scope->enclosing &&
          StringRef(scope->path).ends_with("__init__.py")) {
        std::string sub = findModuleFile(*scope, "." + attr.str());
        if (!sub.empty()) {
          ModuleScope *m = loadModule(sub, loc);
          if (!m)
            return std::nullopt;
          return moduleValue(*m);
        }
      }
      if (scope->enclosing)
        return error(loc, "class '" + scope->className + "' (" + scope->path +
                              ") has no attribute '" + attr + "'");
      return error(loc, "module " + scope->path + " has no attribute '" + attr +
                            "'");
    }
    StringRef path = value.text;
    // `triton.knobs.runtime.interpret` (TRITON_INTERPRET): False, as
    // compiled kernels do not run in the interpreter.
    if ((path == "triton" && attr == "knobs") ||
        (path == "triton.knobs" && attr == "runtime"))
      return FValue::named(FValue::Kind::Module, (path + "." + attr).str());
    if (path == "triton.knobs.runtime" && attr == "interpret")
      return FValue::boolean(false);
    if (path.starts_with("triton.knobs"))
      return error(loc, "'" + path + "." + attr +
                            "' is a Triton knob Kiln does not know (it has "
                            "triton.knobs.runtime.interpret)");
    if (path == "torch")
      if (auto dtype = DType::parseTorch(attr))
        return torchDType(*dtype);
    // `torch.version.hip is not None`, which kernels test to choose their
    // AMD code: None, as in PyTorch's CUDA builds (Kiln builds for CUDA).
    if (path == "torch" && attr == "version")
      return FValue::named(FValue::Kind::Module, "torch.version");
    if (path == "torch.version" && attr == "hip")
      return FValue::none();
    if (path == "triton.language" || path == "triton.language.core") {
      if (auto dtype = DType::parse(attr))
        if (attr == dtype->getLanguageName())
          return FValue::dtype(TritonType{*dtype, false, {}});
      if (attr == "constexpr")
        return FValue::named(FValue::Kind::Marker, "tl.constexpr");
      if (attr == "extra" || attr == "math" || attr == "core" ||
          attr == "standard" || attr == "target_info")
        return FValue::named(FValue::Kind::Module,
                             canonicalModule("triton.language." + attr.str()));
      // The largest block a tensor may have (upstream's limit; Kiln's own
      // budgets are in compile_time_limits).
      if (attr == "TRITON_MAX_TENSOR_NUMEL")
        return FValue::integer(1048576);
      // `descending: tl.constexpr = core.CONSTEXPR_0`
      if (attr == "CONSTEXPR_0")
        return FValue::integer(0);
      // `tl.libdevice.tanh`: Triton 2.x's place of libdevice.
      if (attr == "libdevice")
        return FValue::named(FValue::Kind::Module, "libdevice");
      return FValue::named(FValue::Kind::Builtin, "tl." + attr.str());
    }
    // triton's own names, also where triton.runtime defines them
    // (`triton.runtime.jit.constexpr_function(f)`, `from triton.runtime.jit
    // import jit`).
    if (path == "triton" || path == "triton.runtime" ||
        path == "triton.runtime.jit" || path == "triton.runtime.autotuner") {
      if (path == "triton" && (attr == "language" || attr == "runtime"))
        return FValue::named(FValue::Kind::Module, "triton." + attr.str());
      if (path == "triton.runtime" && (attr == "jit" || attr == "autotuner"))
        return FValue::named(FValue::Kind::Module,
                             "triton.runtime." + attr.str());
      if (attr == "jit" || attr == "autotune" || attr == "heuristics" ||
          attr == "Config")
        return FValue::named(FValue::Kind::Marker, "triton." + attr.str());
      if (attr == "constexpr_function")
        return FValue::named(FValue::Kind::Builtin,
                             "triton.constexpr_function");
      return FValue::named(FValue::Kind::Builtin, (path + "." + attr).str());
    }
    if (path == "libdevice")
      return FValue::named(FValue::Kind::Builtin, "libdevice." + attr.str());
    // Python's math on compile-time numbers (module-level constants).
    if (path == "math") {
      if (attr == "pi")
        return FValue::floating(llvm::numbers::pi);
      if (attr == "e")
        return FValue::floating(llvm::numbers::e);
      if (attr == "tau")
        return FValue::floating(2 * llvm::numbers::pi);
      if (attr == "inf")
        return FValue::floating(std::numeric_limits<double>::infinity());
      if (attr == "nan")
        return FValue::floating(std::numeric_limits<double>::quiet_NaN());
      if (lookupBuiltin("math." + attr.str()))
        return FValue::named(FValue::Kind::Builtin, "math." + attr.str());
    }
    if (path == "triton.language.extra" &&
        !llvm::is_contained({"cuda", "libdevice", "hip"}, attr))
      return error(loc, "'triton.language.extra." + attr +
                            "' is not a module of Triton for CUDA GPUs");
    if (path == "triton.language.target_info") {
      if (lookupBuiltin("target_info." + attr.str()))
        return FValue::named(FValue::Kind::Builtin,
                             "target_info." + attr.str());
      return error(loc, "'tl.target_info." + attr +
                            "' is not supported by Kiln (it has is_cuda, "
                            "cuda_capability_geq and the is_hip* probes)");
    }
    // tl.extra.cuda's functions (its utils and grid dependency control).
    if (path == "triton.language.extra.cuda" &&
        lookupBuiltin("cuda." + attr.str()))
      return FValue::named(FValue::Kind::Builtin, "cuda." + attr.str());
    if (StringRef(path).starts_with("triton.language.extra"))
      return FValue::named(FValue::Kind::Module,
                           canonicalModule(path.str() + "." + attr.str()));
    return error(loc, "module '" + path +
                          "' cannot be used inside a Triton "
                          "kernel");
  }
  case FValue::Kind::Descriptor: {
    // tl.tensor_descriptor's attributes; its methods (load, store,
    // atomic_add, ...) are the builtins "method.NAME".
    if (attr == "dtype")
      return FValue::dtype(TritonType{value.type.element, false, {}});
    if (attr == "block_shape") {
      std::vector<FValue> dims;
      for (int64_t d : value.type.blockShape)
        dims.push_back(FValue::integer(d));
      return FValue::tuple(std::move(dims));
    }
    if (attr == "shape")
      return value.elements[0];
    if (attr == "strides")
      return value.elements[1];
    FValue method = FValue::named(FValue::Kind::Method, attr.str());
    method.elements.push_back(value);
    return method;
  }
  case FValue::Kind::Runtime: {
    if (attr == "dtype")
      return FValue::dtype(value.type.scalar());
    // x.type: the value's type (upstream's block_type for blocks; its
    // element_ty is the scalar type, a pointer type's is the pointee, a
    // block pointer's the block).
    if (attr == "type")
      return FValue::dtype(value.type);
    // Properties computed by builtins ("property.T" for x.T, ...).
    if (lookupBuiltin("property." + attr.str())) {
      CallArgs args;
      args.loc = loc;
      args.callee = attr.str();
      args.args.push_back(value);
      args.argLocs.push_back(loc);
      return call(
          FValue::named(FValue::Kind::Builtin, "property." + attr.str()), args);
    }
    if (attr == "shape") {
      std::vector<FValue> dims;
      for (int64_t d : value.type.shape)
        dims.push_back(FValue::integer(d));
      return FValue::tuple(std::move(dims));
    }
    FValue method = FValue::named(FValue::Kind::Method, attr.str());
    method.elements.push_back(value);
    return method;
  }
  case FValue::Kind::Builtin:
    // Members of language classes (tl.PropagateNan.ALL): named values that
    // builtins recognize.
    if (StringRef(value.text).starts_with("tl."))
      return FValue::named(FValue::Kind::Builtin,
                           value.text + "." + attr.str());
    return error(loc, value.describe() + " has no attribute '" + attr + "'");
  case FValue::Kind::DType: {
    if (attr == "scalar")
      return FValue::dtype(value.type.scalar());
    if (attr == "element_ty") {
      if (value.type.isBlock())
        return FValue::dtype(value.type.scalar());
      if (value.type.isBlockPointer()) {
        TritonType block = value.type;
        block.isPointer = false;
        block.shape = block.blockShape;
        block.blockShape.clear();
        return FValue::dtype(block);
      }
      if (!value.type.isPointer)
        return error(loc, "'element_ty' needs a pointer dtype, got " +
                              value.describe());
      TritonType element = value.type;
      element.isPointer = false;
      return FValue::dtype(element);
    }
    const TritonType &t = value.type;
    if (attr == "primitive_bitwidth")
      return FValue::integer(t.isPointer ? 64 : t.element.getBitWidth());
    if (attr == "itemsize")
      return FValue::integer(
          t.isPointer ? 8 : std::max(1u, t.element.getBitWidth() / 8));
    if (attr == "int_bitwidth" && !t.isPointer && t.element.isInteger())
      return FValue::integer(t.element.getBitWidth());
    if (attr == "name" || attr == "cache_key_part") {
      if (t.isBlock() || t.isBlockPointer() || t.isPointer)
        return FValue::string(t.str());
      return FValue::string(upstreamDTypeName(t.element));
    }
    // dtype.SIGNEDNESS members (int1 is unsigned upstream).
    if (attr == "int_signedness" && !t.isPointer && !t.isBlock() &&
        t.element.isInteger())
      return FValue::named(FValue::Kind::Builtin,
                           t.element.isSignedInteger()
                               ? "tl.dtype.SIGNEDNESS.SIGNED"
                               : "tl.dtype.SIGNEDNESS.UNSIGNED");
    if ((attr == "fp_mantissa_width" || attr == "exponent_bias") &&
        !t.isPointer && t.element.isFloat()) {
      static const struct {
        ScalarKind kind;
        int mantissa, bias;
      } kFloats[] = {{ScalarKind::F8E4NV, 3, 7},   {ScalarKind::F8E5, 2, 15},
                     {ScalarKind::F8E4B15, 3, 15}, {ScalarKind::F16, 10, 15},
                     {ScalarKind::BF16, 7, 127},   {ScalarKind::F32, 23, 127},
                     {ScalarKind::F64, 52, 1023}};
      for (const auto &f : kFloats)
        if (f.kind == t.element.getKind())
          return FValue::integer(attr == "exponent_bias" ? f.bias : f.mantissa);
    }
    // A block type's shape (x.type.shape), as upstream's block_type has.
    if (attr == "shape" && t.isBlock()) {
      std::vector<FValue> dims;
      for (int64_t d : t.shape)
        dims.push_back(FValue::integer(d));
      return FValue::tuple(std::move(dims));
    }
    if (attr == "numel" && t.isBlock()) {
      int64_t n = 1;
      for (int64_t d : t.shape)
        n *= d;
      return FValue::integer(n);
    }
    // Predicates are methods (x.dtype.is_int()) that the builtins
    // "method.dtype.NAME" compute.
    if (lookupBuiltin("method.dtype." + attr.str())) {
      FValue method =
          FValue::named(FValue::Kind::Method, "dtype." + attr.str());
      method.elements.push_back(value);
      return method;
    }
    return error(loc, "dtypes have no attribute '" + attr + "'");
  }
  case FValue::Kind::String:
  case FValue::Kind::Int:
  case FValue::Kind::Bool: {
    // Python's str and int methods on compile-time values (Builtins.cpp's
    // strMethod and intMethod: name.startswith("re"), n.bit_length()).
    std::string method =
        (value.kind == FValue::Kind::String ? "str." : "int.") + attr.str();
    if (lookupBuiltin("method." + method)) {
      FValue bound = FValue::named(FValue::Kind::Method, method);
      bound.elements.push_back(value);
      return bound;
    }
    return error(loc, value.describe() + " has no attribute '" + attr + "'");
  }
  default:
    return error(loc, value.describe() + " has no attribute '" + attr + "'");
  }
}
