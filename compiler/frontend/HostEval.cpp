//===- HostEval.cpp - the host Python that a kernel's decorators need -----===//
#include "compiler/frontend/HostEval.h"

#include "compiler/frontend/PythonText.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/SourceMgr.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

using namespace kiln::frontend;
using llvm::SMLoc;
using llvm::StringRef;
using Kind = HostValue::Kind;
using Keywords = std::vector<std::pair<std::string, HostValue>>;

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

HostTarget HostTarget::forArch(StringRef arch) {
  HostTarget target;
  StringRef digits = arch;
  if (digits.consume_front("sm_")) {
    digits = digits.take_while(llvm::isDigit);
    unsigned value;
    if (!digits.getAsInteger(10, value))
      target.arch = value;
  }
  return target;
}

static HostValue makeValue(Kind kind, SMLoc loc = SMLoc()) {
  HostValue v;
  v.kind = kind;
  v.loc = loc;
  return v;
}
static HostValue makeInt(int64_t value, SMLoc loc = SMLoc()) {
  HostValue v = makeValue(Kind::Int, loc);
  v.intValue = value;
  return v;
}
static HostValue makeBool(bool value, SMLoc loc = SMLoc()) {
  HostValue v = makeValue(Kind::Bool, loc);
  v.intValue = value;
  return v;
}
static HostValue makeFloat(double value, SMLoc loc = SMLoc()) {
  HostValue v = makeValue(Kind::Float, loc);
  v.floatValue = value;
  return v;
}
static HostValue makeString(std::string text, SMLoc loc = SMLoc()) {
  HostValue v = makeValue(Kind::String, loc);
  v.text = std::move(text);
  return v;
}
static HostValue makeNamed(Kind kind, std::string text, SMLoc loc = SMLoc()) {
  HostValue v = makeValue(kind, loc);
  v.text = std::move(text);
  return v;
}
static HostValue makeSequence(Kind kind, std::vector<HostValue> items,
                              SMLoc loc = SMLoc()) {
  HostValue v = makeValue(kind, loc);
  v.items = std::make_shared<std::vector<HostValue>>(std::move(items));
  return v;
}

static bool isNumber(const HostValue &v) {
  return v.kind == Kind::Int || v.kind == Kind::Bool || v.kind == Kind::Float;
}
static double asDouble(const HostValue &v) {
  return v.kind == Kind::Float ? v.floatValue : double(v.intValue);
}
static bool isSequence(const HostValue &v) {
  return v.kind == Kind::List || v.kind == Kind::Tuple;
}

std::string HostValue::describe() const {
  switch (kind) {
  case Kind::None:
    return "None";
  case Kind::Bool:
    return intValue ? "True" : "False";
  case Kind::Int:
    return "the int " + std::to_string(intValue);
  case Kind::Float:
    return "a float";
  case Kind::String:
    return "the string \"" + text + "\"";
  case Kind::List:
    return "a list of " + std::to_string(items->size());
  case Kind::Tuple:
    return "a tuple of " + std::to_string(items->size());
  case Kind::Dict:
    return "a dict of " + std::to_string(items->size() / 2);
  case Kind::Config:
    return "a triton.Config";
  case Kind::Function:
    return "the function '" + function->name + "'";
  case Kind::Lambda:
    return "a lambda";
  case Kind::Object:
    return text == "GPUTarget" ? "the target" : "'" + text + "'";
  case Kind::Builtin:
    return "the builtin '" + text + "'";
  case Kind::Method:
    return "the method '" + text + "'";
  case Kind::Unknown:
    return "a value not known when compiling";
  }
  return "a value";
}

// Python's ==, for the values host code compares.
static bool equal(const HostValue &a, const HostValue &b) {
  if (isNumber(a) && isNumber(b))
    return asDouble(a) == asDouble(b) &&
           (a.kind == Kind::Float || b.kind == Kind::Float ||
            a.intValue == b.intValue);
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case Kind::None:
    return true;
  case Kind::String:
  case Kind::Object:
  case Kind::Builtin:
    return a.text == b.text;
  case Kind::List:
  case Kind::Tuple:
  case Kind::Dict:
  case Kind::Config:
    if (a.items == b.items)
      return true;
    if (a.items->size() != b.items->size())
      return false;
    for (size_t i = 0; i < a.items->size(); ++i)
      if (!equal((*a.items)[i], (*b.items)[i]))
        return false;
    return true;
  case Kind::Function:
    return a.function == b.function;
  case Kind::Lambda:
    return a.lambda == b.lambda;
  default:
    return false;
  }
}

// The value of `key` in a dict value, or null.
/// Python's str() of a number, string, bool or None; nullopt for others.
static std::optional<std::string> pythonStr(const HostValue &v) {
  switch (v.kind) {
  case Kind::String:
    return v.text;
  case Kind::Int:
    return std::to_string(v.intValue);
  case Kind::Bool:
    return std::string(v.intValue ? "True" : "False");
  case Kind::None:
    return std::string("None");
  case Kind::Float:
    return floatText(v.floatValue);
  default:
    return std::nullopt;
  }
}

static HostValue *dictFind(const HostValue &dict, const HostValue &key) {
  for (size_t i = 0; i + 1 < dict.items->size(); i += 2)
    if (equal((*dict.items)[i], key))
      return &(*dict.items)[i + 1];
  return nullptr;
}
static void dictSet(HostValue &dict, const HostValue &key,
                    const HostValue &value) {
  if (HostValue *slot = dictFind(dict, key)) {
    *slot = value;
    return;
  }
  dict.items->push_back(key);
  dict.items->push_back(value);
}

//===----------------------------------------------------------------------===//
// The evaluator
//===----------------------------------------------------------------------===//

HostEvaluator::HostEvaluator(llvm::SourceMgr &sourceMgr, const Module &module,
                             HostTarget target, HostModuleLinks links)
    : sourceMgr(sourceMgr), module(module), target(std::move(target)),
      links(std::move(links)) {}

std::nullopt_t HostEvaluator::fail(SMLoc loc, const llvm::Twine &message) {
  if (!failure)
    failure = HostError{loc, message.str(), {}};
  return std::nullopt;
}

bool HostEvaluator::step(SMLoc loc) {
  if (++steps <= kMaxSteps)
    return true;
  fail(loc, "host code ran more than " + llvm::Twine(kMaxSteps) +
                " steps when compiling; Kiln evaluates only short host code");
  return false;
}

void HostEvaluator::report(const HostError &error) const {
  sourceMgr.PrintMessage(error.loc, llvm::SourceMgr::DK_Error, error.message);
  for (const auto &[loc, note] : error.notes)
    sourceMgr.PrintMessage(loc, llvm::SourceMgr::DK_Note, note);
}

std::optional<HostValue> HostEvaluator::evaluate(const Expr &expr) {
  failure.reset();
  steps = 0;
  std::optional<HostValue> value = eval(expr);
  if (!value) {
    report(failure ? *failure
                   : HostError{expr.getLoc(), "cannot evaluate this", {}});
    failure.reset();
  }
  return value;
}

std::optional<HostValue> HostEvaluator::tryEvaluate(const Expr &expr,
                                                    HostError &error) {
  failure.reset();
  steps = 0;
  std::optional<HostValue> value = eval(expr);
  if (!value)
    error = failure ? *failure
                    : HostError{expr.getLoc(), "cannot evaluate this", {}};
  failure.reset();
  return value;
}

std::optional<HostValue>
HostEvaluator::callHostFunction(const FunctionDefStmt &function,
                                std::vector<HostValue> args, SMLoc loc) {
  failure.reset();
  steps = 0;
  HostValue callee = makeValue(Kind::Function, loc);
  callee.function = &function;
  Keywords keywords;
  std::optional<HostValue> value = callFunction(callee, args, keywords, loc);
  if (!value) {
    report(failure ? *failure
                   : HostError{loc, "cannot evaluate this call", {}});
    failure.reset();
  }
  return value;
}

std::optional<HostValue> HostEvaluator::tryCall(const HostValue &callee,
                                                std::vector<HostValue> args,
                                                SMLoc loc, HostError &error) {
  failure.reset();
  steps = 0;
  Keywords keywords;
  std::optional<HostValue> value = call(callee, args, keywords, loc);
  if (!value)
    error =
        failure ? *failure : HostError{loc, "cannot evaluate this call", {}};
  failure.reset();
  return value;
}

HostValue HostEvaluator::unknownValue(SMLoc loc, std::string why) {
  HostValue unknown = makeValue(Kind::Unknown, loc);
  unknown.reason =
      std::make_shared<HostError>(HostError{loc, std::move(why), {}});
  return unknown;
}

void HostEvaluator::bind(StringRef name, HostValue value) {
  if (frames.empty()) {
    importedFrom.erase(name);
    globals[name] = std::move(value);
  } else
    frames.back().locals[name] = std::move(value);
}

void HostEvaluator::runModuleUntil(const Stmt *stop) {
  for (const StmtPtr &stmt : module.body) {
    if (stmt.get() == stop)
      return;
    if (auto *other = llvm::dyn_cast<OtherStmt>(stmt.get())) {
      auto reason = std::make_shared<HostError>();
      if (other->syntaxError.empty()) {
        reason->loc = other->getLoc();
        reason->message = "it is defined by a module-level '" + other->what +
                          "' statement, which Kiln does not run";
      } else {
        reason->loc = other->syntaxErrorLoc;
        reason->message = "it is defined by host code that Kiln cannot "
                          "parse: " +
                          other->syntaxError;
      }
      for (const std::string &name : other->definedNames) {
        HostValue unknown = makeValue(Kind::Unknown);
        unknown.reason = reason;
        globals[name] = unknown;
      }
      continue;
    }
    failure.reset();
    steps = 0;
    if (execStatement(*stmt) != Flow::Failed)
      continue;
    // What the statement would have bound is unknown from here on.
    auto reason = std::make_shared<HostError>(
        failure ? *failure
                : HostError{stmt->getLoc(), "this statement did not run", {}});
    reason->message = "it comes from module-level code that Kiln cannot run "
                      "when compiling: " +
                      reason->message;
    poisonWrittenNames(*stmt, reason);
    failure.reset();
  }
}

