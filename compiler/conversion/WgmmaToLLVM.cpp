//===- WgmmaToLLVM.cpp - shared_dot as wgmma.mma_async, dot_wait ----------===//
//
// On sm_90a a kiln_gpu.shared_dot whose accumulator puts all warps along M
// (mma layout [num_warps, 1]) is a sequence of `wgmma.mma_async.m64nNk16`:
// warpgroup g (warps 4g .. 4g+3) owns the m64 tiles starting at rows
// 64 g + 16 num_warps r, and each instruction multiplies one such tile by
// the whole N for 16 of K. Its D fragment is the mma.sync accumulator
// fragment repeated along N (lane l: rows l/4 and l/4 + 8 of its warp's 16,
// columns 8 j + 2 (l % 4) + {0, 1}), so register i of the instruction is
// found in the accumulator's linear layout by its coordinates.
//
// Operands are read through shared-memory descriptors: a (M x K, K
// contiguous) is K-major, b (K x N, N contiguous) is N-major (transposed).
// For the nvmma_shared layout (layout/NvmmaShared.h) with swizzle S:
//   K-major:  stride byte offset = 8 rows * S; leading offset unused (16);
//             the k-th 16 columns start k * 16 * bytes further (next panel
//             after S bytes).
//   MN-major: leading byte offset = the panel stride (rows * S): the next
//             S bytes of N; stride byte offset = 8 rows (of K) * S; the k-th
//             16 rows start 16 k S further.
// The swizzle mode bits say 128/64/32 bytes; buffers are 1024-aligned so
// the base offset field is 0.
//
// a may also come from registers (attention's P): a tensor in the
// accumulator's mma layout holds, per thread, exactly the A fragment of
// m64k16 (and of mma.sync's m16k16): rows l/4 and l/4 + 8, columns 2 (l % 4)
// + {0, 1} and 8 further, so its registers are found by coordinates too and
// packed two halves to a 32-bit register.
//
// kiln_gpu.dot_wait is `wgmma.wait_group N` with the waited values tied
// through it, so nothing reads them before the wait.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/DistributedLayout.h"
#include "compiler/conversion/LoweringUtils.h"
#include "compiler/conversion/MmaSyncInstructions.h"
#include "compiler/conversion/OpFamilyLowerings.h"
#include "compiler/conversion/SharedTileAddress.h"
#include "compiler/ir/ElementTypes.h"
#include "compiler/ir/RegisterA.h"
#include "compiler/ir/SharedDotForm.h"
#include "compiler/ir/TargetInfo.h"
#include "compiler/ir/TensorCoreFlavour.h"

#include "mlir/IR/Matchers.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <array>
#include <map>
#include <utility>

using namespace mlir;
using kiln::i32Constant;

// Experiments only: the slices of a dot summed apart (add_c_after, or fp8
// partial sums bounded by max_num_imprecise_acc).
static llvm::cl::opt<unsigned> sumApartColumns(
    "kiln-sum-apart-columns", llvm::cl::init(0), llvm::cl::Hidden,
    llvm::cl::desc("Columns of each slice of a dot that adds c after its "
                   "product (0: the default)"));
static llvm::cl::opt<unsigned> sumApartInFlight(
    "kiln-sum-apart-in-flight", llvm::cl::init(1), llvm::cl::Hidden,
    llvm::cl::desc("Slices of such a dot in flight at once (1 or 2)"));

namespace {

/// The descriptor's fixed part: leading and stride byte offsets, swizzle.
uint64_t descriptorConstant(int64_t leading, int64_t stride, unsigned swizzle) {
  uint64_t mode = swizzle == 128  ? 1
                  : swizzle == 64 ? 2
                  : swizzle == 32 ? 3
                                  : 0;
  return ((uint64_t(leading) >> 4) & 0x3FFF) << 16 |
         ((uint64_t(stride) >> 4) & 0x3FFF) << 32 | mode << 62;
}

/// `constant | ((address & 0x3FFFF) >> 4)` as i64.
Value descriptor(OpBuilder &b, Location loc, Value address, uint64_t constant) {
  Type i64 = b.getI64Type();
  Value start = LLVM::LShrOp::create(
      b, loc,
      LLVM::AndOp::create(b, loc, address, i32Constant(b, loc, 0x3FFFF)),
      i32Constant(b, loc, 4));
  return LLVM::OrOp::create(
      b, loc, LLVM::ZExtOp::create(b, loc, i64, start),
      LLVM::ConstantOp::create(b, loc, i64,
                               b.getI64IntegerAttr(int64_t(constant))));
}

/// The descriptor of the tile `byteOffset` bytes past `base`'s: the start
/// address field is the low 14 bits, and shared addresses stay below 2^18,
/// so adding offset / 16 to the descriptor never carries out of the field.
/// One add of a constant per wgmma, where rebuilding the descriptor takes
/// four instructions.
Value descriptorPlus(OpBuilder &b, Location loc, Value base,
                     int64_t byteOffset) {
  assert(byteOffset % 16 == 0 && "wgmma tiles start on 16-byte boundaries");
  if (byteOffset == 0)
    return base;
  Type i64 = b.getI64Type();
  return LLVM::AddOp::create(
      b, loc, base,
      LLVM::ConstantOp::create(b, loc, i64,
                               b.getI64IntegerAttr(byteOffset >> 4)));
}

/// Ties `values` through `text` (a wait): outputs "=f"-style, inputs tied.
SmallVector<Value> tieThrough(OpBuilder &b, Location loc, StringRef text,
                              ArrayRef<Value> values) {
  if (values.empty()) {
    kiln::inlinePtxEffect(b, loc, Type(), text, "", ValueRange{});
    return {};
  }
  // Adjacent 16-bit floats (fp16 sums) travel as the 32-bit registers the
  // tensor cores wrote them in: unpacking them first would read those
  // registers before the wait.
  auto isHalf = [](Value v) {
    return v.getType().isF16() || v.getType().isBF16();
  };
  if (llvm::any_of(values, isHalf)) {
    SmallVector<Value> words;
    SmallVector<bool> paired;
    for (size_t i = 0; i < values.size(); ++i) {
      bool pair = i + 1 < values.size() && isHalf(values[i]) &&
                  values[i + 1].getType() == values[i].getType();
      words.push_back(pair ? kiln::packHalves(b, loc, values[i], values[i + 1])
                           : values[i]);
      paired.push_back(pair);
      i += pair;
    }
    if (words.size() < values.size()) {
      SmallVector<Value> tied = tieThrough(b, loc, text, words);
      SmallVector<Value> outs;
      for (auto [w, pair] : llvm::zip_equal(tied, paired)) {
        if (!pair) {
          outs.push_back(w);
          continue;
        }
        auto [low, high] =
            kiln::unpackHalves(b, loc, w, values[outs.size()].getType());
        outs.push_back(low);
        outs.push_back(high);
      }
      return outs;
    }
  }
  std::string constraints;
  SmallVector<Type> types;
  for (Value v : values) {
    Type t = v.getType();
    const char *c = t.isF32()                         ? "f"
                    : t.isF64()                       ? "d"
                    : t.getIntOrFloatBitWidth() == 64 ? "l"
                    : t.getIntOrFloatBitWidth() == 16 ? "h"
                                                      : "r";
    constraints += (constraints.empty() ? "=" : ",=") + std::string(c);
    types.push_back(t);
  }
  for (unsigned i = 0; i < values.size(); ++i)
    constraints += "," + std::to_string(i);
  Type result =
      values.size() == 1
          ? types.front()
          : Type(LLVM::LLVMStructType::getLiteral(b.getContext(), types));
  Value out = kiln::inlinePtxEffect(b, loc, result, text, constraints, values)
                  .getResult(0);
  if (values.size() == 1)
    return {out};
  SmallVector<Value> outs;
  for (unsigned i = 0; i < values.size(); ++i)
    outs.push_back(LLVM::ExtractValueOp::create(b, loc, out, int64_t(i)));
  return outs;
}

/// `values` where `useC` holds, else zeros (use_c: whether a dot adds c).
void zeroUnless(OpBuilder &b, Location loc, Value useC,
                MutableArrayRef<Value> values) {
  for (Value &v : values)
    v = LLVM::SelectOp::create(b, loc, useC, v,
                               LLVM::ZeroOp::create(b, loc, v.getType()));
}

std::string waitText(int64_t pending) {
  return "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";";
}

LogicalResult lowerWithMmaSync(kiln::gpu::SharedDotOp op,
                               kiln::gpu::SharedDotOp::Adaptor adaptor,
                               ConversionPatternRewriter &rewriter,
                               const kiln::TensorCoreFlavour &flavour,
                               const kiln::layout::LinearLayout &cLayout);

/// The A fragments of a register operand: for each m16 tile (by its first
/// row in thread 0 of warp 0) and each 16 of K, the four 32-bit registers
/// a0..a3 of mma.sync m16n8k16 / wgmma m64k16 (rows +0 and +8, columns +0
/// and +8, two halves each).
struct RegisterFragments {
  SmallVector<Value> elements;
  std::map<std::pair<int32_t, int32_t>, unsigned> registerAt;

