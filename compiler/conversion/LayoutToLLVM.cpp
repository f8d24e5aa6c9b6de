//===- LayoutToLLVM.cpp - ops that create tensors or move their elements --===//
//
// make_range and splat create a thread's elements from its coordinates;
// expand_dims, broadcast and trans only rename registers when the layouts
// assigned to their operand and result agree on lanes and warps (the layout
// pass arranges that); convert_layout moves elements between threads: by
// warp shuffles when they stay in each warp and that is cheaper, through
// shared memory otherwise.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/DistributedLayout.h"
#include "compiler/conversion/LoweringUtils.h"
#include "compiler/conversion/OpFamilyLowerings.h"
#include "compiler/conversion/Stmatrix.h"
#include "compiler/ir/TargetInfo.h"
#include "compiler/layout/MatrixRows.h"
#include "compiler/layout/SharedSwizzle.h"
#include "compiler/layout/WarpShuffle.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <functional>
#include <limits>
#include <map>

using namespace mlir;
using kiln::i32Constant;
using kiln::layout::LinearLayout;
namespace layout = kiln::layout;

namespace {

struct MakeRangeLowering : OpConversionPattern<kiln::MakeRangeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::MakeRangeOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<LinearLayout> layout = kiln::getLinearLayout(op.getType());
    Type resultType = getTypeConverter()->convertType(op.getType());
    if (!layout || !resultType)
      return rewriter.notifyMatchFailure(op, "range without a layout");
    Location loc = op.getLoc();
    SmallVector<Value> elements;
    for (kiln::Coordinates &coords :
         kiln::emitCoordinates(rewriter, loc, *layout))
      elements.push_back(
          op.getStart() == 0
              ? coords[0]
              : LLVM::AddOp::create(rewriter, loc, coords[0],
                                    i32Constant(rewriter, loc, op.getStart())));
    rewriter.replaceOp(op,
                       kiln::packElements(rewriter, loc, resultType, elements));
    return success();
  }
};

struct SplatLowering : OpConversionPattern<kiln::SplatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::SplatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type resultType = getTypeConverter()->convertType(op.getType());
    unsigned n = kiln::elementsPerThread(op.getType());
    if (!resultType || n == 0)
      return rewriter.notifyMatchFailure(op, "splat without a layout");
    SmallVector<Value> elements(n, adaptor.getSrc());
    rewriter.replaceOp(
        op, kiln::packElements(rewriter, op.getLoc(), resultType, elements));
    return success();
  }
};

/// What every lowering here starts from: the linear layouts of its operand
/// and result types, and the result's LLVM type.
struct LayoutChange {
  LinearLayout from, to;
  Type converted;
};

/// std::nullopt when either type has no layout (the pattern does not apply).
std::optional<LayoutChange> layoutChange(RankedTensorType srcType,
                                         RankedTensorType resultType,
                                         const TypeConverter &converter) {
  std::optional<LinearLayout> from = kiln::getLinearLayout(srcType);
  std::optional<LinearLayout> to = kiln::getLinearLayout(resultType);
  Type converted = converter.convertType(resultType);
  if (!from || !to || !converted)
    return std::nullopt;
  return LayoutChange{*from, *to, converted};
}

/// Rewrites `op` (one tensor operand, one tensor result) as a renaming of
/// registers, with `project` mapping result coordinates to operand ones.
LogicalResult renameRegisters(Operation *op, Value convertedSrc,
                              const TypeConverter &converter,
                              ConversionPatternRewriter &rewriter,
                              kiln::CoordinateMap project) {
  auto srcType = cast<RankedTensorType>(op->getOperand(0).getType());
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  std::optional<LayoutChange> change =
      layoutChange(srcType, resultType, converter);
  if (!change)
    return rewriter.notifyMatchFailure(op, "tensors without layouts");
  std::optional<SmallVector<unsigned>> mapping =
      kiln::registerMapping(change->from, change->to, project);
  if (!mapping)
    return op->emitError("the layouts of operand and result (")
           << srcType << " -> " << resultType
           << ") move data between threads; kiln-assign-layouts should have "
              "made them agree";
  Location loc = op->getLoc();
  SmallVector<Value> src = kiln::unpackElements(rewriter, loc, convertedSrc);
  SmallVector<Value> elements;
  for (unsigned k : *mapping)
    elements.push_back(src[k]);
  rewriter.replaceOp(
      op, kiln::packElements(rewriter, loc, change->converted, elements));
  return success();
}

/// A piece of the operand in the operand's lanes and warps
/// (kiln-assign-layouts' keepsPieces): each register of the result is the
/// operand's register at the same coordinates plus the offsets. (Offsets are
/// multiples of the piece's power-of-two sizes, so adding them is XOR.)
struct ExtractLowering : OpConversionPattern<kiln::ExtractOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::ExtractOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<LayoutChange> change =
        layoutChange(op.getSrc().getType(), op.getType(), *getTypeConverter());
    if (!change)
      return rewriter.notifyMatchFailure(op, "tensors without layouts");
    auto fail = [&]() {
      return op->emitError("the piece ")
             << op.getType() << " is not in the threads of "
             << op.getSrc().getType()
             << " that hold it; kiln-assign-layouts should have made its "
                "layout agree";
    };
    for (int64_t size : op.getType().getShape())
      if (!llvm::isPowerOf2_64(uint64_t(size)))
        return fail();
    auto same = [](ArrayRef<int32_t> c) { return SmallVector<int32_t>(c); };
    ArrayRef<int64_t> offsets = op.getOffsets();
    auto shifted = [&](ArrayRef<int32_t> c) {
      SmallVector<int32_t> moved(c);
      for (auto [x, offset] : llvm::zip(moved, offsets))
        x ^= int32_t(offset);
      return moved;
    };
    // Lanes and warps agree when the piece at offset 0 renames registers.
    std::optional<SmallVector<unsigned>> atZero =
        kiln::registerMapping(change->from, change->to, same);
    if (!atZero)
      return fail();
    std::map<SmallVector<int32_t>, unsigned> byCoordinates =
        kiln::registersByCoordinates(change->from);
    Location loc = op.getLoc();
    SmallVector<Value> src =
        kiln::unpackElements(rewriter, loc, adaptor.getSrc());
    SmallVector<Value> elements;
    unsigned toRegisters = unsigned(change->to.getInDimSize(layout::kRegister));
    for (unsigned k = 0; k < toRegisters; ++k) {
      auto it =
          byCoordinates.find(shifted(kiln::registerCoordinates(change->to, k)));
      if (it == byCoordinates.end())
        return fail();
      elements.push_back(src[it->second]);
    }
    rewriter.replaceOp(
        op, kiln::packElements(rewriter, loc, change->converted, elements));
    return success();
  }
};

