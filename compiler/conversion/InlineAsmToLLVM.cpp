//===- InlineAsmToLLVM.cpp - tl.inline_asm_elementwise --------------------===//
//
// The user's PTX runs once per group of `packed_element` consecutive
// elements the thread holds. Narrow elements of a group travel packed into
// 32-bit registers (four u8 in one `r`), wider ones one a register, as
// upstream Triton passes them: an operand (a result) of a group of P takes
// P / min(P, max(1, 32 / bits)) registers (compiler/ir/InlineAsmRegisters.h,
// the front end's check uses the same rule). Several results come back as a
// struct, each result's registers in turn.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/OpFamilyLowerings.h"
#include "compiler/ir/InlineAsmRegisters.h"

using namespace mlir;

namespace {

/// How many elements of `element` share one register in a group of `pack`
/// (pointers are 64 bits).
unsigned elementsPerRegister(Type element, unsigned pack) {
  unsigned bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 64;
  return kiln::inlineAsmElementsPerRegister(bits, pack);
}

/// The register type of `pack` elements of `element`: the element itself,
/// or an integer of all their bits.
Type packedType(Type element, unsigned pack) {
  if (pack == 1)
    return element;
  return IntegerType::get(element.getContext(),
                          element.getIntOrFloatBitWidth() * pack);
}

Value packGroup(OpBuilder &b, Location loc, ArrayRef<Value> group) {
  if (group.size() == 1)
    return group.front();
  Type element = group.front().getType();
  auto vectorType = VectorType::get({int64_t(group.size())}, element);
  Value vector = LLVM::UndefOp::create(b, loc, vectorType);
  for (auto [i, e] : llvm::enumerate(group))
    vector = LLVM::InsertElementOp::create(
        b, loc, vector, e,
        LLVM::ConstantOp::create(b, loc, b.getI32Type(), b.getI32IntegerAttr(i)));
  return LLVM::BitcastOp::create(b, loc, packedType(element, group.size()),
                                 vector);
}

void unpackGroup(OpBuilder &b, Location loc, Value packed, Type element,
                 unsigned pack, SmallVectorImpl<Value> &out) {
  if (pack == 1) {
    out.push_back(packed);
    return;
  }
  Value vector = LLVM::BitcastOp::create(
      b, loc, VectorType::get({int64_t(pack)}, element), packed);
  for (unsigned i = 0; i < pack; ++i)
    out.push_back(LLVM::ExtractElementOp::create(
        b, loc, vector,
        LLVM::ConstantOp::create(b, loc, b.getI32Type(), b.getI32IntegerAttr(i))));
}

struct InlineAsmElementwiseLowering
    : OpConversionPattern<kiln::InlineAsmElementwiseOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::InlineAsmElementwiseOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    unsigned pack = op.getPackedElement();
    SmallVector<Type> resultTypes, resultElements;
    for (Type t : op.getResultTypes()) {
      Type converted = getTypeConverter()->convertType(t);
      Type element = getTypeConverter()->convertType(kiln::getElementTypeOrSelf(t));
      if (!converted || !element)
        return rewriter.notifyMatchFailure(op, "result type not convertible");
      resultTypes.push_back(converted);
      resultElements.push_back(element);
    }
    SmallVector<SmallVector<Value>> args;
    for (Value arg : adaptor.getArgs())
      args.push_back(kiln::unpackElements(rewriter, loc, arg));
    size_t count = 1;
    if (auto s = dyn_cast<LLVM::LLVMStructType>(resultTypes.front()))
      count = s.getBody().size();
    if (count % pack != 0)
      return op.emitOpError("packs ")
             << pack << " elements but each thread holds " << count;

    SmallVector<Type> asmResults;
    for (Type element : resultElements) {
      unsigned perRegister = elementsPerRegister(element, pack);
      for (unsigned i = 0; i < pack; i += perRegister)
        asmResults.push_back(packedType(element, perRegister));
    }
    Type asmResultType =
        asmResults.size() == 1
            ? asmResults.front()
            : LLVM::LLVMStructType::getLiteral(ctx, asmResults);
    SmallVector<unsigned> argPerRegister;
    for (Value arg : op.getArgs())
      argPerRegister.push_back(
          elementsPerRegister(getTypeConverter()->convertType(
                                  kiln::getElementTypeOrSelf(arg.getType())),
                              pack));

    SmallVector<SmallVector<Value>> results(resultTypes.size());
    for (size_t k = 0; k < count; k += pack) {
      SmallVector<Value> operands;
      for (auto [elements, perRegister] : llvm::zip(args, argPerRegister))
        for (unsigned i = 0; i < pack; i += perRegister)
          operands.push_back(
              packGroup(rewriter, loc,
                        ArrayRef<Value>(elements).slice(k + i, perRegister)));
      auto asmOp = LLVM::InlineAsmOp::create(
          rewriter, loc, asmResultType, operands, op.getAsmStringAttr(),
          op.getConstraintsAttr(),
          /*has_side_effects=*/op.getPure() ? UnitAttr() : rewriter.getUnitAttr(),
          /*is_align_stack=*/UnitAttr(),
          LLVM::TailCallKindAttr::get(ctx, LLVM::tailcallkind::TailCallKind::None),
          LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT),
          /*operand_attrs=*/ArrayAttr());
      SmallVector<Value> packed =
          asmResults.size() == 1
              ? SmallVector<Value>{asmOp.getResult(0)}
              : kiln::unpackElements(rewriter, loc, asmOp.getResult(0));
      size_t next = 0;
      for (size_t r = 0; r < resultElements.size(); ++r) {
        unsigned perRegister = elementsPerRegister(resultElements[r], pack);
        for (unsigned i = 0; i < pack; i += perRegister)
          unpackGroup(rewriter, loc, packed[next++], resultElements[r],
                      perRegister, results[r]);
      }
    }
    SmallVector<Value> replacements;
    for (size_t r = 0; r < resultTypes.size(); ++r)
      replacements.push_back(
          kiln::packElements(rewriter, loc, resultTypes[r], results[r]));
    rewriter.replaceOp(op, replacements);
    return success();
  }
};

} // namespace

void kiln::populateInlineAsmToLLVMPatterns(KilnTypeConverter &converter,
                                           RewritePatternSet &patterns) {
  patterns.add<InlineAsmElementwiseLowering>(converter, patterns.getContext());
}
