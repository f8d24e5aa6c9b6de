//===- SumDotsApart.cpp - c + dot(a, b, 0) as one dot that adds c after ---===//
//
// fp8's `acc += tl.dot(a, b)` stays a dot from zero and an add: kiln.dot's
// AccumulateIntoDot keeps them apart so that acc is not accumulated at the
// tensor cores' reduced precision. Lowered as they are, the wgmma's fresh
// product tile and the accumulator are both live at the add. For a
// 128 x 256 fp32 tile over 8 warps that is 128 registers a thread each,
// and the two together spill around every wgmma (FBGEMM's fp8 GEMM
// without fast accumulation).
//
// A kiln_gpu.shared_dot marked add_c_after computes the same sums (the
// product from zero, then c + product in fp32, element by element) a slice
// of N at a time, so only a slice's registers are live beside c. An async
// shared_dot with a zero accumulator, whose result only a dot_wait reads
// and whose waited value only an addf reads, becomes one where the
// accumulator takes at least kMinRegisters registers a thread. Smaller
// tiles fit beside their product, and their dot stays in flight across
// whatever runs before the wait.
//
//===----------------------------------------------------------------------===//
#include "compiler/ir/Dialects.h"
#include "compiler/ir/TargetInfo.h"
#include "compiler/transforms/AsyncCopies.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Dominance.h"

namespace kiln {
#define GEN_PASS_DEF_KILNSUMDOTSAPART
#include "compiler/transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// fp32 registers a thread from which an accumulator is summed apart: with
/// its product beside it, 192 or more of the 255 a thread may have.
constexpr int64_t kMinRegisters = 96;

struct SumDotsApartPass : kiln::impl::KilnSumDotsApartBase<SumDotsApartPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto warps = module->getAttrOfType<IntegerAttr>(
        kiln::gpu::KilnGPUDialect::kNumWarpsAttrName);
    int64_t threads =
        kiln::TargetInfo::kThreadsPerWarp * (warps ? warps.getInt() : 4);
    DominanceInfo dominance(module);
    SmallVector<kiln::gpu::SharedDotOp> dots;
    module.walk([&](kiln::gpu::SharedDotOp dot) { dots.push_back(dot); });
    for (kiln::gpu::SharedDotOp dot : dots)
      sumApart(dot, threads, dominance);
  }

  void sumApart(kiln::gpu::SharedDotOp dot, int64_t threads,
                DominanceInfo &dominance) {
    RankedTensorType type = dot.getType();
    if (!dot.getAsync() || dot.getUseC() || !type.getElementType().isF32() ||
        type.getNumElements() / threads < kMinRegisters ||
        !kiln::isZero(dot.getC()) || !dot->hasOneUse())
      return;
    auto wait = dyn_cast<kiln::gpu::DotWaitOp>(*dot->user_begin());
    if (!wait || wait->getBlock() != dot->getBlock())
      return;
    unsigned index = dot->use_begin()->getOperandNumber();
    Value waited = wait.getOutputs()[index];
    if (!waited.hasOneUse())
      return;
    auto add = dyn_cast<arith::AddFOp>(*waited.user_begin());
    if (!add || add->getBlock() != dot->getBlock())
      return;
    Value c = add.getLhs() == waited ? add.getRhs() : add.getLhs();
    // The sum is made where the dot was issued, so c must exist there.
    if (c.getType() != type || !dominance.properlyDominates(c, dot))
      return;
    OpBuilder b(dot);
    auto summed = kiln::gpu::SharedDotOp::create(
        b, dot.getLoc(), type, dot.getA(), dot.getB(), c, Value(), UnitAttr(),
        dot.getInputPrecisionAttr(), b.getUnitAttr(),
        dot.getMaxNumImpreciseAccAttr());
    add.replaceAllUsesWith(summed.getD());
    add.erase();
    // The wait keeps tying whatever else it waits for.
    SmallVector<Value> others;
    SmallVector<Value> outputs;
    for (auto [i, input] : llvm::enumerate(wait.getInputs()))
      if (i != index) {
        others.push_back(input);
        outputs.push_back(wait.getOutputs()[i]);
      }
    if (!others.empty()) {
      OpBuilder at(wait);
      auto rest = kiln::gpu::DotWaitOp::create(at, wait.getLoc(),
                                               ValueRange(others).getTypes(),
                                               others, wait.getPendingAttr());
      for (auto [old, now] : llvm::zip_equal(outputs, rest.getOutputs()))
        old.replaceAllUsesWith(now);
    }
    wait.erase();
    dot.erase();
  }
};

} // namespace