// Binds every name `stmt` assigns, or mutates through a method call, to an
// unknown value with `reason`.
void HostEvaluator::poisonWrittenNames(
    const Stmt &stmt, const std::shared_ptr<const HostError> &reason) {
  HostValue unknown = makeValue(Kind::Unknown);
  unknown.reason = reason;
  std::function<void(const Expr &)> target = [&](const Expr &e) {
    if (auto *name = llvm::dyn_cast<NameExpr>(&e))
      globals[name->name] = unknown;
    else if (auto *tuple = llvm::dyn_cast<TupleExpr>(&e))
      for (const ExprPtr &element : tuple->elements)
        target(*element);
    else if (auto *list = llvm::dyn_cast<ListExpr>(&e))
      for (const ExprPtr &element : list->elements)
        target(*element);
    else if (auto *sub = llvm::dyn_cast<SubscriptExpr>(&e))
      target(*sub->value);
    else if (auto *attr = llvm::dyn_cast<AttributeExpr>(&e))
      target(*attr->value);
  };
  // Lists and dicts whose methods are called (`configs.append(...)`)
  // anywhere in `e`: the call may have changed them. (A module's functions,
  // `torch.manual_seed(0)`, change nothing Kiln sees.)
  std::function<void(const Expr &)> receivers = [&](const Expr &e) {
    auto *call = llvm::dyn_cast<CallExpr>(&e);
    if (!call)
      return;
    const Expr *root = call->callee.get();
    while (auto *attr = llvm::dyn_cast<AttributeExpr>(root))
      root = attr->value.get();
    if (auto *name = llvm::dyn_cast<NameExpr>(root)) {
      auto it = globals.find(name->name);
      if (it != globals.end() &&
          (it->second.kind == Kind::List || it->second.kind == Kind::Dict))
        it->second = unknown;
    }
    for (const ExprPtr &arg : call->args)
      receivers(*arg);
    for (const Keyword &kw : call->keywords)
      receivers(*kw.value);
  };
  std::function<void(const Block &)> block;
  std::function<void(const Stmt &)> visit = [&](const Stmt &s) {
    if (auto *e = llvm::dyn_cast<ExprStmt>(&s)) {
      receivers(*e->value);
    } else if (auto *a = llvm::dyn_cast<AssignStmt>(&s)) {
      for (const ExprPtr &t : a->targets)
        target(*t);
      receivers(*a->value);
    } else if (auto *a = llvm::dyn_cast<AugAssignStmt>(&s)) {
      target(*a->target);
    } else if (auto *a = llvm::dyn_cast<AnnAssignStmt>(&s)) {
      target(*a->target);
    } else if (auto *i = llvm::dyn_cast<IfStmt>(&s)) {
      block(i->thenBody);
      block(i->elseBody);
    } else if (auto *f = llvm::dyn_cast<ForStmt>(&s)) {
      target(*f->target);
      block(f->body);
      block(f->elseBody);
    } else if (auto *w = llvm::dyn_cast<WhileStmt>(&s)) {
      block(w->body);
      block(w->elseBody);
    } else if (auto *d = llvm::dyn_cast<FunctionDefStmt>(&s)) {
      globals[d->name] = unknown;
    }
  };
  block = [&](const Block &b) {
    for (const StmtPtr &s : b)
      visit(*s);
  };
  visit(stmt);
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

HostEvaluator::Flow HostEvaluator::execBlock(const Block &block) {
  for (const StmtPtr &stmt : block) {
    Flow flow = execStatement(*stmt);
    if (flow != Flow::Normal)
      return flow;
  }
  return Flow::Normal;
}

HostEvaluator::Flow HostEvaluator::execStatement(const Stmt &stmt) {
  if (!step(stmt.getLoc()))
    return Flow::Failed;
  switch (stmt.getKind()) {
  case Stmt::Kind::Expr:
    return eval(*llvm::cast<ExprStmt>(stmt).value) ? Flow::Normal
                                                   : Flow::Failed;
  case Stmt::Kind::Assign: {
    auto &s = llvm::cast<AssignStmt>(stmt);
    std::optional<HostValue> value = eval(*s.value);
    if (!value)
      return Flow::Failed;
    for (const ExprPtr &target : s.targets)
      if (!assign(*target, *value))
        return Flow::Failed;
    return Flow::Normal;
  }
  case Stmt::Kind::AnnAssign: {
    auto &s = llvm::cast<AnnAssignStmt>(stmt);
    if (!s.value)
      return Flow::Normal;
    std::optional<HostValue> value = eval(*s.value);
    return value && assign(*s.target, *value) ? Flow::Normal : Flow::Failed;
  }
  case Stmt::Kind::AugAssign: {
    auto &s = llvm::cast<AugAssignStmt>(stmt);
    std::optional<HostValue> current = eval(*s.target);
    std::optional<HostValue> value = current ? eval(*s.value) : std::nullopt;
    if (!value)
      return Flow::Failed;
    // `list += iterable` extends the list in place.
    if (current->kind == Kind::List && s.op == "+") {
      std::optional<std::vector<HostValue>> items =
          iterate(*value, s.value->getLoc());
      if (!items)
        return Flow::Failed;
      current->items->insert(current->items->end(), items->begin(),
                             items->end());
      return Flow::Normal;
    }
    std::optional<HostValue> result =
        binary(s.op, *current, *value, s.getLoc());
    return result && assign(*s.target, *result) ? Flow::Normal : Flow::Failed;
  }
  case Stmt::Kind::Return: {
    auto &s = llvm::cast<ReturnStmt>(stmt);
    if (frames.empty()) {
      fail(s.getLoc(), "'return' outside a function");
      return Flow::Failed;
    }
    std::optional<HostValue> value =
        s.value ? eval(*s.value) : makeValue(Kind::None);
    if (!value)
      return Flow::Failed;
    frames.back().returnValue = *value;
    return Flow::Return;
  }
  case Stmt::Kind::Pass:
    return Flow::Normal;
  case Stmt::Kind::Break:
    return Flow::Break;
  case Stmt::Kind::Continue:
    return Flow::Continue;
  case Stmt::Kind::If: {
    auto &s = llvm::cast<IfStmt>(stmt);
    std::optional<HostValue> cond = eval(*s.cond);
    std::optional<bool> t =
        cond ? truth(*cond, s.cond->getLoc()) : std::nullopt;
    if (!t)
      return Flow::Failed;
    return execBlock(*t ? s.thenBody : s.elseBody);
  }
  case Stmt::Kind::For: {
    auto &s = llvm::cast<ForStmt>(stmt);
    std::optional<HostValue> iterable = eval(*s.iter);
    std::optional<std::vector<HostValue>> items =
        iterable ? iterate(*iterable, s.iter->getLoc()) : std::nullopt;
    if (!items)
      return Flow::Failed;
    for (const HostValue &item : *items) {
      if (!step(s.getLoc()) || !assign(*s.target, item))
        return Flow::Failed;
      Flow flow = execBlock(s.body);
      if (flow == Flow::Break)
        return Flow::Normal;
      if (flow == Flow::Return || flow == Flow::Failed)
        return flow;
    }
    return execBlock(s.elseBody);
  }
  case Stmt::Kind::While: {
    auto &s = llvm::cast<WhileStmt>(stmt);
    while (true) {
      if (!step(s.getLoc()))
        return Flow::Failed;
      std::optional<HostValue> cond = eval(*s.cond);
      std::optional<bool> t =
          cond ? truth(*cond, s.cond->getLoc()) : std::nullopt;
      if (!t)
        return Flow::Failed;
      if (!*t)
        return execBlock(s.elseBody);
      Flow flow = execBlock(s.body);
      if (flow == Flow::Break)
        return Flow::Normal;
      if (flow == Flow::Return || flow == Flow::Failed)
        return flow;
    }
  }
  case Stmt::Kind::FunctionDef: {
    auto &s = llvm::cast<FunctionDefStmt>(stmt);
    HostValue f = makeValue(Kind::Function, s.getLoc());
    f.function = &s;
    bind(s.name, f);
    return Flow::Normal;
  }
  case Stmt::Kind::Import:
    for (auto &[path, alias] : llvm::cast<ImportStmt>(stmt).modules) {
      // `import a.b` binds `a`; `import a.b as c` binds c to a.b.
      bool aliased = alias != StringRef(path).split('.').first;
      bind(alias, makeNamed(Kind::Object,
                            aliased ? path : path.substr(0, path.find('.'))));
    }
    return Flow::Normal;
  case Stmt::Kind::ImportFrom: {
    auto &s = llvm::cast<ImportFromStmt>(stmt);
    for (auto &[name, alias] : s.names) {
      // Host code tests TYPE_CHECKING to import what only type checkers
      // read; it is False when the module runs.
      if (s.module == "typing" && name == "TYPE_CHECKING") {
        bind(alias, makeBool(false));
        continue;
      }
      bind(alias, makeNamed(Kind::Object, s.module + "." + name));
      if (frames.empty())
        importedFrom[alias] = {s.module, name};
    }
    return Flow::Normal;
  }
  case Stmt::Kind::Assert: {
    auto &s = llvm::cast<AssertStmt>(stmt);
    std::optional<HostValue> cond = eval(*s.cond);
    std::optional<bool> t =
        cond ? truth(*cond, s.cond->getLoc()) : std::nullopt;
    if (!t)
      return Flow::Failed;
    if (!*t) {
      fail(s.getLoc(), "assertion failed in host code");
      return Flow::Failed;
    }
    return Flow::Normal;
  }
  case Stmt::Kind::Raise:
    fail(stmt.getLoc(), "host code raised an exception");
    return Flow::Failed;
  case Stmt::Kind::Try: {
    // An error in the body (what Kiln cannot run, or a raise) is taken as
    // the exception the first handler catches.
    auto &s = llvm::cast<TryStmt>(stmt);
    Flow flow = execBlock(s.body);
    if (flow == Flow::Failed && !s.handlers.empty()) {
      // `except E as e`: e is the exception, an object Kiln does not model
      // (named by E where E is a name): handlers that keep it run on.
      const TryStmt::Handler &handler = s.handlers.front();
      if (!handler.name.empty()) {
        std::string type = "Exception";
        if (auto *name = llvm::dyn_cast_or_null<NameExpr>(handler.type.get()))
          type = name->name;
        bind(handler.name, makeNamed(Kind::Object, type, s.getLoc()));
      }
      failure.reset();
      flow = execBlock(handler.body);
    } else if (flow == Flow::Normal) {
      flow = execBlock(s.elseBody);
    }
    if (flow != Flow::Failed) {
      Flow after = execBlock(s.finallyBody);
      if (after != Flow::Normal)
        flow = after;
    }
    return flow;
  }
  case Stmt::Kind::ClassDef:
    fail(stmt.getLoc(), "'class' statements are not evaluated when compiling");
    return Flow::Failed;
  case Stmt::Kind::Other:
    fail(stmt.getLoc(), "'" + llvm::cast<OtherStmt>(stmt).what +
                            "' statements are not evaluated when compiling");
    return Flow::Failed;
  }
  return Flow::Failed;
}

bool HostEvaluator::assign(const Expr &target, const HostValue &value) {
  if (auto *name = llvm::dyn_cast<NameExpr>(&target)) {
    bind(name->name, value);
    return true;
  }
  if (llvm::isa<TupleExpr>(target) || llvm::isa<ListExpr>(target)) {
    const auto &targets = llvm::isa<TupleExpr>(target)
                              ? llvm::cast<TupleExpr>(target).elements
                              : llvm::cast<ListExpr>(target).elements;
    std::optional<std::vector<HostValue>> items =
        iterate(value, target.getLoc());
    if (!items)
      return false;
    if (items->size() != targets.size()) {
      fail(target.getLoc(), "cannot unpack " + value.describe() + " into " +
                                llvm::Twine(targets.size()) + " names");
      return false;
    }
    for (size_t i = 0; i < targets.size(); ++i)
      if (!assign(*targets[i], (*items)[i]))
        return false;
    return true;
  }
  if (auto *sub = llvm::dyn_cast<SubscriptExpr>(&target)) {
    std::optional<HostValue> base = eval(*sub->value);
    if (!base)
      return false;
    if (sub->indices.size() != 1) {
      fail(target.getLoc(), "one index expected");
      return false;
    }
    std::optional<HostValue> key = eval(*sub->indices[0]);
    if (!key)
      return false;
    if (base->kind == Kind::Dict) {
      dictSet(*base, *key, value);
      return true;
    }
    if (base->kind == Kind::List && key->kind == Kind::Int) {
      int64_t n = base->items->size(), i = key->intValue;
      if (i < 0)
        i += n;
      if (i < 0 || i >= n) {
        fail(target.getLoc(), "list index out of range");
        return false;
      }
      (*base->items)[i] = value;
      return true;
    }
    fail(target.getLoc(), "cannot assign an item of " + base->describe());
    return false;
  }
  fail(target.getLoc(), "host code Kiln evaluates can assign only names, "
                        "tuples of names and items");
  return false;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

std::optional<HostValue> HostEvaluator::lookup(StringRef name, SMLoc loc) {
  const HostValue *found = nullptr;
  if (!frames.empty()) {
    auto it = frames.back().locals.find(name);
    if (it != frames.back().locals.end())
      found = &it->second;
  }
  if (!found) {
    auto it = globals.find(name);
    if (it != globals.end())
      found = &it->second;
    // A name imported from another of the kernel's sources: its value there.
    auto imported = importedFrom.find(name);
    if (found && imported != importedFrom.end()) {
      auto [from, what] = imported->second;
      importedFrom.erase(imported);
      if (links.importedValue)
        if (std::optional<HostValue> v = links.importedValue(from, what))
          it->second = *v;
    }
  }
  if (found && found->kind == Kind::Unknown) {
    fail(loc, "'" + name + "' is not known when compiling");
    failure->notes.push_back({found->reason->loc, found->reason->message});
    for (const auto &note : found->reason->notes)
      failure->notes.push_back(note);
    return std::nullopt;
  }
  if (found)
    return *found;
  static const char *const kBuiltins[] = {
      "len", "range", "min",   "max",    "list",     "tuple",     "dict",
      "abs", "int",   "float", "str",    "bool",     "enumerate", "zip",
      "all", "any",   "sum",   "sorted", "reversed", "hasattr"};
  if (llvm::is_contained(kBuiltins, name))
    return makeNamed(Kind::Builtin, name.str(), loc);
  return fail(loc, "name '" + name + "' is not defined");
}

std::optional<HostValue> HostEvaluator::eval(const Expr &expr) {
  SMLoc loc = expr.getLoc();
  std::optional<HostValue> result;
  switch (expr.getKind()) {
  case Expr::Kind::Name:
    result = lookup(llvm::cast<NameExpr>(expr).name, loc);
    break;
  case Expr::Kind::Int: {
    uint64_t v;
    if (StringRef(llvm::cast<IntExpr>(expr).digits).getAsInteger(0, v) ||
        v > uint64_t(INT64_MAX))
      return fail(loc, "integer literal does not fit in 64 bits");
    result = makeInt(int64_t(v));
    break;
  }
  case Expr::Kind::Float:
    result = makeFloat(llvm::cast<FloatExpr>(expr).value);
    break;
  case Expr::Kind::String:
    result = makeString(llvm::cast<StringExpr>(expr).value);
    break;
  case Expr::Kind::FString: {
    std::optional<std::string> text = llvm::cast<FStringExpr>(expr).format(
        [&](const FStringExpr::Field &field) -> std::optional<std::string> {
          std::optional<HostValue> value = eval(*field.value);
          if (!value)
            return std::nullopt;
          std::optional<std::string> piece = pythonStr(*value);
          if (!piece)
            return fail(field.value->getLoc(),
                        "this f-string field is not evaluated when compiling");
          if (value->kind == Kind::String &&
              (field.conversion == 'r' || field.conversion == 'a'))
            *piece = "'" + *piece + "'";
          return piece;
        });
    if (!text)
      return std::nullopt;
    result = makeString(*text);
    break;
  }
  case Expr::Kind::Bool:
    result = makeBool(llvm::cast<BoolExpr>(expr).value);
    break;
  case Expr::Kind::None:
    result = makeValue(Kind::None);
    break;
  case Expr::Kind::Ellipsis:
    return fail(loc, "'...' is not evaluated when compiling");
  case Expr::Kind::Attribute: {
    auto &e = llvm::cast<AttributeExpr>(expr);
    std::optional<HostValue> base = eval(*e.value);
    if (!base)
      return std::nullopt;
    result = attribute(*base, e.attr, loc);
    break;
  }
  case Expr::Kind::Call:
    result = evalCall(llvm::cast<CallExpr>(expr));
    break;
  case Expr::Kind::Binary: {
    auto &e = llvm::cast<BinaryExpr>(expr);
    std::optional<HostValue> lhs = eval(*e.lhs);
    std::optional<HostValue> rhs = lhs ? eval(*e.rhs) : std::nullopt;
    if (!rhs)
      return std::nullopt;
    result = binary(e.op, *lhs, *rhs, loc);
    break;
  }
  case Expr::Kind::Unary: {
    auto &e = llvm::cast<UnaryExpr>(expr);
    std::optional<HostValue> operand = eval(*e.operand);
    if (!operand)
      return std::nullopt;
    if (e.op == "not") {
      std::optional<bool> t = truth(*operand, e.operand->getLoc());
      if (!t)
        return std::nullopt;
      result = makeBool(!*t);
    } else if (operand->kind == Kind::Float && (e.op == "-" || e.op == "+")) {
      result =
          makeFloat(e.op == "-" ? -operand->floatValue : operand->floatValue);
    } else if (operand->kind == Kind::Int || operand->kind == Kind::Bool) {
      int64_t v = operand->intValue;
      if (e.op == "-" && v == INT64_MIN)
        return fail(loc, "integer overflow");
      result = makeInt(e.op == "-" ? -v : e.op == "~" ? ~v : v);
    } else {
      return fail(loc, "bad operand for unary '" + e.op +
                           "': " + operand->describe());
    }
    break;
  }
  case Expr::Kind::Compare: {
    auto &e = llvm::cast<CompareExpr>(expr);
    std::optional<HostValue> lhs = eval(*e.operands[0]);
    if (!lhs)
      return std::nullopt;
    result = makeBool(true);
    for (size_t i = 0; i < e.ops.size(); ++i) {
      std::optional<HostValue> rhs = eval(*e.operands[i + 1]);
      if (!rhs)
        return std::nullopt;
      std::optional<HostValue> cmp = compare(e.ops[i], *lhs, *rhs, e.opLocs[i]);
      if (!cmp)
        return std::nullopt;
      if (!cmp->intValue) {
        result = makeBool(false);
        break;
      }
      lhs = rhs;
    }
    break;
  }
  case Expr::Kind::BoolOp: {
    // Python's: the first operand that decides, else the last.
    auto &e = llvm::cast<BoolOpExpr>(expr);
    for (const ExprPtr &operand : e.operands) {
      result = eval(*operand);
      if (!result)
        return std::nullopt;
      std::optional<bool> t = truth(*result, operand->getLoc());
      if (!t)
        return std::nullopt;
      if (*t != e.isAnd)
        break;
    }
    break;
  }
  case Expr::Kind::IfExp: {
    auto &e = llvm::cast<IfExpExpr>(expr);
    std::optional<HostValue> cond = eval(*e.cond);
    std::optional<bool> t =
        cond ? truth(*cond, e.cond->getLoc()) : std::nullopt;
    if (!t)
      return std::nullopt;
    return eval(*t ? *e.thenValue : *e.elseValue);
  }
  case Expr::Kind::Subscript: {
    auto &e = llvm::cast<SubscriptExpr>(expr);
    std::optional<HostValue> base = eval(*e.value);
    if (!base)
      return std::nullopt;
    result = subscript(*base, e);
    break;
  }
  case Expr::Kind::Tuple:
  case Expr::Kind::List: {
    bool isTuple = expr.getKind() == Expr::Kind::Tuple;
    const auto &elements = isTuple ? llvm::cast<TupleExpr>(expr).elements
                                   : llvm::cast<ListExpr>(expr).elements;
    std::vector<HostValue> values;
    for (const ExprPtr &e : elements) {
      std::optional<HostValue> v = eval(*e);
      if (!v)
        return std::nullopt;
      values.push_back(*v);
    }
    result =
        makeSequence(isTuple ? Kind::Tuple : Kind::List, std::move(values));
    break;
  }
  case Expr::Kind::Dict: {
    auto &e = llvm::cast<DictExpr>(expr);
    HostValue dict = makeSequence(Kind::Dict, {});
    for (size_t i = 0; i < e.keys.size(); ++i) {
      std::optional<HostValue> key = eval(*e.keys[i]);
      std::optional<HostValue> value = key ? eval(*e.values[i]) : std::nullopt;
      if (!value)
        return std::nullopt;
      dictSet(dict, *key, *value);
    }
    result = dict;
    break;
  }
  case Expr::Kind::Slice:
    return fail(loc, "a slice is only valid inside a subscript");
  case Expr::Kind::Lambda: {
    HostValue f = makeValue(Kind::Lambda);
    f.lambda = &llvm::cast<LambdaExpr>(expr);
    result = f;
    break;
  }
  case Expr::Kind::ListComp:
    result = evalListComp(llvm::cast<ListCompExpr>(expr));
    break;
  case Expr::Kind::Starred:
    return fail(loc, "'*' unpacking is only valid among a call's arguments");
  }
  // Scalars point at the expression that computed them; containers and
  // configs keep where they were written.
  if (result && (isNumber(*result) || result->kind == Kind::String ||
                 result->kind == Kind::None || !result->loc.isValid()))
    result->loc = loc;
  return result;
}

std::optional<HostValue> HostEvaluator::evalListComp(const ListCompExpr &expr) {
  // The comprehension's names are its own (Python 3): restore them after.
  llvm::StringMap<HostValue> &scope =
      frames.empty() ? globals : frames.back().locals;
  llvm::StringMap<std::optional<HostValue>> saved;
  std::function<void(const Expr &)> save = [&](const Expr &target) {
    if (auto *name = llvm::dyn_cast<NameExpr>(&target)) {
      auto it = scope.find(name->name);
      saved.try_emplace(name->name, it == scope.end()
                                        ? std::nullopt
                                        : std::optional<HostValue>(it->second));
    } else if (auto *tuple = llvm::dyn_cast<TupleExpr>(&target)) {
      for (const ExprPtr &e : tuple->elements)
        save(*e);
    }
  };
  for (const Comprehension &clause : expr.generators)
    save(*clause.target);

  std::vector<HostValue> out;
  std::function<bool(size_t)> run = [&](size_t level) -> bool {
    if (level == expr.generators.size()) {
      if (expr.key) { // a dict comprehension: key and value, in order
        std::optional<HostValue> key = eval(*expr.key);
        if (!key)
          return false;
        out.push_back(*key);
      }
      std::optional<HostValue> element = eval(*expr.element);
      if (!element)
        return false;
      out.push_back(*element);
      return true;
    }
    const Comprehension &clause = expr.generators[level];
    std::optional<HostValue> iterable = eval(*clause.iter);
    std::optional<std::vector<HostValue>> items =
        iterable ? iterate(*iterable, clause.iter->getLoc()) : std::nullopt;
    if (!items)
      return false;
    for (const HostValue &item : *items) {
      if (!step(clause.loc) || !assign(*clause.target, item))
        return false;
      bool keep = true;
      for (const ExprPtr &cond : clause.conditions) {
        std::optional<HostValue> c = eval(*cond);
        std::optional<bool> t = c ? truth(*c, cond->getLoc()) : std::nullopt;
        if (!t)
          return false;
        if (!*t) {
          keep = false;
          break;
        }
      }
      if (keep && !run(level + 1))
        return false;
    }
    return true;
  };
  bool ok = run(0);
  for (auto &entry : saved) {
    if (entry.second)
      scope[entry.first()] = *entry.second;
    else
      scope.erase(entry.first());
  }
  if (!ok)
    return std::nullopt;
  if (expr.key) {
    // Later keys replace earlier ones, as in Python.
    HostValue dict = makeSequence(Kind::Dict, {}, expr.getLoc());
    for (size_t i = 0; i + 1 < out.size(); i += 2)
      dictSet(dict, out[i], out[i + 1]);
    return dict;
  }
  return makeSequence(Kind::List, std::move(out), expr.getLoc());
}

std::optional<HostValue> HostEvaluator::evalCall(const CallExpr &expr) {
  std::optional<HostValue> callee = eval(*expr.callee);
  if (!callee)
    return std::nullopt;
  std::vector<HostValue> args;
  for (const ExprPtr &arg : expr.args) {
    if (auto *starred = llvm::dyn_cast<StarredExpr>(arg.get())) {
      // `f(*xs)`: the items of any iterable.
      std::optional<HostValue> v = eval(*starred->value);
      std::optional<std::vector<HostValue>> items =
          v ? iterate(*v, starred->value->getLoc()) : std::nullopt;
      if (!items)
        return std::nullopt;
      args.insert(args.end(), items->begin(), items->end());
      continue;
    }
    std::optional<HostValue> v = eval(*arg);
    if (!v)
      return std::nullopt;
    args.push_back(*v);
  }
  Keywords keywords;
  for (const Keyword &kw : expr.keywords) {
    std::optional<HostValue> v = eval(*kw.value);
    if (!v)
      return std::nullopt;
    if (kw.name.empty()) {
      // `f(**kwargs)`: a dict with string keys.
      if (v->kind != Kind::Dict)
        return fail(kw.value->getLoc(),
                    "'**' unpacks a dict, got " + v->describe());
      for (size_t i = 0; i + 1 < v->items->size(); i += 2) {
        const HostValue &key = (*v->items)[i];
        if (key.kind != Kind::String)
          return fail(kw.value->getLoc(),
                      "'**' needs string keys, got " + key.describe());
        keywords.push_back({key.text, (*v->items)[i + 1]});
      }
      continue;
    }
    keywords.push_back({kw.name, *v});
  }
  std::optional<HostValue> result =
      call(*callee, args, keywords, expr.getLoc());
  if (!result && failure &&
      (callee->kind == Kind::Function || callee->kind == Kind::Lambda))
    failure->notes.push_back(
        {expr.getLoc(), "in the call to " +
                            (callee->kind == Kind::Function
                                 ? "'" + callee->function->name + "'"
                                 : std::string("a lambda")) +
                            " here"});
  if (result && result->kind != Kind::Config && !result->loc.isValid())
    result->loc = expr.getLoc();
  return result;
}

std::optional<HostValue> HostEvaluator::call(const HostValue &callee,
                                             std::vector<HostValue> &args,
                                             Keywords &keywords, SMLoc loc) {
  switch (callee.kind) {
  case Kind::Function:
  case Kind::Lambda:
    return callFunction(callee, args, keywords, loc);
  case Kind::Object:
    return callObject(callee, args, keywords, loc);
  case Kind::Builtin:
    return callBuiltin(callee.text, args, keywords, loc);
  case Kind::Method:
    if (callee.text == "format" && (*callee.items)[0].kind == Kind::String)
      return formatString((*callee.items)[0], args, keywords, loc);
    if (!keywords.empty())
      return fail(loc, "'" + callee.text + "' takes no keyword arguments here");
    return callMethod(callee, args, loc);
  default:
    return fail(loc, callee.describe() + " is not callable");
  }
}

std::optional<HostValue>
HostEvaluator::callFunction(const HostValue &callee,
                            std::vector<HostValue> &args, Keywords &keywords,
                            SMLoc loc) {
  if (frames.size() >= kMaxCallDepth)
    return fail(loc, "host calls nested more than " +
                         llvm::Twine(kMaxCallDepth) + " deep");
  Frame frame;
  if (callee.kind == Kind::Lambda) {
    const LambdaExpr &lambda = *callee.lambda;
    if (!keywords.empty() || args.size() != lambda.params.size())
      return fail(loc, "the lambda takes " + llvm::Twine(lambda.params.size()) +
                           " arguments");
    for (size_t i = 0; i < args.size(); ++i)
      frame.locals[lambda.params[i]] = args[i];
    frames.push_back(std::move(frame));
    std::optional<HostValue> result = eval(*lambda.body);
    frames.pop_back();
    return result;
  }
  const FunctionDefStmt &function = *callee.function;
  for (const ExprPtr &decorator : function.decorators) {
    const Expr *d = decorator.get();
    if (auto *c = llvm::dyn_cast<CallExpr>(d))
      d = c->callee.get();
    auto *attr = llvm::dyn_cast<AttributeExpr>(d);
    auto *name = llvm::dyn_cast<NameExpr>(d);
    if ((attr && attr->attr == "jit") || (name && name->name == "jit"))
      return fail(loc, "'" + function.name +
                           "' is a @triton.jit function: host code cannot "
                           "call it when compiling");
  }
  size_t positional =
      std::min(function.params.size(), function.keywordOnlyFrom);
  if (args.size() > positional && function.varArgs.empty())
    return fail(loc, "'" + function.name + "' takes " +
                         llvm::Twine(positional) + " arguments but " +
                         llvm::Twine(args.size()) + " were given");
  std::vector<bool> bound(function.params.size(), false);
  std::vector<HostValue> extra;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i >= positional) {
      extra.push_back(args[i]);
      continue;
    }
    frame.locals[function.params[i].name] = args[i];
    bound[i] = true;
  }
  if (!function.varArgs.empty())
    frame.locals[function.varArgs] =
        makeSequence(Kind::Tuple, std::move(extra));
  HostValue extraKeywords = makeSequence(Kind::Dict, {});
  if (!function.kwArgs.empty())
    frame.locals[function.kwArgs] = extraKeywords;
  for (auto &[name, value] : keywords) {
    auto it = llvm::find_if(function.params,
                            [&](const Param &p) { return p.name == name; });
    if (it == function.params.end() && !function.kwArgs.empty()) {
      dictSet(extraKeywords, makeString(name), value);
      continue;
    }
    if (it == function.params.end())
      return fail(loc,
                  "'" + function.name + "' has no parameter '" + name + "'");
    size_t index = it - function.params.begin();
    if (bound[index])
      return fail(loc, "parameter '" + name + "' of '" + function.name +
                           "' is given twice");
    frame.locals[name] = value;
    bound[index] = true;
  }
  for (size_t i = 0; i < function.params.size(); ++i) {
    if (bound[i])
      continue;
    const Param &p = function.params[i];
    if (!p.defaultValue)
      return fail(loc, "missing argument '" + p.name + "' in the call to '" +
                           function.name + "'");
    std::optional<HostValue> v = eval(*p.defaultValue);
    if (!v)
      return std::nullopt;
    frame.locals[p.name] = *v;
  }
  frames.push_back(std::move(frame));
  Flow flow = execBlock(function.body);
  std::optional<HostValue> result = frames.back().returnValue;
  frames.pop_back();
  if (flow == Flow::Failed)
    return std::nullopt;
  if (flow == Flow::Break || flow == Flow::Continue)
    return fail(loc, "'break' or 'continue' outside a loop in '" +
                         function.name + "'");
  return result ? *result : makeValue(Kind::None);
}

