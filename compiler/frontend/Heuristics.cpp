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

/// The `{key: lambda}` dicts of the kernel's @triton.heuristics decorators,
/// outermost first: upstream's outer decorator computes its values and then
/// calls the inner one, which sees them (as later entries of one dict see
/// earlier ones).
std::vector<const DictExpr *> heuristicDicts(const Module &module,
                                             const FunctionDefStmt &kernel) {
  std::vector<const DictExpr *> dicts;
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
    if (auto *dict = llvm::dyn_cast_or_null<DictExpr>(values))
      dicts.push_back(dict);
  }
  return dicts;
}

} // namespace

const LambdaExpr *Emitter::heuristicFor(const FunctionDefStmt &kernel,
                                        llvm::StringRef param) {
  for (const DictExpr *dict : heuristicDicts(module, kernel))
    for (size_t i = 0; i < dict->keys.size(); ++i)
      if (auto *key = llvm::dyn_cast<StringExpr>(dict->keys[i].get());
          key && key->value == param)
        return llvm::dyn_cast<LambdaExpr>(dict->values[i].get());
  return nullptr;
}

bool Emitter::applyHeuristics(const FunctionDefStmt &kernel, KernelSpec &spec) {
  for (const DictExpr *dict : heuristicDicts(module, kernel)) {
    for (size_t i = 0; i < dict->keys.size(); ++i) {
      auto *key = llvm::dyn_cast<StringExpr>(dict->keys[i].get());
      if (!key)
        continue;
      auto param = llvm::find_if(spec.params, [&](const ParamSpec &p) {
        return p.name == key->value;
      });
      if (param == spec.params.end() || !param->pendingHeuristic)
        continue; // given by the signature, which wins
      auto *lambda = llvm::dyn_cast<LambdaExpr>(dict->values[i].get());
      if (!lambda || lambda->params.size() != 1) {
        error(dict->values[i]->getLoc(),
              "the heuristic for '" + key->value +
                  "' must be a lambda of one argument (the kernel's "
                  "arguments by name)");
        return false;
      }
      // The arguments known now: constexprs by value, the rest marked.
      FValue args = FValue::named(FValue::Kind::Dict, key->value);
      for (const ParamSpec &p : spec.params) {
        if (p.pendingHeuristic)
          continue;
        args.elements.push_back(FValue::string(p.name));
        std::optional<FValue> value =
            p.isConstexpr
                ? constexprValue(p.value, p.name, dict->values[i]->getLoc())
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
        error(lambda->body->getLoc(), "the heuristic for '" + key->value +
                                          "' gives " + value->describe() +
                                          ", not a compile-time constant");
        return false;
      }
      param->value = *literal;
      param->pendingHeuristic = false;
    }
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