struct ExpandDimsLowering : OpConversionPattern<kiln::ExpandDimsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::ExpandDimsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    unsigned axis = op.getAxis();
    return renameRegisters(op, adaptor.getSrc(), *getTypeConverter(), rewriter,
                           [axis](ArrayRef<int32_t> coords) {
                             SmallVector<int32_t> projected(coords);
                             projected.erase(projected.begin() + axis);
                             return projected;
                           });
  }
};

struct BroadcastLowering : OpConversionPattern<kiln::BroadcastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::BroadcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ArrayRef<int64_t> srcShape = op.getSrc().getType().getShape();
    return renameRegisters(op, adaptor.getSrc(), *getTypeConverter(), rewriter,
                           [srcShape](ArrayRef<int32_t> coords) {
                             SmallVector<int32_t> projected(coords);
                             for (auto [c, size] :
                                  llvm::zip_equal(projected, srcShape))
                               if (size == 1)
                                 c = 0;
                             return projected;
                           });
  }
};

struct TransLowering : OpConversionPattern<kiln::TransOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::TransOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ArrayRef<int32_t> order = op.getOrder();
    // Result dimension i is operand dimension order[i].
    return renameRegisters(op, adaptor.getSrc(), *getTypeConverter(), rewriter,
                           [order](ArrayRef<int32_t> coords) {
                             SmallVector<int32_t> projected(coords.size());
                             for (auto [i, d] : llvm::enumerate(order))
                               projected[d] = coords[i];
                             return projected;
                           });
  }
};

/// From `tensorLayout`'s hardware dimensions to the element's row-major
/// index, times 2^shift: an access to an exchange array ("offset" of
/// 2^shift times the tensor's size).
LinearLayout rowMajorAccess(const LinearLayout &tensorLayout,
                            int32_t shift = 0) {
  SmallVector<std::string> names = tensorLayout.getOutDimNames();
  std::reverse(names.begin(), names.end()); // last dimension fastest
  int32_t size = int32_t(tensorLayout.getTotalOutDimSize());
  LinearLayout flat = tensorLayout.transposeOuts(names).reshapeOuts(
      {{std::string(layout::kOffset), size}});
  if (shift == 0)
    return flat;
  LinearLayout::InDim in{std::string(layout::kOffset), {}};
  for (int32_t bit = 0; (int32_t(1) << bit) < size; ++bit)
    in.bases.push_back({int32_t(1) << (bit + shift)});
  SmallVector<LinearLayout::InDim, 3> ins = {in};
  SmallVector<LinearLayout::OutDim, 1> outs = {
      {std::string(layout::kOffset), size << shift}};
  return flat.compose(LinearLayout(ins, outs));
}

/// An access as stmatrix.x4 or ldmatrix.x4 performs it, plain and with
/// .trans (layout::matrixRowsAccess; the reader's view is the writer's):
/// none where the instruction is missing or the layout does not allow it.
struct MatrixAccesses {
  std::optional<layout::SharedAccess> plain = std::nullopt;
  std::optional<layout::SharedAccess> trans = std::nullopt;

  const std::optional<layout::SharedAccess> &get(bool transposed) const {
    return transposed ? trans : plain;
  }
};

/// `access`'s MatrixAccesses where `available` (the target has the
/// instruction), else none.
MatrixAccesses matrixAccesses(const layout::SharedAccess &access,
                              bool available) {
  MatrixAccesses result;
  if (!available)
    return result;
  if (std::optional<LinearLayout> plain =
          layout::matrixRowsAccess(access.layout, /*transposed=*/false))
    result.plain = layout::SharedAccess{*plain};
  if (std::optional<LinearLayout> trans =
          layout::matrixRowsAccess(access.layout, /*transposed=*/true))
    result.trans = layout::SharedAccess{*trans};
  return result;
}

/// One tensor written to the exchange array: its thread's elements and
/// where each goes (see layout::SharedAccess).
struct ExchangeSource {
  SmallVector<Value> elements;
  layout::SharedAccess access;
  /// The same writer as stmatrix performs it: used when the array's plan
  /// gives one of them 16-byte rows.
  MatrixAccesses stmatrix = {};
};