// The host APIs that config lists read; anything else a module can call
// (torch, triton.testing, ...) is not evaluated.
static std::optional<HostValue> numericLimit(StringRef info, StringRef attr);

std::optional<HostValue> HostEvaluator::callObject(const HostValue &callee,
                                                   std::vector<HostValue> &args,
                                                   Keywords &keywords,
                                                   SMLoc loc) {
  StringRef path = callee.text;
  if (path == "triton.Config") {
    // triton.Config(kwargs, num_warps=4, num_stages=3, num_ctas=1,
    //               maxnreg=None, pre_hook=None, ir_override=None)
    static const char *const kParams[] = {
        "kwargs",  "num_warps", "num_stages", "num_ctas",
        "maxnreg", "pre_hook",  "ir_override"};
    if (args.size() > std::size(kParams))
      return fail(loc, "triton.Config takes at most " +
                           llvm::Twine(std::size(kParams)) + " arguments");
    Keywords all;
    for (size_t i = 0; i < args.size(); ++i)
      all.push_back({kParams[i], args[i]});
    for (auto &kw : keywords) {
      if (!llvm::is_contained(kParams, StringRef(kw.first)))
        return fail(loc, "triton.Config has no argument '" + kw.first + "'");
      all.push_back(kw);
    }
    HostValue values, options = makeSequence(Kind::Dict, {});
    bool haveValues = false;
    for (auto &[name, value] : all) {
      if (name == "kwargs") {
        if (value.kind != Kind::Dict)
          return fail(loc, "triton.Config needs a dict of constexpr values "
                           "(first argument or kwargs=), got " +
                               value.describe());
        values = value;
        haveValues = true;
      } else {
        dictSet(options, makeString(name, loc), value);
      }
    }
    if (!haveValues)
      return fail(loc, "triton.Config needs a dict of constexpr values "
                       "(first argument or kwargs=)");
    HostValue config = makeSequence(Kind::Config, {values, options}, loc);
    return config;
  }
  // The environment of a build is empty: builds are hermetic, so a kernel
  // file compiles the same wherever it is built. `os.environ.get(name,
  // default)` is the default, as upstream sees it where the variable is not
  // set.
  if (path == "os.environ.get" || path == "os.getenv") {
    bool ok = !args.empty() && args.size() <= 2 &&
              args[0].kind == Kind::String &&
              keywords.size() <= (args.size() == 1 ? 1u : 0u) &&
              (keywords.empty() || keywords[0].first == "default");
    if (!ok)
      return fail(loc, path + " takes a variable name and a default");
    if (args.size() == 2)
      return args[1];
    if (!keywords.empty())
      return keywords[0].second;
    return makeValue(Kind::None);
  }
  // torch.finfo(torch.float8_e4m3fn) and torch.iinfo(torch.int8): their
  // limits are read as attributes (numericLimit).
  if ((path == "torch.finfo" || path == "torch.iinfo") && keywords.empty() &&
      args.size() == 1 && args[0].kind == Kind::Object &&
      StringRef(args[0].text).starts_with("torch.")) {
    std::string info = path.str() + "(" + args[0].text.substr(6) + ")";
    if (!numericLimit(info, "max"))
      return fail(loc, path + " of " + args[0].text + " is not known");
    return makeNamed(Kind::Object, info, loc);
  }
  // `tl.constexpr(v)` in host code: the value.
  if ((path == "triton.language.constexpr" ||
       path == "triton.language.core.constexpr") &&
      keywords.empty() && args.size() == 1)
    return args[0];
  // importlib.util.find_spec("triton"): found (the spec is not looked into).
  if (path == "importlib.util.find_spec" && keywords.empty() &&
      args.size() == 1 && args[0].kind == Kind::String &&
      (args[0].text == "triton" ||
       StringRef(args[0].text).starts_with("triton.")))
    return makeNamed(Kind::Object, "ModuleSpec(" + args[0].text + ")", loc);
  // importlib.import_module("triton"): the module, as `import triton` binds
  // it (whether it exists is found where it is used).
  if (path == "importlib.import_module" && keywords.empty() &&
      args.size() == 1 && args[0].kind == Kind::String)
    return makeNamed(Kind::Object, args[0].text, loc);
  // Version checks, of the Triton whose language Kiln compiles (3.6).
  if (path == "importlib.metadata.version" && keywords.empty() &&
      args.size() == 1 && args[0].kind == Kind::String) {
    if (args[0].text == "triton")
      return makeString("3.6.0", loc);
    return fail(loc, "the version of '" + args[0].text +
                         "' is not known when compiling");
  }
  // packaging's Version, as the tuple of its release numbers without
  // trailing zeros: tuples order as Versions do (3.0 == 3.0.0 < 3.6).
  // Also the wrappers packages make of it (unsloth_zoo.utils.Version) and
  // the older names (distutils' LooseVersion, pkg_resources' parse_version).
  StringRef function = path.substr(path.rfind('.') + 1);
  bool versionParse = function == "Version" || function == "LooseVersion" ||
                      function == "parse_version" ||
                      path.ends_with("version.parse");
  if (versionParse && keywords.empty() && args.size() == 1 &&
      args[0].kind == Kind::String) {
    llvm::SmallVector<StringRef> parts;
    StringRef(args[0].text).split(parts, '.');
    std::vector<HostValue> numbers;
    for (StringRef part : parts) {
      // "0rc1", "0+cu121", "0.dev": the release number before the suffix.
      StringRef digits = part.take_while(llvm::isDigit);
      if (digits.empty())
        break;
      numbers.push_back(makeInt(std::stoll(digits.str())));
      if (digits.size() != part.size())
        break;
    }
    if (numbers.empty())
      return fail(loc, "'" + args[0].text + "' is not a version");
    while (numbers.size() > 1 && numbers.back().intValue == 0)
      numbers.pop_back();
    return makeSequence(Kind::Tuple, std::move(numbers), loc);
  }
  // operator.ge(a, b) and the other comparisons, as functions.
  static const std::pair<const char *, const char *> kOperators[] = {
      {"operator.lt", "<"},  {"operator.le", "<="}, {"operator.eq", "=="},
      {"operator.ne", "!="}, {"operator.ge", ">="}, {"operator.gt", ">"}};
  for (auto &[function, op] : kOperators)
    if (path == function) {
      if (args.size() != 2 || !keywords.empty())
        return fail(loc, path + " takes two arguments");
      return compare(op, args[0], args[1], loc);
    }
  bool noArguments = args.empty() && keywords.empty();
  if (noArguments && path == "triton.runtime.driver.active.get_current_target")
    return makeNamed(Kind::Object, "GPUTarget", loc);
  if (noArguments && path == "torch.cuda.is_available")
    return makeBool(true, loc);
  // A platform probe of a module Kiln does not have (vLLM's
  // `current_platform.is_rocm()`), answered as the kernels' own are.
  if (noArguments)
    if (std::optional<bool> probe = platformProbeByName(
            StringRef(path).drop_front(StringRef(path).rfind('.') + 1)))
      return makeBool(*probe, loc);
  // The device's capability, of the current device or of one named by an
  // index: the GPU compiled for.
  if (path == "torch.cuda.get_device_capability" && keywords.empty() &&
      (args.empty() || (args.size() == 1 && (args[0].kind == Kind::Int ||
                                             args[0].kind == Kind::None)))) {
    if (!target.arch)
      return fail(loc, "the device's capability is not known without an "
                       "arch: give --arch");
    return makeSequence(Kind::Tuple,
                        {makeInt(target.arch / 10), makeInt(target.arch % 10)},
                        loc);
  }
  if ((path == "triton.cdiv" || path == "triton.next_power_of_2") &&
      keywords.empty()) {
    bool cdiv = path == "triton.cdiv";
    if (args.size() != (cdiv ? 2u : 1u) ||
        !llvm::all_of(args,
                      [](const HostValue &a) { return a.kind == Kind::Int; }))
      return fail(loc, path + " takes " + (cdiv ? "two ints" : "an int"));
    if (cdiv) {
      if (args[1].intValue == 0)
        return fail(loc, "division by zero");
      return makeInt((args[0].intValue + args[1].intValue - 1) /
                     args[1].intValue);
    }
    int64_t n = 1;
    while (n < args[0].intValue)
      n <<= 1;
    return makeInt(n);
  }
  // A host function of another source (`from .utils import
  // compare_version`), run in its own module.
  size_t dot = path.rfind('.');
  if (links.callImported && keywords.empty() && dot != StringRef::npos &&
      dot > 0) {
    HostError error;
    if (std::optional<HostValue> v = links.callImported(
            path.take_front(dot), path.drop_front(dot + 1), args, error))
      return v;
    if (!error.message.empty()) {
      if (!failure)
        failure = error;
      return std::nullopt;
    }
  }
  return fail(loc, "'" + path +
                       "(...)' cannot be evaluated when compiling: Kiln runs "
                       "only the host code that a kernel's decorators need, "
                       "without Python");
}

