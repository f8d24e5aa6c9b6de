//===- AxisInfo.cpp - contiguity, divisibility and constancy --------------===//
#include "compiler/transforms/AxisInfo.h"

#include "compiler/ir/Dialects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

#include <numeric>

using namespace mlir;
using kiln::AxisInfo;

static llvm::SmallVector<int64_t> shapeOf(Value v) {
  if (auto t = dyn_cast<RankedTensorType>(v.getType()))
    return llvm::SmallVector<int64_t>(t.getShape());
  return {1};
}

/// The largest power of two dividing `v` (kMaxDivisibility for zero).
static int64_t powerOfTwoDividing(int64_t v) {
  if (v == 0)
    return AxisInfo::kMaxDivisibility;
  return std::min<int64_t>(int64_t(1) << llvm::countr_zero(uint64_t(v)),
                           AxisInfo::kMaxDivisibility);
}

static AxisInfo uniform(Value v, int64_t contiguity, int64_t divisibility,
                        int64_t constancy) {
  AxisInfo info;
  size_t rank = shapeOf(v).size();
  info.contiguity.assign(rank, contiguity);
  info.divisibility.assign(rank, divisibility);
  info.constancy.assign(rank, constancy);
  return info;
}

/// A value that is the same everywhere, with known divisibility.
static AxisInfo splatInfo(Value v, int64_t divisibility) {
  AxisInfo info = uniform(v, 1, divisibility, 1);
  info.constancy = shapeOf(v);
  return info;
}

AxisInfo kiln::AxisInfoAnalysis::conservative(Value value) {
  // Scalars are uniform across the program: constant everywhere.
  if (!isa<RankedTensorType>(value.getType()))
    return splatInfo(value, 1);
  return uniform(value, 1, 1, 1);
}

/// What holds of both `a` and `b`: the value may be either.
static AxisInfo meet(const AxisInfo &a, const AxisInfo &b) {
  AxisInfo info = a;
  for (size_t d = 0; d < info.contiguity.size(); ++d) {
    info.contiguity[d] = std::gcd(a.contiguity[d], b.contiguity[d]);
    info.divisibility[d] = std::gcd(a.divisibility[d], b.divisibility[d]);
    info.constancy[d] = std::gcd(a.constancy[d], b.constancy[d]);
  }
  if (a.constantValue != b.constantValue)
    info.constantValue.reset();
  info.nonNegative = a.nonNegative && b.nonNegative;
  return info;
}

static bool operator==(const AxisInfo &a, const AxisInfo &b) {
  return a.contiguity == b.contiguity && a.divisibility == b.divisibility &&
         a.constancy == b.constancy && a.constantValue == b.constantValue &&
         a.nonNegative == b.nonNegative;
}

kiln::AxisInfoAnalysis::AxisInfoAnalysis(Operation *root) { visit(root); }

void kiln::AxisInfoAnalysis::visit(Operation *op) {
  if (auto func = dyn_cast<func::FuncOp>(op)) {
    if (func.isExternal())
      return;
    for (BlockArgument arg : func.getArguments()) {
      int64_t div = 1;
      if (auto attr = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                         "kiln.divisibility"))
        div = attr.getInt();
      infos[arg] = splatInfo(arg, div);
    }
  }
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return visitFor(loop);
  if (auto loop = dyn_cast<scf::WhileOp>(op))
    return visitWhile(loop);
  for (Region &region : op->getRegions())
    visitRegion(region);
  if (auto branch = dyn_cast<scf::IfOp>(op)) {
    // Either branch's value.
    if (branch.getNumResults() == 0)
      return;
    auto thenValues = branch.thenYield().getOperands();
    auto elseValues = branch.elseYield().getOperands();
    for (auto [result, a, b] :
         llvm::zip(branch.getResults(), thenValues, elseValues))
      infos[result] = meet(get(a), get(b));
    return;
  }
  for (Value result : op->getResults())
    infos[result] = compute(op, result);
  // The front end's hints (tl.multiple_of, tl.max_contiguous,
  // tl.max_constancy) replace what was derived, as upstream's do.
  if (op->getNumResults() == 1) {
    AxisInfo &info = infos[op->getResult(0)];
    auto apply = [&](StringRef name, SmallVector<int64_t> &facts) {
      auto attr = op->getAttrOfType<DenseI64ArrayAttr>(name);
      if (!attr || attr.size() != int64_t(facts.size()))
        return;
      for (auto [fact, hint] : llvm::zip(facts, attr.asArrayRef()))
        fact = hint;
    };
    apply("kiln.divisibility", info.divisibility);
    apply("kiln.contiguity", info.contiguity);
    apply("kiln.constancy", info.constancy);
  }
}

