//===- ScanToLLVM.cpp - inclusive scans along one axis
//---------------------===//
//
// A scan combines, for every element, all the elements before it along the
// axis in scan order (increasing index, or decreasing when `reverse`),
// always as combine(earlier, later) since combine regions need not commute.
// The operand's linear layout says how the axis is spread: its lowest
// positions lie in each thread's registers (a chunk), the next across a
// contiguous run of lane bits, the next across warp bits, and the highest in
// further registers (repetitions of the CTA-wide tile). Every other
// register, lane and warp bit moves along other dimensions (or copies), and
// so separates independent rows. Per row and repetition:
//   1. each chunk is scanned in the thread;
//   2. the chunk totals are scanned across the lanes along the axis
//      (shfl.up, or shfl.down in reverse), which also gives each lane the
//      total of the lanes before it;
//   3. warp totals go through shared memory, from which every thread takes
//      the total of the warps before its own and the tile's total;
//   4. repetitions before the chunk's contribute their totals (a carry).
// A chunk's prefix is carry · earlier warps · earlier lanes, combined into
// each element. Threads holding copies scan them as rows of their own.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/DistributedLayout.h"
#include "compiler/conversion/LoweringUtils.h"
#include "compiler/conversion/OpFamilyLowerings.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using kiln::i32Constant;
using kiln::layout::LinearLayout;
namespace layout = kiln::layout;

namespace {

using Values = SmallVector<Value>;

/// Values that may be absent: `present` is null when they are there for
/// sure, else an i1 saying whether they are.
struct MaybeValues {
  Values values;
  Value present;
  bool absent() const { return values.empty(); }
};

/// How a layout spreads the scan axis over registers, lanes and warps.
struct AxisSpread {
  SmallVector<int32_t> chunkBits;    // register bits, lowest axis positions
  SmallVector<int32_t> repBits;      // register bits, highest axis positions
  SmallVector<int32_t> rowBits;      // register bits along other dimensions
  int32_t laneLo = 0, laneCount = 0; // lane bits [laneLo, laneLo + laneCount)
  int32_t warpLo = 0, warpCount = 0; // warp bits likewise
  int32_t numWarps = 1;
};

/// The spread of `axis` under `l`, or why the scan cannot use it.
FailureOr<AxisSpread> spreadOf(const LinearLayout &l, unsigned axis,
                               std::string &why) {
  AxisSpread spread;
  spread.numWarps = l.getInDimSize(layout::kWarp);
  // Every basis moving along the axis, by its step along it.
  struct Step {
    int32_t value;
    StringRef dim;
    int32_t bit;
  };
  SmallVector<Step> steps;
  for (StringRef dim : {layout::kRegister, layout::kLane, layout::kWarp}) {
    for (int32_t bit = 0; bit < l.getInDimSizeLog2(dim); ++bit) {
      ArrayRef<int32_t> basis = l.getBasis(dim, bit);
      if (basis[axis] == 0) {
        if (dim == layout::kRegister)
          spread.rowBits.push_back(bit);
        continue;
      }
      for (auto [d, v] : llvm::enumerate(basis))
        if (d != axis && v != 0) {
          why = "a basis moves along the scan axis and another dimension";
          return failure();
        }
      steps.push_back({basis[axis], dim, bit});
    }
  }
  llvm::sort(steps,
             [](const Step &a, const Step &b) { return a.value < b.value; });
  // Positions 1, 2, 4, ...: registers, then lanes, then warps, then
  // registers again.
  int stage = 0; // 0 chunk, 1 lanes, 2 warps, 3 repetitions
  for (auto [i, step] : llvm::enumerate(steps)) {
    if (step.value != int32_t(1) << i) {
      why = "the axis positions are not a product of register, lane and warp "
            "bits";
      return failure();
    }
    int want = step.dim == layout::kRegister ? (stage == 0 ? 0 : 3)
               : step.dim == layout::kLane   ? 1
                                             : 2;
    if (want < stage) {
      why = "the axis is spread over lanes, warps and registers in an order "
            "the scan does not handle";
      return failure();
    }
    stage = want;
    switch (want) {
    case 0:
      spread.chunkBits.push_back(step.bit);
      break;
    case 1:
      if (spread.laneCount == 0)
        spread.laneLo = step.bit;
      if (step.bit != spread.laneLo + spread.laneCount) {
        why = "the lanes along the axis are not contiguous lane bits";
        return failure();
      }
      ++spread.laneCount;
      break;
    case 2:
      if (spread.warpCount == 0)
        spread.warpLo = step.bit;
      if (step.bit != spread.warpLo + spread.warpCount) {
        why = "the warps along the axis are not contiguous warp bits";
        return failure();
      }
      ++spread.warpCount;
      break;
    default:
      spread.repBits.push_back(step.bit);
    }
  }
  return spread;
}

/// `index` with the bits of `value` placed at `bits` (lowest first).
unsigned deposit(unsigned index, ArrayRef<int32_t> bits, unsigned value) {
  for (auto [j, bit] : llvm::enumerate(bits))
    if (value & (1u << j))
      index |= 1u << bit;
  return index;
}

struct ScanLowering : OpConversionPattern<kiln::ScanOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::ScanOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(op.getSrcs().front().getType());
    std::optional<LinearLayout> layout = kiln::getLinearLayout(srcType);
    if (!layout)
      return rewriter.notifyMatchFailure(op, "scan without a layout");
    std::string why;
    FailureOr<AxisSpread> spread = spreadOf(*layout, op.getAxis(), why);
    if (failed(spread))
      return op.emitOpError("cannot scan this layout: ") << why;
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Region &region = op.getCombineOp();
    bool reverse = op.getReverse();