/// Moves elements between threads through a shared-memory array: every
/// thread writes the sources' elements (one copy of each), all threads meet
/// at a barrier, then read the targets' accesses. A second barrier lets the
/// array be written again (the op may sit in a loop). The array is laid out
/// by layout::chooseSharedSwizzle: swizzled against bank conflicts, each
/// access moving runs of registers as one vector where the array allows.
SmallVector<SmallVector<Value>>
exchangeThroughShared(ConversionPatternRewriter &rewriter, Operation *op,
                      ArrayRef<ExchangeSource> sources,
                      ArrayRef<layout::SharedAccess> targets,
                      const MatrixAccesses &ldmatrixReaders = {}) {
  Location loc = op->getLoc();
  Type elementType = sources.front().elements.front().getType();
  // Booleans travel as bytes.
  Type storedType =
      elementType.isInteger(1) ? rewriter.getI8Type() : elementType;
  int32_t elementBytes = isa<LLVM::LLVMPointerType>(storedType)
                             ? 8
                             : int32_t(storedType.getIntOrFloatBitWidth() / 8);
  // One writer by stmatrix when the plan gives it whole 16-byte rows: plain
  // or transposed, whichever plan costs less (plain on ties).
  const layout::SharedAccess *byStmatrix = nullptr;
  bool transposed = false;
  layout::SharedSwizzle plan;
  if (sources.size() == 1 && elementBytes == 2) {
    int64_t best = std::numeric_limits<int64_t>::max();
    for (bool trans : {false, true}) {
      const std::optional<layout::SharedAccess> &writer =
          sources.front().stmatrix.get(trans);
      if (!writer)
        continue;
      layout::SharedSwizzle candidate =
          layout::chooseSharedSwizzle({*writer}, targets, elementBytes);
      if (candidate.vectorOf(0) != 8)
        continue;
      int64_t cost = layout::sharedExchangeCost({*writer}, targets, candidate,
                                                elementBytes);
      if (cost >= best)
        continue;
      best = cost;
      plan = std::move(candidate);
      byStmatrix = &*writer;
      transposed = trans;
    }
  }
  SmallVector<layout::SharedAccess, 2> writers;
  if (byStmatrix) {
    writers.push_back(*byStmatrix);
  } else {
    for (const ExchangeSource &source : sources)
      writers.push_back(source.access);
    plan = layout::chooseSharedSwizzle(writers, targets, elementBytes);
  }
  // The one reader by ldmatrix when the plan gives it whole 16-byte rows
  // (and the stmatrix writer keeps its own) at no more wavefronts than
  // reading element by element: a quarter of the loads, and of the
  // addresses a thread keeps (a blocked tile read into an accumulator's
  // layout, Mamba-3's reloaded states: 4-byte loads whose addresses, hoisted
  // from the loop, were spilled).
  const layout::SharedAccess *byLdmatrix = nullptr;
  bool readTransposed = false;
  if (targets.size() == 1 && elementBytes == 2) {
    int64_t best =
        layout::sharedExchangeCost(writers, targets, plan, elementBytes);
    for (bool trans : {false, true}) {
      const std::optional<layout::SharedAccess> &reader =
          ldmatrixReaders.get(trans);
      if (!reader)
        continue;
      layout::SharedSwizzle candidate =
          layout::chooseSharedSwizzle(writers, {*reader}, elementBytes);
      if (candidate.vectorOf(writers.size()) != 8 ||
          (byStmatrix && candidate.vectorOf(0) != 8))
        continue;
      int64_t cost = layout::sharedExchangeCost(writers, {*reader}, candidate,
                                                elementBytes);
      // Ties go to the first ldmatrix reader (fewer instructions).
      if (cost > best || (byLdmatrix && cost == best))
        continue;
      best = cost;
      plan = std::move(candidate);
      byLdmatrix = &*reader;
      readTransposed = trans;
    }
  }
  int64_t size = plan.swizzle.getOutDimSize(layout::kOffset);
  // Each access moves its own vector (a wide reader beside a narrow writer).
  auto accessTypeOf = [&](int32_t vector) {
    return vector == 1 ? storedType
                       : Type(VectorType::get({vector}, storedType));
  };

  Value base = kiln::allocateSharedArray(rewriter, op, storedType, size);
  // The physical offset of each register of `access` (vector starts only
  // are used).
  auto offsets = [&](const layout::SharedAccess &access) {
    LinearLayout physical = access.layout.compose(plan.swizzle);
    int32_t constant = int32_t(plan.swizzle.applyFlat(access.xorOffset));
    // The bits an offset may have set: those of every basis.
    uint64_t bits = 0;
    for (StringRef dim : physical.getInDimNames())
      for (int32_t i = 0; i < physical.getInDimSizeLog2(dim); ++i)
        bits |= uint64_t(uint32_t(physical.getBasis(dim, i)[0]));
    SmallVector<Value> result;
    for (kiln::Coordinates &coords :
         kiln::emitCoordinates(rewriter, loc, physical))
      result.push_back(
          kiln::xorOutsideBits(rewriter, loc, coords[0], constant, bits));
    return std::make_pair(physical, result);
  };
  auto address = [&](Value offset) {
    return LLVM::GEPOp::create(rewriter, loc, base.getType(), storedType, base,
                               ValueRange{offset});
  };
  if (byStmatrix) {
    // Eight registers per instruction; each lane's address is its row's.
    const ExchangeSource &source = sources.front();
    SmallVector<Value> rows = offsets(*byStmatrix).second;
    for (size_t k = 0; k < source.elements.size(); k += 8) {
      Value row = LLVM::PtrToIntOp::create(rewriter, loc, rewriter.getI32Type(),
                                           address(rows[k]));
      kiln::emitStmatrix(rewriter, loc, row,
                         ValueRange(source.elements).slice(k, 8), transposed);
    }
  }
  // The sources stored element by element: none where stmatrix did.
  ArrayRef<ExchangeSource> stored =
      byStmatrix ? ArrayRef<ExchangeSource>() : sources;
  for (auto [index, source] : llvm::enumerate(stored)) {
    int32_t vector = plan.vectorOf(index);
    Type accessType = accessTypeOf(vector);
    unsigned alignment = unsigned(vector * elementBytes);
    auto [physical, at] = offsets(source.access);
    for (size_t k = 0; k < source.elements.size(); k += vector) {
      if (!kiln::isRepresentativeRegister(physical, unsigned(k)))
        continue; // a copy of elements written already
      Value stored;
      for (int32_t i = 0; i < vector; ++i) {
        Value v = source.elements[k + i];
        if (storedType != elementType)
          v = LLVM::ZExtOp::create(rewriter, loc, storedType, v);
        stored = vector == 1 ? v
                             : Value(LLVM::InsertElementOp::create(
                                   rewriter, loc,
                                   i ? stored
                                     : Value(LLVM::UndefOp::create(
                                           rewriter, loc, accessType)),
                                   v, i32Constant(rewriter, loc, i)));
      }
      LLVM::StoreOp::create(rewriter, loc, stored, address(at[k]), alignment);
    }
  }
  NVVM::Barrier0Op::create(rewriter, loc);
  SmallVector<SmallVector<Value>> results;
  if (byLdmatrix) {
    // Eight registers per instruction; each lane's address is its row's.
    SmallVector<Value> rows = offsets(*byLdmatrix).second;
    SmallVector<Value> elements;
    for (size_t k = 0; k < rows.size(); k += 8) {
      Value row = LLVM::PtrToIntOp::create(rewriter, loc, rewriter.getI32Type(),
                                           address(rows[k]));
      llvm::append_range(
          elements,
          kiln::emitLdmatrix(rewriter, loc, row, elementType, readTransposed));
    }
    results.push_back(std::move(elements));
  }
  // The targets read element by element: none where ldmatrix did.
  ArrayRef<layout::SharedAccess> elementwise =
      byLdmatrix ? ArrayRef<layout::SharedAccess>() : targets;
  for (auto [index, target] : llvm::enumerate(elementwise)) {
    int32_t vector = plan.vectorOf(sources.size() + index);
    Type accessType = accessTypeOf(vector);
    unsigned alignment = unsigned(vector * elementBytes);
    auto [physical, at] = offsets(target);
    SmallVector<Value> elements;
    for (size_t k = 0; k < at.size(); k += vector) {
      Value loaded = LLVM::LoadOp::create(rewriter, loc, accessType,
                                          address(at[k]), alignment);
      for (int32_t i = 0; i < vector; ++i) {
        Value v =
            vector == 1
                ? loaded
                : Value(LLVM::ExtractElementOp::create(
                      rewriter, loc, loaded, i32Constant(rewriter, loc, i)));
        if (storedType != elementType)
          v = LLVM::TruncOp::create(rewriter, loc, elementType, v);
        elements.push_back(v);
      }
    }
    results.push_back(std::move(elements));
  }
  NVVM::Barrier0Op::create(rewriter, loc);
  return results;
}

