//===- StageDots.cpp - wgmma for the dots the pipeliner left in registers -===//
//
// kiln-pipeline-dots gives wgmma the dots of the loops it pipelines. A dot
// it leaves alone (outside any loop, in a loop with num_stages 1, in a loop
// it cannot prove safe) multiplies from registers with mma.sync, which on
// an H100/H200 reaches about 60% of wgmma's rate. Upstream Triton stages
// such operands through shared memory for wgmma whether or not the loop is
// pipelined, and so does this pass, on targets with wgmma:
//
//   a_tile = local_alloc; local_store a, a_tile     (b likewise)
//   fence_async_shared; barrier                      (every part written, and
//                                                     visible to the async
//                                                     proxy wgmma reads by)
//   d = shared_dot(a_tile, b_tile, c)                (wgmma, waited for)
//   barrier                                          (no warp writes the
//                                                     tiles' bytes again
//                                                     while another reads)
//
// Where a is already in the accumulator's layout with warps along M
// (attention's p), it stays in registers: those are wgmma's A fragments.
// The tiles are allocated right before the dot, so that they live only
// there; an operand the loops around it do not change (attention's q) is
// written once, before them. A tile's lines run along the operand's contiguous
// dimension where wgmma can read it so (16-bit types), else along K. Only dots
// the wgmma lowering takes (TensorCoreFlavour::fitsWgmma) are staged, and only
// where their tiles fit beside every other buffer of the function.
//
//===----------------------------------------------------------------------===//
#include "compiler/ir/TargetInfo.h"
#include "compiler/ir/TensorCoreFlavour.h"
#include "compiler/transforms/AsyncCopies.h"
#include "compiler/transforms/Passes.h"
#include "compiler/transforms/RingTiles.h"
#include "compiler/transforms/SharedBudget.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/CommandLine.h"

namespace kiln {
#define GEN_PASS_DEF_KILNSTAGEDOTS
#include "compiler/transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

// Off only to compare code with and without it.
static llvm::cl::opt<bool>
    stageDots("kiln-stage-dots-for-wgmma", llvm::cl::init(true),
              llvm::cl::Hidden,
              llvm::cl::desc("Stage the operands of dots outside pipelined "
                             "loops through shared memory for wgmma"));

namespace {

/// `value` before the layout conversions that lead to it: what a
/// local_store can write as well.
Value beforeConversions(Value value) {
  while (auto convert = value.getDefiningOp<kiln::gpu::ConvertLayoutOp>())
    value = convert.getSrc();
  return value;
}

/// The tile operand `which` (0: a, M x K; 1: b, K x N) is staged in: a
/// ring tile (kiln::ringType) with lines along the dimension the operand's
/// blocked layout holds contiguous when wgmma can read either
/// (`transposable`), else along K.
kiln::gpu::MemDescType stagingTile(RankedTensorType operand, unsigned which,
                                   bool transposable) {
  bool transposed = which == 1;
  if (transposable) {
    auto blocked =
        dyn_cast_or_null<kiln::gpu::BlockedEncodingAttr>(operand.getEncoding());
    transposed = blocked && blocked.getOrder()[0] == 0;
  }
  return kiln::tileType(kiln::ringType(operand, 1, transposed));
}

struct StageDotsPass : kiln::impl::KilnStageDotsBase<StageDotsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    kiln::TargetInfo target = kiln::TargetInfo::of(module);
    if (!stageDots || !target.hasWgmma())
      return;
    auto warps = module->getAttrOfType<IntegerAttr>(
        kiln::gpu::KilnGPUDialect::kNumWarpsAttrName);
    unsigned numWarps = warps ? unsigned(warps.getInt()) : 4;
    SmallVector<kiln::DotOp> dots;
    module.walk([&](kiln::DotOp dot) { dots.push_back(dot); });
    for (kiln::DotOp dot : dots)
      stage(dot, target, numWarps);
  }