    auto combine = [&](ValueRange earlier, ValueRange later) {
      Block &block = region.front();
      IRMapping mapping;
      for (auto [i, v] : llvm::enumerate(earlier))
        mapping.map(block.getArgument(i), v);
      for (auto [i, v] : llvm::enumerate(later))
        mapping.map(block.getArgument(i + earlier.size()), v);
      for (Operation &inner : block.without_terminator())
        rewriter.clone(inner, mapping);
      Values results;
      for (Value v : block.getTerminator()->getOperands())
        results.push_back(mapping.lookupOrDefault(v));
      return results;
    };
    auto select = [&](Value cond, ValueRange ifTrue, ValueRange ifFalse) {
      Values out;
      for (auto [t, f] : llvm::zip_equal(ifTrue, ifFalse))
        out.push_back(LLVM::SelectOp::create(b, loc, cond, t, f));
      return out;
    };
    // earlier · later, either of which may be absent.
    auto combineMaybe = [&](const MaybeValues &earlier,
                            const MaybeValues &later) -> MaybeValues {
      if (earlier.absent())
        return later;
      if (later.absent())
        return earlier;
      Values both = combine(earlier.values, later.values);
      if (earlier.present)
        both = select(earlier.present, both, later.values);
      if (later.present)
        both = select(later.present, both, earlier.values);
      Value present;
      if (earlier.present && later.present)
        present = LLVM::OrOp::create(b, loc, earlier.present, later.present);
      return {both, present};
    };

    // Elements, as [register][operand].
    size_t numOperands = op.getSrcs().size();
    SmallVector<Values> perOperand;
    for (Value src : adaptor.getSrcs())
      perOperand.push_back(kiln::unpackElements(b, loc, src));
    unsigned count = perOperand.front().size();
    auto element = [&](unsigned k) {
      Values v;
      for (auto &e : perOperand)
        v.push_back(e[k]);
      return v;
    };

