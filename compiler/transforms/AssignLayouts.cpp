//===- AssignLayouts.cpp - pick a thread layout for every tensor ----------===//
//
// The layout decides coalescing: consecutive lanes should touch consecutive
// 16-byte chunks. For each tensor shape this pass makes each thread own as
// many contiguous elements as the widest vectorizable global access of that
// shape allows (so one thread issues one 128-bit access per chunk), and
// rewrites every tensor type with that blocked layout.
//
// Only 1-D tensors get a chosen layout for now; the layout algebra that makes
// multi-dimensional layouts and conversions uniform comes with reductions.
//
//===----------------------------------------------------------------------===//
#include "compiler/transforms/AxisInfo.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace kiln {
#define GEN_PASS_DEF_KILNASSIGNLAYOUTS
#include "compiler/transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr unsigned kThreadsPerWarp = 32;

struct AssignLayoutsPass
    : kiln::impl::KilnAssignLayoutsBase<AssignLayoutsPass> {
  using KilnAssignLayoutsBase::KilnAssignLayoutsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    if (!llvm::isPowerOf2_32(numWarps) || numWarps > 32) {
      module.emitError("num-warps must be a power of two up to 32, got ")
          << numWarps;
      return signalPassFailure();
    }
    unsigned threads = numWarps * kThreadsPerWarp;

    kiln::AxisInfoAnalysis axisInfo(module);
    bool failed = false;
    module.walk([&](func::FuncOp func) {
      failed |= assignLayouts(func, axisInfo, threads).failed();
    });
    if (failed)
      return signalPassFailure();
    OpBuilder b(ctx);
    module->setAttr(kiln::gpu::KilnGPUDialect::kNumWarpsAttrName,
                    b.getI32IntegerAttr(numWarps));
    module->setAttr(kiln::gpu::KilnGPUDialect::kThreadsPerWarpAttrName,
                    b.getI32IntegerAttr(kThreadsPerWarp));
  }

  /// Layouts for one function: each shape's chunk is as wide as its widest
  /// vectorizable access in this function.
  LogicalResult assignLayouts(func::FuncOp func,
                              kiln::AxisInfoAnalysis &axisInfo,
                              unsigned threads) {
    MLIRContext *ctx = &getContext();
    llvm::DenseMap<int64_t, unsigned> widest; // 1-D size → elements per chunk
    auto noteAccess = [&](Value ptr, Type valueType) {
      auto tensor = dyn_cast<RankedTensorType>(valueType);
      if (!tensor || tensor.getRank() != 1)
        return;
      unsigned bits = tensor.getElementType().getIntOrFloatBitWidth();
      // The mask does not limit the layout, only the vector instructions.
      unsigned vec = axisInfo.vectorWidth(ptr, /*mask=*/nullptr, bits);
      unsigned &w = widest[tensor.getDimSize(0)];
      w = std::max(w, vec);
    };
    func.walk([&](Operation *op) {
      if (auto load = dyn_cast<kiln::LoadOp>(op))
        noteAccess(load.getPtr(), load.getType());
      else if (auto store = dyn_cast<kiln::StoreOp>(op))
        noteAccess(store.getPtr(), store.getValue().getType());
    });

    auto layoutFor = [&](RankedTensorType type) -> Attribute {
      if (type.getRank() != 1)
        return {};
      int64_t n = type.getDimSize(0);
      unsigned perThread = std::max(1u, widest.lookup(n));
      // Never more than the thread's share, so that no thread sits idle.
      perThread =
          std::min<int64_t>(perThread, std::max<int64_t>(1, n / threads));
      return kiln::gpu::BlockedEncodingAttr::get(
          ctx, {perThread}, {kThreadsPerWarp}, {numWarps}, {0});
    };
    auto retype = [&](Type type) -> Type {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor || tensor.getEncoding())
        return type;
      Attribute layout = layoutFor(tensor);
      if (!layout)
        return type;
      return RankedTensorType::get(tensor.getShape(), tensor.getElementType(),
                                   layout);
    };

    // The first op with a source location that needs an unsupported layout:
    // one error there, pointing at the kernel line.
    Operation *unsupported = nullptr;
    int64_t unsupportedRank = 0;
    func.walk([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            arg.setType(retype(arg.getType()));
      for (OpResult result : op->getResults()) {
        auto tensor = dyn_cast<RankedTensorType>(result.getType());
        if (tensor && tensor.getRank() != 1 &&
            (!unsupported || (!isa<FileLineColLoc>(unsupported->getLoc()) &&
                              isa<FileLineColLoc>(op->getLoc())))) {
          unsupported = op;
          unsupportedRank = tensor.getRank();
        }
        result.setType(retype(result.getType()));
      }
      // Dense constants carry their type in the attribute too.
      if (auto constant = dyn_cast<arith::ConstantOp>(op))
        if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
          if (dense.getType() != constant.getType())
            constant.setValueAttr(
                dense.reshape(cast<ShapedType>(constant.getType())));
    });
    // Function types follow their (retyped) entry block arguments.
    if (!func.isExternal()) {
      auto type = func.getFunctionType();
      SmallVector<Type> inputs(func.getArgumentTypes());
      for (auto [i, arg] : llvm::enumerate(func.getArguments()))
        inputs[i] = arg.getType();
      func.setType(FunctionType::get(ctx, inputs, type.getResults()));
    }
    if (unsupported) {
      unsupported->emitError("tensors of rank ")
          << unsupportedRank
          << " are not supported by the GPU backend yet (only 1-D tensors "
             "have layouts so far)";
      return failure();
    }
    return success();
  }
};

} // namespace
