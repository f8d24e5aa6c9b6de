//===- ControlFlow.cpp - if, for and while in the staged evaluator --------===//
//
// Control flow on compile-time values is evaluated (an `if` on a constexpr
// picks a branch, tl.static_range unrolls). On run-time values it becomes
// scf.if / scf.for / scf.while, and the Python variables a branch or loop
// rebinds become the op's results: a loop's body is first emitted into a
// scratch block to learn which names it rebinds and to which types, then
// emitted for real with those names carried.
//
//===----------------------------------------------------------------------===//
#include "compiler/frontend/Emitter.h"
#include "compiler/ir/Dialects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <tuple>

using namespace kiln::frontend;
using llvm::SMLoc;
using llvm::StringRef;

/// Whether two bindings of a name are the same value.
static bool sameBinding(const FValue &a, const FValue &b) {
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case FValue::Kind::Runtime:
  case FValue::Kind::Descriptor:
    return a.value == b.value;
  case FValue::Kind::Int:
  case FValue::Kind::Bool:
    return a.intValue == b.intValue;
  case FValue::Kind::Float:
    return a.floatValue == b.floatValue ||
           (std::isnan(a.floatValue) && std::isnan(b.floatValue));
  case FValue::Kind::None:
    return true;
  case FValue::Kind::DType:
    return a.type == b.type;
  case FValue::Kind::Function:
    return a.function == b.function;
  case FValue::Kind::Tuple:
    if (a.elements.size() != b.elements.size())
      return false;
    for (size_t i = 0; i < a.elements.size(); ++i)
      if (!sameBinding(a.elements[i], b.elements[i]))
        return false;
    return true;
  case FValue::Kind::Method:
    return false;
  default:
    return a.text == b.text;
  }
}

/// Destroys a scratch block and everything emitted into it.
static void discard(std::unique_ptr<mlir::Block> block) {
  block->dropAllDefinedValueUses();
  while (!block->empty())
    block->back().erase();
}

/// Moves the operations of a scratch block into the single block of `region`
/// (replacing what the builder put there) and terminates it with a yield.
static void fillRegion(mlir::OpBuilder &builder, mlir::Region &region,
                       std::unique_ptr<mlir::Block> &from,
                       mlir::ValueRange values, mlir::Location loc) {
  mlir::Block &to = region.front();
  while (!to.empty())
    to.back().erase();
  to.getOperations().splice(to.end(), from->getOperations());
  builder.setInsertionPointToEnd(&to);
  mlir::scf::YieldOp::create(builder, loc, values);
}

static std::vector<std::string> sortedKeys(const llvm::StringMap<FValue> &map) {
  std::vector<std::string> keys;
  for (const auto &entry : map)
    keys.push_back(entry.getKey().str());
  llvm::sort(keys);
  return keys;
}

std::string Emitter::CarriedName::display() const {
  std::string out = name;
  for (unsigned i : path)
    out += "[" + std::to_string(i) + "]";
  return out;
}

/// The value at `path` inside `v` (descending through tuples), or null where
/// `v` has no such leaf.
static const FValue *leafAt(const FValue &v, llvm::ArrayRef<unsigned> path) {
  const FValue *at = &v;
  for (unsigned i : path) {
    if (at->kind != FValue::Kind::Tuple || i >= at->elements.size())
      return nullptr;
    at = &at->elements[i];
  }
  return at;
}

static const FValue *slotIn(const llvm::StringMap<FValue> &scope,
                            StringRef name, llvm::ArrayRef<unsigned> path) {
  auto it = scope.find(name);
  return it == scope.end() ? nullptr : leafAt(it->second, path);
}

/// Binds the leaf at `path` of what `name` holds (the whole value if empty).
static void bindSlot(llvm::StringMap<FValue> &scope, StringRef name,
                     llvm::ArrayRef<unsigned> path, FValue value) {
  FValue *at = &scope[name];
  for (unsigned i : path)
    at = &at->elements[i];
  *at = std::move(value);
}

/// Calls `visit(path, a, b)` for each pair of leaves where `a` and `b`, two
/// tuples of the same structure, differ; two values that are not both tuples
/// are one pair with an empty path. Returns false (visiting nothing) when
/// both are tuples of different structure.
static bool
differingLeaves(const FValue &a, const FValue &b,
                llvm::function_ref<void(const std::vector<unsigned> &,
                                        const FValue &, const FValue &)>
                    visit);

std::optional<FValue>
Emitter::carriedValue(const Scope &scope, const CarriedName &slot, SMLoc loc) {
  const FValue *found = slotIn(scope, slot.name, slot.path);
  std::string name = slot.display();
  if (!found)
    return error(loc, "'" + name + "' is not defined on every path");
  const FValue &v = *found;
  const TritonType &type = slot.type;
  if (v.isNumber())
    return constant(v, type, loc);
  if (!v.isRuntime())
    return error(loc, "'" + name +
                          "' must hold a tensor or number to be "
                          "carried through control flow, not " +
                          v.describe());
  if (v.type != type)
    return error(loc, "'" + name + "' has type " + v.type.str() + " here but " +
                          type.str() +
                          " where the control flow began; convert it "
                          "explicitly with .to()");
  return v;
}

//===----------------------------------------------------------------------===//
// if
//===----------------------------------------------------------------------===//