  LogicalResult init(OpBuilder &b, Location loc, Value converted,
                     RankedTensorType type) {
    std::optional<kiln::layout::LinearLayout> layout =
        kiln::getLinearLayout(type);
    if (!layout)
      return failure();
    elements = kiln::unpackElements(b, loc, converted);
    for (unsigned r = 0; r < elements.size(); ++r) {
      SmallVector<int32_t> at = kiln::registerCoordinates(*layout, r);
      registerAt[{at[0], at[1]}] = r;
    }
    return success();
  }

  /// The four registers of the tile at (row0, k0), or an empty vector when
  /// a thread does not hold them.
  SmallVector<Value> at(OpBuilder &b, Location loc, int32_t row0, int32_t k0) {
    if (elements.front().getType().getIntOrFloatBitWidth() == 8)
      return at8(b, loc, row0, k0);
    SmallVector<Value> words;
    Type half = elements.front().getType();
    Type pair = VectorType::get({2}, half);
    for (auto [dr, dk] : {std::pair{0, 0}, {8, 0}, {0, 8}, {8, 8}}) {
      Value vec = LLVM::UndefOp::create(b, loc, pair);
      for (int32_t j = 0; j < 2; ++j) {
        auto it = registerAt.find({row0 + dr, k0 + dk + j});
        if (it == registerAt.end())
          return {};
        vec = LLVM::InsertElementOp::create(b, loc, vec, elements[it->second],
                                            i32Constant(b, loc, j));
      }
      words.push_back(LLVM::BitcastOp::create(b, loc, b.getI32Type(), vec));
    }
    return words;
  }

  /// The four registers of an 8-bit tile at (row0, k0) (m64nNk32): thread
  /// (g, t) of a quad needs row g (and g + 8) at columns 4t..4t+3 (and
  /// 16 more), where the accumulator layout gave it columns 2t, 2t+1 of
  /// each 8. Every thread packs its pairs of two column blocks into a word;
  /// thread t reads the words of quad neighbours 2(t%2) and 2(t%2)+1 and
  /// keeps block t/2 of each (prmt).
  SmallVector<Value> at8(OpBuilder &b, Location loc, int32_t row0, int32_t k0) {
    Type i32 = b.getI32Type();
    auto constant = [&](int32_t v) { return i32Constant(b, loc, v); };
    Value lane =
        LLVM::AndOp::create(b, loc, kiln::threadIdX(b, loc), constant(31));
    Value t = LLVM::AndOp::create(b, loc, lane, constant(3));
    Value first = LLVM::OrOp::create(
        b, loc, LLVM::AndOp::create(b, loc, lane, constant(~3)),
        LLVM::ShlOp::create(b, loc, LLVM::AndOp::create(b, loc, t, constant(1)),
                            constant(1)));
    Value second = LLVM::OrOp::create(b, loc, first, constant(1));
    Value upper =
        LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::uge, t, constant(2));
    Value selector = LLVM::SelectOp::create(b, loc, upper, constant(0x7632),
                                            constant(0x5410));
    Type quad = VectorType::get({4}, elements.front().getType());
    SmallVector<Value> words;
    for (auto [dr, dk] : {std::pair{0, 0}, {8, 0}, {0, 16}, {8, 16}}) {
      Value vec = LLVM::UndefOp::create(b, loc, quad);
      for (int32_t j = 0; j < 4; ++j) {
        auto it = registerAt.find({row0 + dr, k0 + dk + 8 * (j / 2) + j % 2});
        if (it == registerAt.end())
          return {};
        vec = LLVM::InsertElementOp::create(b, loc, vec, elements[it->second],
                                            constant(j));
      }
      Value packed = LLVM::BitcastOp::create(b, loc, i32, vec);
      Value low = kiln::shuffle(b, loc, packed, first, NVVM::ShflKind::idx);
      Value high = kiln::shuffle(b, loc, packed, second, NVVM::ShflKind::idx);
      words.push_back(kiln::inlinePtx(b, loc, i32, "prmt.b32 $0, $1, $2, $3;",
                                      "=r,r,r,r", {low, high, selector}));
    }
    return words;
  }
};