/// `src` (laid out by `from`) read back under `to`, element i of the one in
/// row-major order being element i of the other: a layout conversion when
/// the shapes agree, a reshape when not.
SmallVector<Value> exchangeRowMajor(ConversionPatternRewriter &rewriter,
                                    Operation *op, ArrayRef<Value> src,
                                    const LinearLayout &from,
                                    const LinearLayout &to) {
  // exchangeThroughShared uses the stmatrix writers and ldmatrix readers
  // for 16-bit elements only.
  kiln::TargetInfo target =
      kiln::TargetInfo::of(op->getParentOfType<ModuleOp>());
  ExchangeSource source{SmallVector<Value>(src), {rowMajorAccess(from)}};
  source.stmatrix = matrixAccesses(source.access, target.hasStmatrix());
  layout::SharedAccess reader{rowMajorAccess(to)};
  return exchangeThroughShared(rewriter, op, {source}, {reader},
                               matrixAccesses(reader, target.hasLdmatrix()))
      .front();
}

/// The parity of the tid bits in `mask`, as i32 0 or 1.
Value tidParity(OpBuilder &b, Location loc, Value tid, uint32_t mask) {
  if (llvm::isPowerOf2_32(mask))
    return LLVM::AndOp::create(
        b, loc,
        LLVM::LShrOp::create(b, loc, tid,
                             i32Constant(b, loc, llvm::Log2_32(mask))),
        i32Constant(b, loc, 1));
  Value bits = LLVM::AndOp::create(b, loc, tid, i32Constant(b, loc, mask));
  return LLVM::AndOp::create(b, loc, LLVM::CtPopOp::create(b, loc, bits),
                             i32Constant(b, loc, 1));
}

/// `f(tid)` as an i32.
Value emitThreadLinear(OpBuilder &b, Location loc, Value tid,
                       const layout::ThreadLinear &f) {
  Value value = i32Constant(b, loc, f.constant);
  for (const layout::ThreadLinear::ParityTerm &term : f.parityTerms()) {
    Value parity = tidParity(b, loc, tid, term.threadMask);
    Value scaled =
        llvm::isPowerOf2_32(uint32_t(term.value))
            ? Value(LLVM::ShlOp::create(
                  b, loc, parity,
                  i32Constant(b, loc, llvm::Log2_32(uint32_t(term.value)))))
            : Value(LLVM::MulOp::create(b, loc, parity,
                                        i32Constant(b, loc, term.value)));
    value = LLVM::XOrOp::create(b, loc, value, scaled);
  }
  return value;
}

