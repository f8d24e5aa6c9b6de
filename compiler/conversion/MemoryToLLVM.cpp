//===- MemoryToLLVM.cpp - vectorized global loads and stores --------------===//
//
// A thread's elements come in chunks of contiguous addresses. Each chunk of
// `vec` elements (decided from axis info: contiguous, aligned and uniformly
// masked) is one predicated `ld.global`/`st.global` of up to 128 bits,
// written as inline PTX so that the predicate and the vector width are
// exactly what the analysis proved — the same form upstream Triton emits.
//
// tl.load's and tl.store's cache_modifier, eviction_policy and volatile
// become the PTX qualifiers: `.ca`/`.cg`/`.cv` (`.wb`/`.cg`/`.cs`/`.wt`
// for stores), `ld.volatile` (a spinning load then sees other blocks'
// writes), and an eviction priority as `.L1::evict_*` with an L2 cache
// policy (`createpolicy.fractional`, once per op) — with a cache operator
// only the L2 policy, which PTX allows beside it.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/DistributedLayout.h"
#include "compiler/conversion/LoweringUtils.h"
#include "compiler/conversion/OpFamilyLowerings.h"
#include "compiler/layout/EqualRuns.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace {

/// How one vector access is split into PTX registers.
struct AccessShape {
  unsigned memoryBits; // bits of one element in memory (bools are bytes)
  unsigned vec;        // elements per access
  unsigned wordBits;   // 64, 32, 16 or 8
  unsigned words;      // registers per access (1, 2 or 4)
  unsigned elementsPerWord() const { return wordBits / memoryBits; }

  static AccessShape get(unsigned elementBits, unsigned vec) {
    AccessShape s;
    s.memoryBits = elementBits == 1 ? 8 : elementBits;
    s.vec = vec;
    unsigned total = s.memoryBits * vec;
    // 64-bit elements travel whole, in 64-bit registers.
    s.wordBits = s.memoryBits == 64 ? 64 : total >= 32 ? 32 : total;
    s.words = total >= s.wordBits ? total / s.wordBits : 1;
    return s;
  }
  /// `.v4.b32`, `.b16`, ...
  std::string suffix() const {
    return (words > 1 ? ".v" + std::to_string(words) : std::string()) + ".b" +
           std::to_string(wordBits);
  }
  const char *constraint() const {
    return wordBits == 64 ? "l" : wordBits == 32 ? "r" : "h";
  }
  Type wordType(MLIRContext *ctx) const {
    return IntegerType::get(ctx, wordBits == 8 ? 16 : wordBits);
  }
};

/// `{ $a, $b, ... }` or `$a` for a single register.
std::string registerList(unsigned first, unsigned count) {
  if (count == 1)
    return "$" + std::to_string(first);
  std::string s = "{ ";
  for (unsigned i = 0; i < count; ++i)
    s += (i ? ", $" : "$") + std::to_string(first + i);
  return s + " }";
}

/// The element type as stored (bools as i8).
Type memoryType(Type elementType) {
  if (elementType.isInteger(1))
    return IntegerType::get(elementType.getContext(), 8);
  return elementType;
}

/// Packs `vec` elements into the access's registers.
SmallVector<Value> packWords(OpBuilder &b, Location loc,
                             const AccessShape &shape, ArrayRef<Value> elements,
                             Type elementType) {
  MLIRContext *ctx = b.getContext();
  Type memType = memoryType(elementType);
  Type wordType = shape.wordType(ctx);
  SmallVector<Value> words;
  unsigned per = shape.elementsPerWord();
  for (unsigned w = 0; w < shape.words; ++w) {
    auto element = [&](unsigned i) {
      Value e = elements[w * per + i];
      if (elementType.isInteger(1))
        e = LLVM::ZExtOp::create(b, loc, memType, e);
      return e;
    };
    Value word;
    if (per == 1) {
      word = element(0);
      if (shape.memoryBits == 8) // bytes travel in 16-bit registers
        word = LLVM::ZExtOp::create(
            b, loc, wordType,
            LLVM::BitcastOp::create(b, loc, IntegerType::get(ctx, 8), word));
      else if (word.getType() != wordType)
        word = LLVM::BitcastOp::create(b, loc, wordType, word);
    } else {
      auto vecType = VectorType::get({int64_t(per)}, memType);
      Value v = LLVM::UndefOp::create(b, loc, vecType);
      for (unsigned i = 0; i < per; ++i)
        v = LLVM::InsertElementOp::create(
            b, loc, v, element(i),
            LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                     b.getI32IntegerAttr(i)));
      word = LLVM::BitcastOp::create(b, loc, wordType, v);
    }
    words.push_back(word);
  }
  return words;
}

