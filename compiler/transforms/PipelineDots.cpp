//===- PipelineDots.cpp - cp.async rings for the operands of loop dots ----===//
//
// A loop whose body loads both operands of a tensor-core dot from global
// memory is rewritten so that the loads of iteration i + S - 1 (S =
// num_stages) are in flight, as cp.async copies into a ring of S shared
// tiles per operand, while iteration i multiplies tiles that have landed:
//
//   prologue:  for j < S-1: copy tiles of iteration j into slot j; commit
//   loop i:    wait until <= S-2 groups pend; barrier; (fence)
//              d = shared_dot(A[i % S], B[i % S], acc)       (async on wgmma)
//              d = dot_wait(d, pending = 1)                 (wgmma only)
//              copy tiles of iteration i+S-1 into slot (i+S-1) % S; commit
//   after:     wait for every group; d = dot_wait(d, pending = 0); barrier
//
// The loads' address computation (their backward slice in the body, and the
// loop-carried values it advances, such as `a_ptrs += BK * stride`) forms
// the load stage. It is closed under the loop's recurrences, so running it
// S-1 iterations ahead only needs its carried values to start S-1 steps
// ahead: the prologue computes them, the loop carries them, and inside the
// loop the stage reads `iv + (S-1) * step` instead of `iv`. Copies past the
// last iteration are masked off (they write zeros to a slot never read).
//
// Only loops the rewrite is sure about are touched: one dot on the tensor
// cores (fp16/bf16, or fp8 on wgmma with both tiles K-contiguous), both
// operands loaded in the body (masked loads read zero), a load
// stage that is pure apart from those loads and not used by the rest of the
// body, and accesses of at least 4 bytes (cp.async's smallest).
//
//===----------------------------------------------------------------------===//
#include "compiler/ir/TargetInfo.h"
#include "compiler/transforms/AxisInfo.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

namespace kiln {
#define GEN_PASS_DEF_KILNPIPELINEDOTS
#include "compiler/transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The attribute on async copies giving their elements per cp.async, decided
/// from axis info on the original loads.
constexpr llvm::StringLiteral kVecAttr = "kiln_gpu.vec";

/// One operand of the dot, loaded in the body.
struct PipelinedLoad {
  kiln::LoadOp load;
  unsigned vec = 1;
  kiln::gpu::MemDescType ring;
};

/// True when `v` is a zero constant (a splat of 0 or a dense zero).
bool isZero(Value v) {
  if (!v)
    return true;
  if (matchPattern(v, m_AnyZeroFloat()) || matchPattern(v, m_Zero()))
    return true;
  if (auto splat = v.getDefiningOp<kiln::SplatOp>())
    return isZero(splat.getSrc());
  return false;
}

/// The load whose value reaches the dot operand `v` (through layout
/// conversions only), when it is in `body`.
kiln::LoadOp producingLoad(Value v, Block *body) {
  while (auto convert = v.getDefiningOp<kiln::gpu::ConvertLayoutOp>()) {
    if (!convert->hasOneUse())
      return {};
    v = convert.getSrc();
  }
  auto load = v.getDefiningOp<kiln::LoadOp>();
  if (!load || load->getBlock() != body || !load->hasOneUse())
    return {};
  return load;
}

/// The shared tile a dot operand of this type is staged in: lines along its
/// contiguous dimension (the last, or the first when `transposed`),
/// swizzled by as many bytes as a line has (up to 128).
kiln::gpu::MemDescType ringType(RankedTensorType operand, unsigned stages,
                                bool transposed) {
  Type element = operand.getElementType();
  int64_t lineBytes = operand.getShape()[transposed ? 0 : 1] *
                      (element.getIntOrFloatBitWidth() / 8);
  unsigned swizzle = unsigned(std::min<int64_t>(128, lineBytes));
  SmallVector<int64_t> shape{int64_t(stages)};
  llvm::append_range(shape, operand.getShape());
  return kiln::gpu::MemDescType::get(
      operand.getContext(), shape, element,
      kiln::gpu::NVMMASharedEncodingAttr::get(operand.getContext(), swizzle,
                                              transposed));
}

struct PipelineDotsPass : kiln::impl::KilnPipelineDotsBase<PipelineDotsPass> {
  using KilnPipelineDotsBase::KilnPipelineDotsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    kiln::TargetInfo target = kiln::TargetInfo::of(module);
    if (!target.hasCpAsync())
      return;
    auto warps = module->getAttrOfType<IntegerAttr>(
        kiln::gpu::KilnGPUDialect::kNumWarpsAttrName);
    numWarps_ = warps ? unsigned(warps.getInt()) : 4;
    wgmma_ = target.hasWgmma();
    kiln::AxisInfoAnalysis axisInfo(module);
    SmallVector<scf::ForOp> loops;
    module.walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      pipeline(loop, axisInfo);
  }

private:
  unsigned numWarps_ = 4;
  bool wgmma_ = false;