std::optional<bool> kiln::frontend::platformProbeByName(StringRef name) {
  static const char *const kOther[] = {"is_rocm", "is_hip", "is_xpu",
                                       "is_cpu",  "is_tpu", "is_npu",
                                       "is_mps",  "is_musa"};
  // has_triton (torch.utils._triton): Kiln's kernels are Triton's.
  static const char *const kCuda[] = {"is_cuda", "is_cuda_alike", "is_nvidia",
                                      "has_triton"};
  if (llvm::is_contained(kOther, name))
    return false;
  if (llvm::is_contained(kCuda, name))
    return true;
  return std::nullopt;
}

std::optional<HostValue>
HostEvaluator::callBuiltin(StringRef name, std::vector<HostValue> &args,
                           Keywords &keywords, SMLoc loc) {
  auto ints = [&](size_t lo, size_t hi) {
    return keywords.empty() && args.size() >= lo && args.size() <= hi &&
           llvm::all_of(args, [](const HostValue &a) {
             return a.kind == Kind::Int || a.kind == Kind::Bool;
           });
  };
  if (name == "dict") {
    HostValue dict = makeSequence(Kind::Dict, {}, loc);
    if (args.size() > 1 || (args.size() == 1 && args[0].kind != Kind::Dict))
      return fail(loc, "dict() takes a dict and keyword arguments here");
    if (!args.empty())
      *dict.items = *args[0].items;
    for (auto &[key, value] : keywords)
      dictSet(dict, makeString(key), value);
    return dict;
  }
  if (!keywords.empty())
    return fail(loc, "'" + name + "' takes no keyword arguments here");
  // hasattr(triton.language, "gather"): what Kiln's Triton modules have.
  if (name == "hasattr") {
    if (args.size() != 2 || args[1].kind != Kind::String)
      return fail(loc, "hasattr() takes a value and an attribute name");
    std::optional<bool> has;
    if (args[0].kind == Kind::Object && links.hasAttribute)
      has = links.hasAttribute(args[0].text, args[1].text);
    if (!has)
      return fail(loc, "hasattr() of " + args[0].describe() +
                           " is not evaluated when compiling");
    return makeBool(*has);
  }
  if (name == "range") {
    if (!ints(1, 3))
      return fail(loc, "range() takes one to three ints");
    int64_t start = args.size() > 1 ? args[0].intValue : 0;
    int64_t stop = args.size() > 1 ? args[1].intValue : args[0].intValue;
    int64_t stride = args.size() > 2 ? args[2].intValue : 1;
    if (stride == 0)
      return fail(loc, "range() step must not be zero");
    std::vector<HostValue> items;
    for (int64_t i = start; stride > 0 ? i < stop : i > stop; i += stride) {
      if (!step(loc))
        return std::nullopt;
      items.push_back(makeInt(i));
    }
    return makeSequence(Kind::List, std::move(items), loc);
  }
  if (args.size() != 1 && name != "min" && name != "max" && name != "zip" &&
      name != "list" && name != "tuple")
    return fail(loc, "'" + name + "' takes one argument");
  if (name == "len") {
    const HostValue &v = args[0];
    if (v.kind == Kind::String)
      return makeInt(v.text.size());
    if (isSequence(v))
      return makeInt(v.items->size());
    if (v.kind == Kind::Dict)
      return makeInt(v.items->size() / 2);
    return fail(loc, "len() of " + v.describe());
  }
  if (name == "list" || name == "tuple") {
    if (args.size() > 1)
      return fail(loc, "'" + name + "' takes at most one argument");
    std::vector<HostValue> items;
    if (!args.empty()) {
      std::optional<std::vector<HostValue>> it = iterate(args[0], loc);
      if (!it)
        return std::nullopt;
      items = std::move(*it);
    }
    return makeSequence(name == "list" ? Kind::List : Kind::Tuple,
                        std::move(items), loc);
  }
  if (name == "min" || name == "max") {
    std::vector<HostValue> items = args;
    if (args.size() == 1) {
      std::optional<std::vector<HostValue>> it = iterate(args[0], loc);
      if (!it)
        return std::nullopt;
      items = std::move(*it);
    }
    if (items.empty() || !llvm::all_of(items, isNumber))
      return fail(loc, "'" + name + "' takes numbers here");
    HostValue best = items[0];
    for (const HostValue &v : items)
      if (name == "min" ? asDouble(v) < asDouble(best)
                        : asDouble(v) > asDouble(best))
        best = v;
    return best;
  }
  if (name == "enumerate" || name == "zip") {
    std::vector<std::vector<HostValue>> sources;
    if (name == "enumerate") {
      std::optional<std::vector<HostValue>> it = iterate(args[0], loc);
      if (!it)
        return std::nullopt;
      std::vector<HostValue> counts;
      for (size_t i = 0; i < it->size(); ++i)
        counts.push_back(makeInt(i));
      sources = {counts, *it};
    } else {
      for (const HostValue &a : args) {
        std::optional<std::vector<HostValue>> it = iterate(a, loc);
        if (!it)
          return std::nullopt;
        sources.push_back(std::move(*it));
      }
    }
    size_t n = sources.empty() ? 0 : sources[0].size();
    for (const auto &s : sources)
      n = std::min(n, s.size());
    std::vector<HostValue> tuples;
    for (size_t i = 0; i < n; ++i) {
      std::vector<HostValue> t;
      for (const auto &s : sources)
        t.push_back(s[i]);
      tuples.push_back(makeSequence(Kind::Tuple, std::move(t)));
    }
    return makeSequence(Kind::List, std::move(tuples), loc);
  }
  if (name == "all" || name == "any" || name == "sum" || name == "sorted" ||
      name == "reversed") {
    std::optional<std::vector<HostValue>> items = iterate(args[0], loc);
    if (!items)
      return std::nullopt;
    if (name == "all" || name == "any") {
      bool wanted = name == "any"; // the value that decides
      for (const HostValue &item : *items) {
        std::optional<bool> t = truth(item, loc);
        if (!t)
          return std::nullopt;
        if (*t == wanted)
          return makeBool(wanted);
      }
      return makeBool(!wanted);
    }
    if (name == "reversed")
      return makeSequence(Kind::List, {items->rbegin(), items->rend()}, loc);
    if (!llvm::all_of(*items, isNumber))
      return fail(loc, "'" + name + "' takes numbers here");
    if (name == "sorted") {
      std::vector<HostValue> sorted = *items;
      std::stable_sort(sorted.begin(), sorted.end(),
                       [](const HostValue &a, const HostValue &b) {
                         return asDouble(a) < asDouble(b);
                       });
      return makeSequence(Kind::List, std::move(sorted), loc);
    }
    HostValue total = makeInt(0);
    for (const HostValue &item : *items) {
      std::optional<HostValue> next = binary("+", total, item, loc);
      if (!next)
        return std::nullopt;
      total = *next;
    }
    return total;
  }
  const HostValue &v = args[0];
  if (name == "abs" && isNumber(v))
    return v.kind == Kind::Float
               ? makeFloat(std::fabs(v.floatValue))
               : makeInt(v.intValue < 0 ? -v.intValue : v.intValue);
  if (name == "int" && isNumber(v))
    return makeInt(v.kind == Kind::Float ? int64_t(v.floatValue) : v.intValue);
  if (name == "float" && isNumber(v))
    return makeFloat(asDouble(v));
  if (name == "bool") {
    std::optional<bool> t = truth(v, loc);
    if (!t)
      return std::nullopt;
    return makeBool(*t);
  }
  if (name == "str")
    if (std::optional<std::string> text = pythonStr(v))
      return makeString(*text, loc);
  return fail(loc, "'" + name + "' of " + v.describe() +
                       " is not evaluated when compiling");
}