FValue Emitter::pointerTruth(const FValue &cond, SMLoc loc) {
  if (!cond.isRuntime() || !cond.type.isPointer || cond.type.isBlock() ||
      cond.type.isBlockPointer())
    return cond;
  mlir::Location l = location(loc);
  TritonType i64{DType(ScalarKind::I64), false, {}};
  mlir::Value address =
      kiln::PtrToIntOp::create(builder, l, i64.toMLIR(&context), cond.value);
  FValue zero = constant(FValue::integer(0), i64, loc);
  mlir::Value out = mlir::arith::CmpIOp::create(
      builder, l, mlir::arith::CmpIPredicate::ne, address, zero.value);
  return FValue::runtime(out, TritonType{DType(ScalarKind::I1), false, {}});
}

bool Emitter::emitIf(const IfStmt &stmt) {
  std::optional<FValue> cond = evaluate(*stmt.cond);
  if (!cond)
    return false;
  cond = pointerTruth(*cond, stmt.cond->getLoc());
  if (!cond->isRuntime()) {
    std::optional<bool> truth = truthiness(*cond, stmt.cond->getLoc());
    if (!truth)
      return false;
    return emitBlock(*truth ? stmt.thenBody : stmt.elseBody);
  }
  if (cond->type.isBlock() || cond->type.isPointer)
    return error(stmt.cond->getLoc(),
                 "an 'if' condition must be a scalar, got " + cond->describe() +
                     "; use tl.where for blocks"),
           false;
  FValue c = castTo(*cond, DType(ScalarKind::I1), stmt.cond->getLoc());
  mlir::Location l = location(stmt.getLoc());

  // Emit each branch into a scratch block with its own copy of the scope.
  Scope before = scopes.back();
  mlir::OpBuilder::InsertPoint insertionPoint = builder.saveInsertionPoint();
  auto emitBranch = [&](const Block &body, std::unique_ptr<mlir::Block> &block,
                        Scope &result) {
    block = std::make_unique<mlir::Block>();
    builder.setInsertionPointToEnd(block.get());
    scopes.back() = before;
    bool ok = emitBlock(body);
    if (ok && frames.back().returned) {
      // Outside loops, an `if` with a return is emitReturningIf's.
      error(stmt.getLoc(), frames.back().loopDepth > 0
                               ? "'return' inside a loop is not supported"
                               : "'return' inside an 'if' on a run-time "
                                 "condition is not supported here");
      ok = false;
    }
    result = scopes.back();
    return ok;
  };
  std::unique_ptr<mlir::Block> thenBlock, elseBlock;
  Scope thenScope, elseScope;
  bool ok = emitBranch(stmt.thenBody, thenBlock, thenScope);
  ok = ok && emitBranch(stmt.elseBody, elseBlock, elseScope);
  scopes.back() = before;
  auto fail = [&] {
    builder.restoreInsertionPoint(insertionPoint);
    if (thenBlock)
      discard(std::move(thenBlock));
    if (elseBlock)
      discard(std::move(elseBlock));
    return false;
  };
  if (!ok)
    return fail();

  // Names bound on both paths: equal bindings pass through, different ones
  // (or different leaves of two tuples of one structure) become results. A
  // name bound on one path only is not defined after.
  std::vector<CarriedName> results;
  Scope after = before;
  for (const std::string &name : sortedKeys(thenScope)) {
    auto e = elseScope.find(name);
    if (e == elseScope.end())
      continue;
    const FValue &t = thenScope[name];
    after[name] = t;
    bool fine = true;
    bool sameShape = differingLeaves(
        t, e->second,
        [&](const std::vector<unsigned> &path, const FValue &t,
            const FValue &f) {
          if (!fine)
            return;
          CarriedName slot{name, path, {}};
          if (t.isRuntime() || f.isRuntime()) {
            slot.type = t.isRuntime() ? t.type : f.type;
          } else if (t.isNumber() && f.isNumber()) {
            // Different numbers on the two paths: carried as run-time values
            // of the literal type of the then-path's number.
            std::optional<FValue> m = materialize(t, stmt.getLoc());
            if (!m) {
              fine = false;
              return;
            }
            slot.type = m->type;
            m->value.getDefiningOp()->erase();
          } else if (t.isDescriptor() || f.isDescriptor()) {
            error(stmt.getLoc(),
                  "'" + slot.display() +
                      "' is bound to different tensor descriptors "
                      "on the two paths of an 'if' on a run-time "
                      "condition, which Kiln cannot carry yet; make "
                      "the descriptor before the 'if'");
            fine = false;
            return;
          } else {
            error(stmt.getLoc(), "'" + slot.display() +
                                     "' is bound to different compile-time "
                                     "values on the two paths of an 'if' on "
                                     "a run-time condition (" +
                                     t.describe() + " and " + f.describe() +
                                     ")");
            fine = false;
            return;
          }
          results.push_back(std::move(slot));
        });
    if (!sameShape) {
      error(stmt.getLoc(), "'" + name + "' holds " + t.describe() +
                               " on one path of this 'if' on a run-time "
                               "condition and " +
                               e->second.describe() + " on the other");
      return fail();
    }
    if (!fine)
      return fail();
  }

  // Each path yields its values, materialized in its own block.
  auto yieldValues = [&](mlir::Block *block, Scope &scope,
                         llvm::SmallVectorImpl<mlir::Value> &values) {
    builder.setInsertionPointToEnd(block);
    for (const CarriedName &slot : results) {
      std::optional<FValue> v = carriedValue(scope, slot, stmt.getLoc());
      if (!v)
        return false;
      values.push_back(v->value);
    }
    return true;
  };
  llvm::SmallVector<mlir::Value> thenValues, elseValues;
  if (!yieldValues(thenBlock.get(), thenScope, thenValues) ||
      !yieldValues(elseBlock.get(), elseScope, elseValues))
    return fail();

  llvm::SmallVector<mlir::Type> types;
  for (const CarriedName &slot : results)
    types.push_back(slot.type.toMLIR(&context));
  builder.restoreInsertionPoint(insertionPoint);
  auto ifOp =
      mlir::scf::IfOp::create(builder, l, types, c.value,
                              /*addThenBlock=*/true, /*addElseBlock=*/true);
  fillRegion(builder, ifOp.getThenRegion(), thenBlock, thenValues, l);
  fillRegion(builder, ifOp.getElseRegion(), elseBlock, elseValues, l);
  for (size_t i = 0; i < results.size(); ++i)
    bindSlot(after, results[i].name, results[i].path,
             FValue::runtime(ifOp.getResult(i), results[i].type));
  scopes.back() = std::move(after);
  builder.setInsertionPointAfter(ifOp);
  return true;
}

