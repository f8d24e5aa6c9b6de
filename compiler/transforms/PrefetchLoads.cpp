//===- PrefetchLoads.cpp - loads a tensor-core loop reads, one iteration early
//===//
//
// After kiln-pipeline-dots, a tensor-core loop's operand tiles arrive
// through cp.async rings, but its other loads (attention backward's row
// statistics m and Di, a few floats per thread; a quantized GEMM's scales)
// still go to global memory in the iteration that reads them, and each
// iteration waits out their latency. Such a load (or a scalar one:
// SageAttention's per-block k scale) is issued into registers as many
// iterations ahead as the loop's copies run (S - 1; the pipeliner marks
// the loop with it) when it feeds a dot operand and the values in flight
// beyond the next iteration's take at most 6 registers a thread over the
// loop (distanceFor says what the other choices measured): the prologue
// loads for the first iterations, each iteration loads for the one that
// far on (masked off past the last) and the loop carries the values in
// flight, oldest first. Other loads, and a load that feeds the copies (a
// gather's indices, which run with the load stage and only have to arrive
// before them), go one iteration ahead.
//
// The load's address, mask and `other` must come from the induction
// variable, values defined outside the loop and carried values that are
// recurrences of pure arithmetic (curr_m += step): then their next
// iteration's values are the yield's operands, and the whole computation can
// be cloned for iv + step. Farther ahead, the loop carries those values a
// second time, as many steps ahead. Only small loads (at most 8 registers a
// thread) are moved, as their registers stay live across iterations, and
// only where the loop writes no memory the load could read
// (writesMemoryReadBy: stores through other kernel arguments do not count).
//
//===----------------------------------------------------------------------===//
#include "compiler/ir/Dialects.h"
#include "compiler/layout/EqualRuns.h"
#include "compiler/transforms/AxisInfo.h"
#include "compiler/transforms/EarlyLoads.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/CommandLine.h"

#include <algorithm>

namespace kiln {
#define GEN_PASS_DEF_KILNPREFETCHLOADS
#include "compiler/transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

// 1 only to compare code with and without the longer distances.
static llvm::cl::opt<unsigned> prefetchMaxDistance(
    "kiln-prefetch-max-distance", llvm::cl::init(0), llvm::cl::Hidden,
    llvm::cl::desc("Load a tensor-core loop's small loads at most this many "
                   "iterations ahead (0: as far as its copies run)"));

namespace {

/// Registers a thread may spend on values loaded more than one iteration
/// ahead, over all of a loop's prefetched loads.
constexpr int64_t kExtraRegisters = 6;

/// Registers a thread holds for the distinct values of a tensor in a
/// distributed layout (32-bit registers), where `runs` are the runs of equal
/// values the lowering loads once (KilnToLLVM's load runs): a per-block
/// column scale in the accumulator's column layout is 32 elements a thread
/// but 8 loads at runs of 16 (aiter's block-scaled fp8 GEMM). None for
/// another layout.
std::optional<int64_t> registersPerThread(RankedTensorType type,
                                          ArrayRef<int64_t> runs) {
  auto encoding =
      dyn_cast_or_null<kiln::gpu::DistributedEncodingAttr>(type.getEncoding());
  if (!encoding)
    return std::nullopt;
  std::optional<kiln::layout::LinearLayout> layout =
      encoding.toLinearLayout(type.getShape());
  if (!layout)
    return std::nullopt;
  int64_t elements = kiln::layout::distinctRegisters(*layout, runs);
  unsigned bits = type.getElementType().isIntOrFloat()
                      ? type.getElementType().getIntOrFloatBitWidth()
                      : 64;
  return llvm::divideCeil(elements * bits, 32);
}

struct PrefetchLoadsPass
    : kiln::impl::KilnPrefetchLoadsBase<PrefetchLoadsPass> {
  void runOnOperation() override {
    // Each tensor load's registers, before any rewrite (clones of the
    // address arithmetic have no facts).
    {
      kiln::AxisInfoAnalysis axisInfo(getOperation());
      registers_.clear();
      getOperation().walk([&](kiln::LoadOp load) {
        auto type = dyn_cast<RankedTensorType>(load.getType());
        if (!type || load.getIsVolatile())
          return;
        if (std::optional<int64_t> registers = registersPerThread(
                type, axisInfo.loadedRuns(load.getPtr(), load.getMask(),
                                          load.getOther())))
          registers_[load] = *registers;
      });
    }
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) {
      if (llvm::any_of(loop.getBody()->getOperations(), [](Operation &op) {
            return isa<kiln::gpu::SharedDotOp>(op);
          }))
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops) {
      SmallVector<kiln::LoadOp> loads;
      for (Operation &op : loop.getBody()->without_terminator())
        if (auto load = dyn_cast<kiln::LoadOp>(op);
            load && prefetchable(load) && !kiln::writesMemoryReadBy(loop, load))
          loads.push_back(load);
      // Chosen before any rewrite: prefetch() moves the loads' users.
      SmallVector<kiln::LoadOp> operandLoads;
      for (kiln::LoadOp load : loads)
        if (!feedsCopies(load) && feedsOperands(load))
          operandLoads.push_back(load);
      unsigned distance = distanceFor(loop, operandLoads);
      for (kiln::LoadOp load : loads)
        loop = prefetch(loop, load,
                        llvm::is_contained(operandLoads, load) ? distance : 1);
    }
    // The mark has served its purpose.
    getOperation().walk(
        [](scf::ForOp loop) { loop->removeAttr(kiln::kStageLeadAttr); });
  }

private:
  /// Registers a thread holds for each tensor load's distinct values.
  llvm::DenseMap<Operation *, int64_t> registers_;