/// Runs a warp-shuffle plan: per step, each thread picks the register it
/// sends (selects on its tid's parity bits), reads its lane's value with
/// shfl.sync.idx, and keeps it where the plan says.
SmallVector<Value> shuffleWithinWarps(OpBuilder &b, Location loc,
                                      ArrayRef<Value> src,
                                      const layout::WarpShufflePlan &plan,
                                      unsigned dstRegisters) {
  Value tid = kiln::threadIdX(b, loc);
  llvm::DenseMap<uint32_t, Value> parityBits; // mask -> i1
  auto parityBit = [&](uint32_t mask) {
    Value &bit = parityBits[mask];
    if (!bit)
      bit = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne,
                                 tidParity(b, loc, tid, mask),
                                 i32Constant(b, loc, 0));
    return bit;
  };
  // The value of register `send(tid)`, by a tree of selects.
  std::function<Value(ArrayRef<layout::ThreadLinear::ParityTerm>, int32_t)>
      pick = [&](ArrayRef<layout::ThreadLinear::ParityTerm> terms,
                 int32_t reg) -> Value {
    if (terms.empty())
      return src[reg];
    Value odd = pick(terms.drop_front(), reg ^ terms.front().value);
    Value even = pick(terms.drop_front(), reg);
    return LLVM::SelectOp::create(b, loc, parityBit(terms.front().threadMask),
                                  odd, even);
  };
  bool exchanges = !plan.readsOwnLane();
  Value selector = plan.selector.isConstant()
                       ? Value()
                       : emitThreadLinear(b, loc, tid, plan.selector);
  std::map<SmallVector<int32_t>, Value> laneBases; // readLane.byBit -> value
  SmallVector<Value> dst(dstRegisters);
  for (const layout::ShuffleStep &step : plan.steps) {
    SmallVector<layout::ThreadLinear::ParityTerm> terms =
        step.send.parityTerms();
    Value value = pick(terms, step.send.constant);
    if (exchanges) {
      Value &base = laneBases[step.readLane.byBit];
      if (!base)
        base = emitThreadLinear(b, loc, tid, {0, step.readLane.byBit});
      Value lane =
          step.readLane.constant == 0
              ? base
              : Value(LLVM::XOrOp::create(
                    b, loc, base, i32Constant(b, loc, step.readLane.constant)));
      value = kiln::shuffle(b, loc, value, lane, NVVM::ShflKind::idx);
    }
    Value keep;
    if (selector)
      keep = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, selector,
                                  i32Constant(b, loc, step.selectorValue));
    for (int32_t r : step.destinations)
      dst[r] = keep && dst[r]
                   ? Value(LLVM::SelectOp::create(b, loc, keep, value, dst[r]))
                   : value;
  }
  return dst;
}

/// Bits an element occupies in a shuffle (pointers are 64-bit).
int32_t elementBits(Type type) {
  return isa<LLVM::LLVMPointerType>(type)
             ? 64
             : int32_t(type.getIntOrFloatBitWidth());
}

/// Renames registers when no data moves between threads; shuffles within
/// warps when the plan costs no more instructions than a shared-memory
/// exchange (a store per source element, a load per destination element and
/// two barriers); otherwise goes through shared memory.
struct ConvertLayoutLowering : OpConversionPattern<kiln::gpu::ConvertLayoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::ConvertLayoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType srcType = op.getSrc().getType();
    RankedTensorType resultType = op.getResult().getType();
    std::optional<LayoutChange> change =
        layoutChange(srcType, resultType, *getTypeConverter());
    if (!change)
      return rewriter.notifyMatchFailure(op, "tensors without layouts");
    Location loc = op.getLoc();
    SmallVector<Value> src =
        kiln::unpackElements(rewriter, loc, adaptor.getSrc());
    auto same = [](ArrayRef<int32_t> c) { return SmallVector<int32_t>(c); };
    SmallVector<Value> elements;
    if (auto mapping = kiln::registerMapping(change->from, change->to, same)) {
      for (unsigned k : *mapping)
        elements.push_back(src[k]);
    } else if (std::optional<layout::WarpShufflePlan> plan =
                   layout::cheaperWarpShuffle(
                       change->from, change->to,
                       elementBits(src.front().getType()))) {
      elements = shuffleWithinWarps(
          rewriter, loc, src, *plan,
          unsigned(change->to.getInDimSize(layout::kRegister)));
    } else {
      elements = exchangeRowMajor(rewriter, op, src, change->from, change->to);
    }
    rewriter.replaceOp(
        op, kiln::packElements(rewriter, loc, change->converted, elements));
    return success();
  }
};

/// Whether no lane or warp of `layout` moves along dimension `dim` (a
/// join's result, a split's operand: each thread holds both halves).
static bool threadsHoldWhole(const LinearLayout &layout, size_t dim) {
  for (StringRef hw : {layout::kLane, layout::kWarp})
    for (int32_t i = 0; i < layout.getInDimSizeLog2(hw); ++i)
      if (layout.getBasis(hw, i)[dim] != 0)
        return false;
  return true;
}

/// Whether each thread's registers of `from` and `to` hold distinct
/// elements that together cover the tensor, as many per thread on both
/// sides: any thread-preserving pairing of registers is then a reordering.
static bool samePerThreadCount(const LinearLayout &from,
                               const LinearLayout &to) {
  for (StringRef hw : {layout::kRegister, layout::kLane, layout::kWarp})
    if (from.getInDimSize(hw) != to.getInDimSize(hw))
      return false;
  return from.isInvertible() && to.isInvertible();
}

/// Row-major reinterpretation: element i of the operand is element i of the
/// result. For a flattening only reductions read (ReshapeOp::
/// flattensForReduction) that kiln-assign-layouts gave as many registers a
/// thread as the operand, register i of each thread is its register i.
struct ReshapeLowering : OpConversionPattern<kiln::ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    std::optional<LayoutChange> change =
        layoutChange(srcType, resultType, *getTypeConverter());
    if (!change)
      return rewriter.notifyMatchFailure(op, "tensors without layouts");
    // Where each thread already holds the elements its result registers
    // name (kiln-assign-layouts merges a dimension its threads hold whole
    // into the next: an unpacked int4 weight's [K/2, 2, N] into [K, N]),
    // the reshape renames registers.
    ArrayRef<int64_t> srcShape = srcType.getShape();
    ArrayRef<int64_t> resultShape = resultType.getShape();
    auto rowMajor = [&](ArrayRef<int32_t> c) {
      int64_t index = 0;
      for (auto [x, n] : llvm::zip(c, resultShape))
        index = index * n + x;
      SmallVector<int32_t> src(srcShape.size());
      for (size_t d = srcShape.size(); d-- > 0;) {
        src[d] = int32_t(index % srcShape[d]);
        index /= srcShape[d];
      }
      return src;
    };
    if (kiln::registerMapping(change->from, change->to, rowMajor))
      return renameRegisters(op, adaptor.getSrc(), *getTypeConverter(),
                             rewriter, rowMajor);
    Location loc = op.getLoc();
    if (op.flattensForReduction() &&
        samePerThreadCount(change->from, change->to)) {
      rewriter.replaceOp(
          op, kiln::packElements(
                  rewriter, loc, change->converted,
                  kiln::unpackElements(rewriter, loc, adaptor.getSrc())));
      return success();
    }
    SmallVector<Value> src =
        kiln::unpackElements(rewriter, loc, adaptor.getSrc());
    SmallVector<Value> elements =
        exchangeRowMajor(rewriter, op, src, change->from, change->to);
    rewriter.replaceOp(
        op, kiln::packElements(rewriter, loc, change->converted, elements));
    return success();
  }
};