  /// Whether the lowering of a shared_dot with this accumulator will use
  /// wgmma: warps all along M, in warpgroups of 64 rows.
  bool usesWgmma(RankedTensorType acc) const {
    auto mma = dyn_cast<kiln::gpu::MmaEncodingAttr>(acc.getEncoding());
    return wgmma_ && mma && numWarps_ % 4 == 0 &&
           mma.getWarpsPerCTA()[0] == numWarps_ &&
           acc.getDimSize(0) % (16 * numWarps_) == 0 &&
           acc.getDimSize(0) % 64 == 0 && acc.getDimSize(1) % 8 == 0 &&
           acc.getDimSize(1) <= 256;
  }

  void pipeline(scf::ForOp loop, kiln::AxisInfoAnalysis &axisInfo) {
    Block *body = loop.getBody();
    unsigned stages = numStages;
    if (auto attr = loop->getAttrOfType<IntegerAttr>("kiln.num_stages"))
      stages = unsigned(attr.getInt());
    if (stages < 2)
      return;

    // The dot: fp16/bf16 into fp32 in the mma layout, accumulating into a
    // carried value that it alone produces.
    kiln::DotOp dot;
    for (Operation &op : body->without_terminator()) {
      auto d = dyn_cast<kiln::DotOp>(op);
      if (!d)
        continue;
      if (dot)
        return; // one dot per loop
      dot = d;
    }
    if (!dot)
      return;
    RankedTensorType accType = dot.getType();
    Type aElement = dot.getA().getType().getElementType();
    Type bElement = dot.getB().getType().getElementType();
    auto isFp8 = [](Type t) {
      return isa<Float8E4M3FNType, Float8E5M2Type>(t);
    };
    bool fp8 = isFp8(aElement) && isFp8(bElement);
    if (!isa<kiln::gpu::MmaEncodingAttr>(accType.getEncoding()) ||
        accType.getRank() != 2 ||
        !(((aElement.isF16() || aElement.isBF16()) && bElement == aElement) ||
          fp8) ||
        !accType.getElementType().isF32())
      return;
    auto yield = cast<scf::YieldOp>(body->getTerminator());
    auto accArg = dyn_cast<BlockArgument>(dot.getC());
    if (!accArg || accArg.getOwner() != body || accArg.getArgNumber() == 0)
      return;
    unsigned accIndex = accArg.getArgNumber() - 1;
    if (yield.getOperand(accIndex) != dot.getD() || !dot->hasOneUse() ||
        !accArg.hasOneUse())
      return;
    bool async = usesWgmma(accType);
    // fp8 runs on wgmma only, with both tiles K-contiguous.
    if (fp8 && !async)
      return;

    // Both operands loaded here, zero where masked.
    PipelinedLoad loads[2];
    Value operands[2] = {dot.getA(), dot.getB()};
    for (auto [i, operand] : llvm::enumerate(operands)) {
      kiln::LoadOp load = producingLoad(operand, body);
      if (!load || load.getBoundaryCheck() || load.getIsVolatile() ||
          !isZero(load.getOther()))
        return;
      auto type = cast<RankedTensorType>(load.getType());
      unsigned bits = type.getElementType().getIntOrFloatBitWidth();
      // The tile is copied along its pointers' fastest dimension.
      auto blocked = dyn_cast<kiln::gpu::BlockedEncodingAttr>(
          cast<RankedTensorType>(load.getPtr().getType()).getEncoding());
      unsigned dim = blocked ? blocked.getOrder()[0] : 1;
      unsigned vec =
          axisInfo.vectorWidthAlong(load.getPtr(), load.getMask(), bits, dim);
      if (vec * bits < 32)
        return; // cp.async moves 4, 8 or 16 bytes
      int64_t lineBytes = type.getShape()[dim] * bits / 8;
      if (lineBytes < 32 || !llvm::isPowerOf2_64(uint64_t(lineBytes)))
        return;
      bool kContiguous = dim == (i == 0 ? 1u : 0u);
      if (fp8 && !kContiguous)
        return;
      loads[i] = {load, vec, ringType(type, stages, dim == 0)};
    }

    // The load stage: the loads' backward slice in the body, closed over
    // the carried values it reads.
    llvm::SetVector<Operation *> stage;
    llvm::SmallDenseSet<unsigned> stageCarried;
    SmallVector<Value> work;
    for (PipelinedLoad &l : loads) {
      stage.insert(l.load);
      llvm::append_range(work, l.load->getOperands());
    }
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        if (arg.getOwner() != body || arg.getArgNumber() == 0)
          continue; // the induction variable, or defined outside
        unsigned index = arg.getArgNumber() - 1;
        if (stageCarried.insert(index).second)
          work.push_back(yield.getOperand(index));
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != body || stage.contains(def))
        continue;
      if (def->getNumRegions() != 0 || !isMemoryEffectFree(def))
        return;
      stage.insert(def);
      llvm::append_range(work, def->getOperands());
    }
    if (stageCarried.contains(accIndex))
      return;
    // The rest of the body must not read the stage (it runs ahead), nor may
    // anything after the loop read the stage's carried values.
    for (Operation &op : body->without_terminator()) {
      if (stage.contains(&op))
        continue;
      for (Value operand : op.getOperands()) {
        Operation *def = operand.getDefiningOp();
        bool fromLoad = def == loads[0].load || def == loads[1].load;
        if (def && stage.contains(def) && !fromLoad)
          return;
        if (auto arg = dyn_cast<BlockArgument>(operand);
            arg && arg.getOwner() == body && arg.getArgNumber() > 0 &&
            stageCarried.contains(arg.getArgNumber() - 1))
          return;
      }
    }
    for (auto [index, operand] : llvm::enumerate(yield.getOperands()))
      if (!stageCarried.contains(unsigned(index)))
        if (Operation *def = operand.getDefiningOp();
            def && stage.contains(def))
          return;
    for (unsigned index : stageCarried)
      if (!loop.getResult(index).use_empty())
        return;

    rewrite(loop, dot, loads, stage, stageCarried, stages, async);
  }

  /// `iv + k * step` in the induction variable's type.
  static Value ivPlus(OpBuilder &b, Location loc, Value iv, Value step,
                      int64_t k) {
    if (k == 0)
      return iv;
    Value kk =
        arith::ConstantOp::create(b, loc, b.getIntegerAttr(iv.getType(), k));
    return arith::AddIOp::create(b, loc, iv,
                                 arith::MulIOp::create(b, loc, kk, step));
  }

  /// The copy replacing `load` for the iteration whose induction variable is
  /// `iv`: its operands through `mapping`, masked by iv < ub.
  static void emitCopy(OpBuilder &b, PipelinedLoad l, IRMapping &mapping,
                       Value inRange, Value tile) {
    Location loc = l.load.getLoc();
    auto ptrType = cast<RankedTensorType>(l.load.getPtr().getType());
    auto maskType = RankedTensorType::get(ptrType.getShape(), b.getI1Type(),
                                          ptrType.getEncoding());
    Value mask = kiln::SplatOp::create(b, loc, maskType, inRange);
    if (Value original = l.load.getMask())
      mask = arith::AndIOp::create(b, loc, mapping.lookupOrDefault(original),
                                   mask);
    auto copy = kiln::gpu::AsyncCopyOp::create(
        b, loc, mapping.lookupOrDefault(l.load.getPtr()), tile, mask);
    copy->setAttr(kVecAttr, b.getI32IntegerAttr(int32_t(l.vec)));
  }

  static Value tileOf(OpBuilder &b, Location loc, Value ring, Value slot) {
    auto type = cast<kiln::gpu::MemDescType>(ring.getType());
    auto tile = kiln::gpu::MemDescType::get(
        b.getContext(), type.getShape().drop_front(), type.getElementType(),
        type.getEncoding());
    return kiln::gpu::MemDescIndexOp::create(b, loc, tile, ring, slot);
  }

  void rewrite(scf::ForOp loop, kiln::DotOp dot, PipelinedLoad (&loads)[2],
               const llvm::SetVector<Operation *> &stage,
               const llvm::SmallDenseSet<unsigned> &stageCarried,
               unsigned stages, bool async) {
    Location loc = loop.getLoc();
    OpBuilder b(loop);
    Block *body = loop.getBody();
    auto yield = cast<scf::YieldOp>(body->getTerminator());
    Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
          step = loop.getStep();
    Type i32 = b.getI32Type();
    auto i32Const = [&](OpBuilder &builder, int64_t v) -> Value {
      return arith::ConstantOp::create(builder, loc,
                                       builder.getI32IntegerAttr(int32_t(v)));
    };

    Value rings[2];
    for (int i = 0; i < 2; ++i)
      rings[i] =
          kiln::gpu::LocalAllocOp::create(b, loc, loads[i].ring, IntegerAttr());

    // Prologue: the load stage for iterations 0 .. S-2.
    SmallVector<Value> carried(loop.getInitArgs());
    for (unsigned j = 0; j + 1 < stages; ++j) {
      IRMapping mapping;
      Value iv = ivPlus(b, loc, lb, step, j);
      mapping.map(loop.getInductionVar(), iv);
      for (unsigned index : stageCarried)
        mapping.map(loop.getRegionIterArgs()[index], carried[index]);
      Value inRange =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, iv, ub);
      for (Operation &op : body->without_terminator()) {
        if (!stage.contains(&op))
          continue;
        if (&op == loads[0].load || &op == loads[1].load) {
          int which = &op == loads[0].load ? 0 : 1;
          emitCopy(b, loads[which], mapping, inRange,
                   tileOf(b, loc, rings[which], i32Const(b, j)));
          continue;
        }
        b.clone(op, mapping);
      }
      kiln::gpu::AsyncCommitGroupOp::create(b, loc);
      for (unsigned index : stageCarried)
        carried[index] = mapping.lookupOrDefault(yield.getOperand(index));
    }

    // The loop carries the stage S-1 iterations ahead, and the ring slots
    // read and written.
    for (unsigned index : stageCarried)
      loop.getInitArgsMutable()[index].set(carried[index]);
    IRRewriter rewriter(b);
    auto newLoop = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
        rewriter, ValueRange{i32Const(b, 0), i32Const(b, int64_t(stages) - 1)},
        /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &, Location, ArrayRef<BlockArgument> newArgs) {
          return SmallVector<Value>(newArgs.begin(), newArgs.end());
        }));
    body = newLoop.getBody();
    yield = cast<scf::YieldOp>(body->getTerminator());
    unsigned numArgs = newLoop.getNumRegionIterArgs();
    Value readSlot = newLoop.getRegionIterArgs()[numArgs - 2];
    Value writeSlot = newLoop.getRegionIterArgs()[numArgs - 1];

    // The stage reads iv + (S-1) * step.
    b.setInsertionPointToStart(body);
    Value iv = newLoop.getInductionVar();
    Value ahead = ivPlus(b, loc, iv, newLoop.getStep(), int64_t(stages) - 1);
    for (Operation *op : stage)
      op->replaceUsesOfWith(iv, ahead);
    kiln::gpu::AsyncWaitOp::create(b, loc, int32_t(stages) - 2);
    kiln::gpu::BarrierOp::create(b, loc);
    if (async)
      kiln::gpu::FenceAsyncSharedOp::create(b, loc);

    // The dot on the slot that has landed.
    b.setInsertionPoint(dot);
    Value aTile = tileOf(b, loc, rings[0], readSlot);
    Value bTile = tileOf(b, loc, rings[1], readSlot);
    auto shared = kiln::gpu::SharedDotOp::create(b, loc, dot.getType(), aTile,
                                                 bTile, dot.getC(), async);
    Value result = shared.getD();
    if (async) {
      result = kiln::gpu::DotWaitOp::create(b, loc, TypeRange{result.getType()},
                                            ValueRange{result}, 1)
                   .getOutputs()[0];
      // The other warpgroups may still read the slot about to be refilled.
      if (numWarps_ > 4)
        kiln::gpu::BarrierOp::create(b, loc);
    }
    dot.getD().replaceAllUsesWith(result);
    Value operands[2] = {dot.getA(), dot.getB()};
    dot->erase();
    for (Value operand : operands)
      while (auto convert =
                 operand.getDefiningOp<kiln::gpu::ConvertLayoutOp>()) {
        operand = convert.getSrc();
        convert->erase();
      }

    // The stage's copies go last: the slot they fill was read by the dot of
    // the previous iteration, which is complete only after the wait above.
    b.setInsertionPoint(yield);
    Value inRange =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, ahead, ub);
    IRMapping identity;
    for (int i = 0; i < 2; ++i) {
      emitCopy(b, loads[i], identity, inRange,
               tileOf(b, loc, rings[i], writeSlot));
      loads[i].load->erase();
    }
    kiln::gpu::AsyncCommitGroupOp::create(b, loc);
    auto advance = [&](Value slot) -> Value {
      Value next = arith::AddIOp::create(b, loc, slot, i32Const(b, 1));
      Value wrap = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, next,
                                         i32Const(b, stages));
      return arith::SelectOp::create(b, loc, wrap, i32Const(b, 0), next);
    };
    yield->setOperand(numArgs - 2, advance(readSlot));
    yield->setOperand(numArgs - 1, advance(writeSlot));
    (void)i32;

    // After the loop: nothing in flight, then the accumulator is readable.
    b.setInsertionPointAfter(newLoop);
    kiln::gpu::AsyncWaitOp::create(b, loc, 0);
    unsigned accIndex = cast<BlockArgument>(shared.getC()).getArgNumber() - 1;
    Value acc = newLoop.getResult(accIndex);
    if (async) {
      auto wait = kiln::gpu::DotWaitOp::create(b, loc, TypeRange{acc.getType()},
                                               ValueRange{acc}, 0);
      acc.replaceAllUsesExcept(wait.getOutputs()[0], wait);
    }
    kiln::gpu::BarrierOp::create(b, loc);
  }
};

} // namespace