    unsigned chunk = 1u << spread->chunkBits.size();
    unsigned reps = 1u << spread->repBits.size();
    unsigned rows = 1u << spread->rowBits.size();
    int32_t laneSpan = int32_t(1) << spread->laneCount;
    int32_t warps = int32_t(1) << spread->warpCount;
    auto inScanOrder = [&](unsigned n, unsigned i) {
      return reverse ? n - 1 - i : i;
    };
    // Register of (row, repetition, position in chunk).
    auto registerOf = [&](unsigned row, unsigned rep, unsigned i) {
      unsigned k = deposit(0, spread->rowBits, row);
      k = deposit(k, spread->repBits, rep);
      return deposit(k, spread->chunkBits, i);
    };
    // Work items: (row, repetition), as row * reps + rep.
    unsigned items = rows * reps;

    // 1. In-thread scan of every chunk.
    SmallVector<Values> scanned(count);
    SmallVector<Values> chunkTotals(items);
    for (unsigned item = 0; item < items; ++item) {
      Values acc;
      for (unsigned i = 0; i < chunk; ++i) {
        unsigned k =
            registerOf(item / reps, item % reps, inScanOrder(chunk, i));
        acc = i == 0 ? element(k) : combine(acc, element(k));
        scanned[k] = acc;
      }
      chunkTotals[item] = acc;
    }