bool Emitter::emitPath(
    const Block &body,
    const std::vector<std::pair<Block::const_iterator, Block::const_iterator>>
        &pending) {
  frames.back().pending = pending;
  bool ok = emitBlock(body);
  // Then what follows the `if`, innermost block first, each with the blocks
  // around it still pending.
  for (size_t k = pending.size(); ok && k-- > 0 && !frames.back().returned;) {
    frames.back().pending.assign(pending.begin(), pending.begin() + k);
    ok = emitStatements(pending[k].first, pending[k].second);
  }
  frames.back().pending = pending;
  return ok;
}

/// The leaves of a (possibly nested) tuple, depth first.
static void flattenValue(const FValue &v, std::vector<FValue> &leaves) {
  if (v.kind == FValue::Kind::Tuple) {
    for (const FValue &e : v.elements)
      flattenValue(e, leaves);
    return;
  }
  leaves.push_back(v);
}

/// Whether `a` and `b` are tuples of the same nesting, or both not tuples.
static bool sameStructure(const FValue &a, const FValue &b) {
  if ((a.kind == FValue::Kind::Tuple) != (b.kind == FValue::Kind::Tuple))
    return false;
  if (a.kind != FValue::Kind::Tuple)
    return true;
  if (a.elements.size() != b.elements.size())
    return false;
  for (size_t i = 0; i < a.elements.size(); ++i)
    if (!sameStructure(a.elements[i], b.elements[i]))
      return false;
  return true;
}

static void
differingLeavesAt(const FValue &a, const FValue &b, std::vector<unsigned> &path,
                  llvm::function_ref<void(const std::vector<unsigned> &,
                                          const FValue &, const FValue &)>
                      visit) {
  if (a.kind != FValue::Kind::Tuple) {
    if (!sameBinding(a, b))
      visit(path, a, b);
    return;
  }
  for (unsigned i = 0; i < a.elements.size(); ++i) {
    path.push_back(i);
    differingLeavesAt(a.elements[i], b.elements[i], path, visit);
    path.pop_back();
  }
}

static bool
differingLeaves(const FValue &a, const FValue &b,
                llvm::function_ref<void(const std::vector<unsigned> &,
                                        const FValue &, const FValue &)>
                    visit) {
  bool aTuple = a.kind == FValue::Kind::Tuple,
       bTuple = b.kind == FValue::Kind::Tuple;
  std::vector<unsigned> path;
  if (aTuple && bTuple) {
    if (!sameStructure(a, b))
      return false;
    differingLeavesAt(a, b, path, visit);
    return true;
  }
  if (!sameBinding(a, b))
    visit(path, a, b);
  return true;
}

/// `shape` (a value of the structure wanted) rebuilt from `leaves`.
static FValue rebuildValue(const FValue &shape,
                           const std::vector<FValue> &leaves, size_t &next) {
  if (shape.kind != FValue::Kind::Tuple)
    return leaves[next++];
  std::vector<FValue> elements;
  for (const FValue &e : shape.elements)
    elements.push_back(rebuildValue(e, leaves, next));
  FValue t = shape;
  t.elements = std::move(elements);
  return t;
}

