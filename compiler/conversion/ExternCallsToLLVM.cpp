//===- ExternCallsToLLVM.cpp - calls into libdevice -----------------------===//
//
// kiln.extern_elementwise (tl.extra.cuda.libdevice.*, tl.math functions
// without an instruction) becomes one call per element of the named
// `__nv_*` function, declared in the module. The target links libdevice
// whenever such a declaration is left after optimisation.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/ElementMapping.h"
#include "compiler/conversion/OpFamilyLowerings.h"

using namespace mlir;

namespace {

/// The declaration of `name`, added at the start of the module if absent.
LLVM::LLVMFuncOp declareFunction(OpBuilder &b, ModuleOp module, Location loc,
                                 StringRef name, LLVM::LLVMFunctionType type) {
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  return LLVM::LLVMFuncOp::create(b, loc, name, type);
}

struct ExternElementwiseLowering
    : OpConversionPattern<kiln::ExternElementwiseOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::ExternElementwiseOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type resultType = getTypeConverter()->convertType(op.getType());
    Type resultElement = getTypeConverter()->convertType(
        kiln::getElementTypeOrSelf(op.getType()));
    if (!resultType || !resultElement)
      return rewriter.notifyMatchFailure(op, "result type not convertible");
    SmallVector<Type> argElements;
    for (Value src : op.getSrcs()) {
      Type t = getTypeConverter()->convertType(kiln::getElementTypeOrSelf(src.getType()));
      if (!t)
        return rewriter.notifyMatchFailure(op, "operand type not convertible");
      argElements.push_back(t);
    }
    auto functionType = LLVM::LLVMFunctionType::get(resultElement, argElements);
    LLVM::LLVMFuncOp callee =
        declareFunction(rewriter, op->getParentOfType<ModuleOp>(), loc,
                        op.getSymbol(), functionType);
    if (callee.getFunctionType() != functionType)
      return op.emitOpError("calls ")
             << op.getSymbol() << " as " << functionType
             << " but it is declared as " << callee.getFunctionType();
    Value result = kiln::mapElements(
        rewriter, loc, resultType, adaptor.getSrcs(), [&](ValueRange args) {
          return LLVM::CallOp::create(rewriter, loc, callee, args).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void kiln::populateExternCallsToLLVMPatterns(KilnTypeConverter &converter,
                                             RewritePatternSet &patterns) {
  patterns.add<ExternElementwiseLowering>(converter, patterns.getContext());
}
