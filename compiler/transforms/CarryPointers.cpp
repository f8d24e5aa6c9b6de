//===- CarryPointers.cpp - loop-affine pointers as carried values ---------===//
//
// A matmul loop that computes its operands' pointers from the induction
// variable each iteration (tutorial 09's persistent kernel:
// `a_ptr + offs_am[:, None] * stride_am + (ki * BK + offs_k)[None, :]`)
// instead of advancing carried ones (tutorial 03's `a_ptrs += BK *
// stride_ak`) gets the carried form: the pointers start at their value for
// the first iteration, computed before the loop, and each iteration adds
// their step, so the iteration's address work is one add per access.
// (H200, tutorial 09's matmul_kernel_persistent at fp16: 593 and 586
// TFLOP/s at 4096^3 and 8192^3 from the computed pointers, 655 and 641
// from the same kernel written with carried ones.)
//
// The step of a value is found symbolically: zero for what the loop does
// not change, the loop's step for its induction variable, and through
// additions, subtractions, products with an unchanging factor, splats,
// broadcasts, expand_dims, sign extensions and addptr; anything else
// (loads, divisions, selects, carried values) leaves the pointer alone. As
// upstream's own pointer arithmetic, offsets are taken not to overflow.
//
// Only matmul loops are rewritten: every dot in the body reads two tiles
// loaded there (not attention's loops, whose extra carried pointers would
// cost registers beside the fragments kept in flight), and only the loads
// of those tiles, not those that carry a tensor map: TMA reads box
// offsets, and their pointers die.
//
//===----------------------------------------------------------------------===//
#include "compiler/transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCARRYPOINTERS
#include "compiler/transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The symbolic steps of one loop's values, built before the loop.
class LoopSteps {
public:
  explicit LoopSteps(scf::ForOp loop) : loop_(loop), pre_(loop) {}

  /// The value `v` takes at the loop's first iteration (`atStart`) or, for
  /// a value the loop does not change, anywhere: before the loop. Null when
  /// it depends on a carried value, on an op with effects or regions, or
  /// (not atStart) on the induction variable.
  Value before(Value v, bool atStart) {
    if (loop_.isDefinedOutsideOfLoop(v))
      return v;
    if (v == loop_.getInductionVar())
      return atStart ? loop_.getLowerBound() : Value();
    auto &memo = atStart ? atStart_ : invariant_;
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
    Operation *op = v.getDefiningOp();
    Value result;
    if (op && op->getNumRegions() == 0 && isMemoryEffectFree(op)) {
      IRMapping mapping;
      bool ok = true;
      for (Value operand : op->getOperands()) {
        Value moved = before(operand, atStart);
        if (!moved) {
          ok = false;
          break;
        }
        mapping.map(operand, moved);
      }
      if (ok)
        result = pre_.clone(*op, mapping)
                     ->getResult(cast<OpResult>(v).getResultNumber());
    }
    memo[v] = result;
    return result;
  }

  /// How much `v` grows per iteration (in elements, for pointers): null
  /// for zero, none when it is not affine in the induction variable.
  std::optional<Value> step(Value v) {
    if (loop_.isDefinedOutsideOfLoop(v))
      return Value();
    if (v == loop_.getInductionVar())
      return loop_.getStep();
    if (auto it = steps_.find(v); it != steps_.end())
      return it->second;
    std::optional<Value> result = compute(v);
    steps_[v] = result;
    return result;
  }

private:
  std::optional<Value> compute(Value v) {
    Operation *op = v.getDefiningOp();
    if (!op || op->getNumRegions() != 0 || !isMemoryEffectFree(op))
      return std::nullopt;
    SmallVector<Value> operandSteps;
    bool anyStep = false;
    for (Value operand : op->getOperands()) {
      std::optional<Value> s = step(operand);
      if (!s)
        return std::nullopt;
      operandSteps.push_back(*s);
      anyStep |= bool(*s);
    }
    if (!anyStep)
      return Value(); // computed in the loop from what it does not change
    Location loc = op->getLoc();
    // A step with the type `like` would have (pointers step in their
    // offsets' type).
    auto add = [&](Value a, Value b) -> Value {
      if (!a || !b)
        return a ? a : b;
      if (a.getType() != b.getType())
        return Value();
      return arith::AddIOp::create(pre_, loc, a, b);
    };
    auto reshaped = [&](Value s, Type resultType) -> Type {
      auto shaped = dyn_cast<RankedTensorType>(resultType);
      Type element = getElementTypeOrSelf(s.getType());
      return shaped ? RankedTensorType::get(shaped.getShape(), element,
                                            shaped.getEncoding())
                    : element;
    };
    if (isa<arith::AddIOp>(op))
      return orNone(add(operandSteps[0], operandSteps[1]));
    if (isa<arith::SubIOp>(op)) {
      Value negated = operandSteps[1];
      if (negated) {
        Value zero = arith::ConstantOp::create(
            pre_, loc, pre_.getZeroAttr(negated.getType()));
        negated = arith::SubIOp::create(pre_, loc, zero, negated);
      }
      return orNone(add(operandSteps[0], negated));
    }
    if (isa<arith::MulIOp>(op)) {
      for (unsigned i = 0; i < 2; ++i) {
        if (operandSteps[1 - i])
          continue; // that factor changes too: not affine (or the other way)
        Value factor = before(op->getOperand(1 - i), /*atStart=*/false);
        if (!factor)
          return std::nullopt;
        return Value(arith::MulIOp::create(pre_, loc, operandSteps[i], factor));
      }
      return std::nullopt;
    }
    if (auto ext = dyn_cast<arith::ExtSIOp>(op))
      return Value(
          arith::ExtSIOp::create(pre_, loc, ext.getType(), operandSteps[0]));
    if (auto splat = dyn_cast<kiln::SplatOp>(op))
      return Value(kiln::SplatOp::create(
          pre_, loc, reshaped(operandSteps[0], splat.getType()),
          operandSteps[0]));
    if (auto expand = dyn_cast<kiln::ExpandDimsOp>(op))
      return Value(kiln::ExpandDimsOp::create(
          pre_, loc, reshaped(operandSteps[0], expand.getType()),
          operandSteps[0], expand.getAxisAttr()));
    if (auto broadcast = dyn_cast<kiln::BroadcastOp>(op))
      return Value(kiln::BroadcastOp::create(
          pre_, loc, reshaped(operandSteps[0], broadcast.getType()),
          operandSteps[0]));
    if (isa<kiln::AddPtrOp>(op))
      return orNone(add(operandSteps[0], operandSteps[1]));
    return std::nullopt;
  }