  bool prefetchable(kiln::LoadOp load) {
    if (load.getBoundaryCheck() || load.getIsVolatile())
      return false;
    // A scalar (SageAttention's per-block k scale, read each iteration).
    if (load.getType().isIntOrFloat() &&
        isa<kiln::PointerType>(load.getPtr().getType()))
      return kiln::aheadAddressSlice(load).has_value();
    auto type = dyn_cast<RankedTensorType>(load.getType());
    if (!type || !isa<RankedTensorType>(load.getPtr().getType()))
      return false;
    auto registers = registers_.find(load);
    if (registers == registers_.end() || registers->second > 8)
      return false;
    return kiln::aheadAddressSlice(load).has_value();
  }

  /// `load` for the iteration whose induction variable is `iv`, with
  /// `mapping` giving its carried values: the address slice cloned, the
  /// mask and-ed with `iv < ub`.
  static Value loadFor(OpBuilder &b, kiln::LoadOp load,
                       ArrayRef<Operation *> slice, IRMapping &mapping,
                       Value inRange) {
    for (Operation *op : slice)
      b.clone(*op, mapping);
    return kiln::loadMaskedBy(b, load, inRange, mapping);
  }

  /// Whether `load`'s value reaches a copy's address or mask (a gather's
  /// indices, which run with the load stage): such a load only has to
  /// arrive before the copies that read it, one iteration is enough.
  static bool feedsCopies(kiln::LoadOp load) {
    return kiln::reaches(
        load.getResult(),
        [](OpOperand &use) {
          return isa<kiln::gpu::AsyncCopyOp>(use.getOwner());
        },
        [](OpOperand &) { return false; });
  }

  /// Whether `load`'s value reaches a dot operand: a staged one (written
  /// to shared memory for the dot) or a in registers; not only the
  /// accumulator (a block-scaled GEMM's scales applied to each tile's
  /// product).
  static bool feedsOperands(kiln::LoadOp load) {
    return kiln::reaches(
        load.getResult(),
        [](OpOperand &use) {
          Operation *user = use.getOwner();
          return isa<kiln::gpu::LocalStoreOp>(user) ||
                 (isa<kiln::gpu::SharedDotOp>(user) &&
                  use.getOperandNumber() == 0);
        },
        [](OpOperand &use) {
          return isa<kiln::gpu::SharedDotOp>(use.getOwner());
        });
  }

  /// How many iterations ahead to load `loads`, the loop's loads that feed
  /// dot operands (and not the copies): as far as the loop's copies run
  /// (kiln-pipeline-dots marks it), as long as the values in flight beyond
  /// the next iteration's take at most kExtraRegisters a thread. H200,
  /// Kiln/Triton, one iteration -> as far as the copies: a few scalars or
  /// one-register scale vectors that feed operands gain 2-4%
  /// (SageAttention's k scales 0.97 -> 1.005, Mamba-2's chunk state 0.87 ->
  /// 0.90, HQQ's scales and zeros 0.93 -> 0.94); beside a register-bound
  /// loop (attention backward's m and Di, 4-8 registers each) they cost up
  /// to 15% (tutorial 06's backward at d128, 1.09 -> 0.93); and scales
  /// applied to each tile's product (fp8 block-scaled GEMMs) cost 5-9%
  /// (DeepSeek's 1.15 -> 1.05), so those stay one iteration ahead.
  unsigned distanceFor(scf::ForOp loop, ArrayRef<kiln::LoadOp> loads) {
    auto lead = loop->getAttrOfType<IntegerAttr>(kiln::kStageLeadAttr);
    if (!lead || prefetchMaxDistance == 1)
      return 1;
    int64_t registers = 0;
    for (kiln::LoadOp load : loads) {
      auto type = dyn_cast<RankedTensorType>(load.getType());
      registers += type ? std::max<int64_t>(1, registers_.lookup(load)) : 1;
    }
    int64_t most = lead.getInt();
    if (prefetchMaxDistance > 1)
      most = std::min<int64_t>(most, prefetchMaxDistance);
    if (registers == 0)
      return 1;
    return unsigned(
        std::clamp<int64_t>(1 + kExtraRegisters / registers, 1, most));
  }

