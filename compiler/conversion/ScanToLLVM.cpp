//===- ScanToLLVM.cpp - inclusive scans of 1-D blocked tensors ------------===//
//
// A scan combines, for every element, all the elements before it in scan
// order (increasing index, or decreasing when `reverse`), always as
// combine(earlier, later) since combine regions need not commute. With a
// 1-D blocked layout each thread holds chunks of sizePerThread contiguous
// elements, one chunk per repetition of the CTA-wide tile, so:
//   1. each chunk is scanned in the thread;
//   2. the chunk totals are scanned across the lanes of a warp (shfl.up,
//      or shfl.down in reverse), which also gives each lane the total of
//      the lanes before it;
//   3. warp totals go through shared memory, from which every thread takes
//      the total of the warps before its own and the tile's total;
//   4. tiles before the chunk's contribute their totals (a carry).
// A chunk's prefix is carry · earlier warps · earlier lanes, combined into
// each element. Threads holding copies (tensors smaller than the CTA) scan
// their copy as a separate segment of lanes or warps, so they agree.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/OpFamilyLowerings.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace {

using Values = SmallVector<Value>;

Value i32Constant(OpBuilder &b, Location loc, int32_t v) {
  return LLVM::ConstantOp::create(b, loc, b.getI32Type(), b.getI32IntegerAttr(v));
}

/// One 32-bit `shfl.sync` of the given kind.
Value shuffleWord(OpBuilder &b, Location loc, Value word, Value laneOrOffset,
                  NVVM::ShflKind kind) {
  // `c`: lane clamp for up (0), down and idx (31).
  int32_t clamp = kind == NVVM::ShflKind::up ? 0 : 0x1f;
  return NVVM::ShflOp::create(b, loc, b.getI32Type(), i32Constant(b, loc, -1),
                              word, laneOrOffset, i32Constant(b, loc, clamp),
                              NVVM::ShflKindAttr::get(b.getContext(), kind),
                              UnitAttr());
}

/// `shfl.sync` of any scalar of up to 64 bits (two shuffles for 64).
Value shuffle(OpBuilder &b, Location loc, Value v, Value laneOrOffset,
              NVVM::ShflKind kind) {
  Type type = v.getType();
  unsigned bits = type.getIntOrFloatBitWidth();
  Type i32 = b.getI32Type();
  Type intType = b.getIntegerType(bits);
  Value asInt = type == intType ? v : Value(LLVM::BitcastOp::create(b, loc, intType, v));
  Value out;
  if (bits == 64) {
    Value shift = LLVM::ConstantOp::create(b, loc, intType, b.getI64IntegerAttr(32));
    Value lo = LLVM::TruncOp::create(b, loc, i32, asInt);
    Value hi = LLVM::TruncOp::create(b, loc, i32, LLVM::LShrOp::create(b, loc, asInt, shift));
    lo = LLVM::ZExtOp::create(b, loc, intType, shuffleWord(b, loc, lo, laneOrOffset, kind));
    hi = LLVM::ZExtOp::create(b, loc, intType, shuffleWord(b, loc, hi, laneOrOffset, kind));
    out = LLVM::OrOp::create(b, loc, lo, LLVM::ShlOp::create(b, loc, hi, shift));
  } else {
    Value word = bits == 32 ? asInt : Value(LLVM::ZExtOp::create(b, loc, i32, asInt));
    out = shuffleWord(b, loc, word, laneOrOffset, kind);
    if (bits != 32)
      out = LLVM::TruncOp::create(b, loc, intType, out);
  }
  return type == intType ? out : Value(LLVM::BitcastOp::create(b, loc, type, out));
}

/// Values that may be absent: `present` is null when they are there for
/// sure, else an i1 saying whether they are.
struct MaybeValues {
  Values values;
  Value present;
  bool absent() const { return values.empty(); }
};