bool Emitter::emitReturningIf(const IfStmt &stmt) {
  std::optional<FValue> cond = evaluate(*stmt.cond);
  if (!cond)
    return false;
  cond = pointerTruth(*cond, stmt.cond->getLoc());
  if (!cond->isRuntime()) {
    std::optional<bool> truth = truthiness(*cond, stmt.cond->getLoc());
    if (!truth)
      return false;
    return emitBlock(*truth ? stmt.thenBody : stmt.elseBody);
  }
  if (cond->type.isBlock() || cond->type.isPointer)
    return error(stmt.cond->getLoc(),
                 "an 'if' condition must be a scalar, got " + cond->describe() +
                     "; use tl.where for blocks"),
           false;
  FValue c = castTo(*cond, DType(ScalarKind::I1), stmt.cond->getLoc());
  mlir::Location l = location(stmt.getLoc());

  // Each path runs its branch and then the rest of the function, into a
  // scratch block, until it returns (or falls off the end: None).
  Scope before = scopes.back();
  auto pending = frames.back().pending;
  mlir::OpBuilder::InsertPoint insertionPoint = builder.saveInsertionPoint();
  auto emitBranch = [&](const Block &body, std::unique_ptr<mlir::Block> &block,
                        FValue &result) {
    block = std::make_unique<mlir::Block>();
    builder.setInsertionPointToEnd(block.get());
    scopes.back() = before;
    frames.back().returned = false;
    frames.back().returnValue.reset();
    bool ok = emitPath(body, pending);
    result = frames.back().returned && frames.back().returnValue
                 ? *frames.back().returnValue
                 : FValue::none();
    return ok;
  };
  std::unique_ptr<mlir::Block> thenBlock, elseBlock;
  FValue thenResult, elseResult;
  bool ok = emitBranch(stmt.thenBody, thenBlock, thenResult);
  ok = ok && emitBranch(stmt.elseBody, elseBlock, elseResult);
  scopes.back() = before;
  auto fail = [&] {
    builder.restoreInsertionPoint(insertionPoint);
    if (thenBlock)
      discard(std::move(thenBlock));
    if (elseBlock)
      discard(std::move(elseBlock));
    return false;
  };
  if (!ok)
    return fail();

  // The paths' return values: equal leaves pass through, different ones
  // become the scf.if's results.
  if (!sameStructure(thenResult, elseResult)) {
    error(stmt.getLoc(),
          "the paths through this 'if' on a run-time condition return " +
              thenResult.describe() + " and " + elseResult.describe() +
              "; a function's returns must agree in structure");
    return fail();
  }
  std::vector<FValue> thenLeaves, elseLeaves;
  flattenValue(thenResult, thenLeaves);
  flattenValue(elseResult, elseLeaves);
  std::vector<FValue> leaves = thenLeaves;
  std::vector<size_t> results;
  std::vector<TritonType> resultTypes;
  for (size_t i = 0; i < thenLeaves.size(); ++i) {
    const FValue &t = thenLeaves[i], &f = elseLeaves[i];
    if (sameBinding(t, f))
      continue;
    TritonType type;
    if (t.isRuntime() || f.isRuntime()) {
      type = t.isRuntime() ? t.type : f.type;
    } else if (t.isNumber() && f.isNumber()) {
      std::optional<FValue> m = materialize(t, stmt.getLoc());
      if (!m)
        return fail();
      type = m->type;
      m->value.getDefiningOp()->erase();
    } else {
      error(stmt.getLoc(),
            "the paths through this 'if' on a run-time condition return "
            "different compile-time values (" +
                t.describe() + " and " + f.describe() + ")");
      return fail();
    }
    results.push_back(i);
    resultTypes.push_back(type);
  }
  auto yieldValues = [&](mlir::Block *block, const std::vector<FValue> &values,
                         llvm::SmallVectorImpl<mlir::Value> &out) {
    builder.setInsertionPointToEnd(block);
    for (size_t k = 0; k < results.size(); ++k) {
      Scope scope;
      scope["return value"] = values[results[k]];
      std::optional<FValue> v =
          carriedValue(scope, CarriedName{"return value", {}, resultTypes[k]},
                       stmt.getLoc());
      if (!v)
        return false;
      out.push_back(v->value);
    }
    return true;
  };
  llvm::SmallVector<mlir::Value> thenValues, elseValues;
  if (!yieldValues(thenBlock.get(), thenLeaves, thenValues) ||
      !yieldValues(elseBlock.get(), elseLeaves, elseValues))
    return fail();
  llvm::SmallVector<mlir::Type> types;
  for (const TritonType &t : resultTypes)
    types.push_back(t.toMLIR(&context));
  builder.restoreInsertionPoint(insertionPoint);
  auto ifOp =
      mlir::scf::IfOp::create(builder, l, types, c.value,
                              /*addThenBlock=*/true, /*addElseBlock=*/true);
  fillRegion(builder, ifOp.getThenRegion(), thenBlock, thenValues, l);
  fillRegion(builder, ifOp.getElseRegion(), elseBlock, elseValues, l);
  for (size_t k = 0; k < results.size(); ++k)
    leaves[results[k]] = FValue::runtime(ifOp.getResult(k), resultTypes[k]);
  size_t next = 0;
  builder.setInsertionPointAfter(ifOp);
  // Every path has returned: nothing after this if runs.
  frames.back().returnValue = rebuildValue(thenResult, leaves, next);
  frames.back().returned = true;
  return true;
}