  /// Loads `load` `distance` iterations ahead: the prologue loads the first
  /// `distance` iterations' values, the loop carries them (oldest first) and
  /// each iteration loads for iv + distance * step. Farther than one
  /// iteration, the carried values the address reads (pointer recurrences)
  /// are carried a second time, `distance` steps ahead.
  static scf::ForOp prefetch(scf::ForOp loop, kiln::LoadOp load,
                             unsigned distance) {
    SmallVector<Operation *> slice = *kiln::aheadAddressSlice(load);
    Location loc = load.getLoc();
    Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
          step = loop.getStep();
    Block *oldBody = loop.getBody();
    auto oldYield = cast<scf::YieldOp>(oldBody->getTerminator());
    Value oldIv = loop.getInductionVar();
    // The carried values the address reads, closed over their recurrences.
    SmallVector<unsigned> carried;
    if (distance > 1) {
      llvm::SmallSetVector<unsigned, 4> read;
      auto note = [&](Value v) {
        if (auto arg = dyn_cast<BlockArgument>(v);
            arg && arg.getOwner() == oldBody && arg.getArgNumber() > 0)
          read.insert(arg.getArgNumber() - 1);
      };
      for (Value v : load->getOperands())
        note(v);
      for (Operation *op : slice)
        for (Value v : op->getOperands())
          note(v);
      for (unsigned i = 0; i < read.size(); ++i)
        note(oldYield.getOperand(read[i]));
      carried.assign(read.begin(), read.end());
    }

    // The first iterations' values, before the loop, and (with carried
    // values) their state `distance` iterations in.
    OpBuilder b(loop);
    IRMapping state;
    for (auto [arg, init] :
         llvm::zip(loop.getRegionIterArgs(), loop.getInitArgs()))
      state.map(arg, init);
    SmallVector<Value> inits;
    for (unsigned j = 0; j < distance; ++j) {
      Value iv = kiln::ivPlus(b, loc, lb, step, j);
      state.map(oldIv, iv);
      Value inRange =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, iv, ub);
      inits.push_back(loadFor(b, load, slice, state, inRange));
      if (carried.empty())
        continue;
      IRMapping next;
      for (unsigned index : carried)
        next.map(loop.getRegionIterArgs()[index],
                 state.lookupOrDefault(oldYield.getOperand(index)));
      state = std::move(next);
    }
    for (unsigned index : carried)
      inits.push_back(state.lookup(loop.getRegionIterArgs()[index]));

    IRRewriter rewriter(b);
    auto newLoop = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
        rewriter, inits,
        /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &inner, Location, ArrayRef<BlockArgument> newArgs) {
          // The load `distance` iterations on, at the end of this one. The
          // body is still the old loop's here (it moves into the new loop
          // afterwards).
          inner.setInsertionPoint(oldYield);
          Value next = kiln::ivPlus(inner, loc, oldIv, step, distance);
          IRMapping mapping;
          mapping.map(oldIv, next);
          if (distance == 1) {
            for (unsigned i = 0; i < oldYield.getNumOperands(); ++i)
              mapping.map(oldBody->getArgument(1 + i), oldYield.getOperand(i));
          } else {
            for (auto [index, ahead] :
                 llvm::zip(carried, newArgs.drop_front(distance)))
              mapping.map(loop.getRegionIterArgs()[index], ahead);
          }
          Value inRange = arith::CmpIOp::create(
              inner, loc, arith::CmpIPredicate::slt, next, ub);
          Value loaded = loadFor(inner, load, slice, mapping, inRange);
          SmallVector<Value> yields(newArgs.begin() + 1,
                                    newArgs.begin() + distance);
          yields.push_back(loaded);
          for (unsigned index : carried)
            yields.push_back(
                mapping.lookupOrDefault(oldYield.getOperand(index)));
          return yields;
        }));
    unsigned first = newLoop.getNumRegionIterArgs() - unsigned(inits.size());
    load.getResult().replaceAllUsesWith(newLoop.getRegionIterArgs()[first]);
    load->erase();
    return newLoop;
  }
};

} // namespace