struct ScanLowering : OpConversionPattern<kiln::ScanOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::ScanOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(op.getSrcs().front().getType());
    auto layout = kiln::BlockedLayout1D::get(srcType);
    if (!layout || op.getAxis() != 0)
      return rewriter.notifyMatchFailure(op, "only 1-D blocked scans");
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

    // Elements, as [element][operand].
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

    unsigned chunk = layout->sizePerThread;
    unsigned reps = count / chunk;
    int64_t distinctThreads = std::min<int64_t>(
        layout->threadsPerCTA, std::max<int64_t>(1, layout->size / chunk));
    int32_t laneSpan = int32_t(std::min<int64_t>(32, distinctThreads));
    int32_t warps = int32_t(std::max<int64_t>(1, distinctThreads / 32));
    auto inScanOrder = [&](unsigned n, unsigned i) {
      return reverse ? n - 1 - i : i;
    };

    // 1. In-thread scan of every chunk.
    SmallVector<Values> scanned(count);
    SmallVector<Values> chunkTotals(reps);
    for (unsigned r = 0; r < reps; ++r) {
      Values acc;
      for (unsigned i = 0; i < chunk; ++i) {
        unsigned k = r * chunk + inScanOrder(chunk, i);
        acc = i == 0 ? element(k) : combine(acc, element(k));
        scanned[k] = acc;
      }
      chunkTotals[r] = acc;
    }

    // 2. Across lanes: position in scan order within the lane segment.
    Value tid = kiln::threadIdX(b, loc);
    Value lane = LLVM::AndOp::create(b, loc, tid, i32Constant(b, loc, 31));
    Value position = LLVM::AndOp::create(b, loc, lane, i32Constant(b, loc, laneSpan - 1));
    if (reverse)
      position = LLVM::SubOp::create(b, loc, i32Constant(b, loc, laneSpan - 1), position);
    NVVM::ShflKind towardsLater = reverse ? NVVM::ShflKind::down : NVVM::ShflKind::up;
    auto shuffleAll = [&](ValueRange values, Value laneOrOffset, NVVM::ShflKind kind) {
      Values out;
      for (Value v : values)
        out.push_back(shuffle(b, loc, v, laneOrOffset, kind));
      return out;
    };
    auto atLeast = [&](Value v, int32_t bound) {
      return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::sge, v,
                                  i32Constant(b, loc, bound));
    };
    // The lane whose position is last in the segment holds the warp total.
    Value lastLane = LLVM::OrOp::create(
        b, loc, LLVM::AndOp::create(b, loc, lane, i32Constant(b, loc, ~(laneSpan - 1))),
        i32Constant(b, loc, reverse ? 0 : laneSpan - 1));
    SmallVector<MaybeValues> lanePrefix(reps);
    SmallVector<Values> warpTotals(reps);
    for (unsigned r = 0; r < reps; ++r) {
      Values inclusive = chunkTotals[r];
      for (int32_t offset = 1; offset < laneSpan; offset *= 2) {
        Values from = shuffleAll(inclusive, i32Constant(b, loc, offset), towardsLater);
        inclusive = select(atLeast(position, offset), combine(from, inclusive), inclusive);
      }
      if (laneSpan > 1)
        lanePrefix[r] = {shuffleAll(inclusive, i32Constant(b, loc, 1), towardsLater),
                         atLeast(position, 1)};
      warpTotals[r] = laneSpan > 1
                          ? shuffleAll(inclusive, lastLane, NVVM::ShflKind::idx)
                          : inclusive;
    }

    // 3. Across warps, through shared memory: slot [operand][rep][warp].
    SmallVector<MaybeValues> warpPrefix(reps);
    SmallVector<Values> tileTotals = warpTotals;
    if (warps > 1) {
      Value warp = LLVM::AndOp::create(
          b, loc, LLVM::LShrOp::create(b, loc, tid, i32Constant(b, loc, 5)),
          i32Constant(b, loc, warps - 1));
      if (reverse)
        warp = LLVM::SubOp::create(b, loc, i32Constant(b, loc, warps - 1), warp);
      auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
      SmallVector<Value> slots;
      for (size_t i = 0; i < numOperands; ++i) {
        Type type = warpTotals[0][i].getType();
        Value base =
            kiln::allocateSharedArray(b, op, type, int64_t(reps) * warps);
        slots.push_back(base);
        for (unsigned r = 0; r < reps; ++r) {
          // Every lane of the warp stores the same total.
          Value index = LLVM::AddOp::create(b, loc, warp,
                                            i32Constant(b, loc, int32_t(r) * warps));
          Value slot = LLVM::GEPOp::create(b, loc, sharedPtr, type, base, ValueRange{index});
          LLVM::StoreOp::create(b, loc, warpTotals[r][i], slot);
        }
      }
      NVVM::Barrier0Op::create(b, loc);
      for (unsigned r = 0; r < reps; ++r) {
        Values acc, prefix;
        for (int32_t w = 0; w < warps; ++w) {
          Values total;
          for (size_t i = 0; i < numOperands; ++i) {
            Type type = warpTotals[0][i].getType();
            Value slot = LLVM::GEPOp::create(
                b, loc, sharedPtr, type, slots[i],
                ArrayRef<LLVM::GEPArg>{int32_t(r) * warps + w});
            total.push_back(LLVM::LoadOp::create(b, loc, type, slot));
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
        warpPrefix[r] = {prefix, atLeast(warp, 1)};
        tileTotals[r] = acc;
      }
      // The slots may be written again (a scan in a loop).
      NVVM::Barrier0Op::create(b, loc);
    }

    // 4. Tiles earlier in scan order, then every element.
    MaybeValues carry;
    SmallVector<Values> results(count);
    for (unsigned i = 0; i < reps; ++i) {
      unsigned r = inScanOrder(reps, i);
      MaybeValues prefix = combineMaybe(combineMaybe(carry, warpPrefix[r]), lanePrefix[r]);
      for (unsigned j = 0; j < chunk; ++j) {
        unsigned k = r * chunk + j;
        results[k] = combineMaybe(prefix, {scanned[k], Value()}).values;
      }
      carry = combineMaybe(carry, {tileTotals[r], Value()});
    }

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
