//===- Heuristics.cpp - @triton.heuristics evaluated when compiling -------===//
//
// `@triton.heuristics({"EVEN": lambda args: args["N"] % args["BLOCK"] == 0})`
// computes a constexpr parameter from the others. Upstream evaluates the
// lambdas at every launch; ahead of time we can only when their inputs are
// known at compile time: constexpr parameters and earlier heuristics'
// results. A signature may leave such parameters out; reading a run-time
// parameter is an error that says so.
//
//===----------------------------------------------------------------------===//
#include "compiler/frontend/Emitter.h"
#include "compiler/frontend/Parser.h"

using namespace kiln::frontend;

namespace {

/// One `key: lambda` entry of a @triton.heuristics dict.
struct HeuristicEntry {
  std::string name;
  const Expr *value;
};

/// The entries of one heuristics dict: a display (`{"EVEN": lambda ...}`) or
/// a `dict(EVEN=lambda ...)` call, as Python builds either. Entries whose key
/// is not a string are left out.
std::vector<HeuristicEntry> dictEntries(const Expr *values) {
  std::vector<HeuristicEntry> entries;
  if (auto *dict = llvm::dyn_cast_or_null<DictExpr>(values)) {
    for (size_t i = 0; i < dict->keys.size(); ++i)
      if (auto *key = llvm::dyn_cast_or_null<StringExpr>(dict->keys[i].get()))
        entries.push_back({key->value, dict->values[i].get()});
  } else if (auto *call = llvm::dyn_cast_or_null<CallExpr>(values)) {
    auto *callee = llvm::dyn_cast<NameExpr>(call->callee.get());
    if (callee && callee->name == "dict" && call->args.empty())
      for (const Keyword &kw : call->keywords)
        if (!kw.name.empty())
          entries.push_back({kw.name, kw.value.get()});
  }
  return entries;
}

/// The entries of the kernel's @triton.heuristics decorators, outermost
/// decorator first: upstream's outer decorator computes its values and then
/// calls the inner one, which sees them (as later entries of one dict see
/// earlier ones).
std::vector<HeuristicEntry> heuristicEntries(const Module &module,
                                             const FunctionDefStmt &kernel) {
  std::vector<HeuristicEntry> entries;
  for (auto it = kernel.decorators.begin(); it != kernel.decorators.end();
       ++it) {
    const CallExpr *call = decoratorCall(module, **it);
    if (!call)
      continue;
    auto *attr = llvm::dyn_cast<AttributeExpr>(call->callee.get());
    if (!attr || attr->attr != "heuristics")
      continue;
    const Expr *values = !call->args.empty() ? call->args[0].get() : nullptr;
    for (const Keyword &kw : call->keywords)
      if (kw.name == "values")
        values = kw.value.get();
    for (HeuristicEntry &entry : dictEntries(values))
      entries.push_back(std::move(entry));
  }
  return entries;
}

} // namespace

const LambdaExpr *Emitter::heuristicFor(const FunctionDefStmt &kernel,
                                        llvm::StringRef param) {
  for (const HeuristicEntry &entry : heuristicEntries(module, kernel))
    if (entry.name == param)
      return llvm::dyn_cast<LambdaExpr>(entry.value);
  return nullptr;
}

bool Emitter::applyHeuristics(const FunctionDefStmt &kernel, KernelSpec &spec) {
  for (const HeuristicEntry &entry : heuristicEntries(module, kernel)) {
    auto param = llvm::find_if(
        spec.params, [&](const ParamSpec &p) { return p.name == entry.name; });
    if (param == spec.params.end() || !param->pendingHeuristic)
      continue; // given by the signature, which wins
    auto *lambda = llvm::dyn_cast<LambdaExpr>(entry.value);
    if (!lambda || lambda->params.size() != 1) {
      error(entry.value->getLoc(),
            "the heuristic for '" + entry.name +
                "' must be a lambda of one argument (the kernel's "
                "arguments by name)");
      return false;
    }
    // The arguments known now: constexprs by value, the rest marked.
    FValue args = FValue::named(FValue::Kind::Dict, entry.name);
    for (const ParamSpec &p : spec.params) {
      if (p.pendingHeuristic)
        continue;
      args.elements.push_back(FValue::string(p.name));
      std::optional<FValue> value =
          p.isConstexpr ? constexprValue(p.value, p.name, entry.value->getLoc())
          : p.equalToOne ? FValue::integer(1)
                         : FValue::named(FValue::Kind::Marker, "run-time");
      if (!value)
        return false;
      args.elements.push_back(*value);
    }
    scopes.emplace_back();
    scopes.back()[lambda->params[0]] = args;
    std::optional<FValue> value = evaluate(*lambda->body);
    scopes.pop_back();
    if (!value)
      return false;
    std::optional<ConstexprLiteral> literal = valueToLiteral(*value);
    if (!literal) {
      error(lambda->body->getLoc(), "the heuristic for '" + entry.name +
                                        "' gives " + value->describe() +
                                        ", not a compile-time constant");
      return false;
    }
    param->value = *literal;
    param->pendingHeuristic = false;
  }
  for (const ParamSpec &p : spec.params)
    if (p.pendingHeuristic) {
      error(kernel.getLoc(), "parameter '" + p.name +
                                 "' is missing from the signature and no "
                                 "heuristic gave it a value");
      return false;
    }
  return true;
}