/// join(lhs, rhs)[..., 0] = lhs, [..., 1] = rhs: the operands interleave in
/// the row-major order of the result.
struct JoinLowering : OpConversionPattern<kiln::JoinOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::JoinOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(op.getLhs().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    std::optional<LayoutChange> change =
        layoutChange(srcType, resultType, *getTypeConverter());
    if (!change)
      return rewriter.notifyMatchFailure(op, "tensors without layouts");
    Location loc = op.getLoc();
    // Where the new dimension is in each thread's registers and the rest of
    // the result's layout is the operands' (kiln-assign-layouts' joined
    // layout), each result register is an operand register: lhs where the
    // new coordinate is 0, rhs where it is 1.
    size_t last = size_t(resultType.getRank() - 1);
    auto dropLast = [&](ArrayRef<int32_t> c) {
      return SmallVector<int32_t>(c.take_front(last));
    };
    if (threadsHoldWhole(change->to, last))
      if (std::optional<SmallVector<unsigned>> mapping =
              kiln::registerMapping(change->from, change->to, dropLast)) {
        SmallVector<Value> operands[2] = {
            kiln::unpackElements(rewriter, loc, adaptor.getLhs()),
            kiln::unpackElements(rewriter, loc, adaptor.getRhs())};
        SmallVector<Value> elements;
        for (auto [k, from] : llvm::enumerate(*mapping))
          elements.push_back(operands[kiln::registerCoordinates(
              change->to, unsigned(k))[last]][from]);
        rewriter.replaceOp(
            op, kiln::packElements(rewriter, loc, change->converted, elements));
        return success();
      }
    LinearLayout interleaved = rowMajorAccess(change->from, /*shift=*/1);
    SmallVector<Value> elements =
        exchangeThroughShared(
            rewriter, op,
            {{kiln::unpackElements(rewriter, loc, adaptor.getLhs()),
              {interleaved, 0}},
             {kiln::unpackElements(rewriter, loc, adaptor.getRhs()),
              {interleaved, 1}}},
            {{rowMajorAccess(change->to)}})
            .front();
    rewriter.replaceOp(
        op, kiln::packElements(rewriter, loc, change->converted, elements));
    return success();
  }
};

/// tl.cat (can_reorder=True: the order of the result's elements is left to
/// the compiler). The front end takes 1-D blocks only, as upstream; this
/// lowering handles any rank. When no layout involved holds copies and the
/// result gives each thread room for both operands' elements, they are put side
/// by side: a permutation of the concatenation, with no data movement.
/// Otherwise lhs then rhs go through shared memory in row-major order, which is
/// their concatenation along dimension 0, read back under the result's layout.
struct CatLowering : OpConversionPattern<kiln::CatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::CatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(op.getLhs().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    std::optional<LayoutChange> change =
        layoutChange(srcType, resultType, *getTypeConverter());
    if (!change)
      return rewriter.notifyMatchFailure(op, "tensors without layouts");
    Location loc = op.getLoc();
    SmallVector<Value> lhs =
        kiln::unpackElements(rewriter, loc, adaptor.getLhs());
    SmallVector<Value> rhs =
        kiln::unpackElements(rewriter, loc, adaptor.getRhs());
    auto holdsCopies = [](const LinearLayout &l) {
      return llvm::any_of(l.getFreeVariableMasks(),
                          [](uint64_t mask) { return mask != 0; });
    };
    if (!holdsCopies(change->from) && !holdsCopies(change->to) &&
        size_t(change->to.getInDimSize(layout::kRegister)) ==
            lhs.size() + rhs.size()) {
      SmallVector<Value> elements(lhs);
      llvm::append_range(elements, rhs);
      rewriter.replaceOp(
          op, kiln::packElements(rewriter, loc, change->converted, elements));
      return success();
    }
    int64_t lhsSize = srcType.getNumElements();
    LinearLayout operand =
        rowMajorAccess(change->from)
            .resizeOutDim(layout::kOffset, int32_t(2 * lhsSize));
    SmallVector<Value> elements =
        exchangeThroughShared(
            rewriter, op,
            {{lhs, {operand, 0}}, {rhs, {operand, uint64_t(lhsSize)}}},
            {{rowMajorAccess(change->to)}})
            .front();
    rewriter.replaceOp(
        op, kiln::packElements(rewriter, loc, change->converted, elements));
    return success();
  }
};