struct SharedDotLowering : OpConversionPattern<kiln::gpu::SharedDotOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::gpu::SharedDotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto module = op->getParentOfType<ModuleOp>();
    kiln::TargetInfo target = kiln::TargetInfo::of(module);
    RankedTensorType cType = op.getC().getType();
    auto mma = dyn_cast<kiln::gpu::MmaEncodingAttr>(cType.getEncoding());
    auto warpsAttr = module->getAttrOfType<IntegerAttr>(
        kiln::gpu::KilnGPUDialect::kNumWarpsAttrName);
    std::optional<kiln::layout::LinearLayout> cLayout =
        kiln::getLinearLayout(cType);
    if (!mma || !warpsAttr || !cLayout)
      return rewriter.notifyMatchFailure(op, "accumulator without mma layout");
    int64_t m = cType.getDimSize(0), n = cType.getDimSize(1);
    auto aTile = dyn_cast<kiln::gpu::MemDescType>(op.getA().getType());
    auto aRegisters = dyn_cast<RankedTensorType>(op.getA().getType());
    auto bTile = cast<kiln::gpu::MemDescType>(op.getB().getType());
    int64_t k = bTile.getShape()[0];
    Type element = aTile ? aTile.getElementType() : aRegisters.getElementType();
    Type bElement = bTile.getElementType();
    // Shared dots of fp32 operands are tf32 dots unless they say otherwise
    // (kiln-pipeline-dots makes them from tensor-core dots only).
    std::optional<kiln::TensorCoreFlavour> flavour = kiln::tensorCoreFlavour(
        element, bElement, cType.getElementType(),
        op.getInputPrecision().value_or(kiln::InputPrecision::TF32), target);
    if (!flavour || k % flavour->kGroup() != 0 ||
        (aRegisters && !flavour->registerA()))
      return op.emitOpError("tensor-core dots from shared tiles take operands "
                            "of a tensor-core flavour, K a multiple of 32 "
                            "bytes, a in registers 16- or 8-bit only");
    int64_t kStep = flavour->kStep();
    // Each warpgroup's instruction: all n columns, or its instrN of them
    // with warpgroups along N.
    int64_t columns = mma.getInstrN() ? int64_t(mma.getInstrN()) : n;
    // The question passes placing proxy fences ask too.
    bool wgmma = kiln::takesWgmma(op);
    if (!wgmma) {
      if (!flavour->hasMmaSync(target))
        return op.emitOpError("this dot needs wgmma (sm_90a) with both tiles "
                              "K-contiguous");
      return lowerWithMmaSync(op, adaptor, rewriter, *flavour, *cLayout);
    }

    SmallVector<Value> acc =
        kiln::unpackElements(rewriter, loc, adaptor.getC());
    std::map<std::pair<int32_t, int32_t>, unsigned> registerAt;
    for (unsigned r = 0; r < acc.size(); ++r) {
      SmallVector<int32_t> at = kiln::registerCoordinates(*cLayout, r);
      registerAt[{at[0], at[1]}] = r;
    }

    kiln::SharedTileAddress bAddress(bTile);
    const kiln::layout::NvmmaShared &bShape = bAddress.shape();
    std::optional<kiln::SharedTileAddress> aAddress;
    if (aTile)
      aAddress.emplace(aTile);
    if ((aAddress && aAddress->shape().swizzle == 0) || bShape.swizzle == 0)
      return op.emitOpError("wgmma operands need a swizzled shared layout");
    // a is K-major unless transposed (M contiguous); b is K-major when
    // transposed (K contiguous), N-major otherwise.
    bool aKMajor = !aAddress || !aAddress->shape().transposed;
    bool bKMajor = bShape.transposed;
    auto constant = [](const kiln::layout::NvmmaShared &shape, bool kMajor) {
      return descriptorConstant(kMajor ? 16 : shape.panelStride(),
                                8 * shape.swizzle, shape.swizzle);
    };
    uint64_t aConstant = aAddress ? constant(aAddress->shape(), aKMajor) : 0;
    uint64_t bConstant = constant(bShape, bKMajor);
    Type i32 = rewriter.getI32Type();
    Value bBase = LLVM::PtrToIntOp::create(rewriter, loc, i32, adaptor.getB());
    // Warpgroups go along M first, then (instrN) along N. The index is read
    // from lane 0, so it is warp-uniform to ptxas, which then builds the
    // descriptors in uniform registers (no per-wgmma R2UR moves).
    int64_t warpsAlongM = mma.getWarpsPerCTA()[0];
    int64_t groupsAlongM = warpsAlongM / 4;
    Value warpgroup = kiln::shuffle(
        rewriter, loc,
        LLVM::LShrOp::create(rewriter, loc, kiln::threadIdX(rewriter, loc),
                             i32Constant(rewriter, loc, 7)),
        i32Constant(rewriter, loc, 0), NVVM::ShflKind::idx);
    Value groupM = warpgroup;
    // Warpgroups beyond m / 64 along M compute copies of the first ones'
    // tiles (TensorCoreFlavour::fitsWgmma).
    int64_t distinctAlongM = std::min<int64_t>(groupsAlongM, m / 64);
    if (columns != n) {
      // This warpgroup's columns of b: a whole number of panels (N-major
      // b: columnsSplittingN asks for 128 bytes or more) or of 8-line
      // swizzle atoms (K-major), so a constant offset.
      if (!bKMajor &&
          (columns * bShape.elementBytes) % int64_t(bShape.swizzle) != 0)
        return op.emitOpError("a warpgroup's columns of b do not start on "
                              "a swizzle panel");
      Value groupN = LLVM::UDivOp::create(
          rewriter, loc, warpgroup, i32Constant(rewriter, loc, groupsAlongM));
      groupM = LLVM::URemOp::create(rewriter, loc, warpgroup,
                                    i32Constant(rewriter, loc, groupsAlongM));
      bBase = LLVM::AddOp::create(
          rewriter, loc, bBase,
          LLVM::MulOp::create(
              rewriter, loc, groupN,
              i32Constant(rewriter, loc, bShape.linearOffset(0, columns))));
    }
    if (distinctAlongM != groupsAlongM)
      groupM = distinctAlongM == 1
                   ? i32Constant(rewriter, loc, 0)
                   : Value(LLVM::URemOp::create(
                         rewriter, loc, groupM,
                         i32Constant(rewriter, loc, distinctAlongM)));
    Value aRows;
    RegisterFragments aFragments;
    if (aAddress) {
      Value aBase =
          LLVM::PtrToIntOp::create(rewriter, loc, i32, adaptor.getA());
      // This warpgroup's first row: 64 rows are a whole number of lines or
      // of panels, so its offset is linear in the warpgroup.
      aRows = LLVM::AddOp::create(
          rewriter, loc, aBase,
          LLVM::MulOp::create(
              rewriter, loc, groupM,
              i32Constant(rewriter, loc,
                          aAddress->shape().linearOffset(64, 0))));
    } else if (failed(aFragments.init(rewriter, loc, adaptor.getA(),
                                      aRegisters))) {
      return op.emitOpError("a in registers without a linear layout");
    } else if (flavour->elementBytes == 2 &&
               !kiln::holdsAFragments(aRegisters, cType)) {
      return op.emitOpError("a in registers does not hold every "
                            "warpgroup's fragments");
    }

    // fp32 and int32 sums take a register each, fp16 sums half of one.
    const bool half = flavour->halfAccumulator;
    // The instruction for `n` columns (its PTX text and constraints).
    // Operands: the fragment's registers, the two descriptors, the tied
    // accumulators, then scale-d (1: d = a b + d) as a register.
    // a from registers takes four registers where a descriptor takes one.
    int64_t aWords = aAddress ? 1 : 4;
    auto instruction = [&](int64_t n) {
      int64_t regs = half ? n / 4 : n / 2;
      std::string text = "{\n .reg .pred p;\n setp.ne.b32 p, $" +
                         std::to_string(2 * regs + aWords + 1) +
                         ", 0;\n "
                         "wgmma.mma_async.sync.aligned.m64n" +
                         std::to_string(n) + "k" + std::to_string(kStep) + "." +
                         flavour->accumulatorType() + "." +
                         kiln::TensorCoreFlavour::ptxType(element) + "." +
                         kiln::TensorCoreFlavour::ptxType(bElement) + " {";
      for (int64_t i = 0; i < regs; ++i)
        text += (i ? ", $" : "$") + std::to_string(i);
      std::string aText = "$" + std::to_string(regs);
      if (!aAddress)
        aText = "{$" + std::to_string(regs) + ", $" + std::to_string(regs + 1) +
                ", $" + std::to_string(regs + 2) + ", $" +
                std::to_string(regs + 3) + "}";
      // Transpose flags: 16-bit types only, a's only for a descriptor.
      // Integer types take neither the scales of a and b nor transposes.
      std::string flags;
      if (flavour->transposable())
        flags = aAddress ? std::string(", ") + (aKMajor ? "0" : "1") + ", " +
                               (bKMajor ? "0" : "1")
                         : std::string(", ") + (bKMajor ? "0" : "1");
      std::string scales = flavour->integer ? "" : ", 1, 1";
      text += "}, " + aText + ", $" + std::to_string(regs + aWords) + ", p" +
              scales + flags + ";\n}";
      std::string accConstraint = flavour->integer || half ? "=r" : "=f";
      std::string constraints;
      for (int64_t i = 0; i < regs; ++i)
        constraints += (i ? "," : "") + accConstraint;
      constraints += aAddress ? ",l,l" : ",r,r,r,r,l";
      for (int64_t i = 0; i < regs; ++i)
        constraints += "," + std::to_string(i);
      constraints += ",r";
      return std::pair{text, constraints};
    };
    int64_t regs = half ? columns / 4 : columns / 2;
    auto [text, constraints] = instruction(columns);
    Value scaleD = i32Constant(rewriter, loc, 1);
    // A zero accumulator (attention's q @ kᵀ) is no input: the first wgmma
    // of each chain runs with scale-d 0 (d = a b) on undefined registers,
    // rather than zeroing a whole fragment every iteration.
    DenseElementsAttr cConstant;
    bool zeroC = matchPattern(op.getC(), m_Constant(&cConstant)) &&
                 cConstant.isSplat() &&
                 (matchPattern(op.getC(), m_AnyZeroFloat()) ||
                  matchPattern(op.getC(), m_Zero()));
    Value noScaleD = i32Constant(rewriter, loc, 0);
    // use_c: each chain's first wgmma adds c only when it is set.
    Value firstScaleD = scaleD;
    if (Value useC = adaptor.getUseC())
      firstScaleD =
          LLVM::ZExtOp::create(rewriter, loc, rewriter.getI32Type(), useC);
    Type word = half ? rewriter.getI32Type() : acc.front().getType();
    Value undefined = LLVM::UndefOp::create(rewriter, loc, word);
    Type fragment = LLVM::LLVMStructType::getLiteral(
        rewriter.getContext(), SmallVector<Type>(regs, word));

    int64_t tilesPerWarpgroup = std::max<int64_t>(1, m / (16 * warpsAlongM));
    // a in registers: every fragment word is made before the fence and tied
    // through it. A register the chain reads that is written after the
    // fence (the fp16 conversion of p, scheduled next to its wgmma) makes
    // ptxas put a warpgroup.arrive before that wgmma, which serializes the
    // chain.
    std::map<std::pair<int64_t, int64_t>, SmallVector<Value>> aWordsAt;
    if (!aAddress) {
      SmallVector<Value> tied;
      for (int64_t t = 0; t < tilesPerWarpgroup; ++t)
        for (int64_t kk = 0; kk < k / kStep; ++kk) {
          SmallVector<Value> words =
              aFragments.at(rewriter, loc, int32_t(16 * warpsAlongM * t),
                            int32_t(kStep * kk));
          if (words.empty())
            return op.emitOpError("a in registers does not hold a wgmma "
                                  "fragment");
          aWordsAt[{t, kk}] = words;
          llvm::append_range(tied, words);
        }
      tied = tieThrough(rewriter, loc, "wgmma.fence.sync.aligned;", tied);
      size_t next = 0;
      for (auto &[at, fragmentWords] : aWordsAt)
        for (Value &word : fragmentWords)
          word = tied[next++];
    } else {
      kiln::inlinePtxEffect(rewriter, loc, Type(), "wgmma.fence.sync.aligned;",
                            "", ValueRange{});
    }
    // b's descriptor for each kStep rows: one descriptor, then constant
    // offsets.
    SmallVector<Value> bDescs;
    Value bDesc = descriptor(rewriter, loc, bBase, bConstant);
    for (int64_t kk = 0; kk < k / kStep; ++kk)
      bDescs.push_back(descriptorPlus(rewriter, loc, bDesc,
                                      bShape.linearOffset(kStep * kk, 0)));
    Value aDesc =
        aAddress ? descriptor(rewriter, loc, aRows, aConstant) : Value();
    // The accumulator registers of a fragment of `count` registers: m64
    // tile `tile`'s, from column `column0` on (none where the layout does
    // not hold them).
    auto fragmentSlots =
        [&](int64_t tile, int64_t column0,
            int64_t count) -> std::optional<SmallVector<unsigned>> {
      int64_t row0 = 16 * warpsAlongM * tile;
      SmallVector<unsigned> slots;
      for (int64_t i = 0; i < count; ++i) {
        auto it = registerAt.find({int32_t(row0 + 8 * ((i >> 1) & 1)),
                                   int32_t(column0 + 8 * (i >> 2) + (i & 1))});
        if (it == registerAt.end())
          return std::nullopt;
        slots.push_back(it->second);
      }
      return slots;
    };
    // One wgmma of a chain: tile `tile`'s rows, the kk-th kStep of K, b's
    // columns from `column0` on, `words` tied in and out. Inputs: a, b first
    // after the outputs, then the tied accumulators and scale-d.
    auto chainStep = [&](int64_t tile, int64_t kk, int64_t column0,
                         SmallVector<Value> &words, Value scale,
                         StringRef stepText, StringRef stepConstraints,
                         Type stepFragment) {
      SmallVector<Value> ordered;
      if (aAddress)
        ordered.push_back(
            descriptorPlus(rewriter, loc, aDesc,
                           aAddress->shape().linearOffset(
                               16 * warpsAlongM * tile, kStep * kk)));
      else
        llvm::append_range(ordered, aWordsAt[{tile, kk}]);
      ordered.push_back(descriptorPlus(rewriter, loc, bDescs[kk],
                                       bShape.linearOffset(0, column0)));
      llvm::append_range(ordered, words);
      ordered.push_back(scale);
      Value d = kiln::inlinePtxEffect(rewriter, loc, stepFragment, stepText,
                                      stepConstraints, ordered)
                    .getResult(0);
      for (size_t i = 0; i < words.size(); ++i)
        words[i] = LLVM::ExtractValueOp::create(rewriter, loc, d, int64_t(i));
    };
    // fp8 products summed at most max_num_imprecise_acc of K at a time (a
    // multiple of the instruction's K, at least one), each partial sum then
    // added to the fp32 accumulator, as upstream does where the dot asks for
    // no more than its K.
    int64_t partialK = 0;
    if (std::optional<uint32_t> most = op.getMaxNumImpreciseAcc();
        most && flavour->elementBytes == 1 && !half && !flavour->integer &&
        int64_t(*most) <= k)
      partialK = std::clamp<int64_t>(
          llvm::divideCeil(int64_t(*most), kStep) * kStep, kStep, k);
    if (op.getAddCAfter() || partialK) {
      if (half || flavour->integer ||
          (op.getAddCAfter() && (zeroC || adaptor.getUseC() || op.getAsync())))
        return op.emitOpError("adds c after the product only synchronously "
                              "to fp32 sums");
      if (!partialK)
        partialK = k;
      // use_c false: the sums start from zero.
      if (Value useC = adaptor.getUseC())
        zeroUnless(rewriter, loc, useC, acc);
      // 128 columns a slice (64 registers of fp32 sums a thread) where the
      // dot's K is one partial sum; 64 where it takes several, whose
      // descriptors stay live too (FBGEMM's fp8 GEMMs at 128 x 256 over 8
      // warps on an H100: without fast accumulation, K 32 in one sum, 1.11
      // of Triton at 128 columns and 0.78 at 64; with max_num_imprecise_acc
      // 32 over K 128, 1.37 at 128 columns, spilling 600 bytes, and 1.82 at
      // 64, spilling none). Slices of b start on 8-line atoms (K-major) or
      // whole panels.
      int64_t slice = sumApartColumns > 0 ? int64_t(sumApartColumns)
                      : partialK < k      ? std::min<int64_t>(columns, 64)
                                          : std::min<int64_t>(columns, 128);
      if (columns % slice != 0 || slice % 8 != 0 ||
          (!bKMajor &&
           (slice * bShape.elementBytes) % int64_t(bShape.swizzle) != 0))
        slice = columns;
      bool twoInFlight = sumApartInFlight == 2;
      std::string sliceText, sliceConstraints;
      std::tie(sliceText, sliceConstraints) = instruction(slice);
      Type sliceFragment = LLVM::LLVMStructType::getLiteral(
          rewriter.getContext(), SmallVector<Type>(slice / 2, word));
      // A slice of one m64 tile's columns over one part of K.
      struct Piece {
        int64_t tile, column0, k0;
        SmallVector<unsigned> slots;
      };
      SmallVector<Piece> pieces;
      for (int64_t t = 0; t < tilesPerWarpgroup; ++t)
        for (int64_t c0 = 0; c0 < columns; c0 += slice) {
          std::optional<SmallVector<unsigned>> slots =
              fragmentSlots(t, c0, slice / 2);
          if (!slots)
            return op.emitOpError("the accumulator layout does not hold a "
                                  "wgmma fragment");
          Piece piece{t, c0, 0, std::move(*slots)};
          for (int64_t k0 = 0; k0 < k; k0 += partialK) {
            piece.k0 = k0;
            pieces.push_back(piece);
          }
        }
      // A piece's product from zero, committed as a group of its own.
      auto issue = [&](const Piece &piece) {
        SmallVector<Value> words(slice / 2, undefined);
        int64_t end = std::min(piece.k0 + partialK, k) / kStep;
        for (int64_t kk = piece.k0 / kStep; kk < end; ++kk)
          chainStep(piece.tile, kk, piece.column0, words,
                    kk == piece.k0 / kStep ? noScaleD : scaleD, sliceText,
                    sliceConstraints, sliceFragment);
        kiln::inlinePtxEffect(rewriter, loc, Type(),
                              "wgmma.commit_group.sync.aligned;", "",
                              ValueRange{});
        return words;
      };
      auto addTo = [&](const Piece &piece, ArrayRef<Value> product) {
        for (auto [slot, p] : llvm::zip_equal(piece.slots, product))
          acc[slot] = LLVM::FAddOp::create(rewriter, loc, acc[slot], p);
      };
      // The next piece issues before the previous one is waited for and
      // added (two pieces' registers live), or after it (one).
      SmallVector<Value> pending = issue(pieces.front());
      for (size_t p = 1; p < pieces.size(); ++p) {
        if (!twoInFlight)
          addTo(pieces[p - 1], tieThrough(rewriter, loc, waitText(0), pending));
        kiln::inlinePtxEffect(rewriter, loc, Type(),
                              "wgmma.fence.sync.aligned;", "", ValueRange{});
        SmallVector<Value> next = issue(pieces[p]);
        if (twoInFlight)
          addTo(pieces[p - 1], tieThrough(rewriter, loc, waitText(1), pending));
        pending = std::move(next);
      }
      addTo(pieces.back(), tieThrough(rewriter, loc, waitText(0), pending));
      rewriter.replaceOp(
          op, kiln::packElements(rewriter, loc,
                                 getTypeConverter()->convertType(op.getType()),
                                 acc));
      return success();
    }

    // One m64 tile's whole K, then the next: each accumulator's chain of
    // wgmmas issues back to back, as the hardware pipelines them.
    for (int64_t t = 0; t < tilesPerWarpgroup; ++t) {
      std::optional<SmallVector<unsigned>> fragmentAt =
          fragmentSlots(t, 0, columns / 2);
      if (!fragmentAt)
        return op.emitOpError("the accumulator layout does not hold a "
                              "wgmma fragment");
      const SmallVector<unsigned> &slots = *fragmentAt;
      // The fragment's registers: fp16 sums pack the elements of fp32's
      // registers 2j and 2j + 1 into register j, and stay packed along the
      // chain.
      SmallVector<Value> words;
      for (int64_t i = 0; i < regs; ++i)
        words.push_back(half
                            ? kiln::packHalves(rewriter, loc, acc[slots[2 * i]],
                                               acc[slots[2 * i + 1]])
                            : acc[slots[i]]);
      // A zero accumulator's chain starts on undefined registers.
      if (zeroC)
        words.assign(words.size(), undefined);
      for (int64_t kk = 0; kk < k / kStep; ++kk)
        chainStep(t, kk, 0, words,
                  kk > 0  ? scaleD
                  : zeroC ? noScaleD
                          : firstScaleD,
                  text, constraints, fragment);
      for (auto [i, w] : llvm::enumerate(words)) {
        if (!half) {
          acc[slots[i]] = w;
          continue;
        }
        std::tie(acc[slots[2 * i]], acc[slots[2 * i + 1]]) =
            kiln::unpackHalves(rewriter, loc, w, acc.front().getType());
      }
    }
    kiln::inlinePtxEffect(rewriter, loc, Type(),
                          "wgmma.commit_group.sync.aligned;", "", ValueRange{});
    if (!op.getAsync())
      acc = tieThrough(rewriter, loc, waitText(0), acc);
    rewriter.replaceOp(
        op,
        kiln::packElements(rewriter, loc,
                           getTypeConverter()->convertType(op.getType()), acc));
    return success();
  }
};