void kiln::AxisInfoAnalysis::visitRegion(Region &region) {
  for (Block &block : region)
    for (Operation &op : block)
      visit(&op);
}

// Loop-carried values: start from the initial values' facts, analyze the
// body, weaken by what it yields, and repeat until nothing changes. Facts only
// weaken (gcd), so this ends; a bound guards against slow descents.
static constexpr int kMaxLoopPasses = 8;

void kiln::AxisInfoAnalysis::visitFor(scf::ForOp loop) {
  // The induction variable starts at lb and moves by step: it is divisible by
  // whatever divides both.
  int64_t div = std::gcd(get(loop.getLowerBound()).divisibility[0],
                         get(loop.getStep()).divisibility[0]);
  infos[loop.getInductionVar()] = splatInfo(loop.getInductionVar(), div);
  // Counting up from a non-negative bound stays non-negative.
  const AxisInfo &step = get(loop.getStep());
  infos[loop.getInductionVar()].nonNegative =
      get(loop.getLowerBound()).nonNegative && step.nonNegative;
  SmallVector<AxisInfo> carried;
  for (Value init : loop.getInitArgs())
    carried.push_back(get(init));
  auto yielded = loop.getYieldedValues();
  for (int pass = 0;; ++pass) {
    for (auto [arg, info] : llvm::zip(loop.getRegionIterArgs(), carried))
      infos[arg] = pass < kMaxLoopPasses ? info : conservative(arg);
    visitRegion(loop.getRegion());
    if (pass == kMaxLoopPasses)
      break;
    bool changed = false;
    for (auto [info, value] : llvm::zip(carried, yielded)) {
      AxisInfo next = meet(info, get(value));
      changed |= !(next == info);
      info = next;
    }
    if (!changed)
      break;
  }
  for (auto [result, arg] :
       llvm::zip(loop.getResults(), loop.getRegionIterArgs()))
    infos[result] = get(arg);
}

void kiln::AxisInfoAnalysis::visitWhile(scf::WhileOp loop) {
  SmallVector<AxisInfo> carried;
  for (Value init : loop.getInits())
    carried.push_back(get(init));
  scf::ConditionOp condition = loop.getConditionOp();
  for (int pass = 0;; ++pass) {
    for (auto [arg, info] : llvm::zip(loop.getBeforeArguments(), carried))
      infos[arg] = pass < kMaxLoopPasses ? info : conservative(arg);
    visitRegion(loop.getBefore());
    for (auto [arg, value] :
         llvm::zip(loop.getAfterArguments(), condition.getArgs()))
      infos[arg] = get(value);
    visitRegion(loop.getAfter());
    if (pass == kMaxLoopPasses)
      break;
    bool changed = false;
    for (auto [info, value] : llvm::zip(carried, loop.getYieldedValues())) {
      AxisInfo next = meet(info, get(value));
      changed |= !(next == info);
      info = next;
    }
    if (!changed)
      break;
  }
  for (auto [result, value] : llvm::zip(loop.getResults(), condition.getArgs()))
    infos[result] = get(value);
}

const AxisInfo &kiln::AxisInfoAnalysis::get(Value value) {
  auto it = infos.find(value);
  if (it == infos.end())
    it = infos.insert({value, conservative(value)}).first;
  return it->second;
}

// Combines two operands dimension by dimension.
template <typename Fn>
static AxisInfo combine(Value result, const AxisInfo &a, const AxisInfo &b,
                        Fn fn) {
  AxisInfo info = uniform(result, 1, 1, 1);
  for (size_t d = 0; d < info.contiguity.size(); ++d)
    fn(d, info);
  (void)a;
  (void)b;
  return info;
}