    // 2. Across lanes: the position along the axis among the lanes.
    Value tid = kiln::threadIdX(b, loc);
    Value lane = LLVM::AndOp::create(b, loc, tid, i32Constant(b, loc, 31));
    int32_t laneLo = spread->laneLo;
    Value position = LLVM::AndOp::create(
        b, loc, LLVM::LShrOp::create(b, loc, lane, i32Constant(b, loc, laneLo)),
        i32Constant(b, loc, laneSpan - 1));
    if (reverse)
      position = LLVM::SubOp::create(b, loc, i32Constant(b, loc, laneSpan - 1),
                                     position);
    NVVM::ShflKind towardsLater =
        reverse ? NVVM::ShflKind::down : NVVM::ShflKind::up;
    auto shuffleAll = [&](ValueRange values, Value laneOrOffset,
                          NVVM::ShflKind kind) {
      Values out;
      for (Value v : values)
        out.push_back(kiln::shuffle(b, loc, v, laneOrOffset, kind));
      return out;
    };
    auto atLeast = [&](Value v, int32_t bound) {
      return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::sge, v,
                                  i32Constant(b, loc, bound));
    };
    // The lane last in scan order along the axis, in this lane's row, holds
    // the warp's total.
    int32_t laneAxisMask = (laneSpan - 1) << laneLo;
    Value lastLane = LLVM::OrOp::create(
        b, loc,
        LLVM::AndOp::create(b, loc, lane, i32Constant(b, loc, ~laneAxisMask)),
        i32Constant(b, loc, reverse ? 0 : laneAxisMask));
    // Each lane's inclusive scan of the chunk totals (laneInclusive) is
    // what a chunk of one element ends with: no exclusive prefix is then
    // shuffled. The warp's total, in its last lane, is shuffled to the
    // others where repetitions follow and no warps (their carry), or where
    // warps follow and there is one item (every lane then writes it to
    // shared memory: Mamba-3's backward spilled more without); otherwise
    // the last lane writes it and the others a spare slot.
    const bool broadcastTotals =
        laneSpan > 1 && (warps == 1 ? reps > 1 : items == 1);
    SmallVector<MaybeValues> lanePrefix(items);
    SmallVector<Values> laneInclusive(items);
    SmallVector<Values> warpTotals(items);
    for (unsigned item = 0; item < items; ++item) {
      Values inclusive = chunkTotals[item];
      for (int32_t offset = 1; offset < laneSpan; offset *= 2) {
        Values from = shuffleAll(
            inclusive, i32Constant(b, loc, offset << laneLo), towardsLater);
        inclusive = select(atLeast(position, offset), combine(from, inclusive),
                           inclusive);
      }
      laneInclusive[item] = inclusive;
      if (laneSpan > 1 && chunk > 1)
        lanePrefix[item] = {shuffleAll(inclusive,
                                       i32Constant(b, loc, 1 << laneLo),
                                       towardsLater),
                            atLeast(position, 1)};
      warpTotals[item] =
          broadcastTotals ? shuffleAll(inclusive, lastLane, NVVM::ShflKind::idx)
                          : inclusive;
    }

    // 3. Across warps, through shared memory: slot
    // [operand][item][lane off the axis][warp off the axis][warp position],
    // then, where only the last lane holds the total, one spare slot a
    // thread for the lanes that are not.
    SmallVector<MaybeValues> warpPrefix(items);
    SmallVector<Values> tileTotals = warpTotals;
    // Where step 4 reads item's total of warp position w (operand i's at
    // [item][w][i]), and this thread's warp position.
    SmallVector<SmallVector<SmallVector<Value>>> totalSlots;
    Value warp;
    // i1 totals are kept as bytes.
    auto storedType = [&](Type t) {
      return t.isInteger(1) ? Type(b.getI8Type()) : t;
    };
    if (warps > 1) {
      int32_t warpLo = spread->warpLo;
      Value warpId = LLVM::LShrOp::create(b, loc, tid, i32Constant(b, loc, 5));
      warp = LLVM::AndOp::create(
          b, loc,
          LLVM::LShrOp::create(b, loc, warpId, i32Constant(b, loc, warpLo)),
          i32Constant(b, loc, warps - 1));
      if (reverse)
        warp =
            LLVM::SubOp::create(b, loc, i32Constant(b, loc, warps - 1), warp);
      // An index from the bits of `id` off the axis bits [lo, lo + n).
      auto offAxis = [&](Value id, int32_t lo, int32_t n) -> Value {
        Value low =
            LLVM::AndOp::create(b, loc, id, i32Constant(b, loc, (1 << lo) - 1));
        Value high = LLVM::ShlOp::create(
            b, loc,
            LLVM::LShrOp::create(b, loc, id, i32Constant(b, loc, lo + n)),
            i32Constant(b, loc, lo));
        return LLVM::OrOp::create(b, loc, low, high);
      };
      int32_t laneRows = 32 >> spread->laneCount;
      int32_t warpRows = spread->numWarps / warps;
      // Slot of (item, w) for this thread's row: ((item * laneRows +
      // laneOff) * warpRows + warpOff) * warps + w.
      Value rowSlot = LLVM::AddOp::create(
          b, loc,
          LLVM::MulOp::create(b, loc, offAxis(lane, laneLo, spread->laneCount),
                              i32Constant(b, loc, warpRows * warps)),
          LLVM::MulOp::create(b, loc,
                              offAxis(warpId, warpLo, spread->warpCount),
                              i32Constant(b, loc, warps)));
      int32_t itemStride = laneRows * warpRows * warps;
      auto slotIndex = [&](unsigned item, Value w) {
        return LLVM::AddOp::create(
            b, loc, rowSlot,
            LLVM::AddOp::create(
                b, loc, w, i32Constant(b, loc, int32_t(item) * itemStride)));
      };
      int64_t spares = int64_t(items) * itemStride;
      // Spare slots only where lanes other than the last write one.
      const bool spareSlots = laneSpan > 1 && !broadcastTotals;
      Value spare =
          LLVM::AddOp::create(b, loc, tid, i32Constant(b, loc, spares));
      Value last =
          LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, position,
                               i32Constant(b, loc, laneSpan - 1));
      auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
      SmallVector<Value> slots;
      for (size_t i = 0; i < numOperands; ++i) {
        Type type = storedType(warpTotals[0][i].getType());
        Value base = kiln::allocateSharedArray(
            b, op, type,
            spares + (spareSlots ? int64_t(spread->numWarps) * 32 : 0));
        slots.push_back(base);
        for (unsigned item = 0; item < items; ++item) {
          // The last lane along the axis holds the warp's total; the
          // others write their spare slot.
          Value index = slotIndex(item, warp);
          if (spareSlots)
            index = LLVM::SelectOp::create(b, loc, last, index, spare);
          Value slot = LLVM::GEPOp::create(b, loc, sharedPtr, type, base,
                                           ValueRange{index});
          Value v = warpTotals[item][i];
          if (v.getType() != type)
            v = LLVM::ZExtOp::create(b, loc, type, v);
          LLVM::StoreOp::create(b, loc, v, slot);
        }
      }
      NVVM::Barrier0Op::create(b, loc);
      totalSlots.resize(items);
      for (unsigned item = 0; item < items; ++item)
        for (int32_t w = 0; w < warps; ++w) {
          SmallVector<Value> operands;
          for (size_t i = 0; i < numOperands; ++i)
            operands.push_back(LLVM::GEPOp::create(
                b, loc, sharedPtr, storedType(warpTotals[0][i].getType()),
                slots[i], ValueRange{slotIndex(item, i32Constant(b, loc, w))}));
          totalSlots[item].push_back(std::move(operands));
        }
    }
    // Reads item's warp totals into its warpPrefix and tileTotals. Step 4
    // reads each item where it needs it, so that only one item's totals
    // are live at a time (FLA's KDA gate cumsum: 32 items a thread).
    auto readTotals = [&](unsigned item) {
      if (warps == 1)
        return;
      Values acc, prefix;
      for (int32_t w = 0; w < warps; ++w) {
        Values total;
        for (size_t i = 0; i < numOperands; ++i) {
          Type type = warpTotals[0][i].getType();
          Type stored = storedType(type);
          Value v =
              LLVM::LoadOp::create(b, loc, stored, totalSlots[item][w][i]);
          if (stored != type)
            v = LLVM::TruncOp::create(b, loc, type, v);
          total.push_back(v);
        }
        if (w == 0) {
          acc = prefix = total;
          continue;
        }
        // The warp at position w gets the total of positions 0 .. w-1.
        Value isThis = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq,
                                            warp, i32Constant(b, loc, w));
        prefix = w == 1 ? acc : select(isThis, acc, prefix);
        acc = combine(acc, total);
      }
      warpPrefix[item] = {prefix, atLeast(warp, 1)};
      tileTotals[item] = acc;
    };

    // 4. Repetitions earlier in scan order, then every element.
    SmallVector<Values> results(count);
    for (unsigned row = 0; row < rows; ++row) {
      MaybeValues carry;
      for (unsigned i = 0; i < reps; ++i) {
        unsigned rep = inScanOrder(reps, i);
        unsigned item = row * reps + rep;
        readTotals(item);
        MaybeValues prefix = combineMaybe(combineMaybe(carry, warpPrefix[item]),
                                          lanePrefix[item]);
        for (unsigned j = 0; j < chunk; ++j) {
          unsigned k = registerOf(row, rep, j);
          results[k] = combineMaybe(prefix, {chunk == 1 ? laneInclusive[item]
                                                        : scanned[k],
                                             Value()})
                           .values;
        }
        carry = combineMaybe(carry, {tileTotals[item], Value()});
      }
    }
    // The slots may be written again (a scan in a loop).
    if (warps > 1)
      NVVM::Barrier0Op::create(b, loc);

    SmallVector<Value> replacements;
    for (size_t i = 0; i < numOperands; ++i) {
      Type type = getTypeConverter()->convertType(op.getResult(i).getType());
      Values operandResults;
      for (unsigned k = 0; k < count; ++k)
        operandResults.push_back(results[k][i]);
      replacements.push_back(kiln::packElements(b, loc, type, operandResults));
    }
    rewriter.replaceOp(op, replacements);
    return success();
  }
};

} // namespace

void kiln::populateScanToLLVMPatterns(KilnTypeConverter &converter,
                                      RewritePatternSet &patterns) {
  patterns.add<ScanLowering>(converter, patterns.getContext());
}