/// Unpacks the access's registers into `vec` elements.
SmallVector<Value> unpackWords(OpBuilder &b, Location loc,
                               const AccessShape &shape, ArrayRef<Value> words,
                               Type elementType) {
  MLIRContext *ctx = b.getContext();
  Type memType = memoryType(elementType);
  SmallVector<Value> elements;
  unsigned per = shape.elementsPerWord();
  auto finish = [&](Value e) {
    if (elementType.isInteger(1))
      e = LLVM::TruncOp::create(b, loc, elementType, e);
    elements.push_back(e);
  };
  for (Value word : words) {
    if (per == 1) {
      Value e = word;
      if (shape.memoryBits == 8)
        e = LLVM::TruncOp::create(b, loc, IntegerType::get(ctx, 8), e);
      if (e.getType() != memType)
        e = LLVM::BitcastOp::create(b, loc, memType, e);
      finish(e);
      continue;
    }
    auto vecType = VectorType::get({int64_t(per)}, memType);
    Value v = LLVM::BitcastOp::create(b, loc, vecType, word);
    for (unsigned i = 0; i < per; ++i)
      finish(LLVM::ExtractElementOp::create(
          b, loc, v,
          LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                   b.getI32IntegerAttr(i))));
  }
  return elements;
}

/// What follows `ld`/`st` up to the vector width (`.global.cg`,
/// `.volatile.global`, `.global.L1::evict_first.L2::cache_hint`), and the
/// L2 policy register the access then takes as its last operand (null
/// without `.L2::cache_hint`).
struct CacheQualifiers {
  std::string text = ".global";
  Value policy;

  CacheQualifiers(OpBuilder &b, Location loc, kiln::CacheModifier cache,
                  kiln::EvictionPolicy evict, bool isVolatile) {
    if (isVolatile) {
      text = ".volatile.global";
      return;
    }
    if (cache != kiln::CacheModifier::None)
      text += "." + kiln::stringifyCacheModifier(cache).str();
    if (evict == kiln::EvictionPolicy::Normal)
      return;
    std::string priority = kiln::stringifyEvictionPolicy(evict).str();
    // The L1 priority and a cache operator are two forms of the
    // instruction; the L2 policy goes with either.
    if (cache == kiln::CacheModifier::None)
      text += ".L1::" + priority;
    text += ".L2::cache_hint";
    policy = kiln::inlinePtx(b, loc, b.getI64Type(),
                             "createpolicy.fractional.L2::" + priority +
                                 ".b64 $0, 1.0;",
                             "=l", ValueRange{});
  }
};

struct LoadLowering : OpConversionPattern<kiln::LoadOp> {
  LoadLowering(kiln::KilnTypeConverter &converter,
               const kiln::AccessWidths &widths,
               const kiln::Constancies &constancies, MLIRContext *ctx)
      : OpConversionPattern(converter, ctx), widths(widths),
        constancies(constancies) {}

