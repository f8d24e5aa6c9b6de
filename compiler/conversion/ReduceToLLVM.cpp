//===- ReduceToLLVM.cpp - reductions along one axis of a tensor -----------===//
//
// A reduction along `axis` runs in three steps, each applying the op's
// combine region to scalars: over the elements a thread holds at the same
// position along the other dimensions, across the lanes that differ along
// the axis with butterfly shuffles, and across the warps that differ along
// it through shared memory (one slot per warp position and result element,
// read back by every thread). The result is in the operand layout's slice
// along the axis; reducing a 1-D tensor gives scalars. Registers, lanes and
// warps that hold copies of elements take no part in the combining, so
// nothing is counted twice.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/DistributedLayout.h"
#include "compiler/conversion/LoweringUtils.h"
#include "compiler/conversion/OpFamilyLowerings.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/IRMapping.h"

#include <map>

using namespace mlir;
using kiln::i32Constant;
using kiln::layout::LinearLayout;
namespace layout = kiln::layout;

namespace {

/// Warps along the axis from which their partials are combined with lane
/// shuffles rather than each thread reading every one (ReduceLowering).
constexpr int64_t kShuffledWarpPartials = 32;

/// Applies the combine region to (acc..., next...) and returns its results.
SmallVector<Value> combine(ConversionPatternRewriter &rewriter, Region &region,
                           ValueRange acc, ValueRange next) {
  Block &block = region.front();
  IRMapping mapping;
  for (auto [i, v] : llvm::enumerate(acc))
    mapping.map(block.getArgument(i), v);
  for (auto [i, v] : llvm::enumerate(next))
    mapping.map(block.getArgument(i + acc.size()), v);
  for (Operation &op : block.without_terminator())
    rewriter.clone(op, mapping);
  SmallVector<Value> results;
  for (Value v : block.getTerminator()->getOperands())
    results.push_back(mapping.lookupOrDefault(v));
  return results;
}

/// The lane or warp bits whose basis moves along tensor dimension `axis`
/// (bits that only copy data, with a zero basis, are left out).
SmallVector<int32_t> bitsAlong(const LinearLayout &layout, StringRef hw,
                               unsigned axis) {
  SmallVector<int32_t> bits;
  for (int32_t i = 0; i < layout.getInDimSizeLog2(hw); ++i)
    if (layout.getBasis(hw, i)[axis] != 0)
      bits.push_back(i);
  return bits;
}

struct ReduceLowering : OpConversionPattern<kiln::ReduceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(op.getSrcs().front().getType());
    std::optional<LinearLayout> layout = kiln::getLinearLayout(srcType);
    if (!layout)
      return rewriter.notifyMatchFailure(op, "reduction without a layout");
    Location loc = op.getLoc();
    Region &region = op.getCombineOp();
    size_t numOperands = op.getSrcs().size();
    unsigned axis = op.getAxis();
    auto dropAxis = [axis](ArrayRef<int32_t> coords) {
      SmallVector<int32_t> kept(coords);
      kept.erase(kept.begin() + axis);
      return kept;
    };

    // 1. Within the thread: registers grouped by where they sit along the
    // other dimensions. Copies (registers with a zero-basis bit) are left
    // out, so nothing is combined twice.
    SmallVector<SmallVector<Value>> elements;
    for (Value src : adaptor.getSrcs())
      elements.push_back(kiln::unpackElements(rewriter, loc, src));
    std::map<SmallVector<int32_t>, SmallVector<Value>> groups;
    SmallVector<SmallVector<int32_t>> groupOrder;
    for (unsigned k = 0; k < elements[0].size(); ++k) {
      if (!kiln::isRepresentativeRegister(*layout, k))
        continue;
      SmallVector<int32_t> key =
          dropAxis(kiln::registerCoordinates(*layout, k));
      SmallVector<Value> next;
      for (auto &e : elements)
        next.push_back(e[k]);
      auto [it, inserted] = groups.try_emplace(key, next);
      if (inserted)
        groupOrder.push_back(key);
      else
        it->second = combine(rewriter, region, it->second, next);
    }

    // 2. Across the lanes that differ along the axis: butterfly shuffles.
    for (int32_t bit : bitsAlong(*layout, layout::kLane, axis))
      for (auto &key : groupOrder) {
        SmallVector<Value> &acc = groups[key];
        SmallVector<Value> next;
        for (Value v : acc)
          next.push_back(kiln::shuffle(
              rewriter, loc, v, i32Constant(rewriter, loc, int32_t(1) << bit),
              NVVM::ShflKind::bfly));
        acc = combine(rewriter, region, acc, next);
      }