std::optional<HostValue> HostEvaluator::callMethod(const HostValue &method,
                                                   std::vector<HostValue> &args,
                                                   SMLoc loc) {
  HostValue self = (*method.items)[0];
  StringRef name = method.text;
  if (self.kind == Kind::List) {
    if (name == "append" && args.size() == 1) {
      self.items->push_back(args[0]);
      return makeValue(Kind::None);
    }
    if (name == "extend" && args.size() == 1) {
      std::optional<std::vector<HostValue>> items = iterate(args[0], loc);
      if (!items)
        return std::nullopt;
      self.items->insert(self.items->end(), items->begin(), items->end());
      return makeValue(Kind::None);
    }
    if (name == "copy" && args.empty())
      return makeSequence(Kind::List, *self.items, loc);
  }
  if (self.kind == Kind::Dict) {
    if ((name == "keys" || name == "values" || name == "items") &&
        args.empty()) {
      std::vector<HostValue> out;
      for (size_t i = 0; i + 1 < self.items->size(); i += 2) {
        const HostValue &k = (*self.items)[i], &v = (*self.items)[i + 1];
        out.push_back(name == "keys"     ? k
                      : name == "values" ? v
                                         : makeSequence(Kind::Tuple, {k, v}));
      }
      return makeSequence(Kind::List, std::move(out), loc);
    }
    if (name == "get" && (args.size() == 1 || args.size() == 2)) {
      if (HostValue *v = dictFind(self, args[0]))
        return *v;
      return args.size() == 2 ? args[1] : makeValue(Kind::None);
    }
    if (name == "copy" && args.empty())
      return makeSequence(Kind::Dict, *self.items, loc);
    if (name == "update" && args.size() == 1 && args[0].kind == Kind::Dict) {
      std::vector<HostValue> other = *args[0].items;
      for (size_t i = 0; i + 1 < other.size(); i += 2)
        dictSet(self, other[i], other[i + 1]);
      return makeValue(Kind::None);
    }
  }
  if ((self.kind == Kind::Int || self.kind == Kind::Bool) && args.empty()) {
    uint64_t magnitude = self.intValue < 0 ? 0 - uint64_t(self.intValue)
                                           : uint64_t(self.intValue);
    return makeInt(name == "bit_length" ? 64 - llvm::countl_zero(magnitude)
                                        : llvm::popcount(magnitude));
  }
  if (self.kind == Kind::String && args.empty() &&
      (name == "lower" || name == "upper"))
    return makeString(name == "lower" ? StringRef(self.text).lower()
                                      : StringRef(self.text).upper());
  if (self.kind == Kind::String) {
    std::optional<HostValue> result = stringMethod(self, name, args, loc);
    if (result || failure)
      return result;
  }
  return fail(loc, "the method '" + name + "' of " + self.describe() +
                       " is not evaluated when compiling");
}

