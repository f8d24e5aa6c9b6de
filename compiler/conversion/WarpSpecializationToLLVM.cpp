//===- WarpSpecializationToLLVM.cpp - producer and consumer warps ---------===//
//
// The ops of a warp-specialized kernel
// (compiler/ir/KilnGPUWarpSpecialization.td):
// - kiln_gpu.warp_index: tid.x / 32;
// - kiln_gpu.set_max_registers: `setmaxnreg.inc/dec.sync.aligned.u32`;
// - kiln_gpu.tensor_map_acquire: the tensor-map proxy's acquire fence.
//
// And the consumers' barriers: once the producer warps have left for their
// own branch, a CTA barrier (`bar.sync 0`, which waits for every thread of
// the program) would never complete. Every barrier that the consumers'
// register increase dominates, the lowerings' own included, becomes the
// named barrier 1 for the consumer threads alone.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/LoweringUtils.h"
#include "compiler/conversion/OpFamilyLowerings.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Dominance.h"

using namespace mlir;

namespace {

struct WarpIndexLowering : OpConversionPattern<kiln::gpu::WarpIndexOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::WarpIndexOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    rewriter.replaceOp(
        op, LLVM::LShrOp::create(rewriter, loc, kiln::threadIdX(rewriter, loc),
                                 kiln::i32Constant(rewriter, loc, 5)));
    return success();
  }
};

struct SetMaxRegistersLowering
    : OpConversionPattern<kiln::gpu::SetMaxRegistersOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::SetMaxRegistersOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    NVVM::SetMaxRegisterOp::create(rewriter, op.getLoc(), op.getCount(),
                                   op.getIncrease()
                                       ? NVVM::SetMaxRegisterAction::increase
                                       : NVVM::SetMaxRegisterAction::decrease);
    rewriter.eraseOp(op);
    return success();
  }
};

struct TensorMapAcquireLowering
    : OpConversionPattern<kiln::gpu::TensorMapAcquireOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::TensorMapAcquireOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value address = LLVM::PtrToIntOp::create(
        rewriter, loc, rewriter.getI64Type(), adaptor.getTensorMap());
    kiln::inlinePtxEffect(rewriter, loc, Type(),
                          "fence.proxy.tensormap::generic.acquire.gpu [$0], "
                          "128;",
                          "l", ValueRange{address});
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void kiln::populateWarpSpecializationToLLVMPatterns(
    KilnTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<WarpIndexLowering, SetMaxRegistersLowering,
               TensorMapAcquireLowering>(converter, patterns.getContext());
}

void kiln::nameConsumerBarriers(ModuleOp module, unsigned consumerThreads) {
  module.walk([&](LLVM::LLVMFuncOp func) {
    SmallVector<Operation *> increases;
    func.walk([&](NVVM::SetMaxRegisterOp op) {
      if (op.getAction() == NVVM::SetMaxRegisterAction::increase)
        increases.push_back(op);
    });
    if (increases.empty())
      return;
    DominanceInfo dominance(func);
    SmallVector<NVVM::Barrier0Op> barriers;
    func.walk([&](NVVM::Barrier0Op barrier) {
      if (llvm::any_of(increases, [&](Operation *increase) {
            return dominance.properlyDominates(increase, barrier);
          }))
        barriers.push_back(barrier);
    });
    for (NVVM::Barrier0Op barrier : barriers) {
      OpBuilder b(barrier);
      Location loc = barrier.getLoc();
      NVVM::BarrierOp::create(b, loc, TypeRange{}, kiln::i32Constant(b, loc, 1),
                              kiln::i32Constant(b, loc, consumerThreads),
                              NVVM::BarrierReductionAttr(), Value());
      barrier->erase();
    }
  });
}