/// The inverse of join: even positions of the last dimension to lhs, odd
/// ones to rhs (scalars when the operand is 1-D).
struct SplitLowering : OpConversionPattern<kiln::SplitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::SplitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    std::optional<LinearLayout> from = kiln::getLinearLayout(srcType);
    if (!from)
      return rewriter.notifyMatchFailure(op, "tensor without a layout");
    Location loc = op.getLoc();
    SmallVector<Value> src =
        kiln::unpackElements(rewriter, loc, adaptor.getSrc());
    auto resultType = dyn_cast<RankedTensorType>(op.getLhs().getType());
    if (!resultType) {
      // 1-D: every thread reads both elements, through shared memory with a
      // one-element layout for each half.
      SmallVector<LinearLayout::InDim, 3> ins = {
          {std::string(layout::kRegister), {}},
          {std::string(layout::kLane), {}},
          {std::string(layout::kWarp), {}}};
      SmallVector<LinearLayout::OutDim, 1> outs = {
          {std::string(layout::kOffset), 2}};
      LinearLayout scalar(ins, outs);
      auto results =
          exchangeThroughShared(rewriter, op, {{src, {rowMajorAccess(*from)}}},
                                {{scalar, 0}, {scalar, 1}});
      SmallVector<Value> both{results[0][0], results[1][0]};
      rewriter.replaceOp(op, both);
      return success();
    }
    std::optional<LinearLayout> to = kiln::getLinearLayout(resultType);
    Type converted = getTypeConverter()->convertType(resultType);
    if (!to || !converted)
      return rewriter.notifyMatchFailure(op, "results without layouts");
    // Where each thread holds both halves of its elements (the last
    // dimension in its registers, kiln-assign-layouts' layout for a join's
    // result) and the results keep the operand's threads, each result
    // register is an operand register.
    // The low halves are a renaming (registerMapping); each high half is
    // the register at the same coordinates with the last one set.
    size_t last = size_t(srcType.getRank() - 1);
    auto withHalf = [](ArrayRef<int32_t> c) {
      SmallVector<int32_t> full(c);
      full.push_back(0);
      return full;
    };
    if (threadsHoldWhole(*from, last))
      if (std::optional<SmallVector<unsigned>> low =
              kiln::registerMapping(*from, *to, withHalf)) {
        std::map<SmallVector<int32_t>, unsigned> byCoordinates =
            kiln::registersByCoordinates(*from);
        SmallVector<Value> halves[2];
        for (auto [k, lowRegister] : llvm::enumerate(*low)) {
          SmallVector<int32_t> c =
              withHalf(kiln::registerCoordinates(*to, unsigned(k)));
          c.back() = 1;
          auto it = byCoordinates.find(c);
          if (it == byCoordinates.end())
            break;
          halves[0].push_back(src[lowRegister]);
          halves[1].push_back(src[it->second]);
        }
        if (halves[1].size() == low->size()) {
          rewriter.replaceOp(
              op, {kiln::packElements(rewriter, loc, converted, halves[0]),
                   kiln::packElements(rewriter, loc, converted, halves[1])});
          return success();
        }
      }
    LinearLayout interleaved = rowMajorAccess(*to, /*shift=*/1);
    auto results =
        exchangeThroughShared(rewriter, op, {{src, {rowMajorAccess(*from)}}},
                              {{interleaved, 0}, {interleaved, 1}});
    rewriter.replaceOp(
        op, {kiln::packElements(rewriter, loc, converted, results[0]),
             kiln::packElements(rewriter, loc, converted, results[1])});
    return success();
  }
};

/// tl.gather of a large table: src written row-major to a shared array (one
/// copy of each element), a barrier, then each result element read where
/// its index points along the axis. An index outside the axis reads
/// element 0 and gives 0. A second barrier lets the array be written again
/// (the op may sit in a loop).
struct GatherLowering : OpConversionPattern<kiln::GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    auto indexType = cast<RankedTensorType>(op.getIndex().getType());
    std::optional<LinearLayout> srcLayout = kiln::getLinearLayout(srcType);
    std::optional<LinearLayout> indexLayout = kiln::getLinearLayout(indexType);
    Type converted = getTypeConverter()->convertType(op.getType());
    if (!srcLayout || !indexLayout || !converted)
      return rewriter.notifyMatchFailure(op, "tensors without layouts");
    Location loc = op.getLoc();
    SmallVector<Value> src =
        kiln::unpackElements(rewriter, loc, adaptor.getSrc());
    SmallVector<Value> index =
        kiln::unpackElements(rewriter, loc, adaptor.getIndex());
    Type elementType = src.front().getType();
    Type storedType =
        elementType.isInteger(1) ? rewriter.getI8Type() : elementType;
    int64_t rank = srcType.getRank();
    unsigned axis = op.getAxis();
    SmallVector<int64_t> strides(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * srcType.getDimSize(d + 1);
    auto rowMajor = [&](ArrayRef<Value> coords) {
      Value offset;
      for (int64_t d = 0; d < rank; ++d) {
        Value term = coords[d];
        if (strides[d] != 1)
          term =
              llvm::isPowerOf2_64(strides[d])
                  ? Value(LLVM::ShlOp::create(
                        rewriter, loc, term,
                        i32Constant(rewriter, loc, llvm::Log2_64(strides[d]))))
                  : Value(LLVM::MulOp::create(
                        rewriter, loc, term,
                        i32Constant(rewriter, loc, strides[d])));
        offset = offset
                     ? Value(LLVM::AddOp::create(rewriter, loc, offset, term))
                     : term;
      }
      return offset;
    };
    Value base = kiln::allocateSharedArray(rewriter, op, storedType,
                                           srcType.getNumElements());
    auto address = [&](Value offset) {
      return LLVM::GEPOp::create(rewriter, loc, base.getType(), storedType,
                                 base, ValueRange{offset});
    };
    unsigned bytes = isa<LLVM::LLVMPointerType>(storedType)
                         ? 8
                         : std::max(1u, storedType.getIntOrFloatBitWidth() / 8);
    SmallVector<kiln::Coordinates> srcCoords =
        kiln::emitCoordinates(rewriter, loc, *srcLayout);
    for (auto [k, value] : llvm::enumerate(src)) {
      if (!kiln::isRepresentativeRegister(*srcLayout, unsigned(k)))
        continue; // a copy of an element written already
      Value v =
          storedType == elementType
              ? value
              : Value(LLVM::ZExtOp::create(rewriter, loc, storedType, value));
      LLVM::StoreOp::create(rewriter, loc, v, address(rowMajor(srcCoords[k])),
                            bytes);
    }
    NVVM::Barrier0Op::create(rewriter, loc);
    SmallVector<kiln::Coordinates> indexCoords =
        kiln::emitCoordinates(rewriter, loc, *indexLayout);
    int64_t size = srcType.getDimSize(axis);
    Value zero = LLVM::ZeroOp::create(rewriter, loc, elementType);
    SmallVector<Value> elements;
    for (auto [k, at] : llvm::enumerate(index)) {
      // Negative indices compare as large unsigned ones: out of range.
      Value limit =
          LLVM::ConstantOp::create(rewriter, loc, at.getType(),
                                   rewriter.getIntegerAttr(at.getType(), size));
      Value inRange = LLVM::ICmpOp::create(rewriter, loc,
                                           LLVM::ICmpPredicate::ult, at, limit);
      Value position = at;
      if (at.getType() != rewriter.getI32Type())
        position = LLVM::TruncOp::create(rewriter, loc, rewriter.getI32Type(),
                                         position);
      position = LLVM::SelectOp::create(rewriter, loc, inRange, position,
                                        i32Constant(rewriter, loc, 0));
      kiln::Coordinates coords = indexCoords[k];
      coords[axis] = position;
      Value v = LLVM::LoadOp::create(rewriter, loc, storedType,
                                     address(rowMajor(coords)), bytes);
      if (storedType != elementType)
        v = LLVM::TruncOp::create(rewriter, loc, elementType, v);
      elements.push_back(
          LLVM::SelectOp::create(rewriter, loc, inRange, v, zero));
    }
    NVVM::Barrier0Op::create(rewriter, loc);
    rewriter.replaceOp(op,
                       kiln::packElements(rewriter, loc, converted, elements));
    return success();
  }
};