/// `attr` of `info`, "torch.finfo(float32)" or "torch.iinfo(int8)": the
/// limits of torch's types, as PyTorch gives them.
static std::optional<HostValue> numericLimit(StringRef info, StringRef attr) {
  struct Float {
    const char *names[2];
    double max, eps, tiny;
    int bits;
  };
  static const Float kFloats[] = {
      {{"float32", "float"}, 3.4028234663852886e38, 1.1920928955078125e-07,
       1.1754943508222875e-38, 32},
      {{"float16", "half"}, 65504.0, 0.0009765625, 6.103515625e-05, 16},
      {{"bfloat16", "bfloat16"}, 3.3895313892515355e38, 0.0078125,
       1.1754943508222875e-38, 16},
      {{"float64", "double"}, 1.7976931348623157e308, 2.220446049250313e-16,
       2.2250738585072014e-308, 64},
      {{"float8_e4m3fn", "float8_e4m3fn"}, 448.0, 0.125, 0.015625, 8},
      {{"float8_e5m2", "float8_e5m2"}, 57344.0, 0.25, 6.103515625e-05, 8},
      {{"float8_e4m3fnuz", "float8_e4m3fnuz"}, 240.0, 0.125, 0.0078125, 8},
      {{"float8_e5m2fnuz", "float8_e5m2fnuz"}, 57344.0, 0.125,
       3.0517578125e-05, 8},
  };
  struct Int {
    const char *name;
    int bits;
    bool isSigned;
  };
  static const Int kInts[] = {
      {"int8", 8, true},    {"int16", 16, true},   {"short", 16, true},
      {"int32", 32, true},  {"int", 32, true},     {"int64", 64, true},
      {"long", 64, true},   {"uint8", 8, false},   {"uint16", 16, false},
      {"uint32", 32, false}, {"uint64", 64, false}};
  StringRef type = info;
  if (type.consume_front("torch.finfo(") && type.consume_back(")")) {
    for (const Float &f : kFloats)
      if (type == f.names[0] || type == f.names[1]) {
        if (attr == "max")
          return makeFloat(f.max);
        if (attr == "min")
          return makeFloat(-f.max);
        if (attr == "eps")
          return makeFloat(f.eps);
        if (attr == "tiny" || attr == "smallest_normal")
          return makeFloat(f.tiny);
        if (attr == "bits")
          return makeInt(f.bits);
      }
    return std::nullopt;
  }
  type = info;
  if (type.consume_front("torch.iinfo(") && type.consume_back(")")) {
    for (const Int &i : kInts)
      if (type == i.name) {
        // uint64's max does not fit an int64: it is not given.
        if (attr == "max" && (i.isSigned || i.bits < 64))
          return makeInt(i.isSigned ? int64_t((uint64_t(1) << (i.bits - 1)) - 1)
                                    : int64_t((uint64_t(1) << i.bits) - 1));
        if (attr == "min")
          return makeInt(i.isSigned ? (i.bits == 64 ? INT64_MIN
                                                    : -(int64_t(1) << (i.bits - 1)))
                                    : 0);
        if (attr == "bits")
          return makeInt(i.bits);
      }
  }
  return std::nullopt;
}

