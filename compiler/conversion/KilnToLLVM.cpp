//===- KilnToLLVM.cpp - the kiln-to-llvm pass
//------------------------------===//
#include "compiler/conversion/DistributedLayout.h"
#include "compiler/conversion/HalfPairBlockArguments.h"
#include "compiler/conversion/LoweringUtils.h"
#include "compiler/conversion/OpFamilyLowerings.h"
#include "compiler/ir/ElementTypes.h"
#include "compiler/ir/Occupancy.h"
#include "compiler/ir/TargetInfo.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace kiln {
#define GEN_PASS_DEF_KILNTOLLVM
#include "compiler/transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The module attribute kilnc reads for the metadata's shared_bytes.
constexpr llvm::StringLiteral kSharedBytesAttr = "kiln_gpu.shared_bytes";

struct KilnToLLVMPass : kiln::impl::KilnToLLVMBase<KilnToLLVMPass> {
  using KilnToLLVMBase::KilnToLLVMBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();

    // tl.map_elementwise's function, once per element group, before the
    // analyses below see the copies and their scf ops become branches.
    {
      kiln::KilnTypeConverter converter(ctx);
      if (failed(kiln::inlineMapElementwise(module, converter)))
        return signalPassFailure();
    }

    // Vector widths need axis info over the kiln ops, before they are gone.
    kiln::AccessWidths widths;
    kiln::Constancies constancies;
    {
      kiln::AxisInfoAnalysis axisInfo(module);
      // Along the dimension the value's layout puts a thread's consecutive
      // registers: a tile laid out down its columns (the b of a dot outside
      // a loop, stored N x K) reads its columns 16 bytes at a time.
      auto widthOf = [&](Value ptr, Value mask, Type valueType) {
        unsigned bits =
            kiln::getElementTypeOrSelf(valueType).getIntOrFloatBitWidth();
        if (auto tensor = dyn_cast<RankedTensorType>(valueType))
          if (std::optional<kiln::layout::LinearLayout> layout =
                  kiln::getLinearLayout(tensor))
            return axisInfo.vectorWidthAlong(ptr, mask, bits,
                                             kiln::vectorDimension(*layout));
        return axisInfo.vectorWidth(ptr, mask, bits);
      };
      module.walk([&](Operation *op) {
        // Integer element-wise results that repeat along some dimension.
        if (isa<arith::ArithDialect>(op->getDialect()) &&
            op->getNumResults() == 1 && !isa<arith::ConstantOp>(op))
          if (auto type =
                  dyn_cast<RankedTensorType>(op->getResult(0).getType()))
            if (type.getElementType().isIntOrIndex()) {
              const kiln::AxisInfo &info = axisInfo.get(op->getResult(0));
              if (llvm::any_of(info.constancy,
                               [](int64_t run) { return run > 1; }))
                constancies[op].assign(info.constancy.begin(),
                                       info.constancy.end());
            }
        if (auto load = dyn_cast<kiln::LoadOp>(op)) {
          widths[op] = widthOf(load.getPtr(), load.getMask(), load.getType());
          // Loads from runs of equal addresses (and masks): a per-block
          // scale that a whole column tile shares.
          if (!load.getIsVolatile() && isa<RankedTensorType>(load.getType())) {
            llvm::SmallVector<int64_t> runs = axisInfo.loadedRuns(
                load.getPtr(), load.getMask(), load.getOther());
            if (llvm::any_of(runs, [](int64_t run) { return run > 1; }))
              constancies[op].assign(runs.begin(), runs.end());
          }
        } else if (auto store = dyn_cast<kiln::StoreOp>(op))
          widths[op] = widthOf(store.getPtr(), store.getMask(),
                               store.getValue().getType());
        else if (auto atomic = dyn_cast<kiln::AtomicRMWOp>(op))
          widths[op] = widthOf(atomic.getPtr(), atomic.getMask(),
                               atomic.getVal().getType());
      });
    }
    // Divisibility facts are consumed; LLVM gets alignment instead. Tensor
    // maps become by-value kernel parameters.
    struct KernelArgs {
      std::string name;
      SmallVector<unsigned> aligned, tensorMaps;
    };
    SmallVector<KernelArgs> kernelArgs;
    module.walk([&](func::FuncOp func) {
      KernelArgs args{func.getName().str(), {}, {}};
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        auto div = func.getArgAttrOfType<IntegerAttr>(i, "kiln.divisibility");
        if (div && isa<kiln::PointerType>(func.getArgument(i).getType()))
          args.aligned.push_back(i);
        if (isa<kiln::TensorMapType>(func.getArgument(i).getType()))
          args.tensorMaps.push_back(i);
        func.removeArgAttr(i, "kiln.divisibility");
      }
      func->removeAttr(kiln::kGlobalScratchAttr);
      kernelArgs.push_back(std::move(args));
    });

    // `disable_licm` (tl.range's option, tl.condition's) becomes the loop
    // metadata LLVM's LICM honors; scf-to-cf puts it on the back edge.
    module.walk([&](Operation *op) {
      if (!isa<scf::ForOp, scf::WhileOp>(op))
        return;
      auto flag = op->getAttrOfType<IntegerAttr>("kiln.disable_licm");
      if (!flag || flag.getInt() == 0)
        return;
      auto licm =
          LLVM::LoopLICMAttr::get(ctx, BoolAttr::get(ctx, true), BoolAttr());
      op->setAttr("llvm.loop_annotation", LLVM::LoopAnnotationAttr::get(
                                              ctx, {}, {}, {}, {}, {}, licm, {},
                                              {}, {}, {}, {}, {}, {}, {}, {}));
    });

    // Structured control flow to branches first: block arguments then carry
    // tensors, which the type conversion below turns into structs.
    {
      RewritePatternSet scfPatterns(ctx);
      populateSCFToControlFlowConversionPatterns(scfPatterns);
      ConversionTarget scfTarget(*ctx);
      scfTarget.addIllegalDialect<scf::SCFDialect>();
      scfTarget.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
      if (failed(applyPartialConversion(module, scfTarget,
                                        std::move(scfPatterns))))
        return signalPassFailure();
    }

    // fp8 dot operands become fp32 first, through the fp8 conversions
    // (LLVM has no fp8 arithmetic to widen them in the dot's lowering).
    WalkResult unsupported = module.walk([&](kiln::DotOp dot) {
      for (OpOperand *operand : {&dot.getAMutable(), &dot.getBMutable()}) {
        auto type = cast<RankedTensorType>(operand->get().getType());
        if (!kiln::isFp8(type.getElementType()))
          continue;
        if (isa<Float8E4M3FNType>(type.getElementType()) &&
            computeCapability < 89) {
          dot.emitError("tl.dot of fp8e4nv operands needs sm_89 or newer, as "
                        "in Triton (fp8e5 works from sm_80)");
          return WalkResult::interrupt();
        }
        OpBuilder b(dot);
        operand->set(arith::ExtFOp::create(
            b, dot.getLoc(), type.clone(b.getF32Type()), operand->get()));
      }
      return WalkResult::advance();
    });
    if (unsupported.wasInterrupted())
      return signalPassFailure();

    kiln::KilnTypeConverter converter(ctx);
    RewritePatternSet patterns(ctx);
    kiln::populateReduceToLLVMPatterns(converter, patterns);
    kiln::populateMathToNVVMPatterns(converter, patterns);
    kiln::populateElementwiseToLLVMPatterns(converter, constancies, patterns);
    kiln::populateLayoutToLLVMPatterns(converter, patterns);
    kiln::populateMemoryToLLVMPatterns(converter, widths, constancies,
                                       patterns);
    kiln::populateExternCallsToLLVMPatterns(converter, patterns);
    kiln::populatePreciseMathToNVVMPatterns(converter, patterns);
    kiln::populatePointerCastsToLLVMPatterns(converter, patterns);
    kiln::populateAtomicsToLLVMPatterns(converter, computeCapability, widths,
                                        patterns);
    kiln::populateInlineAsmToLLVMPatterns(converter, patterns);
    kiln::populateScanToLLVMPatterns(converter, patterns);
    kiln::populateDotToLLVMPatterns(converter, patterns);
    kiln::populateSharedMemoryToLLVMPatterns(converter, patterns);
    kiln::populateWgmmaToLLVMPatterns(converter, patterns);
    kiln::populateTensorMapsToLLVMPatterns(converter, patterns);
    kiln::populateWarpSpecializationToLLVMPatterns(converter, patterns);
    kiln::populateFp8CastsToLLVMPatterns(converter, computeCapability,
                                         patterns);
    kiln::populateRoundTowardZeroToLLVMPatterns(converter, patterns);
    kiln::populateDebugOpsToLLVMPatterns(converter, patterns);
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    populateMathToLLVMConversionPatterns(converter, patterns);
    cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    populateFuncToLLVMConversionPatterns(converter, patterns);

    ConversionTarget target(*ctx);
    target.addLegalDialect<LLVM::LLVMDialect, NVVM::NVVMDialect>();
    target.addLegalOp<ModuleOp>();
    target.addIllegalDialect<kiln::KilnDialect, kiln::gpu::KilnGPUDialect,
                             arith::ArithDialect, math::MathDialect,
                             func::FuncDialect, cf::ControlFlowDialect>();
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    kiln::pairHalfBlockArguments(module);
    // Shared memory: the dynamic pool's size, within what the target allows.
    int64_t sharedBytes = kiln::poolSharedMemory(module);
    kiln::TargetInfo targetInfo = kiln::TargetInfo::of(module);
    // Recorded before the check, so that a driver can tell a kernel that
    // does not fit the target (an autotune config to skip) from an error.
    module->setAttr(kSharedBytesAttr,
                    OpBuilder(ctx).getI64IntegerAttr(sharedBytes));
    if (sharedBytes > targetInfo.maxSharedBytes()) {
      std::string kernel = "the kernel";
      module.walk([&](LLVM::LLVMFuncOp f) {
        if (!f.isPrivate() && !f.isExternal())
          kernel = "'" + f.getName().str() + "'";
      });
      // At the kernel's location, without the module (the whole IR) as a
      // note.
      mlir::emitError(module.getLoc())
          << kernel << " needs " << sharedBytes << " bytes of shared memory; "
          << targetInfo.name() << " allows at most "
          << targetInfo.maxSharedBytes()
          << " per block (use fewer num_stages or smaller "
             "tiles)";
      return signalPassFailure();
    }

    // Mark kernels: entry points, their thread count, aligned pointers.
    auto numWarps = module->getAttrOfType<IntegerAttr>(
        kiln::gpu::KilnGPUDialect::kNumWarpsAttrName);
    auto threadsPerWarp = module->getAttrOfType<IntegerAttr>(
        kiln::gpu::KilnGPUDialect::kThreadsPerWarpAttrName);
    if (!numWarps || !threadsPerWarp) {
      module.emitError("kiln-to-llvm needs kiln_gpu.num_warps and "
                       "kiln_gpu.threads_per_warp (run kiln-assign-layouts)");
      return signalPassFailure();
    }
    int32_t threads = int32_t(numWarps.getInt() * threadsPerWarp.getInt());
    // A warp-specialized kernel: its producer warps come after the
    // consumers (num_warps), whose barriers leave them out; `.maxnreg` lets
    // all of them start, before setmaxnreg moves the registers.
    auto producerWarps = module->getAttrOfType<IntegerAttr>(
        kiln::gpu::KilnGPUDialect::kProducerWarpsAttrName);
    std::optional<int32_t> maxRegisters;
    if (producerWarps) {
      // As many blocks per SM as the shared memory allows while the
      // consumers keep enough registers: both register counts follow.
      unsigned blocks = kiln::warpSpecializedBlocks(
          targetInfo, unsigned(numWarps.getInt()), sharedBytes);
      module.walk([&](NVVM::SetMaxRegisterOp op) {
        if (op.getAction() == NVVM::SetMaxRegisterAction::increase)
          op.setRegCount(int32_t(
              kiln::consumerRegisters(unsigned(numWarps.getInt()), blocks)));
      });
      kiln::nameConsumerBarriers(module, unsigned(threads));
      threads += int32_t(producerWarps.getInt() * threadsPerWarp.getInt());
      maxRegisters = int32_t(
          kiln::warpSpecializedStartRegisters(unsigned(threads), blocks));
    }
    OpBuilder b(ctx);
    for (const KernelArgs &args : kernelArgs) {
      auto func = module.lookupSymbol<LLVM::LLVMFuncOp>(args.name);
      if (!func || func.isPrivate())
        continue;
      func->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(),
                    b.getUnitAttr());
      func->setAttr(NVVM::NVVMDialect::getReqntidAttrName(),
                    b.getDenseI32ArrayAttr({threads, 1, 1}));
      if (maxRegisters)
        func->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                      b.getI32IntegerAttr(*maxRegisters));
      for (unsigned i : args.aligned)
        func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                        b.getI64IntegerAttr(16));
      // A CUtensorMap: 128 bytes by value, 64-byte aligned, read in place
      // (grid_constant: its address is that of the parameter itself, which
      // TMA instructions take).
      for (unsigned i : args.tensorMaps) {
        func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                        TypeAttr::get(LLVM::LLVMArrayType::get(
                            b.getI8Type(), kiln::kTensorMapBytes)));
        func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                        b.getI64IntegerAttr(kiln::kTensorMapAlignment));
        func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                        b.getUnitAttr());
      }
    }
  }
};

} // namespace