  LogicalResult
  matchAndRewrite(kiln::LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    Type resultType = getTypeConverter()->convertType(op.getType());
    Type elementType = getTypeConverter()->convertType(
        kiln::getElementTypeOrSelf(op.getType()));
    if (!resultType || !elementType)
      return failure();
    SmallVector<Value> ptrs =
        kiln::unpackElements(rewriter, loc, adaptor.getPtr());
    SmallVector<Value> masks, others;
    if (adaptor.getMask())
      masks = kiln::unpackElements(rewriter, loc, adaptor.getMask());
    if (adaptor.getOther())
      others = kiln::unpackElements(rewriter, loc, adaptor.getOther());

    unsigned vec = kiln::accessWidth(op, widths, op.getType());
    AccessShape shape =
        AccessShape::get(elementType.getIntOrFloatBitWidth(), vec);
    Type wordType = shape.wordType(ctx);
    Type asmResult = shape.words == 1
                         ? wordType
                         : LLVM::LLVMStructType::getLiteral(
                               ctx, SmallVector<Type>(shape.words, wordType));
    bool masked = !masks.empty();
    CacheQualifiers qualifiers(rewriter, loc, op.getCache(), op.getEvict(),
                               op.getIsVolatile());
    // Operands: $0.. outputs, then the address, the L2 policy (if any), then
    // (masked) the predicate and the fall-back values tied to the outputs.
    unsigned addr = shape.words;
    unsigned pred = addr + (qualifiers.policy ? 2 : 1);
    std::string policyText =
        qualifiers.policy ? ", $" + std::to_string(addr + 1) : "";
    std::string asmString =
        llvm::formatv("{0}ld{1}{2} {3}, [ ${4} + 0 ]{5};",
                      masked ? "@$" + std::to_string(pred) + " " : "",
                      qualifiers.text, shape.suffix(),
                      registerList(0, shape.words), addr, policyText)
            .str();
    std::string constraints;
    for (unsigned w = 0; w < shape.words; ++w)
      constraints += std::string(w ? "," : "") + "=" + shape.constraint();
    constraints += ",l";
    if (qualifiers.policy)
      constraints += ",l";
    if (masked) {
      constraints += ",b";
      for (unsigned w = 0; w < shape.words; ++w)
        constraints += "," + std::to_string(w);
    }

    // Registers in runs of equal addresses and masks load once; the others
    // take the first register's value.
    SmallVector<unsigned> representative;
    if (auto it = constancies.find(op); it != constancies.end())
      if (std::optional<kiln::layout::LinearLayout> layout =
              kiln::getLinearLayout(cast<RankedTensorType>(op.getType())))
        representative =
            kiln::layout::registersOfEqualRuns(*layout, it->second);
    auto copiesLoaded = [&](size_t k) {
      if (k + vec > representative.size() || representative[k] == k ||
          representative[k] % vec != 0)
        return false;
      for (unsigned j = 1; j < vec; ++j)
        if (representative[k + j] != representative[k] + j)
          return false;
      return true;
    };

    SmallVector<Value> results;
    for (size_t k = 0; k < ptrs.size(); k += vec) {
      if (copiesLoaded(k)) {
        for (unsigned j = 0; j < vec; ++j)
          results.push_back(results[representative[k] + j]);
        continue;
      }
      SmallVector<Value> operands{ptrs[k]};
      if (qualifiers.policy)
        operands.push_back(qualifiers.policy);
      if (masked) {
        operands.push_back(masks[k]);
        SmallVector<Value> fallback;
        if (!others.empty())
          fallback.assign(others.begin() + k, others.begin() + k + vec);
        else
          fallback.assign(vec,
                          LLVM::ZeroOp::create(rewriter, loc, elementType));
        llvm::append_range(
            operands, packWords(rewriter, loc, shape, fallback, elementType));
      }
      auto load = LLVM::InlineAsmOp::create(
          rewriter, loc, asmResult, operands, rewriter.getStringAttr(asmString),
          rewriter.getStringAttr(constraints),
          // Ordered with stores: PTX loads are not pure to LLVM.
          /*has_side_effects=*/rewriter.getUnitAttr(),
          /*is_align_stack=*/UnitAttr(),
          LLVM::TailCallKindAttr::get(ctx,
                                      LLVM::tailcallkind::TailCallKind::None),
          LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT),
          /*operand_attrs=*/ArrayAttr());
      SmallVector<Value> words =
          shape.words == 1
              ? SmallVector<Value>{load.getResult(0)}
              : kiln::unpackElements(rewriter, loc, load.getResult(0));
      llvm::append_range(results,
                         unpackWords(rewriter, loc, shape, words, elementType));
    }
    rewriter.replaceOp(op,
                       kiln::packElements(rewriter, loc, resultType, results));
    return success();
  }

  const kiln::AccessWidths &widths;
  const kiln::Constancies &constancies;
};