std::optional<FValue> Emitter::emitConditionalExpr(const IfExpExpr &expr,
                                                   const FValue &condition) {
  FValue cond = pointerTruth(condition, expr.cond->getLoc());
  if (cond.type.isBlock() || cond.type.isPointer)
    return error(expr.cond->getLoc(),
                 "a conditional expression needs a scalar condition, got " +
                     cond.describe() + "; use tl.where for blocks");
  FValue c = castTo(cond, DType(ScalarKind::I1), expr.cond->getLoc());
  mlir::OpBuilder::InsertPoint insertionPoint = builder.saveInsertionPoint();
  auto thenBlock = std::make_unique<mlir::Block>();
  auto elseBlock = std::make_unique<mlir::Block>();
  auto fail = [&]() -> std::nullopt_t {
    builder.restoreInsertionPoint(insertionPoint);
    discard(std::move(thenBlock));
    discard(std::move(elseBlock));
    return std::nullopt;
  };
  builder.setInsertionPointToEnd(thenBlock.get());
  std::optional<FValue> t = evaluate(*expr.thenValue);
  builder.setInsertionPointToEnd(elseBlock.get());
  std::optional<FValue> f = t ? evaluate(*expr.elseValue) : std::nullopt;
  if (!f)
    return fail();
  // Both values take one type: a tensor's, or the then-value's literal type.
  TritonType type;
  if (t->isRuntime() && f->isRuntime() && t->type != f->type) {
    error(expr.getLoc(), "the values of a conditional expression have types " +
                             t->type.str() + " and " + f->type.str() +
                             "; convert one with .to()");
    return fail();
  }
  if (t->isRuntime() || f->isRuntime()) {
    type = t->isRuntime() ? t->type : f->type;
  } else {
    builder.setInsertionPointToEnd(thenBlock.get());
    std::optional<FValue> m = materialize(*t, expr.getLoc());
    if (!m)
      return fail();
    type = m->type;
  }
  auto finish = [&](mlir::Block *block, const FValue &v) -> mlir::Value {
    builder.setInsertionPointToEnd(block);
    if (v.isRuntime())
      return v.value;
    if (!v.isNumber())
      return {};
    return constant(v, type, expr.getLoc()).value;
  };
  mlir::Value thenValue = finish(thenBlock.get(), *t);
  mlir::Value elseValue = finish(elseBlock.get(), *f);
  if (!thenValue || !elseValue) {
    error(expr.getLoc(), "the values of a conditional expression on a "
                         "run-time condition must be numbers or tensors");
    return fail();
  }
  builder.restoreInsertionPoint(insertionPoint);
  mlir::Location l = location(expr.getLoc());
  auto ifOp = mlir::scf::IfOp::create(builder, l, {type.toMLIR(&context)},
                                      c.value, true, true);
  fillRegion(builder, ifOp.getThenRegion(), thenBlock, thenValue, l);
  fillRegion(builder, ifOp.getElseRegion(), elseBlock, elseValue, l);
  builder.setInsertionPointAfter(ifOp);
  return FValue::runtime(ifOp.getResult(0), type);
}

//===----------------------------------------------------------------------===//
// Loops
//===----------------------------------------------------------------------===//

/// The type a loop carries `name` with: the initial value's if it is a
/// tensor, else (a python number) the type the body gives it.
static std::optional<TritonType> carriedType(Emitter &e, const FValue &init,
                                             const FValue &probed,
                                             StringRef name, SMLoc loc) {
  if (init.isRuntime())
    return init.type;
  if (init.isNumber() && probed.isRuntime())
    return probed.type;
  if (init.isNumber() && probed.isNumber()) {
    std::optional<FValue> m = e.materialize(init, loc);
    if (!m)
      return std::nullopt;
    TritonType t = m->type;
    m->value.getDefiningOp()->erase();
    return t;
  }
  e.error(loc, "'" + name + "' changes inside the loop but holds " +
                   init.describe() +
                   ", which cannot be carried from one iteration to the next");
  return std::nullopt;
}

std::optional<std::vector<Emitter::CarriedName>>
Emitter::probeRebound(const Block &body, const Expr *target, mlir::Type ivType,
                      SMLoc loc) {
  // A name the loop rebinds is a run-time value inside it, even if it starts
  // as a Python number: probing with the number could fold a branch that
  // rebinds another name (`if i > 4: x = ...` with i = 0 before a while).
  // So probe again with the rebound names as run-time placeholders until a
  // probe finds no new name and gives every name the type it assumed: only
  // then is the body emitted for real exactly as it was probed. Names only
  // join (at most one round per name or tuple leaf bound before the loop); a
  // type may change a few times (a Python number first taken as i32, then as
  // the float the body makes of it) but cannot be allowed to cycle. A tuple
  // is carried leaf by leaf: only the leaves the body rebinds.
  // A copy: inlined calls in the body push scopes, which may move them.
  const Scope before = scopes.back();
  size_t maxRounds = 8;
  for (const auto &entry : before) {
    std::vector<FValue> leaves;
    flattenValue(entry.second, leaves);
    maxRounds += leaves.size();
  }
  auto order = [](const CarriedName &x, const CarriedName &y) {
    return std::tie(x.name, x.path) < std::tie(y.name, y.path);
  };
  auto samePlace = [](const CarriedName &x, const CarriedName &y) {
    return x.name == y.name && x.path == y.path;
  };
  std::vector<CarriedName> assumed;
  for (size_t round = 0;; ++round) {
    std::vector<std::pair<CarriedName, FValue>> rebound;
    if (!probeOnce(body, target, ivType, assumed, rebound))
      return std::nullopt;
    std::vector<CarriedName> next;
    std::string unsettled;
    for (auto &[slot, value] : rebound) {
      const FValue *init = slotIn(before, slot.name, slot.path);
      std::optional<TritonType> type =
          carriedType(*this, *init, value, slot.display(), loc);
      if (!type)
        return std::nullopt;
      auto was = llvm::find_if(
          assumed, [&](const CarriedName &c) { return samePlace(c, slot); });
      if (was != assumed.end() && was->type != *type)
        unsettled += (unsettled.empty() ? "" : ", ") +
                     ("'" + slot.display() + "' (" + was->type.str() +
                      " then " + type->str() + ")");
      slot.type = *type;
      next.push_back(slot);
    }
    // Assumed but left alone this time: carried unchanged.
    for (const CarriedName &c : assumed)
      if (llvm::none_of(next,
                        [&](const CarriedName &n) { return samePlace(n, c); }))
        next.push_back(c);
    llvm::sort(next, order);
    if (next == assumed)
      return assumed;
    if (round + 1 == maxRounds) {
      error(loc, "cannot tell which values this loop carries: after " +
                     std::to_string(maxRounds) +
                     " rounds of inference their types still change" +
                     (unsettled.empty() ? std::string() : ": " + unsettled) +
                     "; set their types before the loop, e.g. with .to()");
      return std::nullopt;
    }
    assumed = std::move(next);
  }
}