std::optional<HostValue> HostEvaluator::attribute(const HostValue &value,
                                                  StringRef attr, SMLoc loc) {
  switch (value.kind) {
  case Kind::Object:
    if (value.text == "GPUTarget") {
      if (attr == "backend")
        return makeString(target.backend);
      if (attr == "warp_size")
        return makeInt(target.warpSize);
      if (attr == "arch") {
        if (!target.arch)
          return fail(loc, "the target's arch is not known here: give --arch");
        return makeInt(target.arch);
      }
      return fail(loc, "the target has no attribute '" + attr + "'");
    }
    // Kiln compiles for CUDA: a ROCm check finds no HIP.
    if (value.text == "torch.version" && attr == "hip")
      return makeValue(Kind::None);
    if (std::optional<HostValue> limit = numericLimit(value.text, attr))
      return *limit;
    // Kiln compiles the language of Triton 3.6.
    if (value.text == "triton" && attr == "__version__")
      return makeString("3.6.0");
    if (value.text == "typing" && attr == "TYPE_CHECKING")
      return makeBool(false);
    return makeNamed(Kind::Object, value.text + "." + attr.str());
  case Kind::Config: {
    const HostValue &values = (*value.items)[0], &options = (*value.items)[1];
    if (attr == "kwargs" || attr == "all_kwargs") // upstream names both
      return values;
    static const std::pair<const char *, int64_t> kDefaults[] = {
        {"num_warps", 4}, {"num_stages", 3}, {"num_ctas", 1}};
    for (auto &[name, fallback] : kDefaults)
      if (attr == name) {
        if (HostValue *v = dictFind(options, makeString(name)))
          return *v;
        return makeInt(fallback);
      }
    return fail(loc, "triton.Config has no attribute '" + attr +
                         "' that Kiln evaluates");
  }
  case Kind::Int:
  case Kind::Bool:
    if (attr != "bit_length" && attr != "bit_count")
      return fail(loc, value.describe() + " has no attribute '" + attr +
                           "' that Kiln evaluates");
    [[fallthrough]];
  case Kind::List:
  case Kind::Dict:
  case Kind::String: {
    HostValue method = makeNamed(Kind::Method, attr.str(), loc);
    method.items = std::make_shared<std::vector<HostValue>>(1, value);
    return method;
  }
  default:
    return fail(loc, value.describe() + " has no attribute '" + attr +
                         "' that Kiln evaluates");
  }
}

std::optional<HostValue> HostEvaluator::binary(StringRef op,
                                               const HostValue &lhs,
                                               const HostValue &rhs,
                                               SMLoc loc) {
  auto bad = [&]() {
    return fail(loc, "unsupported operand types for '" + op +
                         "': " + lhs.describe() + " and " + rhs.describe());
  };
  // Concatenation and dict union.
  if (op == "+" && lhs.kind == Kind::String && rhs.kind == Kind::String)
    return makeString(lhs.text + rhs.text);
  if (op == "+" && isSequence(lhs) && lhs.kind == rhs.kind) {
    std::vector<HostValue> items = *lhs.items;
    items.insert(items.end(), rhs.items->begin(), rhs.items->end());
    return makeSequence(lhs.kind, std::move(items));
  }
  if (op == "*" && isSequence(lhs) && rhs.kind == Kind::Int) {
    std::vector<HostValue> items;
    for (int64_t i = 0; i < rhs.intValue; ++i) {
      if (!step(loc))
        return std::nullopt;
      items.insert(items.end(), lhs.items->begin(), lhs.items->end());
    }
    return makeSequence(lhs.kind, std::move(items));
  }
  if (op == "|" && lhs.kind == Kind::Dict && rhs.kind == Kind::Dict) {
    HostValue merged = makeSequence(Kind::Dict, *lhs.items);
    for (size_t i = 0; i + 1 < rhs.items->size(); i += 2)
      dictSet(merged, (*rhs.items)[i], (*rhs.items)[i + 1]);
    return merged;
  }
  if (!isNumber(lhs) || !isNumber(rhs))
    return bad();
  if (lhs.kind == Kind::Float || rhs.kind == Kind::Float || op == "/") {
    double a = asDouble(lhs), b = asDouble(rhs);
    if ((op == "/" || op == "//" || op == "%") && b == 0)
      return fail(loc, "division by zero");
    if (op == "+")
      return makeFloat(a + b);
    if (op == "-")
      return makeFloat(a - b);
    if (op == "*")
      return makeFloat(a * b);
    if (op == "/")
      return makeFloat(a / b);
    if (op == "//")
      return makeFloat(std::floor(a / b));
    if (op == "%")
      return makeFloat(a - b * std::floor(a / b));
    if (op == "**")
      return makeFloat(std::pow(a, b));
    return bad();
  }
  int64_t a = lhs.intValue, b = rhs.intValue, r = 0;
  auto overflow = [&]() { return fail(loc, "integer overflow in host code"); };
  if (op == "+") {
    if (__builtin_add_overflow(a, b, &r))
      return overflow();
  } else if (op == "-") {
    if (__builtin_sub_overflow(a, b, &r))
      return overflow();
  } else if (op == "*") {
    if (__builtin_mul_overflow(a, b, &r))
      return overflow();
  } else if (op == "//" || op == "%") {
    if (b == 0)
      return fail(loc, "division by zero");
    if (a == INT64_MIN && b == -1)
      return overflow();
    int64_t q = a / b, m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) { // Python floors
      --q;
      m += b;
    }
    r = op == "//" ? q : m;
  } else if (op == "**") {
    if (b < 0)
      return makeFloat(std::pow(double(a), double(b)));
    r = 1;
    for (int64_t i = 0; i < b; ++i)
      if (__builtin_mul_overflow(r, a, &r))
        return overflow();
  } else if (op == "<<" || op == ">>") {
    if (b < 0 || b > 62)
      return fail(loc, "shift count out of range in host code");
    if (op == ">>")
      r = a >> b;
    else if (__builtin_mul_overflow(a, int64_t(1) << b, &r))
      return overflow();
  } else if (op == "&" || op == "|" || op == "^") {
    r = op == "&" ? a & b : op == "|" ? a | b : a ^ b;
    if (lhs.kind == Kind::Bool && rhs.kind == Kind::Bool)
      return makeBool(r);
  } else {
    return bad();
  }
  return makeInt(r);
}