struct StoreLowering : OpConversionPattern<kiln::StoreOp> {
  StoreLowering(kiln::KilnTypeConverter &converter,
                const kiln::AccessWidths &widths, MLIRContext *ctx)
      : OpConversionPattern(converter, ctx), widths(widths) {}

  LogicalResult
  matchAndRewrite(kiln::StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    Type elementType = getTypeConverter()->convertType(
        kiln::getElementTypeOrSelf(op.getValue().getType()));
    if (!elementType)
      return failure();
    SmallVector<Value> ptrs =
        kiln::unpackElements(rewriter, loc, adaptor.getPtr());
    SmallVector<Value> values =
        kiln::unpackElements(rewriter, loc, adaptor.getValue());
    SmallVector<Value> masks;
    if (adaptor.getMask())
      masks = kiln::unpackElements(rewriter, loc, adaptor.getMask());

    unsigned vec = kiln::accessWidth(op, widths, op.getValue().getType());
    AccessShape shape =
        AccessShape::get(elementType.getIntOrFloatBitWidth(), vec);
    // Each element is written once: threads holding copies of another's
    // elements (a scalar's: all but thread 0) and registers that copy
    // lower ones store nothing, as upstream Triton's redundant-data mask.
    Value owner = kiln::ownerPredicate(rewriter, loc, op.getValue().getType());
    std::optional<kiln::layout::LinearLayout> layout;
    if (auto tensor = dyn_cast<RankedTensorType>(op.getValue().getType()))
      layout = kiln::getLinearLayout(tensor);
    bool masked = !masks.empty() || owner;
    CacheQualifiers qualifiers(rewriter, loc, op.getCache(), op.getEvict(),
                               /*isVolatile=*/false);
    // Operands: $0 address, then (masked) $1 predicate, then the values,
    // then the L2 policy (if any).
    unsigned firstValue = masked ? 2 : 1;
    std::string policyText =
        qualifiers.policy ? ", $" + std::to_string(firstValue + shape.words)
                          : "";
    std::string asmString =
        llvm::formatv("{0}st{1}{2} [ $0 + 0 ], {3}{4};", masked ? "@$1 " : "",
                      qualifiers.text, shape.suffix(),
                      registerList(firstValue, shape.words), policyText)
            .str();
    std::string constraints = masked ? "l,b" : "l";
    for (unsigned w = 0; w < shape.words; ++w)
      constraints += std::string(",") + shape.constraint();
    if (qualifiers.policy)
      constraints += ",l";

    for (size_t k = 0; k < ptrs.size(); k += vec) {
      if (layout && !kiln::isRepresentativeRegister(*layout, unsigned(k)))
        continue;
      SmallVector<Value> operands{ptrs[k]};
      if (masked) {
        Value pred = masks.empty() ? owner : masks[k];
        if (owner && !masks.empty())
          pred = LLVM::AndOp::create(rewriter, loc, masks[k], owner);
        operands.push_back(pred);
      }
      llvm::append_range(operands,
                         packWords(rewriter, loc, shape,
                                   ArrayRef<Value>(values).slice(k, vec),
                                   elementType));
      if (qualifiers.policy)
        operands.push_back(qualifiers.policy);
      LLVM::InlineAsmOp::create(
          rewriter, loc, /*res=*/Type(), operands,
          rewriter.getStringAttr(asmString),
          rewriter.getStringAttr(constraints),
          /*has_side_effects=*/rewriter.getUnitAttr(),
          /*is_align_stack=*/UnitAttr(),
          LLVM::TailCallKindAttr::get(ctx,
                                      LLVM::tailcallkind::TailCallKind::None),
          LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT),
          /*operand_attrs=*/ArrayAttr());
    }
    rewriter.eraseOp(op);
    return success();
  }

  const kiln::AccessWidths &widths;
};

} // namespace

void kiln::populateMemoryToLLVMPatterns(KilnTypeConverter &converter,
                                        const AccessWidths &widths,
                                        const Constancies &constancies,
                                        RewritePatternSet &patterns) {
  patterns.add<LoadLowering>(converter, widths, constancies,
                             patterns.getContext());
  patterns.add<StoreLowering>(converter, widths, patterns.getContext());
}