bool Emitter::probeOnce(const Block &body, const Expr *target,
                        mlir::Type ivType,
                        const std::vector<CarriedName> &assumed,
                        std::vector<std::pair<CarriedName, FValue>> &rebound) {
  Scope before = scopes.back();
  auto block = std::make_unique<mlir::Block>();
  bool ok = true;
  Scope start;
  {
    mlir::OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(block.get());
    if (target) {
      mlir::Value iv = block->addArgument(ivType, builder.getUnknownLoc());
      unsigned width = ivType.getIntOrFloatBitWidth();
      scopes.back()[llvm::cast<NameExpr>(target)->name] = FValue::runtime(
          iv, TritonType{DType(width == 64 ? ScalarKind::I64 : ScalarKind::I32),
                         false,
                         {}});
    }
    for (const CarriedName &carried : assumed) {
      mlir::Value arg = block->addArgument(carried.type.toMLIR(&context),
                                           builder.getUnknownLoc());
      bindSlot(scopes.back(), carried.name, carried.path,
               FValue::runtime(arg, carried.type));
    }
    start = scopes.back();
    ok = emitBlock(body);
  }
  Scope end = scopes.back();
  scopes.back() = before;
  discard(std::move(block));
  if (!ok)
    return false;
  if (frames.back().returned) {
    error(body.front()->getLoc(), "'return' inside a loop is not supported");
    return false;
  }
  for (const std::string &name : sortedKeys(before)) {
    if (target && name == llvm::cast<NameExpr>(target)->name)
      continue;
    auto it = end.find(name);
    if (it == end.end())
      continue;
    const FValue &was = start[name];
    bool sameShape =
        differingLeaves(was, it->second,
                        [&](const std::vector<unsigned> &path, const FValue &,
                            const FValue &now) {
                          rebound.push_back({CarriedName{name, path, {}}, now});
                        });
    if (!sameShape) {
      error(body.front()->getLoc(),
            "'" + name + "' holds " + was.describe() + " before the loop and " +
                it->second.describe() +
                " after its body; a loop must keep a tuple's structure");
      return false;
    }
  }
  return true;
}

bool Emitter::carriedInits(const std::vector<CarriedName> &carried,
                           const Scope &before, SMLoc loc,
                           llvm::SmallVectorImpl<mlir::Value> &inits) {
  for (const CarriedName &c : carried) {
    std::optional<FValue> init = carriedValue(before, c, loc);
    if (!init)
      return false;
    inits.push_back(init->value);
  }
  return true;
}

bool Emitter::yieldCarried(const std::vector<CarriedName> &carried, SMLoc loc) {
  llvm::SmallVector<mlir::Value> yields;
  for (const CarriedName &c : carried) {
    std::optional<FValue> v = carriedValue(scopes.back(), c, loc);
    if (!v)
      return false;
    yields.push_back(v->value);
  }
  mlir::scf::YieldOp::create(builder, location(loc), yields);
  return true;
}

void Emitter::bindCarried(const std::vector<CarriedName> &carried,
                          mlir::ValueRange values) {
  for (size_t i = 0; i < carried.size(); ++i)
    bindSlot(scopes.back(), carried[i].name, carried[i].path,
             FValue::runtime(values[i], carried[i].type));
}

bool Emitter::emitStaticFor(const ForStmt &stmt, const Expr &target,
                            const std::vector<FValue> &bounds) {
  int64_t start = 0, end, step = 1;
  if (bounds.size() == 1) {
    end = bounds[0].intValue;
  } else {
    start = bounds[0].intValue;
    end = bounds[1].intValue;
    if (bounds.size() == 3)
      step = bounds[2].intValue;
  }
  if (step == 0)
    return error(stmt.iter->getLoc(), "the step of a range cannot be 0"), false;
  for (int64_t i = start; step > 0 ? i < end : i > end; i += step) {
    if (!emitAssign(target, FValue::integer(i)) || !emitBlock(stmt.body))
      return false;
    if (frames.back().returned)
      return error(stmt.getLoc(), "'return' inside a loop is not supported"),
             false;
  }
  return true;
}