std::optional<HostValue> HostEvaluator::compare(StringRef op,
                                                const HostValue &lhs,
                                                const HostValue &rhs,
                                                SMLoc loc) {
  if (op == "==" || op == "!=")
    return makeBool(equal(lhs, rhs) == (op == "=="));
  if (op == "is" || op == "is not") {
    bool same =
        lhs.kind == rhs.kind &&
        (lhs.kind == Kind::None || (lhs.items && lhs.items == rhs.items) ||
         ((lhs.kind == Kind::Bool || lhs.kind == Kind::Object ||
           lhs.kind == Kind::Function) &&
          equal(lhs, rhs)));
    return makeBool(same == (op == "is"));
  }
  if (op == "in" || op == "not in") {
    bool found = false;
    // No environment variable is set when building (os.environ.get).
    if (rhs.kind == Kind::Object && rhs.text == "os.environ")
      return makeBool(op != "in");
    if (rhs.kind == Kind::String && lhs.kind == Kind::String)
      found = StringRef(rhs.text).contains(lhs.text);
    else if (isSequence(rhs))
      found = llvm::any_of(*rhs.items,
                           [&](const HostValue &v) { return equal(v, lhs); });
    else if (rhs.kind == Kind::Dict)
      found = dictFind(rhs, lhs) != nullptr;
    else
      return fail(loc, "'" + op + "' needs a container, got " + rhs.describe());
    return makeBool(found == (op == "in"));
  }
  // Python's ordering: numbers, strings, and tuples (or lists) item by item.
  std::function<std::optional<int>(const HostValue &, const HostValue &)>
      ordering =
          [&](const HostValue &a, const HostValue &b) -> std::optional<int> {
    if (isNumber(a) && isNumber(b))
      return asDouble(a) < asDouble(b) ? -1 : asDouble(a) > asDouble(b) ? 1 : 0;
    if (a.kind == Kind::String && b.kind == Kind::String)
      return StringRef(a.text).compare(b.text);
    if (isSequence(a) && a.kind == b.kind) {
      size_t n = std::min(a.items->size(), b.items->size());
      for (size_t i = 0; i < n; ++i) {
        if (equal((*a.items)[i], (*b.items)[i]))
          continue;
        return ordering((*a.items)[i], (*b.items)[i]);
      }
      return a.items->size() < b.items->size()   ? -1
             : a.items->size() > b.items->size() ? 1
                                                 : 0;
    }
    return std::nullopt;
  };
  std::optional<int> order = ordering(lhs, rhs);
  if (!order)
    return fail(loc, "cannot compare " + lhs.describe() + " and " +
                         rhs.describe() + " with '" + op + "'");
  bool result = op == "<"    ? *order < 0
                : op == "<=" ? *order <= 0
                : op == ">"  ? *order > 0
                             : *order >= 0;
  return makeBool(result);
}

std::optional<HostValue> HostEvaluator::subscript(const HostValue &base,
                                                  const SubscriptExpr &expr) {
  SMLoc loc = expr.getLoc();
  if (expr.indices.size() != 1)
    return fail(loc, "one index expected");
  const Expr &indexExpr = *expr.indices[0];
  if (base.kind == Kind::Object && base.text == "os.environ")
    return fail(loc, "os.environ[...] is not read when compiling: the "
                     "environment of a build is empty, and this would raise "
                     "KeyError (os.environ.get with a default reads as the "
                     "default)");
  if (auto *slice = llvm::dyn_cast<SliceExpr>(&indexExpr)) {
    if (!isSequence(base))
      return fail(loc, "cannot slice " + base.describe());
    int64_t n = base.items->size(), bounds[3] = {0, n, 1};
    const ExprPtr *parts[3] = {&slice->lower, &slice->upper, &slice->step};
    for (int i = 0; i < 3; ++i) {
      if (!*parts[i])
        continue;
      std::optional<HostValue> v = eval(**parts[i]);
      if (!v)
        return std::nullopt;
      if (v->kind != Kind::Int)
        return fail((*parts[i])->getLoc(), "slice bounds must be ints");
      bounds[i] = v->intValue;
    }
    if (bounds[2] != 1)
      return fail(loc, "slices with a step are not evaluated when compiling");
    for (int i = 0; i < 2; ++i)
      bounds[i] =
          std::clamp<int64_t>(bounds[i] < 0 ? bounds[i] + n : bounds[i], 0, n);
    std::vector<HostValue> items;
    for (int64_t i = bounds[0]; i < bounds[1]; ++i)
      items.push_back((*base.items)[i]);
    return makeSequence(base.kind, std::move(items));
  }
  std::optional<HostValue> index = eval(indexExpr);
  if (!index)
    return std::nullopt;
  if (base.kind == Kind::Dict) {
    if (HostValue *v = dictFind(base, *index))
      return *v;
    return fail(indexExpr.getLoc(),
                "key " + index->describe() + " is not in the dict");
  }
  if ((isSequence(base) || base.kind == Kind::String) &&
      index->kind == Kind::Int) {
    int64_t n =
        base.kind == Kind::String ? base.text.size() : base.items->size();
    int64_t i = index->intValue < 0 ? index->intValue + n : index->intValue;
    if (i < 0 || i >= n)
      return fail(indexExpr.getLoc(),
                  "index " + llvm::Twine(index->intValue) + " out of range");
    if (base.kind == Kind::String)
      return makeString(base.text.substr(i, 1));
    return (*base.items)[i];
  }
  return fail(loc,
              "cannot index " + base.describe() + " with " + index->describe());
}

std::optional<bool> HostEvaluator::truth(const HostValue &value, SMLoc loc) {
  switch (value.kind) {
  case Kind::None:
    return false;
  case Kind::Bool:
  case Kind::Int:
    return value.intValue != 0;
  case Kind::Float:
    return value.floatValue != 0;
  case Kind::String:
    return !value.text.empty();
  case Kind::List:
  case Kind::Tuple:
  case Kind::Dict:
    return !value.items->empty();
  case Kind::Unknown:
    fail(loc, "a value not known when compiling used as a condition");
    return std::nullopt;
  default:
    return true;
  }
}

std::optional<std::vector<HostValue>>
HostEvaluator::iterate(const HostValue &value, SMLoc loc) {
  if (isSequence(value))
    return *value.items;
  if (value.kind == Kind::Dict) {
    std::vector<HostValue> keys;
    for (size_t i = 0; i < value.items->size(); i += 2)
      keys.push_back((*value.items)[i]);
    return keys;
  }
  if (value.kind == Kind::String) {
    std::vector<HostValue> chars;
    for (char c : value.text)
      chars.push_back(makeString(std::string(1, c)));
    return chars;
  }
  fail(loc, "cannot iterate over " + value.describe());
  return std::nullopt;
}

std::optional<HostValue>
HostEvaluator::formatString(const HostValue &self, std::vector<HostValue> &args,
                            Keywords &keywords, SMLoc loc) {
  StringRef text = self.text;
  std::string out;
  size_t nextIndex = 0;
  bool autoIndex = false, manualIndex = false; // Python allows one or the other
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '}') {
      if (i + 1 < text.size() && text[i + 1] == '}') {
        out += '}';
        ++i;
        continue;
      }
      return fail(loc, "str.format: single '}' in the format string");
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    size_t close = text.find('}', i);
    if (close == StringRef::npos)
      return fail(loc, "str.format: unmatched '{' in the format string");
    StringRef field = text.slice(i + 1, close);
    i = close;
    if (field.contains(':') || field.contains('!'))
      return fail(loc, "str.format: the field '{" + field +
                           "}' has a conversion or format spec, which Kiln "
                           "does not evaluate");
    const HostValue *value = nullptr;
    uint64_t index = 0;
    if (field.empty()) {
      if (manualIndex)
        return fail(loc, "str.format: cannot switch from manual field "
                         "specification to automatic field numbering");
      autoIndex = true;
      index = nextIndex++;
      value = index < args.size() ? &args[index] : nullptr;
    } else if (!field.getAsInteger(10, index)) {
      if (autoIndex)
        return fail(loc, "str.format: cannot switch from automatic field "
                         "numbering to manual field specification");
      manualIndex = true;
      value = index < args.size() ? &args[index] : nullptr;
    } else {
      for (const auto &[key, v] : keywords)
        if (key == field)
          value = &v;
    }
    if (!value)
      return fail(loc,
                  "str.format: no argument for the field '{" + field + "}'");
    std::optional<std::string> piece = pythonStr(*value);
    if (!piece)
      return fail(loc, "str.format of " + value->describe() +
                           " is not evaluated when compiling");
    out += *piece;
  }
  return makeString(std::move(out), loc);
}

std::optional<HostValue>
HostEvaluator::stringMethod(const HostValue &self, StringRef name,
                            std::vector<HostValue> &args, SMLoc loc) {
  StringRef text = self.text;
  auto stringArg = [&](size_t i) -> const std::string * {
    return i < args.size() && args[i].kind == Kind::String ? &args[i].text
                                                           : nullptr;
  };
  if (name == "join" && args.size() == 1) {
    std::optional<std::vector<HostValue>> items = iterate(args[0], loc);
    if (!items)
      return std::nullopt;
    std::string out;
    for (size_t i = 0; i < items->size(); ++i) {
      if ((*items)[i].kind != Kind::String)
        return fail(loc, "str.join: item " + std::to_string(i) + " is " +
                             (*items)[i].describe() + ", not a string");
      out += (i ? text.str() : std::string()) + (*items)[i].text;
    }
    return makeString(std::move(out), loc);
  }
  if (name == "split" &&
      (args.empty() ||
       (args.size() == 1 && (stringArg(0) || args[0].kind == Kind::None)))) {
    std::vector<HostValue> parts;
    if (const std::string *sep = stringArg(0)) {
      if (sep->empty())
        return fail(loc, "str.split: empty separator");
      llvm::SmallVector<StringRef> pieces;
      text.split(pieces, *sep, -1, /*KeepEmpty=*/true);
      for (StringRef piece : pieces)
        parts.push_back(makeString(piece.str(), loc));
    } else { // runs of whitespace, no empty strings
      llvm::SmallVector<StringRef> pieces;
      llvm::SplitString(text, pieces);
      for (StringRef piece : pieces)
        parts.push_back(makeString(piece.str(), loc));
    }
    return makeSequence(Kind::List, std::move(parts), loc);
  }
  if ((name == "strip" || name == "lstrip" || name == "rstrip") &&
      args.empty()) {
    StringRef t = name == "lstrip"   ? text.ltrim()
                  : name == "rstrip" ? text.rtrim()
                                     : text.trim();
    return makeString(t.str(), loc);
  }
  if (name == "replace" && args.size() == 2 && stringArg(0) && stringArg(1)) {
    if (stringArg(0)->empty())
      return fail(loc, "str.replace with an empty pattern is not evaluated "
                       "when compiling");
    std::string out;
    StringRef rest = text;
    for (size_t at; (at = rest.find(*stringArg(0))) != StringRef::npos;
         rest = rest.drop_front(at + stringArg(0)->size()))
      out += rest.take_front(at).str() + *stringArg(1);
    return makeString(out + rest.str(), loc);
  }
  if ((name == "startswith" || name == "endswith") && args.size() == 1 &&
      stringArg(0))
    return makeBool(name == "startswith" ? text.starts_with(*stringArg(0))
                                         : text.ends_with(*stringArg(0)),
                    loc);
  return std::nullopt; // not a method evaluated here
}