/// tl.histogram of many values: a shared array of one i32 a bin, zeroed, a
/// barrier, a shared-memory atomic add per element (of 1 where the element
/// is in range, kept by the mask and this thread's to count; of 0 to bin 0
/// otherwise, so that no branch is needed), a barrier, each result element
/// loaded, and a barrier before the array may be written again.
struct HistogramLowering : OpConversionPattern<kiln::HistogramOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::HistogramOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    std::optional<LinearLayout> inputLayout = kiln::getLinearLayout(inputType);
    std::optional<LinearLayout> resultLayout =
        kiln::getLinearLayout(resultType);
    Type converted = getTypeConverter()->convertType(resultType);
    if (!inputLayout || !resultLayout || !converted)
      return rewriter.notifyMatchFailure(op, "tensors without layouts");
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type();
    SmallVector<Value> values =
        kiln::unpackElements(rewriter, loc, adaptor.getInput());
    SmallVector<Value> mask;
    if (adaptor.getMask())
      mask = kiln::unpackElements(rewriter, loc, adaptor.getMask());
    int64_t bins = resultType.getDimSize(0);
    Value base = kiln::allocateSharedArray(rewriter, op, i32, bins);
    auto address = [&](Value offset) {
      return LLVM::GEPOp::create(rewriter, loc, base.getType(), i32, base,
                                 ValueRange{offset});
    };
    SmallVector<kiln::Coordinates> binCoords =
        kiln::emitCoordinates(rewriter, loc, *resultLayout);
    for (unsigned k = 0; k < binCoords.size(); ++k)
      if (kiln::isRepresentativeRegister(*resultLayout, k))
        LLVM::StoreOp::create(rewriter, loc, i32Constant(rewriter, loc, 0),
                              address(binCoords[k][0]), 4);
    NVVM::Barrier0Op::create(rewriter, loc);
    // Elements held by several threads are counted by one of them.
    Value owner = kiln::ownerPredicate(rewriter, loc, *inputLayout);
    for (auto [k, value] : llvm::enumerate(values)) {
      if (!kiln::isRepresentativeRegister(*inputLayout, unsigned(k)))
        continue;
      // Negative values compare as large unsigned ones: out of range.
      Value limit = LLVM::ConstantOp::create(
          rewriter, loc, value.getType(),
          rewriter.getIntegerAttr(value.getType(), bins));
      Value counted = LLVM::ICmpOp::create(
          rewriter, loc, LLVM::ICmpPredicate::ult, value, limit);
      if (!mask.empty())
        counted = LLVM::AndOp::create(rewriter, loc, counted, mask[k]);
      if (owner)
        counted = LLVM::AndOp::create(rewriter, loc, counted, owner);
      Value bin = value;
      if (bin.getType() != i32)
        bin = LLVM::TruncOp::create(rewriter, loc, i32, bin);
      bin = LLVM::SelectOp::create(rewriter, loc, counted, bin,
                                   i32Constant(rewriter, loc, 0));
      Value one = LLVM::ZExtOp::create(rewriter, loc, i32, counted);
      LLVM::AtomicRMWOp::create(rewriter, loc, LLVM::AtomicBinOp::add,
                                address(bin), one,
                                LLVM::AtomicOrdering::monotonic);
    }
    NVVM::Barrier0Op::create(rewriter, loc);
    SmallVector<Value> counts;
    for (const kiln::Coordinates &coords : binCoords)
      counts.push_back(
          LLVM::LoadOp::create(rewriter, loc, i32, address(coords[0]), 4));
    NVVM::Barrier0Op::create(rewriter, loc);
    rewriter.replaceOp(op,
                       kiln::packElements(rewriter, loc, converted, counts));
    return success();
  }
};

} // namespace

void kiln::populateLayoutToLLVMPatterns(KilnTypeConverter &converter,
                                        RewritePatternSet &patterns) {
  patterns.add<MakeRangeLowering, SplatLowering, ExpandDimsLowering,
               BroadcastLowering, TransLowering, ConvertLayoutLowering,
               ExtractLowering, ReshapeLowering, JoinLowering, SplitLowering,
               CatLowering, GatherLowering, HistogramLowering>(
      converter, patterns.getContext());
}