AxisInfo kiln::AxisInfoAnalysis::compute(Operation *op, Value result) {
  auto operand = [&](unsigned i) -> const AxisInfo & {
    return get(op->getOperand(i));
  };
  return llvm::TypeSwitch<Operation *, AxisInfo>(op)
      .Case<arith::ConstantOp>([&](arith::ConstantOp c) {
        std::optional<int64_t> value;
        if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
          value = i.getValue().getSExtValue();
        else if (auto d = dyn_cast<DenseIntElementsAttr>(c.getValue());
                 d && d.isSplat())
          value = d.getSplatValue<APInt>().getSExtValue();
        if (!value)
          return conservative(result);
        AxisInfo info = splatInfo(result, powerOfTwoDividing(*value));
        info.constantValue = value;
        info.nonNegative = *value >= 0;
        return info;
      })
      .Case<kiln::MakeRangeOp>([&](kiln::MakeRangeOp r) {
        AxisInfo info = uniform(result, r.getEnd() - r.getStart(),
                                powerOfTwoDividing(r.getStart()), 1);
        info.nonNegative = r.getStart() >= 0;
        return info;
      })
      .Case<kiln::SplatOp>([&](kiln::SplatOp s) {
        AxisInfo info = splatInfo(result, operand(0).divisibility[0]);
        info.constantValue = operand(0).constantValue;
        info.nonNegative = operand(0).nonNegative;
        return info;
      })
      .Case<kiln::ProgramIdOp, kiln::NumProgramsOp>([&](Operation *) {
        AxisInfo info = splatInfo(result, 1);
        info.nonNegative = true;
        return info;
      })
      .Case<arith::ExtSIOp, arith::ExtUIOp, arith::IndexCastOp>(
          [&](Operation *) { return operand(0); })
      .Case<arith::TruncIOp>([&](Operation *) {
        // Truncation may set the sign bit.
        AxisInfo info = operand(0);
        info.nonNegative = false;
        return info;
      })
      .Case<arith::AddIOp, arith::SubIOp, kiln::AddPtrOp>([&](Operation *) {
        const AxisInfo &a = operand(0), &b = operand(1);
        bool isSub = isa<arith::SubIOp>(op);
        // addptr offsets count elements; divisibility counts bytes.
        int64_t scale = 1;
        if (auto addptr = dyn_cast<kiln::AddPtrOp>(op)) {
          auto ptr = cast<kiln::PointerType>(
              kiln::getElementTypeOrSelf(addptr.getPtr().getType()));
          scale = std::max<int64_t>(
              1, ptr.getPointeeType().getIntOrFloatBitWidth() / 8);
        }
        AxisInfo info = combine(result, a, b, [&](size_t d, AxisInfo &out) {
          out.contiguity[d] =
              isSub ? std::gcd(a.contiguity[d], b.constancy[d])
                    : std::max(std::gcd(a.contiguity[d], b.constancy[d]),
                               std::gcd(b.contiguity[d], a.constancy[d]));
          out.divisibility[d] =
              std::gcd(a.divisibility[d], std::min(b.divisibility[d] * scale,
                                                   AxisInfo::kMaxDivisibility));
          out.constancy[d] = std::gcd(a.constancy[d], b.constancy[d]);
        });
        if (a.constantValue && b.constantValue && !isa<kiln::AddPtrOp>(op)) {
          info.constantValue = isSub ? *a.constantValue - *b.constantValue
                                     : *a.constantValue + *b.constantValue;
        }
        info.nonNegative =
            isa<arith::AddIOp>(op) && a.nonNegative && b.nonNegative;
        if (info.constantValue)
          info.nonNegative = *info.constantValue >= 0;
        return info;
      })
      .Case<arith::MulIOp>([&](arith::MulIOp) {
        const AxisInfo &a = operand(0), &b = operand(1);
        AxisInfo info = combine(result, a, b, [&](size_t d, AxisInfo &out) {
          out.contiguity[d] = b.constantValue == 1   ? a.contiguity[d]
                              : a.constantValue == 1 ? b.contiguity[d]
                                                     : 1;
          // Divisibility speaks of the first element of each contiguous run;
          // the product's runs are single elements unless multiplied by 1.
          auto perElement = [&](const AxisInfo &x) {
            return x.contiguity[d] > 1 ? int64_t(1) : x.divisibility[d];
          };
          out.divisibility[d] = b.constantValue == 1 ? a.divisibility[d]
                                : a.constantValue == 1
                                    ? b.divisibility[d]
                                    : std::min(perElement(a) * perElement(b),
                                               AxisInfo::kMaxDivisibility);
          out.constancy[d] = std::gcd(a.constancy[d], b.constancy[d]);
        });
        if (a.constantValue && b.constantValue)
          info.constantValue = *a.constantValue * *b.constantValue;
        info.nonNegative = a.nonNegative && b.nonNegative;
        return info;
      })
      .Case<arith::DivSIOp, arith::DivUIOp>([&](Operation *) {
        // x / c for a constant c dividing x's divisibility is exact, so the
        // quotient keeps the rest of it (hqq's `BLOCK_K * stride_bk // 2`,
        // a packed-int4 pointer's step, stays 16-byte aligned).
        const AxisInfo &a = operand(0), &b = operand(1);
        // A non-negative x over a positive constant c is constant over
        // aligned runs of g = gcd(x's contiguity, x's divisibility, c):
        // each run of g consecutive values starts at a multiple of g, which
        // divides c, so it never crosses a multiple of c (DeepSeek-V3's
        // `offs_n // BLOCK_K`, one column scale for a whole tile). Signed
        // division truncates toward zero: negative x would break the runs.
        bool quotientRuns = b.constantValue && *b.constantValue > 0 &&
                            (isa<arith::DivUIOp>(op) || a.nonNegative);
        AxisInfo info = combine(result, a, b, [&](size_t d, AxisInfo &out) {
          out.constancy[d] = std::gcd(a.constancy[d], b.constancy[d]);
          if (quotientRuns)
            out.constancy[d] =
                std::max(out.constancy[d],
                         std::gcd(a.contiguity[d], std::gcd(a.divisibility[d],
                                                            *b.constantValue)));
          if (b.constantValue == 1) {
            out.contiguity[d] = a.contiguity[d];
            out.divisibility[d] = a.divisibility[d];
            return;
          }
          if (b.constantValue && *b.constantValue > 0 && a.contiguity[d] == 1 &&
              a.divisibility[d] % *b.constantValue == 0)
            out.divisibility[d] = a.divisibility[d] / *b.constantValue;
        });
        if (a.constantValue && b.constantValue && *b.constantValue != 0 &&
            (isa<arith::DivSIOp>(op) ||
             (*a.constantValue >= 0 && *b.constantValue > 0)))
          info.constantValue = *a.constantValue / *b.constantValue;
        info.nonNegative = a.nonNegative && b.nonNegative;
        return info;
      })
      .Case<arith::RemSIOp, arith::RemUIOp>([&](Operation *) {
        // x % n with n uniform: a contiguous run of x stays contiguous until
        // it crosses a multiple of n, which it cannot inside a run of
        // length dividing n's divisibility and x's (tutorial matmuls'
        // `(pid * BN + arange(BN)) % N`).
        const AxisInfo &a = operand(0), &b = operand(1);
        llvm::SmallVector<int64_t> shape = shapeOf(result);
        AxisInfo info = combine(result, a, b, [&](size_t d, AxisInfo &out) {
          if (b.constancy[d] != shape[d])
            return;
          out.contiguity[d] = std::gcd(
              a.contiguity[d], std::gcd(a.divisibility[d], b.divisibility[d]));
          out.divisibility[d] = std::gcd(a.divisibility[d], b.divisibility[d]);
          out.constancy[d] = a.constancy[d];
        });
        // A signed remainder takes the dividend's sign.
        info.nonNegative =
            a.nonNegative && (isa<arith::RemSIOp>(op) || b.nonNegative);
        return info;
      })
      .Case<arith::CmpIOp>([&](arith::CmpIOp cmp) {
        const AxisInfo &a = operand(0), &b = operand(1);
        llvm::SmallVector<int64_t> shape = shapeOf(result);
        // A contiguous run x, x + 1, ... compared with a uniform bound c
        // flips once, where it reaches c: `x < c` and `x >= c` (`c > x`,
        // `c <= x`) flip at c, which runs starting at multiples of both
        // divisibilities cannot straddle. Not so `x > c` or `x <= c`, which
        // flip at c + 1 (`t > 0` is false at t = 0 only: accelerated-scan's
        // shifted load read zeros for t = 1..3), nor `==` or `!=`.
        arith::CmpIPredicate p = cmp.getPredicate();
        using P = arith::CmpIPredicate;
        bool flipsAtRight = p == P::slt || p == P::sge || p == P::ult ||
                            p == P::uge; // run on the left
        bool flipsAtLeft = p == P::sgt || p == P::sle || p == P::ugt ||
                           p == P::ule; // run on the right
        return combine(result, a, b, [&](size_t d, AxisInfo &out) {
          int64_t c = std::gcd(a.constancy[d], b.constancy[d]);
          int64_t runs = std::gcd(a.divisibility[d], b.divisibility[d]);
          if (flipsAtRight && b.constancy[d] == shape[d])
            c = std::max(c, std::gcd(a.contiguity[d], runs));
          if (flipsAtLeft && a.constancy[d] == shape[d])
            c = std::max(c, std::gcd(b.contiguity[d], runs));
          out.constancy[d] = c;
        });
      })
      .Case<arith::AndIOp, arith::OrIOp, arith::XOrIOp>([&](Operation *) {
        const AxisInfo &a = operand(0), &b = operand(1);
        return combine(result, a, b, [&](size_t d, AxisInfo &out) {
          out.constancy[d] = std::gcd(a.constancy[d], b.constancy[d]);
        });
      })
      .Case<arith::SelectOp>([&](arith::SelectOp) {
        const AxisInfo &c = operand(0), &a = operand(1), &b = operand(2);
        AxisInfo info = combine(result, a, b, [&](size_t d, AxisInfo &out) {
          if (c.constancy.size() == out.constancy.size())
            out.constancy[d] = std::gcd(
                c.constancy[d], std::gcd(a.constancy[d], b.constancy[d]));
          out.divisibility[d] = std::gcd(a.divisibility[d], b.divisibility[d]);
        });
        info.nonNegative = a.nonNegative && b.nonNegative;
        return info;
      })
      .Case<kiln::ExpandDimsOp>([&](kiln::ExpandDimsOp e) {
        const AxisInfo &src = operand(0);
        AxisInfo info = src;
        // The new dimension has size 1: its runs are single elements, each
        // as divisible as every element is.
        int64_t div = AxisInfo::kMaxDivisibility;
        for (size_t d = 0; d < src.divisibility.size(); ++d)
          div = std::gcd(div, src.contiguity[d] > 1 ? int64_t(1)
                                                    : src.divisibility[d]);
        unsigned axis = e.getAxis();
        info.contiguity.insert(info.contiguity.begin() + axis, 1);
        info.divisibility.insert(info.divisibility.begin() + axis, div);
        info.constancy.insert(info.constancy.begin() + axis, 1);
        return info;
      })
      .Case<kiln::TransOp>([&](kiln::TransOp t) {
        // Result dimension i is the operand's dimension order[i].
        const AxisInfo &src = operand(0);
        AxisInfo info = src;
        for (auto [i, from] : llvm::enumerate(t.getOrder())) {
          if (size_t(from) >= src.contiguity.size())
            return conservative(result);
          info.contiguity[i] = src.contiguity[from];
          info.divisibility[i] = src.divisibility[from];
          info.constancy[i] = src.constancy[from];
        }
        return info;
      })
      .Case<kiln::BroadcastOp>([&](kiln::BroadcastOp b) {
        AxisInfo info = operand(0);
        ArrayRef<int64_t> from = b.getSrc().getType().getShape();
        ArrayRef<int64_t> to = b.getType().getShape();
        for (size_t d = 0; d < from.size(); ++d)
          if (from[d] == 1 && to[d] != 1) {
            info.contiguity[d] = 1;
            info.constancy[d] = to[d];
          }
        return info;
      })
      .Case<kiln::gpu::ConvertLayoutOp>([&](Operation *) { return operand(0); })
      .Default([&](Operation *) { return conservative(result); });
}