    // 3. Across the warps that differ along the axis, through shared
    // memory: one slot per (warp position along the axis, result element).
    SmallVector<int32_t> warpBits = bitsAlong(*layout, layout::kWarp, axis);
    bool scalarResult = srcType.getRank() == 1;
    std::optional<LinearLayout> resultLayout;
    if (!scalarResult) {
      resultLayout = kiln::getLinearLayout(
          cast<RankedTensorType>(op.getResult(0).getType()));
      if (!resultLayout)
        return rewriter.notifyMatchFailure(op, "result without a layout");
    }
    if (!warpBits.empty()) {
      int64_t warpsAlong = int64_t(1) << warpBits.size();
      SmallVector<int64_t> resultShape(srcType.getShape());
      resultShape.erase(resultShape.begin() + axis);
      int64_t resultElements = 1;
      for (int64_t n : resultShape)
        resultElements *= n;
      Value tid = kiln::threadIdX(rewriter, loc);
      Value warp = LLVM::LShrOp::create(rewriter, loc, tid,
                                        i32Constant(rewriter, loc, 5));
      // This warp's position along the axis: its axis bits, packed.
      Value position;
      for (auto [t, bit] : llvm::enumerate(warpBits)) {
        Value b = LLVM::AndOp::create(
            rewriter, loc,
            LLVM::LShrOp::create(rewriter, loc, warp,
                                 i32Constant(rewriter, loc, bit)),
            i32Constant(rewriter, loc, 1));
        if (t > 0)
          b = LLVM::ShlOp::create(rewriter, loc, b,
                                  i32Constant(rewriter, loc, int32_t(t)));
        position = position
                       ? Value(LLVM::OrOp::create(rewriter, loc, position, b))
                       : b;
      }
      // Row-major offsets of the groups' result elements.
      SmallVector<Value> groupOffsets;
      if (scalarResult) {
        groupOffsets.push_back(i32Constant(rewriter, loc, 0));
      } else {
        // The thread part of each group's coordinates: those of a result
        // register with the same register coordinates.
        SmallVector<kiln::Coordinates> coords =
            kiln::emitCoordinates(rewriter, loc, *resultLayout);
        std::map<SmallVector<int32_t>, unsigned> resultRegister;
        for (unsigned k = unsigned(coords.size()); k-- > 0;)
          resultRegister[kiln::registerCoordinates(*resultLayout, k)] = k;
        for (auto &key : groupOrder) {
          auto it = resultRegister.find(key);
          if (it == resultRegister.end())
            return op.emitError("the reduction's result layout does not hold "
                                "its groups");
          Value offset;
          int64_t stride = 1;
          for (int64_t d = int64_t(resultShape.size()) - 1; d >= 0; --d) {
            Value term = coords[it->second][d];
            if (stride > 1)
              term = LLVM::MulOp::create(
                  rewriter, loc, term,
                  i32Constant(rewriter, loc, int32_t(stride)));
            offset =
                offset ? Value(LLVM::AddOp::create(rewriter, loc, offset, term))
                       : term;
            stride *= resultShape[d];
          }
          groupOffsets.push_back(offset);
        }
      }
      Value slotBase = LLVM::MulOp::create(
          rewriter, loc, position,
          i32Constant(rewriter, loc, int32_t(resultElements)));
      SmallVector<Value> arrays;
      for (size_t i = 0; i < numOperands; ++i) {
        Type elementType = groups[groupOrder[0]][i].getType();
        Type stored =
            elementType.isInteger(1) ? rewriter.getI8Type() : elementType;
        arrays.push_back(kiln::allocateSharedArray(
            rewriter, op, stored, warpsAlong * resultElements));
      }
      auto slot = [&](size_t i, Type stored, Value index) {
        return LLVM::GEPOp::create(rewriter, loc, arrays[i].getType(), stored,
                                   arrays[i], ValueRange{index});
      };
      auto storePartials = [&] {
        for (auto [g, key] : llvm::enumerate(groupOrder)) {
          Value index =
              LLVM::AddOp::create(rewriter, loc, slotBase, groupOffsets[g]);
          for (size_t i = 0; i < numOperands; ++i) {
            Value v = groups[key][i];
            if (v.getType().isInteger(1))
              v = LLVM::ZExtOp::create(rewriter, loc, rewriter.getI8Type(), v);
            LLVM::StoreOp::create(rewriter, loc, v,
                                  slot(i, v.getType(), index));
          }
        }
      };
      // Only the first lane of each shuffle group writes: with a combine
      // that is not commutative (tl.max(..., return_indices_tie_break_left=
      // False), a user's tl.reduce), the butterflies leave the lanes of a
      // group with different values, and the slot would hold whichever
      // lane's write landed last.
      int32_t laneMask = 0;
      for (int32_t bit : bitsAlong(*layout, layout::kLane, axis))
        laneMask |= int32_t(1) << bit;
      if (laneMask == 0) {
        storePartials();
      } else {
        Value laneBits = LLVM::AndOp::create(
            rewriter, loc, tid, i32Constant(rewriter, loc, laneMask));
        Value first =
            LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::eq,
                                 laneBits, i32Constant(rewriter, loc, 0));
        kiln::emitIf(rewriter, loc, first, storePartials);
      }
      NVVM::Barrier0Op::create(rewriter, loc);
      auto loadPartial = [&](const SmallVector<int32_t> &key, Value index) {
        SmallVector<Value> value;
        for (size_t i = 0; i < numOperands; ++i) {
          Type elementType = groups[key][i].getType();
          Type stored =
              elementType.isInteger(1) ? rewriter.getI8Type() : elementType;
          Value v = LLVM::LoadOp::create(rewriter, loc, stored,
                                         slot(i, stored, index));
          if (stored != elementType)
            v = LLVM::TruncOp::create(rewriter, loc, elementType, v);
          value.push_back(v);
        }
        return value;
      };
      // With 32 warps along the axis, each lane reads one warp's partial
      // (lane l the one of warp position l) and the lanes combine them with
      // butterflies: 1 load and 11 more instructions a warp and group, where
      // reading every partial takes 8 vector loads and 31 combines, issued
      // by each of the block's 32 warps at once (liger's cross entropy, 32
      // warps a row: 0.95 of Triton's speed before, 1.01 after, H200). The
      // butterflies' latency is longer: with 8 warps the reads measured
      // faster (liger's RMSNorm backward 1.036 of Triton, 1.002 shuffled),
      // and read in order, combining them one after another measured
      // faster than pairwise (1.037 against 1.026).
      // Lane 0 combines in warp order, lower positions on the left, so a
      // combine that is not commutative gets the serial order's result,
      // which lane 0 then gives every lane.
      if (warpsAlong >= kShuffledWarpPartials) {
        Value lane = LLVM::AndOp::create(rewriter, loc, tid,
                                         i32Constant(rewriter, loc, 31));
        Value position = LLVM::AndOp::create(
            rewriter, loc, lane,
            i32Constant(rewriter, loc, int32_t(warpsAlong - 1)));
        Value laneSlot = LLVM::MulOp::create(
            rewriter, loc, position,
            i32Constant(rewriter, loc, int32_t(resultElements)));
        for (auto [g, key] : llvm::enumerate(groupOrder)) {
          SmallVector<Value> total =
              loadPartial(key, LLVM::AddOp::create(rewriter, loc,
                                                   groupOffsets[g], laneSlot));
          for (int64_t span = 1; span < warpsAlong; span *= 2) {
            SmallVector<Value> next;
            for (Value v : total)
              next.push_back(kiln::shuffle(
                  rewriter, loc, v, i32Constant(rewriter, loc, int32_t(span)),
                  NVVM::ShflKind::bfly));
            total = combine(rewriter, region, total, next);
          }
          for (Value &v : total)
            v = kiln::shuffle(rewriter, loc, v, i32Constant(rewriter, loc, 0),
                              NVVM::ShflKind::idx);
          groups[key] = total;
        }
      } else {
        for (auto [g, key] : llvm::enumerate(groupOrder)) {
          SmallVector<Value> total;
          for (int64_t w = 0; w < warpsAlong; ++w) {
            Value index = LLVM::AddOp::create(
                rewriter, loc, groupOffsets[g],
                i32Constant(rewriter, loc, int32_t(w * resultElements)));
            SmallVector<Value> value = loadPartial(key, index);
            total = w == 0 ? value : combine(rewriter, region, total, value);
          }
          groups[key] = total;
        }
      }
      // The slots may be written again (a reduction in a loop).
      NVVM::Barrier0Op::create(rewriter, loc);
    }

    if (scalarResult) {
      rewriter.replaceOp(op, groups[groupOrder[0]]);
      return success();
    }
    // Results in the slice layout's register order.
    SmallVector<Value> results;
    for (size_t i = 0; i < numOperands; ++i) {
      auto resultType = cast<RankedTensorType>(op.getResult(i).getType());
      Type converted = getTypeConverter()->convertType(resultType);
      if (!converted)
        return failure();
      SmallVector<Value> values;
      for (unsigned k = 0;
           k < unsigned(resultLayout->getInDimSize(layout::kRegister)); ++k) {
        auto it = groups.find(kiln::registerCoordinates(*resultLayout, k));
        if (it == groups.end())
          return op.emitError("the reduction's result layout does not match "
                              "its operand's");
        values.push_back(it->second[i]);
      }
      results.push_back(kiln::packElements(rewriter, loc, converted, values));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void kiln::populateReduceToLLVMPatterns(KilnTypeConverter &converter,
                                        RewritePatternSet &patterns) {
  patterns.add<ReduceLowering>(converter, patterns.getContext());
}
