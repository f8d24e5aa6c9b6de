//===- KilnPipeline.cpp - Kiln's pass pipeline, as one definition ---------===//
#include "compiler/conversion/KilnPipeline.h"
#include "compiler/conversion/SharedBarriers.h"

#include "compiler/ir/TargetInfo.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {

/// Names the module's target (kiln_gpu.target), which passes and lowerings
/// ask through TargetInfo; an unknown name fails here, once.
struct SetTargetPass : PassWrapper<SetTargetPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SetTargetPass)

  SetTargetPass() = default;
  SetTargetPass(const SetTargetPass &other) : PassWrapper(other) {}
  explicit SetTargetPass(StringRef name) { arch = name.str(); }

  StringRef getArgument() const override { return "kiln-set-target"; }
  StringRef getName() const override { return "KilnSetTarget"; }
  StringRef getDescription() const override {
    return "Name the module's target architecture (kiln_gpu.target)";
  }

  void runOnOperation() override {
    if (!kiln::TargetInfo::parse(arch)) {
      getOperation().emitError("unknown target architecture '")
          << arch << "' (sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100a, sm_120a)";
      return signalPassFailure();
    }
    getOperation()->setAttr(kiln::TargetInfo::kAttrName,
                            StringAttr::get(&getContext(), arch));
  }

  Option<std::string> arch{*this, "arch",
                           llvm::cl::desc("Target architecture, e.g. sm_90a"),
                           llvm::cl::init("sm_80")};
};

/// kiln-pipeline's textual options.
struct PipelineTextOptions : PassPipelineOptions<PipelineTextOptions> {
  Option<std::string> arch{*this, "arch",
                           llvm::cl::desc("Target architecture, e.g. sm_90a"),
                           llvm::cl::init("sm_80")};
  Option<unsigned> numWarps{*this, "num-warps",
                            llvm::cl::desc("Warps per program"),
                            llvm::cl::init(4)};
  Option<unsigned> numStages{*this, "num-stages",
                             llvm::cl::desc("Software pipeline depth"),
                             llvm::cl::init(3)};
  Option<std::string> stopAfter{
      *this, "stop-after",
      llvm::cl::desc("Last stage: gpu (kiln_gpu IR) or llvm (the default)"),
      llvm::cl::init("llvm")};
  Option<int64_t> tmaStoreScratchMargin{
      *this, "tma-store-scratch-margin",
      llvm::cl::desc("kiln-tma-stores' scratch-margin (kilnc's retry where "
                     "shared memory runs out uses the pass's default)"),
      llvm::cl::init(0)};
  Option<bool> deferDotWaits{
      *this, "defer-dot-waits",
      llvm::cl::desc("kiln-pipeline-dots' defer-waits (kilnc's retry where "
                     "ptxas serializes the wgmma turns it off)"),
      llvm::cl::init(true)};
  Option<bool> invariantRings{
      *this, "invariant-rings",
      llvm::cl::desc("kiln-pipeline-dots' invariant-rings (kilnc's retry "
                     "where the rings cost blocks per SM turns it off)"),
      llvm::cl::init(true)};
};

} // namespace

void kiln::buildKilnGpuPipeline(OpPassManager &pm,
                                const KilnPipelineOptions &options) {
  pm.addPass(std::make_unique<SetTargetPass>(options.arch));
  pm.addPass(createKilnUnrollLoops());
  pm.addPass(createKilnLowerTensorDescriptors());
  pm.addPass(createKilnRewriteBlockPointers());
  pm.addPass(createKilnCarryPointers());
  KilnAssignLayoutsOptions layouts;
  layouts.numWarps = options.numWarps;
  pm.addPass(createKilnAssignLayouts(layouts));
  if (options.flatten)
    pm.addPass(createKilnFlattenLoops());
  KilnPipelineDotsOptions pipeline;
  pipeline.numStages = options.numStages;
  pipeline.deferWaits = options.deferDotWaits;
  pipeline.invariantRings = options.invariantRings;
  pm.addPass(createKilnPipelineDots(pipeline));
  KilnStageDotsOptions staging;
  staging.copyAtLoads = options.copyAtLoads;
  staging.besideLiveBuffers = options.stageBesideLiveBuffers;
  pm.addPass(createKilnStageDots(staging));
  KilnTmaStoresOptions stores;
  stores.scratchMargin = options.tmaStoreScratchMargin;
  pm.addPass(createKilnTmaStores(stores));
  pm.addPass(createKilnPlaceTensorMaps());
  pm.addPass(createKilnPrefetchLoads());
  pm.addPass(createKilnSumDotsApart());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createKilnAllocateShared());
  pm.addPass(createKilnDropClosingBarriers());
}

void kiln::buildKilnLLVMPipeline(OpPassManager &pm,
                                 const KilnPipelineOptions &options) {
  KilnToLLVMOptions llvm;
  if (std::optional<TargetInfo> target = TargetInfo::parse(options.arch))
    llvm.computeCapability = target->computeCapability();
  pm.addPass(createKilnToLLVM(llvm));
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createRemoveRedundantBarriers());
}

void kiln::registerKilnPipeline() {
  PassRegistration<SetTargetPass>();
  registerRemoveRedundantBarriers();
  registerPassPipeline(
      "kiln-pipeline",
      "Kiln's passes from kiln IR to kiln_gpu IR (stop-after=gpu) or to the "
      "LLVM dialect, as kilnc runs them",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        PipelineTextOptions parsed;
        if (failed(parsed.parseFromString(text)))
          return failure();
        if (!TargetInfo::parse(parsed.arch))
          return errorHandler("kiln-pipeline: unknown arch '" + parsed.arch +
                              "'");
        if (parsed.stopAfter != "gpu" && parsed.stopAfter != "llvm")
          return errorHandler("kiln-pipeline: stop-after must be gpu or "
                              "llvm, got '" +
                              parsed.stopAfter + "'");
        KilnPipelineOptions options;
        options.arch = parsed.arch;
        options.numWarps = parsed.numWarps;
        options.numStages = parsed.numStages;
        options.deferDotWaits = parsed.deferDotWaits;
        options.invariantRings = parsed.invariantRings;
        options.tmaStoreScratchMargin = parsed.tmaStoreScratchMargin;
        buildKilnGpuPipeline(pm, options);
        if (parsed.stopAfter == "llvm")
          buildKilnLLVMPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> handler) {
        handler(PipelineTextOptions());
      });
}