bool Emitter::emitFor(const ForStmt &stmt) {
  if (!stmt.elseBody.empty())
    return error(stmt.getLoc(), "'for ... else' is not supported"), false;
  auto *call = llvm::dyn_cast<CallExpr>(stmt.iter.get());
  std::optional<FValue> callee = call ? evaluate(*call->callee) : std::nullopt;
  if (call && !callee)
    return false;
  StringRef kind = callee && callee->kind == FValue::Kind::Builtin
                       ? StringRef(callee->text)
                       : StringRef();
  if (kind != "range" && kind != "tl.range" && kind != "tl.static_range")
    return error(stmt.iter->getLoc(),
                 "a 'for' loop must iterate over range(), tl.range() or "
                 "tl.static_range()"),
           false;
  if (!llvm::isa<NameExpr>(stmt.target.get()))
    return error(stmt.target->getLoc(),
                 "the loop variable must be a single name"),
           false;
  if (call->args.empty() || call->args.size() > 3)
    return error(call->getLoc(), kind + " takes 1 to 3 positional arguments"),
           false;
  std::vector<FValue> bounds;
  for (const ExprPtr &arg : call->args) {
    std::optional<FValue> v = evaluate(*arg);
    if (!v)
      return false;
    if (!(v->isInt() || v->kind == FValue::Kind::Bool ||
          (v->isRuntime() && !v->type.isBlock() && !v->type.isPointer &&
           v->type.element.isInteger())))
      return error(arg->getLoc(),
                   "range bounds must be integers, got " + v->describe()),
             false;
    bounds.push_back(*v);
  }
  // `step=` (and `arg2=`, the end) by keyword, as Triton's range spells them.
  for (const Keyword &kw : call->keywords) {
    bool isStep = kw.name == "step";
    if (kind == "range" || (!isStep && kw.name != "arg2"))
      continue;
    if ((isStep && bounds.size() == 3) || (!isStep && bounds.size() != 1))
      return error(kw.loc, kind + " got argument '" + kw.name + "' twice"),
             false;
    std::optional<FValue> v = evaluate(*kw.value);
    if (!v)
      return false;
    if (!(v->isInt() || (v->isRuntime() && !v->type.isBlock() &&
                         !v->type.isPointer && v->type.element.isInteger())))
      return error(kw.value->getLoc(),
                   "range bounds must be integers, got " + v->describe()),
             false;
    if (isStep && bounds.size() == 1)
      bounds.insert(bounds.begin(), FValue::integer(0));
    bounds.push_back(*v);
  }
  // Loop options: accepted where Triton accepts them, kept as attributes.
  llvm::SmallVector<mlir::NamedAttribute> loopAttrs;
  for (const Keyword &kw : call->keywords) {
    if (kind != "range" && (kw.name == "step" || kw.name == "arg2"))
      continue;
    static const char *const kOptions[] = {
        "num_stages", "loop_unroll_factor", "disallow_acc_multi_buffer",
        "flatten",    "warp_specialize",    "disable_licm"};
    if (kind == "range" || !llvm::is_contained(kOptions, kw.name))
      return error(kw.loc, kind + " has no argument '" + kw.name + "'"), false;
    std::optional<FValue> v = evaluate(*kw.value);
    if (!v)
      return false;
    if (!v->isNumber() && !v->isNone())
      return error(kw.loc, "'" + kw.name + "' must be a compile-time value"),
             false;
    if (v->isNumber())
      loopAttrs.push_back(builder.getNamedAttr(
          "kiln." + kw.name, builder.getI32IntegerAttr(int32_t(v->intValue))));
  }
  if (kind == "tl.static_range") {
    // A bound that is a run-time value only in name: a `:1` parameter (the
    // constexpr 1 in Triton's JIT, which specializes 1 so).
    for (FValue &bound : bounds)
      if (std::optional<FValue> folded = foldedInteger(bound))
        bound = *folded;
    if (llvm::any_of(bounds, [](const FValue &v) { return v.isRuntime(); }))
      return error(call->getLoc(), "tl.static_range needs compile-time bounds"),
             false;
    return emitStaticFor(stmt, *stmt.target, bounds);
  }
  // A compile-time negative step counts down as Python's range does (Triton
  // accepts it, with run-time bounds too). scf.for only counts up, so the
  // loop runs over [stop, start) with the step's magnitude, the same number
  // of iterations, and the body sees start + stop - iv: start, start + step,
  // ... A run-time step is taken to be positive, as in Triton.
  bool countsDown = false;
  if (bounds.size() == 3 && !bounds[2].isRuntime()) {
    if (bounds[2].intValue == 0)
      return error(call->args.size() == 3 ? call->args[2]->getLoc()
                                          : call->getLoc(),
                   kind + "() step must not be zero"),
             false;
    if (bounds[2].intValue < 0) {
      countsDown = true;
      std::swap(bounds[0], bounds[1]);
      bounds[2] = FValue::integer(-bounds[2].intValue);
    }
  }

  // The induction variable is i32 unless a bound needs 64 bits.
  bool wide = false;
  for (const FValue &b : bounds)
    wide |= b.isRuntime() ? b.type.element.getBitWidth() == 64
                          : (b.intValue > INT32_MAX || b.intValue < INT32_MIN);
  TritonType ivType{DType(wide ? ScalarKind::I64 : ScalarKind::I32), false, {}};
  mlir::Type ivMlir = ivType.toMLIR(&context);
  SMLoc loc = stmt.getLoc();
  mlir::Location l = location(loc);
  auto boundValue = [&](const FValue &v) {
    if (!v.isRuntime())
      return constant(v, ivType, loc).value;
    return castTo(v, ivType.element, loc).value;
  };
  mlir::Value lb = bounds.size() == 1
                       ? constant(FValue::integer(0), ivType, loc).value
                       : boundValue(bounds[0]);
  mlir::Value ub = boundValue(bounds.size() == 1 ? bounds[0] : bounds[1]);
  mlir::Value step = bounds.size() == 3
                         ? boundValue(bounds[2])
                         : constant(FValue::integer(1), ivType, loc).value;

  auto carried = probeRebound(stmt.body, stmt.target.get(), ivMlir, loc);
  if (!carried)
    return false;
  Scope before = scopes.back();
  llvm::SmallVector<mlir::Value> inits;
  if (!carriedInits(*carried, before, loc, inits))
    return false;

  auto forOp = mlir::scf::ForOp::create(builder, l, lb, ub, step, inits);
  for (const mlir::NamedAttribute &attr : loopAttrs)
    forOp->setAttr(attr.getName(), attr.getValue());
  mlir::Block *body = forOp.getBody();
  {
    mlir::OpBuilder::InsertionGuard guard(builder);
    if (!body->empty())
      body->back().erase(); // the implicit yield
    builder.setInsertionPointToEnd(body);
    mlir::Value iv = forOp.getInductionVar();
    if (countsDown)
      iv = mlir::arith::SubIOp::create(
          builder, l, mlir::arith::AddIOp::create(builder, l, lb, ub), iv);
    scopes.back()[llvm::cast<NameExpr>(stmt.target.get())->name] =
        FValue::runtime(iv, ivType);
    bindCarried(*carried, forOp.getRegionIterArgs());
    if (!emitBlock(stmt.body))
      return false;
    if (!yieldCarried(*carried, loc))
      return false;
  }
  scopes.back() = before;
  bindCarried(*carried, forOp.getResults());
  StringRef target = llvm::cast<NameExpr>(stmt.target.get())->name;
  if (!before.count(target))
    frames.back().endedInductionVariables[target] = stmt.getLoc();
  return true;
}