static int64_t largestPowerOfTwoAtMost(int64_t v) {
  return v <= 1 ? 1 : int64_t(1) << (63 - llvm::countl_zero(uint64_t(v)));
}

unsigned kiln::AxisInfoAnalysis::vectorWidth(Value ptr, Value mask,
                                             unsigned elementBits,
                                             unsigned maxBits) {
  // The fastest-varying dimension of Kiln's row-major tensors is the last.
  return vectorWidthAlong(ptr, mask, elementBits,
                          get(ptr).contiguity.size() - 1, maxBits);
}

llvm::SmallVector<int64_t>
kiln::AxisInfoAnalysis::loadedRuns(Value ptr, Value mask, Value other) {
  llvm::SmallVector<int64_t> runs = get(ptr).constancy;
  if (other && (other.getDefiningOp<kiln::SplatOp>() ||
                matchPattern(other, m_Constant())))
    other = Value();
  for (Value operand : {mask, other})
    if (operand && isa<RankedTensorType>(operand.getType()))
      for (auto [run, repeat] : llvm::zip(runs, get(operand).constancy))
        run = std::gcd(run, repeat);
  return runs;
}

unsigned kiln::AxisInfoAnalysis::vectorWidthAlong(Value ptr, Value mask,
                                                  unsigned elementBits,
                                                  size_t d, unsigned maxBits) {
  const AxisInfo &p = get(ptr);
  int64_t elementBytes = std::max<unsigned>(1, elementBits / 8);
  int64_t vec = largestPowerOfTwoAtMost(p.contiguity[d]);
  vec = std::min(vec, std::max<int64_t>(1, p.divisibility[d] / elementBytes));
  vec = std::min<int64_t>(vec, std::max(1u, maxBits / elementBits));
  if (mask) {
    const AxisInfo &m = get(mask);
    vec = std::min(vec, largestPowerOfTwoAtMost(m.constancy[d]));
  }
  return unsigned(std::max<int64_t>(vec, 1));
}