  static std::optional<Value> orNone(Value v) {
    return v ? std::optional<Value>(v) : std::nullopt;
  }

  scf::ForOp loop_;
  OpBuilder pre_;
  llvm::DenseMap<Value, Value> atStart_, invariant_;
  llvm::DenseMap<Value, std::optional<Value>> steps_;
};

struct CarryPointersPass
    : kiln::impl::KilnCarryPointersBase<CarryPointersPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      carry(loop);
  }

  /// The load in `block` that `v`, a dot operand, comes from (through
  /// transposes and layout conversions), or null.
  static kiln::LoadOp operandLoad(Value v, Block *block) {
    while (Operation *def = v.getDefiningOp()) {
      if (auto load = dyn_cast<kiln::LoadOp>(def))
        return load->getBlock() == block ? load : kiln::LoadOp();
      if (!isa<kiln::TransOp>(def))
        return {};
      v = def->getOperand(0);
    }
    return {};
  }

  void carry(scf::ForOp loop) {
    // Matmul loops: every dot reads two tiles loaded in the body (not
    // attention's, whose q is loaded once and p computed).
    Block *body = loop.getBody();
    llvm::SmallPtrSet<Operation *, 4> operandLoads;
    bool anyDot = false;
    for (Operation &op : *body) {
      auto dot = dyn_cast<kiln::DotOp>(op);
      if (!dot)
        continue;
      anyDot = true;
      for (Value operand : {dot.getA(), dot.getB()}) {
        kiln::LoadOp load = operandLoad(operand, body);
        if (!load)
          return;
        operandLoads.insert(load);
      }
    }
    if (!anyDot)
      return;
    // The pointers to carry, each with its first value and its step.
    struct Carried {
      Value pointer, start, step;
    };
    SmallVector<Carried> carried;
    LoopSteps steps(loop);
    for (Operation &op : loop.getBody()->getOperations()) {
      auto load = dyn_cast<kiln::LoadOp>(op);
      if (!load || !operandLoads.contains(load) || load.getTensorMap() ||
          load.getIsVolatile() ||
          !isa<RankedTensorType>(load.getPtr().getType()))
        continue;
      Value pointer = load.getPtr();
      if (loop.isDefinedOutsideOfLoop(pointer) ||
          llvm::any_of(carried,
                       [&](const Carried &c) { return c.pointer == pointer; }))
        continue;
      std::optional<Value> step = steps.step(pointer);
      if (!step || !*step)
        continue;
      Value start = steps.before(pointer, /*atStart=*/true);
      if (!start)
        continue;
      // The step as a tensor of the pointers' shape.
      auto pointerType = cast<RankedTensorType>(pointer.getType());
      Value perElement = *step;
      if (!isa<RankedTensorType>(perElement.getType())) {
        OpBuilder pre(loop);
        perElement = kiln::SplatOp::create(
            pre, loop.getLoc(),
            RankedTensorType::get(pointerType.getShape(), perElement.getType(),
                                  pointerType.getEncoding()),
            perElement);
      }
      carried.push_back({pointer, start, perElement});
    }
    if (carried.empty())
      return;
    SmallVector<Value> inits;
    for (const Carried &c : carried)
      inits.push_back(c.start);
    IRRewriter rewriter(loop);
    unsigned first = loop.getNumRegionIterArgs();
    auto newLoop = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
        rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &b, Location loc, ArrayRef<BlockArgument> args) {
          SmallVector<Value> next;
          for (auto [c, arg] : llvm::zip(carried, args))
            next.push_back(
                kiln::AddPtrOp::create(b, loc, arg.getType(), arg, c.step));
          return next;
        }));
    for (auto [i, c] : llvm::enumerate(carried)) {
      BlockArgument arg = newLoop.getRegionIterArgs()[first + i];
      for (Operation &op : newLoop.getBody()->getOperations())
        if (auto load = dyn_cast<kiln::LoadOp>(op);
            load && load.getPtr() == c.pointer)
          load.getPtrMutable().assign(arg);
    }
  }
};

} // namespace