  void stage(kiln::DotOp dot, const kiln::TargetInfo &target,
             unsigned numWarps) {
    RankedTensorType accType = dot.getType();
    auto mma = dyn_cast<kiln::gpu::MmaEncodingAttr>(accType.getEncoding());
    if (!mma || accType.getRank() != 2)
      return;
    std::optional<kiln::TensorCoreFlavour> flavour = kiln::tensorCoreFlavour(
        dot.getA().getType().getElementType(),
        dot.getB().getType().getElementType(), accType.getElementType(),
        dot.getInputPrecision(), target);
    int64_t k = dot.getA().getType().getDimSize(1);
    if (!flavour || k % flavour->kGroup() != 0 || k % flavour->kStep() != 0)
      return;
    Value sources[2] = {beforeConversions(dot.getA()),
                        beforeConversions(dot.getB())};
    // a in the accumulator's layout with warps along M: its registers are
    // wgmma's A fragments.
    auto aType = cast<RankedTensorType>(sources[0].getType());
    bool aInRegisters = flavour->registerA() &&
                        aType.getEncoding() == accType.getEncoding() &&
                        mma.getWarpsPerCTA()[1] == 1;
    kiln::gpu::MemDescType tiles[2];
    bool kContiguous[2] = {true, true};
    int64_t bytes = 0;
    for (unsigned i = aInRegisters ? 1 : 0; i < 2; ++i) {
      auto type = cast<RankedTensorType>(sources[i].getType());
      tiles[i] = stagingTile(type, i, flavour->transposable());
      bool transposed =
          cast<kiln::gpu::NVMMASharedEncodingAttr>(tiles[i].getEncoding())
              .getTransposed();
      kContiguous[i] = i == 0 ? !transposed : transposed;
      int64_t lineBytes = type.getDimSize(transposed ? 0 : 1) *
                          type.getElementTypeBitWidth() / 8;
      if (!kiln::isSwizzlableLine(lineBytes))
        return;
      bytes += kiln::alignedBufferBytes(tiles[i].getSizeInBytes());
    }
    if (!flavour->fitsWgmma(target, accType.getDimSize(0),
                            accType.getDimSize(1), numWarps,
                            mma.getWarpsPerCTA()[0], kContiguous[0],
                            kContiguous[1], aInRegisters))
      return;
    // Beside every other buffer of the function (an upper bound: they may
    // not all live here). No op between the tiles' allocation and the dot
    // takes scratch.
    bytes += kiln::bufferBytes(dot->getParentOfType<FunctionOpInterface>());
    if (bytes > target.maxSharedBytes())
      return;

    OpBuilder b(dot);
    Location loc = dot.getLoc();
    Value operands[2] = {sources[0], sources[1]};
    for (unsigned i = aInRegisters ? 1 : 0; i < 2; ++i) {
      // An operand the loops around the dot do not change (attention's q)
      // is written once, before the outermost of them.
      Operation *at = dot;
      for (Operation *loop = dot->getParentOp();
           isa_and_nonnull<scf::ForOp, scf::WhileOp>(loop) &&
           !loop->isAncestor(sources[i].getParentBlock()->getParentOp());
           loop = loop->getParentOp())
        at = loop;
      OpBuilder before(at);
      Value tile =
          kiln::gpu::LocalAllocOp::create(before, loc, tiles[i], IntegerAttr());
      kiln::gpu::LocalStoreOp::create(before, loc, sources[i], tile);
      operands[i] = tile;
    }
    kiln::gpu::FenceAsyncSharedOp::create(b, loc);
    kiln::gpu::BarrierOp::create(b, loc);
    auto shared = kiln::gpu::SharedDotOp::create(
        b, loc, accType, operands[0], operands[1], dot.getC(), Value(),
        UnitAttr(), kiln::sharedDotPrecision(dot));
    kiln::gpu::BarrierOp::create(b, loc);
    Value oldA = dot.getA(), oldB = dot.getB();
    dot.getResult().replaceAllUsesWith(shared.getD());
    dot->erase();
    kiln::eraseOperandPath(oldA);
    if (oldB != oldA)
      kiln::eraseOperandPath(oldB);
  }
};

} // namespace