// `while tl.condition(c, disable_licm=...)`: the loop's condition is c; the
// option is kept on the loop as tl.range's are.
bool Emitter::unwrapWhileCondition(const Expr *&cond,
                                   std::optional<bool> &disableLicm) {
  auto *call = llvm::dyn_cast<CallExpr>(cond);
  if (!call)
    return true;
  std::optional<FValue> callee = evaluate(*call->callee);
  if (!callee)
    return false;
  if (callee->kind != FValue::Kind::Builtin || callee->text != "tl.condition")
    return true;
  const Expr *inner = call->args.empty() ? nullptr : call->args[0].get();
  const Expr *option = call->args.size() > 1 ? call->args[1].get() : nullptr;
  for (const Keyword &kw : call->keywords) {
    if (kw.name == "arg1" && !inner)
      inner = kw.value.get();
    else if (kw.name == "disable_licm" && !option)
      option = kw.value.get();
    else
      return error(kw.loc, "tl.condition has no argument '" + kw.name +
                               "' (or it is given twice)"),
             false;
  }
  if (!inner || call->args.size() > 2)
    return error(call->getLoc(),
                 "tl.condition takes a condition and, optionally, "
                 "disable_licm"),
           false;
  if (option) {
    std::optional<FValue> v = evaluate(*option);
    if (!v)
      return false;
    if (v->kind != FValue::Kind::Bool && !v->isInt())
      return error(option->getLoc(),
                   "'disable_licm' must be a compile-time boolean, got " +
                       v->describe()),
             false;
    disableLicm = v->intValue != 0;
  }
  cond = inner;
  return true;
}

bool Emitter::emitWhile(const WhileStmt &stmt) {
  if (!stmt.elseBody.empty())
    return error(stmt.getLoc(), "'while ... else' is not supported"), false;
  SMLoc loc = stmt.getLoc();
  mlir::Location l = location(loc);
  auto carried = probeRebound(stmt.body, nullptr, mlir::Type(), loc);
  if (!carried)
    return false;
  Scope before = scopes.back();
  llvm::SmallVector<mlir::Value> inits;
  if (!carriedInits(*carried, before, loc, inits))
    return false;
  llvm::SmallVector<mlir::Type> mlirTypes;
  for (const CarriedName &c : *carried)
    mlirTypes.push_back(c.type.toMLIR(&context));
  llvm::SmallVector<mlir::Location> locs(carried->size(), l);
  auto whileOp = mlir::scf::WhileOp::create(builder, l, mlirTypes, inits);
  auto bind = [&](mlir::Block *block) {
    bindCarried(*carried, block->getArguments());
  };
  {
    mlir::OpBuilder::InsertionGuard guard(builder);
    mlir::Block *beforeBlock =
        builder.createBlock(&whileOp.getBefore(), {}, mlirTypes, locs);
    bind(beforeBlock);
    const Expr *condExpr = stmt.cond.get();
    std::optional<bool> disableLicm;
    if (!unwrapWhileCondition(condExpr, disableLicm))
      return false;
    if (disableLicm)
      whileOp->setAttr("kiln.disable_licm",
                       builder.getI32IntegerAttr(*disableLicm));
    std::optional<FValue> cond = evaluate(*condExpr);
    if (!cond)
      return false;
    if (!cond->isRuntime() || cond->type.isBlock() || cond->type.isPointer)
      return error(condExpr->getLoc(),
                   "a 'while' condition must be a run-time scalar, got " +
                       cond->describe()),
             false;
    FValue c = castTo(*cond, DType(ScalarKind::I1), condExpr->getLoc());
    mlir::scf::ConditionOp::create(builder, l, c.value,
                                   beforeBlock->getArguments());

    mlir::Block *afterBlock =
        builder.createBlock(&whileOp.getAfter(), {}, mlirTypes, locs);
    scopes.back() = before;
    bind(afterBlock);
    if (!emitBlock(stmt.body))
      return false;
    if (!yieldCarried(*carried, loc))
      return false;
  }
  scopes.back() = before;
  bindCarried(*carried, whileOp.getResults());
  return true;
}