/// The sm_80+ form: per 32 bytes of K, each warp loads its A fragments
/// (m16 x 32 bytes of K) and B fragments (32 bytes of K x n8) from the
/// swizzled tiles, then issues one mma.sync (m16n8k16 for 16-bit operands,
/// m16n8k8 tf32, m16n8k32 8-bit) per 16 x 8 accumulator tile it holds.
/// Every flavour's fragment is the same bytes: lane l holds, per 8 x 16-byte
/// matrix, the 4 bytes (l % 4) of row l / 4. K-contiguous operands (and
/// 16-bit ones either way, through .trans) load with ldmatrix; 32- and 8-bit
/// operands contiguous along M or N load element by element.
LogicalResult lowerWithMmaSync(kiln::gpu::SharedDotOp op,
                               kiln::gpu::SharedDotOp::Adaptor adaptor,
                               ConversionPatternRewriter &rewriter,
                               const kiln::TensorCoreFlavour &flavour,
                               const kiln::layout::LinearLayout &cLayout) {
  Location loc = op.getLoc();
  auto aTile = dyn_cast<kiln::gpu::MemDescType>(op.getA().getType());
  auto bTile = cast<kiln::gpu::MemDescType>(op.getB().getType());
  int64_t k = bTile.getShape()[0];
  SmallVector<Value> acc = kiln::unpackElements(rewriter, loc, adaptor.getC());
  // use_c false: the accumulator starts from zero (mma.sync has no scale-d).
  if (Value useC = adaptor.getUseC())
    zeroUnless(rewriter, loc, useC, acc);
  // add_c_after: the product sums from zero, and c is added at the end.
  SmallVector<Value> addedAfter;
  if (op.getAddCAfter())
    for (Value &v : acc)
      addedAfter.push_back(
          std::exchange(v, LLVM::ZeroOp::create(rewriter, loc, v.getType())));
  const int64_t bytes = flavour.elementBytes;
  const int64_t kStep = flavour.kStep();
  const int64_t perWord = 4 / bytes;   // elements of a 32-bit register
  const int64_t perChunk = 16 / bytes; // elements of 16 bytes
  const int64_t kHalf = kStep / 2;     // K of the second register pair

  // Accumulator tiles: the four registers (c0..c3) of each 16x8 tile, by
  // the tile's corner in thread 0 of warp 0.
  // Of 8 rows (a thin dot's), each tile holds them twice: rows 8-15 repeat
  // rows 0-7 (the layout's row-8 basis is zero), so the coordinates alone
  // do not tell slots c2, c3 from c0, c1; register bit 1 does, as
  // layout::mmaV2 orders them (DotToLLVM's batched tiles likewise).
  const int64_t m = cast<RankedTensorType>(op.getC().getType()).getDimSize(0);
  const bool halfRows = m < 16;
  if (halfRows && (m != 8 || !aTile))
    return op.emitOpError("an mma.sync dot of ")
           << m << " rows needs 8, read from shared memory";
  std::map<std::pair<int32_t, int32_t>, std::array<int, 4>> tiles;
  for (unsigned r = 0; r < acc.size(); ++r) {
    SmallVector<int32_t> at = kiln::registerCoordinates(cLayout, r);
    auto &slots = tiles
                      .try_emplace({at[0] & ~15, at[1] & ~7},
                                   std::array<int, 4>{-1, -1, -1, -1})
                      .first->second;
    int slot = halfRows ? int(r & 3) : ((at[0] & 15) / 8) * 2 + (at[1] & 7);
    if (slot > 3 || slots[slot] >= 0 ||
        (halfRows && ((at[0] & 8) || (at[1] & 7) % 2 != slot % 2)))
      return op.emitOpError("the accumulator is not in 16x8 mma tiles");
    slots[slot] = int(r);
  }
  SmallVector<kiln::Coordinates> cCoords =
      kiln::emitCoordinates(rewriter, loc, cLayout);
  Value lane =
      LLVM::AndOp::create(rewriter, loc, kiln::threadIdX(rewriter, loc),
                          i32Constant(rewriter, loc, 31));
  auto c = [&](int64_t v) { return i32Constant(rewriter, loc, v); };
  Value g = LLVM::LShrOp::create(rewriter, loc, lane, c(2));
  Value t = LLVM::AndOp::create(rewriter, loc, lane, c(3));
  // The accumulator's columns of lane t start at 2t (every flavour); its
  // operand words at k = perWord * t.
  Value twoT = LLVM::ShlOp::create(rewriter, loc, t, c(1));
  Value kOfLane = LLVM::MulOp::create(rewriter, loc, t, c(perWord));
  // ldmatrix row addresses: lane l gives row (l % 8) + 8 ((l / 8) % 2) and
  // the 16 bytes starting 16 (l / 16) bytes further. Of an a of 8 rows,
  // rows 8-15 are rows 0-7 again (b's k rows stay 16).
  Value rowInTile = LLVM::AddOp::create(
      rewriter, loc, LLVM::AndOp::create(rewriter, loc, lane, c(7)),
      LLVM::AndOp::create(rewriter, loc, lane, c(8)));
  Value aRowInTile = halfRows
                         ? Value(LLVM::AndOp::create(rewriter, loc, lane, c(7)))
                         : rowInTile;
  Value colHalf = LLVM::MulOp::create(
      rewriter, loc, LLVM::LShrOp::create(rewriter, loc, lane, c(4)),
      c(perChunk));

  // For column-major tiles: lane bits 0-2 pick the line, bit 3 the second
  // 8 rows (or 16 bytes of k), bit 4 (A only) the second 8 k.
  Value lane7 = LLVM::AndOp::create(rewriter, loc, lane, c(7));
  Value laneBit3 = LLVM::AndOp::create(rewriter, loc, lane, c(8));
  // The second 8 rows of a column-major a (of 8 rows, the first again).
  Value aSecondRows = halfRows ? c(0) : laneBit3;
  Value kLine = LLVM::AddOp::create(rewriter, loc, lane7, colHalf);
  Value secondChunk = LLVM::MulOp::create(
      rewriter, loc, LLVM::LShrOp::create(rewriter, loc, laneBit3, c(3)),
      c(perChunk));
  // Lanes 16-31 of a paired b: the tile 8 columns further.
  Value pairCol = LLVM::ShlOp::create(
      rewriter, loc, LLVM::LShrOp::create(rewriter, loc, lane, c(4)), c(3));

  kiln::SharedTileAddress bAddress(bTile);
  std::optional<kiln::SharedTileAddress> aAddress;
  RegisterFragments aRegisters;
  Type i32 = rewriter.getI32Type();
  Value aBase;
  if (aTile) {
    aAddress.emplace(aTile);
    aBase = LLVM::PtrToIntOp::create(rewriter, loc, i32, adaptor.getA());
  } else if (failed(aRegisters.init(
                 rewriter, loc, adaptor.getA(),
                 cast<RankedTensorType>(op.getA().getType())))) {
    return op.emitOpError("a in registers without a linear layout");
  }
  // Whether every thread's accumulator tiles start as far apart as thread
  // 0's (rows, cols): the lane and warp bits of their coordinates miss the
  // bits of the tiles' corners, so the XOR of the linear layout adds.
  int32_t threadBits[2] = {0, 0}, cornerBits[2] = {0, 0};
  for (StringRef dim : cLayout.getInDimNames())
    if (dim != kiln::layout::kRegister)
      for (int32_t bit = 0; bit < cLayout.getInDimSizeLog2(dim); ++bit) {
        ArrayRef<int32_t> basis = cLayout.getBasis(dim, bit);
        threadBits[0] |= basis[0];
        threadBits[1] |= basis[1];
      }
  for (auto &[corner, slots] : tiles) {
    cornerBits[0] |= corner.first;
    cornerBits[1] |= corner.second;
  }
  const bool rowsShift = !(threadBits[0] & cornerBits[0]);
  const bool colsShift = !(threadBits[1] & cornerBits[1]);
  bool aTransposed = aAddress && aAddress->shape().transposed;
  bool bTransposed = bAddress.shape().transposed;
  Value bBase = LLVM::PtrToIntOp::create(rewriter, loc, i32, adaptor.getB());
  // Per tile: its first row (for A) and column (for B) in this warp.
  std::map<int32_t, Value> tileRows, tileCols;
  for (auto &[corner, slots] : tiles) {
    if (llvm::is_contained(slots, -1))
      return op.emitOpError("an mma tile lacks registers");
    const kiln::Coordinates &at = cCoords[slots[0]];
    if (!tileRows.count(corner.first))
      tileRows[corner.first] = LLVM::SubOp::create(rewriter, loc, at[0], g);
    if (!tileCols.count(corner.second))
      tileCols[corner.second] = LLVM::SubOp::create(rewriter, loc, at[1], twoT);
  }

  kiln::MmaSyncInstructions instructions(
      rewriter, loc, kiln::TargetInfo::of(op->getParentOfType<ModuleOp>()),
      flavour,
      aTile ? aTile.getElementType()
            : cast<RankedTensorType>(op.getA().getType()).getElementType(),
      bTile.getElementType(), acc.front().getType());
  Type quadI = LLVM::LLVMStructType::getLiteral(rewriter.getContext(),
                                                {i32, i32, i32, i32});
  Type pairI =
      LLVM::LLVMStructType::getLiteral(rewriter.getContext(), {i32, i32});
  auto words = [&](Value s, unsigned n) {
    SmallVector<Value> out;
    for (unsigned i = 0; i < n; ++i)
      out.push_back(LLVM::ExtractValueOp::create(rewriter, loc, s, int64_t(i)));
    return out;
  };
  // `count` 8x8 matrices of 16-bit elements from the rows each lane's `at`
  // names (transposed with .trans): one register of each per lane.
  auto ldmatrix = [&](unsigned count, bool trans, Value at) {
    std::string registers, constraints;
    for (unsigned i = 0; i < count; ++i) {
      registers += (i ? ", $" : "$") + std::to_string(i);
      constraints += "=r,";
    }
    std::string text = "ldmatrix.sync.aligned.m8n8.x" + std::to_string(count) +
                       (trans ? ".trans" : "") + ".shared.b16 {" + registers +
                       "}, [$" + std::to_string(count) + "];";
    Value frag =
        kiln::inlinePtxEffect(rewriter, loc, count == 4 ? quadI : pairI, text,
                              constraints + "r", ValueRange{at})
            .getResult(0);
    return words(frag, count);
  };
  // One 32-bit register of elements (row, k + j), j < perWord, of a tile
  // whose K is not contiguous: element by element.
  auto gatherWord = [&](Value base, const kiln::SharedTileAddress &tile,
                        auto coordinates, Value k0) -> Value {
    if (bytes == 4) {
      auto [row, col] = coordinates(k0);
      Value at = LLVM::AddOp::create(rewriter, loc, base,
                                     tile.emit(rewriter, loc, row, col));
      return kiln::inlinePtxEffect(rewriter, loc, i32,
                                   "ld.shared.b32 $0, [$1];", "=r,r",
                                   ValueRange{at})
          .getResult(0);
    }
    Value word;
    for (int64_t j = 0; j < perWord; ++j) {
      auto [row, col] =
          coordinates(LLVM::AddOp::create(rewriter, loc, k0, c(j)));
      Value at = LLVM::AddOp::create(rewriter, loc, base,
                                     tile.emit(rewriter, loc, row, col));
      Value element =
          kiln::inlinePtxEffect(rewriter, loc, i32,
                                bytes == 1 ? "ld.shared.u8 $0, [$1];"
                                           : "ld.shared.u16 $0, [$1];",
                                "=r,r", ValueRange{at})
              .getResult(0);
      if (j)
        element = LLVM::ShlOp::create(rewriter, loc, element, c(j * 8 * bytes));
      word = word ? Value(LLVM::OrOp::create(rewriter, loc, word, element))
                  : element;
    }
    return word;
  };
  // ldmatrix addresses: one register per (operand, key), the operand's
  // other fragments at constant offsets from it, where they lie `lines`
  // lines of the tile further (a multiple of 8: the swizzle's period).
  // Per warp that is one register per k step for row-major a (its tiles
  // 16 rows apart) or K-contiguous b, one per tile for the operands whose
  // lines run along K. Only where an address each would hold many
  // registers (more than 64; fp8 counts twice, as ptxas widens its
  // fragments to fp16 on sm_90): on the H200, tutorial 03 at 128x256x128
  // with 8 warps went from 0.77 to 1.01 of Triton's mma.sync path, and fp8
  // at 128x128x128 from 0.56 to 0.73, but 128x256x64 and 128x128x64 (48
  // addresses) lost 2-3% to ptxas's other schedule.
  const int64_t addresses = k / kStep *
                            int64_t(tileRows.size() + tileCols.size()) *
                            (flavour.fp8 ? 2 : 1);
  const bool shareAddresses = addresses > 64;
  std::map<std::pair<int, int64_t>, Value> fragmentBases;
  auto fragmentAddress = [&](int which, int64_t key,
                             const kiln::SharedTileAddress &tile, Value base,
                             int64_t lines, bool shifts,
                             function_ref<Value(bool first)> offset) -> Value {
    std::optional<int64_t> shift =
        shareAddresses && shifts ? tile.lineShift(lines) : std::nullopt;
    if (!shift)
      return LLVM::AddOp::create(rewriter, loc, base, offset(false));
    Value &at = fragmentBases[{which, key}];
    if (!at)
      at = LLVM::AddOp::create(rewriter, loc, base, offset(true));
    return *shift ? LLVM::AddOp::create(rewriter, loc, at, c(*shift)) : at;
  };
  // b's fragments two tiles an ldmatrix (.x4) where a warp has at most two
  // rows of tiles: each b fragment then feeds one or two mma.syncs, and
  // ldmatrix.x2 issues about as often as they do. Only where the tiles come
  // in pairs 8 columns apart, for every thread as for thread 0 (colsShift).
  // On the H200, beside Triton's mma.sync path: attention forward at
  // HEAD_DIM 64 0.97-0.98 -> 1.01-1.03 (2 rows a warp) and causal HEAD_DIM
  // 128 with 1.04-1.07 (1 row); with four rows (tutorial 03's 64x64 warp
  // tiles) pairs measured 1-3% slower than single tiles.
  const bool pairB = colsShift && tileRows.size() <= 2 &&
                     llvm::all_of(tileCols, [&](const auto &entry) {
                       return tileCols.count(entry.first ^ 8);
                     });
  const int32_t firstRow = tileRows.begin()->first;
  const int32_t firstCol = tileCols.begin()->first;
  // Per group of k steps (one, or two for the bf16 emulations): every
  // step's fragments, then the instructions over them.
  const int64_t group = flavour.kGroup();
  for (int64_t kg = 0; kg < k; kg += group) {
    std::map<int32_t, SmallVector<SmallVector<Value>>> aSteps, bSteps;
    for (int64_t kk = kg; kk < kg + group; kk += kStep) {
      std::map<int32_t, SmallVector<Value>> aFragments, bFragments;
      for (auto &[row, tileRow] : tileRows) {
        if (!aAddress) {
          aFragments[row] = aRegisters.at(rewriter, loc, row, int32_t(kk));
          if (aFragments[row].empty())
            return op.emitOpError("a in registers does not hold an mma "
                                  "fragment");
          continue;
        }
        if (aTransposed && !flavour.transposable()) {
          // M contiguous, 32- or 8-bit: a0..a3 are rows g and g + 8, k from
          // perWord t and kHalf further.
          SmallVector<Value> fragment;
          const int64_t lower = halfRows ? 0 : 8;
          for (auto [dr, dk] : {std::pair<int64_t, int64_t>{0, 0},
                                {lower, 0},
                                {0, kHalf},
                                {lower, kHalf}}) {
            Value r = LLVM::AddOp::create(
                rewriter, loc, tileRow,
                LLVM::AddOp::create(rewriter, loc, g, c(dr)));
            Value k0 = LLVM::AddOp::create(rewriter, loc, kOfLane, c(kk + dk));
            fragment.push_back(gatherWord(
                aBase, *aAddress,
                [&](Value kAt) {
                  return std::pair<Value, Value>{r, kAt};
                },
                k0));
          }
          aFragments[row] = fragment;
          continue;
        }
        // Row-major a: lanes give rows; column-major a (M contiguous, 16-bit):
        // lanes give k lines and .trans transposes each 8x8 matrix.
        // Lines along M: tiles apart by rows; along K: steps apart by kk.
        Value at = fragmentAddress(
            0, aTransposed ? row : kk, *aAddress, aBase,
            aTransposed ? kk : row - firstRow, aTransposed || rowsShift,
            [&](bool first) {
              Value r = LLVM::AddOp::create(
                  rewriter, loc,
                  first && !aTransposed ? tileRows[firstRow] : tileRow,
                  aTransposed ? aSecondRows : aRowInTile);
              Value col = LLVM::AddOp::create(rewriter, loc,
                                              aTransposed ? kLine : colHalf,
                                              c(first && aTransposed ? 0 : kk));
              return aAddress->emit(rewriter, loc, r, col);
            });
        aFragments[row] = ldmatrix(4, aTransposed, at);
      }
      for (auto &[col, tileCol] : tileCols) {
        if (bFragments.count(col))
          continue; // the second tile of a pair
        if (!bTransposed && !flavour.transposable()) {
          // N contiguous, 32- or 8-bit: b0, b1 are column g, k from perWord t
          // and kHalf further.
          Value n = LLVM::AddOp::create(rewriter, loc, tileCol, g);
          SmallVector<Value> fragment;
          for (int64_t dk : {int64_t(0), kHalf}) {
            Value k0 = LLVM::AddOp::create(rewriter, loc, kOfLane, c(kk + dk));
            fragment.push_back(gatherWord(
                bBase, bAddress,
                [&](Value kAt) {
                  return std::pair<Value, Value>{kAt, n};
                },
                k0));
          }
          bFragments[col] = fragment;
          continue;
        }
        // Row-major b (N contiguous, 16-bit): lanes give k rows, .trans;
        // column-major b (K contiguous): lanes give n lines, and lanes 8-15
        // the second 16 bytes of k. With pairB, lanes 16-31 give the same
        // for the tile 8 columns further: one ldmatrix.x4 reads both.
        // Lines along N: tiles apart by cols; along K: steps apart by kk.
        Value at = fragmentAddress(
            1, bTransposed ? kk : col, bAddress, bBase,
            bTransposed ? col - firstCol : kk, !bTransposed || colsShift,
            [&](bool first) {
              Value kRow = LLVM::AddOp::create(
                  rewriter, loc, bTransposed ? secondChunk : rowInTile,
                  c(first && !bTransposed ? 0 : kk));
              Value n = first && bTransposed ? tileCols[firstCol] : tileCol;
              if (bTransposed)
                n = LLVM::AddOp::create(rewriter, loc, n, lane7);
              if (pairB)
                n = LLVM::AddOp::create(rewriter, loc, n, pairCol);
              return bAddress.emit(rewriter, loc, kRow, n);
            });
        if (!pairB) {
          bFragments[col] = ldmatrix(2, !bTransposed, at);
          continue;
        }
        SmallVector<Value> both = ldmatrix(4, !bTransposed, at);
        bFragments[col] = {both[0], both[1]};
        bFragments[col + 8] = {both[2], both[3]};
      }
      for (auto &[row, fragment] : aFragments)
        aSteps[row].push_back(fragment);
      for (auto &[col, fragment] : bFragments)
        bSteps[col].push_back(fragment);
    }
    std::map<int32_t, kiln::MmaSyncInstructions::Operand> aOperands, bOperands;
    for (auto &[row, steps] : aSteps)
      aOperands[row] = instructions.prepare(steps, /*isA=*/true);
    for (auto &[col, steps] : bSteps)
      bOperands[col] = instructions.prepare(steps, /*isA=*/false);
    for (auto &[corner, slots] : tiles) {
      SmallVector<Value, 4> quad;
      for (int slot : slots)
        quad.push_back(acc[slot]);
      instructions.multiply(aOperands[corner.first], bOperands[corner.second],
                            quad);
      for (auto [i, slot] : llvm::enumerate(slots))
        acc[slot] = quad[i];
    }
  }
  for (auto [c, product] : llvm::zip(addedAfter, acc))
    product = LLVM::FAddOp::create(rewriter, loc, c, product);
  rewriter.replaceOp(
      op, kiln::packElements(rewriter, loc, adaptor.getC().getType(), acc));
  return success();
}

struct DotWaitLowering : OpConversionPattern<kiln::gpu::DotWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::DotWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> flat;
    SmallVector<unsigned> counts;
    for (Value v : adaptor.getInputs()) {
      SmallVector<Value> elements = kiln::unpackElements(rewriter, loc, v);
      counts.push_back(unsigned(elements.size()));
      llvm::append_range(flat, elements);
    }
    SmallVector<Value> waited =
        tieThrough(rewriter, loc, waitText(op.getPending()), flat);
    SmallVector<Value> results;
    unsigned at = 0;
    for (auto [v, count] : llvm::zip_equal(adaptor.getInputs(), counts)) {
      results.push_back(
          kiln::packElements(rewriter, loc, v.getType(),
                             ArrayRef<Value>(waited).slice(at, count)));
      at += count;
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void kiln::populateWgmmaToLLVMPatterns(KilnTypeConverter &converter,
                                       RewritePatternSet &patterns) {
  patterns.add<SharedDotLowering, DotWaitLowering>(converter,
                                                   patterns.getContext());
}
