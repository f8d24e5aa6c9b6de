//===- PipelineDots.cpp - cp.async/TMA rings for the operands of loop dots ===//
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
//              (the copies come right after the barrier instead when no
//              dot stays in flight across iterations: mma.sync, attention)
//   after:     wait for every group; d = dot_wait(d, pending = 0); barrier
//
// A loop of mma.sync dots takes rings of S - 1 slots instead, as Triton's
// do (shortRings). With one dot each slot is read at the iteration's start
// and, behind a barrier after the dot, refilled with the tiles of
// iteration i + S - 1, so that S - 1 iterations are in flight while the
// next one waits (refillReadSlots). With several (attention), the copies
// of iteration i + S - 2 refill the slot the previous iteration read,
// right after the top barrier (S - 2 in flight, no second barrier).
//
// The loads' address computation (their backward slice in the body, and the
// loop-carried values it advances, such as `a_ptrs += BK * stride`) forms
// the load stage. It is closed under the loop's recurrences, so running it
// S-1 iterations ahead only needs its carried values to start S-1 steps
// ahead: the prologue computes them, the loop carries them, and inside the
// loop the stage reads `iv + (S-1) * step` instead of `iv`. Copies past the
// last iteration are masked off (they write zeros to a slot never read).
//
// On sm_90a a ring whose load carries a kernel argument's tensor map
// (kiln-lower-tensor-descriptors keeps it) is filled by TMA instead: each
// slot has an mbarrier, thread 0 arms it with the tile's bytes and issues
// the bulk copy (kiln_gpu.async_tma_copy), and every thread waits on the
// slot's phase (a carried parity, flipped as the reads wrap) right before
// the first dot that reads the tile. The tile lands as it is in memory
// (row-major, the hardware swizzle), so a transposed operand reads a
// memdesc_trans view. TMA writes need no barrier to be seen, so a loop of
// TMA rings whose copies wait for the iteration's end has none at its top.
//
// A loop may hold several dots (attention: q @ k, then p @ v). Each
// operand tile is loaded in the body (a ring, as above), loaded once before
// the loop (q: copied once into its own tile, in a group older than the
// prologue's), or, for a, computed in registers in the accumulator's layout
// with warps along M (p: its fragments are already where the instruction
// wants them). One tile may feed two operands, one of them transposed
// (attention backward's qᵀ: b of k @ qᵀ, and through a memdesc_trans view
// b of dsᵀ @ q). A dot accumulating into a carried value (the matmul form,
// or attention backward's dk += ...) keeps its wgmma group in flight until
// the next dot's wait. With TMA rings, so does a dot whose result is only
// carried and is read in the next iteration after an earlier dot's full
// wait (attention forward's p @ v, whose acc * alpha follows q @ k's wait),
// which ties the carried value. Other dots are waited for at once, as their
// results are read in the same iteration, except a dot whose result only
// the next one accumulates into (chainedDots): the two are issued back to
// back and waited for once.
// An operand may also be computed in registers from tiles loaded in the
// body (a weight-only quantized GEMM: int8 or packed int4 weights
// converted, shifted and scaled before the dot). Those tiles get rings like
// operand tiles, each iteration reads its slot back into the load's layout
// where the load was (kiln_gpu.local_load: each thread reads the chunks it
// copied), the computation runs as written (an `if` of pure ops included:
// GGUF's nibble choice), and its result is written into
// a staging tile that the dot reads, behind a barrier (and a proxy fence for
// wgmma). Where the dot stays in flight, two staging tiles are used in turn.
// A value carried by the loop is staged so too, as it is (Lightning
// Attention-2's kv state, b of q @ kv; on wgmma targets only), and tf32
// operands of a dot wgmma can compute are staged K-major, the only order
// wgmma reads them in.
// Without this such a loop was not pipelined at all (0.29-0.36 of Triton's
// speed for an int8-weight GEMM on the H200; 1.18 with it at 128x256x64).
// Such a tile whose pointers repeat in runs (a packed int4 weight's
// `(k // 8) * stride`: eight rows of k read one row of words) keeps one
// line per run in its ring (kiln_gpu.runs, compiler/ir/TileRuns.h): each
// thread then reads back what others copied, which the barrier after the
// iteration's wait orders (0.79 -> 2.0 of Triton on the H200). A row of
// scales such a computation reads as `scale[None, :]` is loaded as that
// 1 x N row (widenVectorLoads) and gets a ring too, as Triton's pipeliner
// copies it, rather than waiting in registers. And an
// 8-bit b loaded with n contiguous, which wgmma cannot read (it reads 8-bit
// tiles K-major only), goes the same way with no computation: read back
// and staged K-major (0.56 -> 2.5 at 128x128x128).
// Address arithmetic that the rest of the body shares with the load stage
// (a causal mask's start_n + offs_n) is duplicated for it, since the stage
// runs ahead.
//
// The stage may hold loads of its own: a gather's indices (paged
// attention's token slots, `k = tl.load(K + slot[None, :] * stride + ...)`),
// which run ahead with it as ordinary loads, masked off past the loop's last
// iteration, in loops that write no memory (kiln-prefetch-loads then loads
// them one iteration earlier still). Without this such a loop was not
// pipelined (lightllm's GQA decode attention at 0.42-0.56 of Triton on the
// H200, 1.05-1.9 with it). Its second dot, p @ v on a group's 16 query
// heads, has warps along N: p goes to every warp whole (broadcastA).
//
// Only loops the rewrite is sure about are touched: dots of a tensor-core
// flavour (compiler/ir/TensorCoreFlavour.h; async on wgmma when it fits,
// else mma.sync) directly in the body, each operand as above (masked loads read
// zero), a load stage that is pure apart from those loads and index loads and
// not carried past the loop, and accesses of at least 4 bytes (cp.async's
// smallest).
//
//===----------------------------------------------------------------------===//
#include "compiler/ir/ElementTypes.h"
#include "compiler/ir/Elementwise.h"
#include "compiler/ir/Occupancy.h"
#include "compiler/ir/RegisterA.h"
#include "compiler/ir/SharedDotForm.h"
#include "compiler/ir/TargetInfo.h"
#include "compiler/ir/TensorCoreFlavour.h"
#include "compiler/ir/TensorMapAccess.h"
#include "compiler/ir/TileRuns.h"
#include "compiler/transforms/AsyncCopies.h"
#include "compiler/transforms/AxisInfo.h"
#include "compiler/transforms/EarlyLoads.h"
#include "compiler/transforms/Passes.h"
#include "compiler/transforms/RingTiles.h"
#include "compiler/transforms/WarpSpecialize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/CommandLine.h"

#include <map>
#include <numeric>

namespace kiln {
#define GEN_PASS_DEF_KILNPIPELINEDOTS
#include "compiler/transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using kiln::ringType;
using kiln::tileOf;
using kiln::tileType;

// Off only to compare code with and without it.
static llvm::cl::opt<bool> fullReadBackRings(
    "kiln-full-read-back-rings", llvm::cl::init(true), llvm::cl::Hidden,
    llvm::cl::desc("Give read-back rings of two-stage loops both slots"));

// Off only to compare code with and without it.
static llvm::cl::opt<bool> refillReadSlots(
    "kiln-refill-read-slots", llvm::cl::init(true), llvm::cl::Hidden,
    llvm::cl::desc("Refill the slot a loop of mma.sync dots read, after a "
                   "barrier at the iteration's end (else: the slot read the "
                   "iteration before, after the barrier at its top)"));

// Off only to compare code with and without it.
static llvm::cl::opt<bool> vectorRings(
    "kiln-vector-rings", llvm::cl::init(true), llvm::cl::Hidden,
    llvm::cl::desc("Copy a tensor-core loop's other float vectors into rings "
                   "with its operand tiles (else: into registers, "
                   "kiln-prefetch-loads)"));

namespace {

/// Marks a vector load widened into a row or column that pipeline() copies
/// into a ring of its own (widenLoopVectors).
constexpr char kVectorRowAttr[] = "kiln.vector_row";

/// An operand tile of a dot, loaded in the body (copied into a ring) or
/// once before the loop (copied into one tile).
struct PipelinedLoad {
  kiln::LoadOp load;
  unsigned vec = 1;
  kiln::gpu::MemDescType ring;
  bool once = false;
  /// Copied by TMA from the load's tensor map (a ring of mbarriers counts
  /// the bytes landed) rather than by cp.async from its pointers.
  bool tma = false;
  /// Read back into registers where it was loaded (kiln_gpu.local_load): a
  /// tile a dot operand is computed from, not the operand itself.
  bool readBack = false;
  /// Per dimension, runs of equal pointers that share one place in the
  /// ring (compiler/ir/TileRuns.h): 1 where they do not repeat.
  int64_t runs[2] = {1, 1};
  bool hasRuns() const { return kiln::anyRun(runs); }
  /// An operand ring of a loop of mma.sync dots refilled in the slot its
  /// dots read (see refillReadSlots).
  bool refilled = false;
  /// A read-back ring of a two-stage loop keeps both slots (readBackSlots).
  bool fullRing = false;
  /// A read-back or refilled ring of cp.async copies has one slot fewer
  /// than the stages: its slot is read at the iteration's start, and the
  /// copies, issued after the barrier that follows the reads, refill that
  /// slot.
  bool shortRing() const {
    return ((readBack && !fullRing) || refilled) && !tma;
  }
};

/// A dot of the loop and where its operands come from.
struct PipelinedDot {
  kiln::DotOp dot;
  /// Per operand (a, b): its PipelinedLoad, or -1 for a in registers.
  int source[2] = {-1, -1};
  /// Per operand: the dot reads the transpose of the loaded tile
  /// (`tl.trans(x)` of a tile another dot reads as it is).
  bool viewTransposed[2] = {false, false};
  /// Per operand: computed in registers from read-back tiles (a weight
  /// dequantized before the dot; source is -1), then written into a staging
  /// tile the dot reads, with lines along dim 0 when `stagedTransposed`.
  bool staged[2] = {false, false};
  bool stagedTransposed[2] = {false, false};
  /// Per staged operand computed before the loop (attention's q scaled by
  /// the softmax scale): that value, written into its staging tile once,
  /// before the loop; null for operands staged in every iteration.
  Value invariantValue[2];
  bool invariant(unsigned i) const { return bool(invariantValue[i]); }
  /// Staged in every iteration (not before the loop).
  bool stagedInLoop(unsigned i) const { return staged[i] && !invariant(i); }
  /// a, in registers with warps along N, is converted so that every warp
  /// holds all of it (mma.sync).
  bool broadcastA = false;
  /// The staging buffer's type: one tile, or two used in turn when the dot
  /// stays in flight while the next iteration writes its operand.
  kiln::gpu::MemDescType staging[2];
  /// wgmma.mma_async, waited for by dot_wait.
  bool async = false;
  /// Accumulates into a carried value that only it reads and writes (the
  /// matmul form; attention backward's dk, dv and dq): nothing in the
  /// iteration waits for it, so its wgmma group stays in flight.
  bool accumulates = false;
  /// Its result, carried, is read in the next iteration only after the
  /// full wait of this earlier dot (attention forward's acc, rescaled by
  /// alpha after q @ k's wait): its group stays in flight until that wait,
  /// which also ties the carried value. -1: none.
  int waitedBy = -1;
  /// The iter_arg its result is carried in (when accumulates or waitedBy).
  unsigned carried = 0;
  /// The accumulator: dot's c, or for c = select(restart, 0, acc) (a
  /// flattened loop starting a tile) acc, added only when restart is false.
  /// (A block argument: stale once the loop is rebuilt with more iter_args.)
  Value acc;
  arith::SelectOp restart;
  /// The one region op of the body, after the dot, whose ops also read an
  /// accumulating dot's result (a flattened loop's epilogue): it waits for
  /// the dot inside.
  Operation *epilogue = nullptr;
};

/// The operands of `op` and the values its regions read from above it.
SmallVector<Value> inputsOf(Operation *op) {
  SmallVector<Value> inputs(op->getOperands());
  if (op->getNumRegions() != 0) {
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    llvm::append_range(inputs, captured);
  }
  return inputs;
}

/// Whether the result of `dot` is read once by `yield` and otherwise only
/// inside one region op of its block after it (a flattened loop's epilogue,
/// returned in `epilogue`, null when none).
bool readOnlyCarriedAndInEpilogue(kiln::DotOp dot, Operation *yield,
                                  Operation *&epilogue) {
  epilogue = nullptr;
  unsigned yields = 0;
  for (OpOperand &use : dot.getD().getUses()) {
    Operation *owner = use.getOwner();
    if (owner == yield) {
      ++yields;
      continue;
    }
    Operation *top = dot->getBlock()->findAncestorOpInBlock(*owner);
    if (!top || top == owner || (epilogue && epilogue != top))
      return false;
    epilogue = top;
  }
  return yields == 1;
}

/// How many elements a thread holds consecutively along `dim` of `type`
/// in its first registers that differ (1 without a distributed layout).
int64_t contiguousPerThread(RankedTensorType type, unsigned dim) {
  auto encoding =
      dyn_cast_or_null<kiln::gpu::DistributedEncodingAttr>(type.getEncoding());
  if (!encoding)
    return 1;
  std::optional<kiln::layout::LinearLayout> layout =
      encoding.toLinearLayout(type.getShape());
  if (!layout)
    return 1;
  int64_t run = 1;
  for (const kiln::layout::LinearLayout::Vector &basis :
       layout->getInDims()[layout->getInDimIndex(kiln::layout::kRegister)]
           .bases) {
    if (llvm::all_of(basis, [](int32_t x) { return x == 0; }))
      continue;
    for (auto [d, x] : llvm::enumerate(basis))
      if (x != (d == dim ? run : 0))
        return run;
    run *= 2;
  }
  return run;
}

/// Where a dot operand comes from: a load, maybe through a transpose.
struct OperandSource {
  kiln::LoadOp load;
  bool transposed = false;
};

/// The load in `block` whose value reaches the dot operand `v` through
/// layout conversions and at most one 2-d transpose, each used by this
/// path alone. The load itself may have other users: a load in the body
/// must feed only dot operands of the loop (checked once all are known:
/// its ring replaces it); one before the loop may feed anything (attention's
/// q, read by two loops), which keeps it.
OperandSource producingLoad(Value v, Block *block) {
  OperandSource source;
  auto skipConverts = [&]() -> bool {
    while (auto convert = v.getDefiningOp<kiln::gpu::ConvertLayoutOp>()) {
      if (!convert->hasOneUse())
        return false;
      v = convert.getSrc();
    }
    return true;
  };
  if (!skipConverts())
    return {};
  if (auto trans = v.getDefiningOp<kiln::TransOp>()) {
    if (!trans->hasOneUse() || trans.getType().getRank() != 2)
      return {};
    source.transposed = true;
    v = trans.getSrc();
    if (!skipConverts())
      return {};
  }
  auto load = v.getDefiningOp<kiln::LoadOp>();
  if (!load || load->getBlock() != block)
    return {};
  source.load = load;
  return source;
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
    target_ = target;
    module.walk([&](kiln::DotOp dot) { loadTransposedOperands(dot); });
    tensorMaps_.clear();
    deferred_ = false;
    invariantRinged_ = false;
    {
      kiln::AxisInfoAnalysis before(module);
      module.walk([&](kiln::DotOp dot) { widenVectorLoads(dot, before); });
      module.walk([&](scf::ForOp loop) { widenLoopVectors(loop, before); });
    }
    {
      SmallVector<scf::ForOp> flattened;
      module.walk([&](scf::ForOp loop) { flattened.push_back(loop); });
      for (scf::ForOp loop : flattened)
        restartAtTileStart(loop);
    }
    kiln::AxisInfoAnalysis axisInfo(module);
    SmallVector<scf::ForOp> loops;
    module.walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      addedVectorRows_ = rewritten_ = false;
      pipeline(loop, axisInfo);
      if (addedVectorRows_ && !rewritten_) {
        withoutVectorRows_ = true;
        pipeline(loop, axisInfo);
        withoutVectorRows_ = false;
      }
    }
    specializeCandidates();
    recordTensorMaps(module);
    // kilnc compiles again with defer-waits=false where ptxas serializes
    // the wgmma of a kernel that defers a wait.
    if (deferred_)
      module->setAttr(kiln::kDeferredDotWaitsAttr,
                      UnitAttr::get(&getContext()));
    if (invariantRinged_)
      module->setAttr(kiln::kInvariantOperandRingsAttr,
                      UnitAttr::get(&getContext()));
    // Rows of loops left as they were load as they did (the reshape back
    // renames registers).
    module.walk([](kiln::LoadOp load) { load->removeAttr(kVectorRowAttr); });
  }

private:
  /// A flattened persistent loop that zeroes its accumulator after a
  /// tile's last step (`acc = tl.where(last, 0, acc)` after the dot and
  /// the epilogue: FBGEMM's fp8 GEMMs) restarts it at the next tile's first
  /// step instead: the loop carries the condition, the dot accumulates into
  /// select(carried, 0, acc) (the restart form the pipeline keeps in
  /// flight, the wgmma told not to add c) and its result is yielded as it
  /// is. The zeroing select read the accumulator right after the dot, so
  /// its wgmma was waited for at once.
  void restartAtTileStart(scf::ForOp loop) {
    Block *body = loop.getBody();
    for (unsigned n = 0; n < loop.getNumRegionIterArgs(); ++n) {
      BlockArgument acc = loop.getRegionIterArgs()[n];
      if (!acc.hasOneUse())
        continue;
      auto dot = dyn_cast<kiln::DotOp>(*acc.getUsers().begin());
      auto yield = cast<scf::YieldOp>(body->getTerminator());
      auto reset = yield.getOperand(n).getDefiningOp<arith::SelectOp>();
      if (!dot || dot.getC() != acc || dot->getBlock() != body || !reset ||
          !reset->hasOneUse() || reset->getBlock() != body ||
          reset.getFalseValue() != dot.getD() ||
          !reset.getCondition().getType().isInteger(1) ||
          !kiln::isZero(reset.getTrueValue()))
        continue;
      auto zeros = reset.getTrueValue().getDefiningOp<arith::ConstantOp>();
      if (!zeros)
        continue;
      Value condition = reset.getCondition();
      Location loc = loop.getLoc();
      OpBuilder before(loop);
      Value zero = before.clone(*zeros)->getResult(0);
      Value notYet =
          arith::ConstantOp::create(before, loc, before.getBoolAttr(false));
      IRRewriter rewriter(loop);
      auto newLoop = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
          rewriter, notYet, /*replaceInitOperandUsesInLoop=*/false,
          [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
            return SmallVector<Value>{condition};
          }));
      BlockArgument restarted = newLoop.getRegionIterArgs().back();
      OpBuilder at(dot);
      Value c = arith::SelectOp::create(at, dot.getLoc(), restarted, zero,
                                        newLoop.getRegionIterArgs()[n]);
      dot.getCMutable().assign(c);
      newLoop.getBody()->getTerminator()->setOperand(n, dot.getD());
      reset->erase();
      // What the loop gave: its last accumulator, zeroed after a last step.
      Value result = newLoop.getResult(n);
      if (!result.use_empty()) {
        OpBuilder after(newLoop->getBlock(), ++Block::iterator(newLoop));
        auto zeroed = arith::SelectOp::create(
            after, loc, newLoop.getResults().back(), zero, result);
        result.replaceAllUsesExcept(zeroed, zeroed);
      }
      loop = newLoop;
      body = loop.getBody();
    }
  }

  /// A vector loaded in a dot's loop and only read through expand_dims on
  /// the way to a computed operand (a quantized weight's row of scales,
  /// `scale[None, :]`) becomes a load of the expanded row or column: the
  /// same elements, but a 2-D tile, which computedInBody then gives a
  /// ring, so that it is copied S - 1 iterations ahead with the weights
  /// rather than waited for. Loaded into registers, even several iterations
  /// ahead, ptxas waits for it where the next one is issued (a GPTQ-style
  /// int4 GEMM at M = 16: its first scaled multiply took a fifth of the
  /// stall samples). A vector in a slice of a blocked layout that 1-D
  /// arithmetic reads before its expansion (GPTQ's packed zeros, unpacked
  /// and scaled as vectors) becomes that layout's row, read reshaped:
  /// loaded in registers, S-LoRA's grouped int4 GEMM waited for its 16
  /// loads every iteration, where Triton copies the zeros with cp.async.
  /// Only vectors cp.async can copy (4 bytes or more a
  /// chunk) in lines whose bytes a ring's swizzle can take: another stays a
  /// vector, which kiln-prefetch-loads may load ahead.
  void widenVectorLoads(kiln::DotOp dot, kiln::AxisInfoAnalysis &axisInfo) {
    Block *body = dot->getBlock();
    if (!isa<scf::ForOp>(dot->getParentOp()))
      return;
    SmallVector<kiln::LoadOp> vectors;
    llvm::SmallPtrSet<Operation *, 16> seen;
    // Operands computed in a blocked layout, which are staged through
    // shared memory; not one computed in the accumulator's layout (attention
    // backward's p, whose row statistics kiln-prefetch-loads takes).
    SmallVector<Value> work;
    for (Value operand : {dot.getA(), dot.getB()})
      if (isa<kiln::gpu::BlockedEncodingAttr>(
              cast<RankedTensorType>(operand.getType()).getEncoding()))
        work.push_back(operand);
    while (!work.empty()) {
      Operation *op = work.pop_back_val().getDefiningOp();
      if (!op || op->getBlock() != body || !seen.insert(op).second)
        continue;
      if (auto load = dyn_cast<kiln::LoadOp>(op)) {
        auto type = dyn_cast<RankedTensorType>(load.getType());
        if (type && type.getRank() == 1)
          vectors.push_back(load);
        continue;
      }
      if (op->getNumRegions() != 0 || !isMemoryEffectFree(op))
        continue;
      llvm::append_range(work, op->getOperands());
    }
    for (kiln::LoadOp load : vectors) {
      if (load.getBoundaryCheck() || load.getIsVolatile() ||
          !isa<RankedTensorType>(load.getPtr().getType()) || load->use_empty())
        continue;
      // The row is the vector's own slice's (the expansions read it), read
      // also through 1-D arithmetic in a blocked slice (a GPTQ kernel's
      // packed zeros, `((zeros >> shift) & 0xF) * scales`, expanded after),
      // which the other readers then read reshaped.
      auto type = cast<RankedTensorType>(load.getType());
      auto slice = dyn_cast<kiln::gpu::SliceEncodingAttr>(type.getEncoding());
      if (!slice)
        continue;
      unsigned axis = unsigned(slice.getDim());
      RankedTensorType row = rowOf(type, slice.getParent(), axis);
      bool blocked = isa<kiln::gpu::BlockedEncodingAttr>(slice.getParent());
      // Not a vector converted on to another layout (ring-attention's bias
      // row, read in the accumulator's layout), which a row would not spare
      // the conversion.
      if (!llvm::all_of(load->getUsers(), [&](Operation *user) {
            auto expand = dyn_cast<kiln::ExpandDimsOp>(user);
            return expand ? expand.getType() == row
                          : blocked && !isa<kiln::gpu::ConvertLayoutOp>(user) &&
                                kiln::isElementwise(user);
          }))
        continue;
      widenToRow(load, row, axis, /*fromBlocked=*/false, axisInfo);
    }
  }

  /// The other float vectors a dot's loop loads (attention backward's row
  /// statistics, a chunked scan's decays: `da_cs[None, :] - da_cs[:, None]`,
  /// `exp2(da_cs)[:, None] * acc`) become loads of the same elements as a
  /// 1 x N row or N x 1 column of the layout they are sliced from, marked
  /// kVectorRowAttr, which pipeline() then copies with the operand tiles
  /// into a ring of their own and reads back where they were loaded, as
  /// Triton's pipeliner copies such vectors. Loaded into registers one
  /// iteration ahead instead (kiln-prefetch-loads), each is live across the
  /// loop's whole body, and in a register-bound loop ptxas spills them as
  /// they arrive, so that the spill store waits out the load (Mamba-3's
  /// backward: four vectors and a column of 64 floats, about 2250 stall
  /// samples at the loop's end). Users other than the expansion to the row
  /// read it through a reshape, which renames registers. Only vectors whose
  /// address the stage can run ahead (pure arithmetic of the induction
  /// variable and of carried recurrences), which feed no other load's
  /// address and more than carried values (onlyScalesCarried), in loops
  /// that write no memory they read; not a row of the accumulator's layout
  /// that reaches an a read from registers (reachesRegisterA).
  void widenLoopVectors(scf::ForOp loop, kiln::AxisInfoAnalysis &axisInfo) {
    if (!vectorRings)
      return;
    Block *body = loop.getBody();
    if (llvm::none_of(body->getOperations(),
                      [](Operation &op) { return isa<kiln::DotOp>(op); }))
      return;
    SmallVector<kiln::LoadOp> vectors;
    for (Operation &op : body->without_terminator())
      if (auto load = dyn_cast<kiln::LoadOp>(op))
        if (auto type = dyn_cast<RankedTensorType>(load.getType());
            type && type.getRank() == 1 &&
            isa<FloatType>(type.getElementType()) && !load->use_empty() &&
            !load.getBoundaryCheck() && !load.getIsVolatile() &&
            isa<RankedTensorType>(load.getPtr().getType()) &&
            kiln::isZero(load.getOther()) && aheadAddress(load) &&
            !feedsAddresses(load) && !onlyScalesCarried(load) &&
            !kiln::writesMemoryReadBy(loop, load))
          vectors.push_back(load);
    for (kiln::LoadOp load : vectors) {
      auto type = cast<RankedTensorType>(load.getType());
      MLIRContext *ctx = type.getContext();
      // The 2-D layout the vector is a slice of, and the unit dimension.
      Attribute parent;
      unsigned axis = 0;
      bool blocked = false;
      if (auto slice =
              dyn_cast<kiln::gpu::SliceEncodingAttr>(type.getEncoding())) {
        // Not a row of the accumulator's layout that reaches an a read from
        // registers (attention backward's m and Di, subtracted from the
        // scores that become p): in rings, tutorial 06's backward went
        // 1.03 -> 0.985 of Triton at d64, causal, N_CTX 16384, and 1.29 ->
        // 1.24 at d128 non-causal (ptxas spilled more: H100). Such a row
        // reaching a staged operand gains (FLA's chunk_h, 1.015 -> 1.09).
        if (isa<kiln::gpu::MmaEncodingAttr>(slice.getParent()) &&
            reachesRegisterA(load))
          continue;
        parent = slice.getParent();
        axis = unsigned(slice.getDim());
      } else if (auto b = dyn_cast<kiln::gpu::BlockedEncodingAttr>(
                     type.getEncoding())) {
        parent = kiln::gpu::BlockedEncodingAttr::get(
            ctx, {1u, b.getSizePerThread()[0]}, {1u, b.getThreadsPerWarp()[0]},
            {1u, b.getWarpsPerCTA()[0]}, {1u, 0u});
        blocked = true;
      } else {
        continue;
      }
      if (!isa<kiln::gpu::DistributedEncodingAttr>(parent))
        continue;
      RankedTensorType row = rowOf(type, parent, axis);
      if (kiln::LoadOp wide = widenToRow(load, row, axis, blocked, axisInfo))
        wide->setAttr(kVectorRowAttr, UnitAttr::get(ctx));
    }
  }

  /// The 1 x N row (`axis` 0) or N x 1 column (`axis` 1) in `parent` of
  /// the elements of `vector`.
  static RankedTensorType rowOf(RankedTensorType vector, Attribute parent,
                                unsigned axis) {
    SmallVector<int64_t> shape{vector.getDimSize(0)};
    shape.insert(shape.begin() + axis, 1);
    return RankedTensorType::get(shape, vector.getElementType(), parent);
  }

  /// Replaces the vector `load` by a load of the same elements as `row`,
  /// its 1 x N or N x 1 form (unit dimension `axis`), when cp.async can
  /// copy that row in 4-byte or larger chunks of its layout, in lines a
  /// ring's swizzle takes. The vector's layout is the slice of row's along
  /// `axis`, or (`fromBlocked`) the 1-D blocked layout equal to that slice.
  /// Expansions of the vector to `row` read the row; other users a reshape
  /// of it, which renames registers. Returns the row's load, or null.
  kiln::LoadOp widenToRow(kiln::LoadOp load, RankedTensorType row,
                          unsigned axis, bool fromBlocked,
                          kiln::AxisInfoAnalysis &axisInfo) {
    auto type = cast<RankedTensorType>(load.getType());
    unsigned bits = type.getElementTypeBitWidth();
    if (!kiln::isSwizzlableLine(type.getDimSize(0) * bits / 8) ||
        axisInfo.vectorWidthAlong(load.getPtr(), load.getMask(), bits, 0) *
                bits <
            32 ||
        contiguousPerThread(row, 1 - axis) * bits < 32)
      return nullptr;
    OpBuilder b(load);
    Location loc = load.getLoc();
    Attribute parent = row.getEncoding();
    auto expanded = [&](Value v) -> Value {
      if (!v)
        return v;
      Type element = getElementTypeOrSelf(v.getType());
      auto wideType = RankedTensorType::get(row.getShape(), element, parent);
      // A splat constant (`other=0.0`) stays a constant, which the copy
      // recognises as its zero fill.
      SplatElementsAttr splat;
      if (matchPattern(v, m_Constant(&splat)))
        return arith::ConstantOp::create(
            b, loc,
            SplatElementsAttr::get(wideType, splat.getSplatValue<Attribute>()));
      // A 1-D blocked layout is the slice of its 2-D form: the conversion
      // moves nothing.
      if (fromBlocked)
        v = kiln::gpu::ConvertLayoutOp::create(
            b, loc,
            RankedTensorType::get(type.getShape(), element,
                                  kiln::gpu::SliceEncodingAttr::get(
                                      b.getContext(), axis, parent)),
            v);
      return kiln::ExpandDimsOp::create(b, loc, wideType, v,
                                        b.getI32IntegerAttr(int32_t(axis)));
    };
    auto wide = kiln::LoadOp::create(
        b, loc, row, expanded(load.getPtr()), expanded(load.getMask()),
        expanded(load.getOther()), DenseI32ArrayAttr(),
        kiln::PaddingOptionAttr(), load.getCache(), load.getEvict(),
        /*is_volatile=*/false);
    Value vector;
    for (OpOperand &use : llvm::make_early_inc_range(load->getUses())) {
      auto expand = dyn_cast<kiln::ExpandDimsOp>(use.getOwner());
      if (expand && expand.getType() == row) {
        expand.getResult().replaceAllUsesWith(wide.getResult());
        expand->erase();
        continue;
      }
      if (!vector)
        vector = kiln::ReshapeOp::create(b, loc, type, wide.getResult());
      use.set(vector);
    }
    load->erase();
    return wide;
  }

  /// Whether `load`'s address and mask are pure arithmetic of the
  /// induction variable, values from above and carried values that are
  /// recurrences of such arithmetic, with no dot: the stage can compute
  /// them ahead.
  static bool aheadAddress(kiln::LoadOp load) {
    std::optional<SmallVector<Operation *>> slice =
        kiln::aheadAddressSlice(load);
    return slice && llvm::none_of(*slice, [](Operation *op) {
             return isa<kiln::DotOp>(op);
           });
  }

  /// Whether `load`'s value reaches a carried value (through the yield)
  /// and no a or b of a dot: a block-scaled GEMM's scales,
  /// `acc += tl.dot(a, b) * a_s[:, None]`, which in a ring cost 5-20%
  /// against one iteration ahead in registers (H100, DeepSeek's and vLLM's
  /// fp8 block GEMMs 1.15 -> 1.09 and 1.04 -> 0.83 of Triton: each
  /// iteration is one wgmma, and the rows' swizzled reads and 4-byte copies
  /// of strided scales weigh on it). Vectors that reach operands (attention
  /// backward's m through p, a chunked scan's decays through its keys) or
  /// only the iteration's own results gain.
  static bool onlyScalesCarried(kiln::LoadOp load) {
    auto never = [](OpOperand &) { return false; };
    if (kiln::reaches(load.getResult(), isDotOperand, never))
      return false;
    Operation *loop = load->getParentOp();
    return kiln::reaches(
        load.getResult(),
        [&](OpOperand &use) {
          return isa<scf::YieldOp>(use.getOwner()) &&
                 use.getOwner()->getParentOp() == loop;
        },
        never);
  }

  /// Whether `use` is a dot's a or b.
  static bool isDotOperand(OpOperand &use) {
    return isa<kiln::DotOp>(use.getOwner()) && use.getOperandNumber() < 2;
  }

  /// Whether `load`'s value reaches a dot's a in the accumulator's layout
  /// (read from registers, not staged).
  static bool reachesRegisterA(kiln::LoadOp load) {
    return kiln::reaches(
        load.getResult(),
        [](OpOperand &use) {
          auto dot = dyn_cast<kiln::DotOp>(use.getOwner());
          return dot && use.getOperandNumber() == 0 &&
                 isa<kiln::gpu::MmaEncodingAttr>(
                     dot.getA().getType().getEncoding());
        },
        isDotOperand);
  }

  /// Whether `load`'s value reaches the operands of another memory access
  /// (a gather's indices): those run with the stage, not after it.
  static bool feedsAddresses(kiln::LoadOp load) {
    return kiln::reaches(
        load.getResult(),
        [](OpOperand &use) {
          Operation *user = use.getOwner();
          if (auto store = dyn_cast<kiln::StoreOp>(user))
            return use.get() != store.getValue();
          return !isMemoryEffectFree(user) &&
                 !isa<kiln::gpu::LocalStoreOp>(user);
        },
        [](OpOperand &) { return false; });
  }

  /// A dot operand that is the transpose of a tile loaded for it alone
  /// (`desc.load(...).T`, `tl.load(...).T`) becomes a load through
  /// transposed pointers: the same elements, so the copy below can stage it
  /// in the layout the dot reads (K-contiguous b, M-contiguous a).
  /// Transposing pointers and masks of a blocked layout moves no data.
  void loadTransposedOperands(kiln::DotOp dot) {
    for (OpOperand *operand : {&dot.getAMutable(), &dot.getBMutable()}) {
      auto trans = operand->get().getDefiningOp<kiln::TransOp>();
      if (!trans || !trans->hasOneUse() || trans.getType().getRank() != 2)
        continue;
      auto load = trans.getSrc().getDefiningOp<kiln::LoadOp>();
      if (!load || !load->hasOneUse() || load.getBoundaryCheck() ||
          load.getIsVolatile() || load->getBlock() != dot->getBlock() ||
          !isa<RankedTensorType>(load.getPtr().getType()))
        continue;
      // A TMA copy lands the box as it is in memory: the dot reads it
      // through a transposed view instead.
      if (load.getTensorMap() && target_.hasWgmma())
        continue;
      OpBuilder b(load);
      Location loc = load.getLoc();
      auto transposed = [&](Value v) -> Value {
        if (!v)
          return v;
        auto type = cast<RankedTensorType>(v.getType());
        auto encoding = trans.getType().getEncoding();
        auto resultType = RankedTensorType::get(
            trans.getType().getShape(), type.getElementType(), encoding);
        // A splat constant (`other`) stays a constant, which isZero reads.
        DenseElementsAttr splat;
        if (matchPattern(v, m_Constant(&splat)) && splat.isSplat())
          return arith::ConstantOp::create(b, loc, resultType,
                                           splat.resizeSplat(resultType));
        return kiln::TransOp::create(b, loc, resultType, v, trans.getOrder());
      };
      Value ptr = transposed(load.getPtr());
      Value mask = transposed(load.getMask());
      Value other = transposed(load.getOther());
      auto newLoad = kiln::LoadOp::create(
          b, loc, trans.getType(), ptr, mask, other, DenseI32ArrayAttr(),
          kiln::PaddingOptionAttr(), load.getCache(), load.getEvict(),
          /*is_volatile=*/false);
      trans.getResult().replaceAllUsesWith(newLoad.getResult());
      trans->erase();
      load->erase();
    }
  }

  unsigned numWarps_ = 4;
  /// Some dot's wait was deferred to the next iteration (waitedBy).
  bool deferred_ = false;
  /// On a wgmma target: a loop's dot reads an operand computed before it
  /// from a tile written once there (invariant-rings).
  bool invariantRinged_ = false;
  /// Whether pipeline() gave vector rows rings, rewrote the loop, or
  /// leaves vector rows as loads (the retry of a loop that their rings
  /// kept from being pipelined: a loop pipelined before keeps that).
  bool addedVectorRows_ = false;
  bool rewritten_ = false;
  bool withoutVectorRows_ = false;
  kiln::TargetInfo target_;
  /// The box and swizzle of a tensor map that TMA copies into a ring's
  /// tiles read.
  using TensorMapEncoding = std::pair<SmallVector<int64_t, 2>, unsigned>;
  static TensorMapEncoding encodingOf(kiln::gpu::MemDescType ring) {
    return {kiln::gpu::AsyncTmaCopyOp::boxShape(tileType(ring)),
            cast<kiln::gpu::NVMMASharedEncodingAttr>(ring.getEncoding())
                .getSwizzle()};
  }
  /// The encoding of each tensor map a TMA copy reads, by the kernel
  /// argument's index: the launcher encodes the map with it.
  std::map<unsigned, TensorMapEncoding> tensorMaps_;

  /// The module's `kiln_gpu.tensor_maps`, which the variant's metadata
  /// turns into the parameters' "tensor_map".
  void recordTensorMaps(ModuleOp module) {
    if (tensorMaps_.empty())
      return;
    Builder b(module.getContext());
    SmallVector<NamedAttribute> entries;
    for (auto &[arg, encoding] : tensorMaps_)
      entries.push_back(b.getNamedAttr(
          std::to_string(arg),
          b.getDictionaryAttr(
              {b.getNamedAttr("box", b.getDenseI64ArrayAttr(encoding.first)),
               b.getNamedAttr("swizzle", b.getI32IntegerAttr(
                                             int32_t(encoding.second)))})));
    module->setAttr("kiln_gpu.tensor_maps", b.getDictionaryAttr(entries));
  }

  /// The TMA form of `load`, in a ring of `slots` tiles: its box is one
  /// panel of the row-major ring tile (rows x swizzle bytes), copied once
  /// per panel. None when the load has no tensor map or TMA cannot copy it.
  std::optional<PipelinedLoad> asTmaCopy(kiln::LoadOp load, unsigned slots) {
    if (!target_.hasWgmma() || !kiln::isTmaReadyMap(load.getTensorMap()))
      return std::nullopt;
    auto type = cast<RankedTensorType>(load.getType());
    if (type.getRank() != 2 || type.getDimSize(0) > 256 ||
        !type.getElementType().isIntOrFloat())
      return std::nullopt;
    if (!kiln::isSwizzlableLine(type.getDimSize(1) *
                                type.getElementType().getIntOrFloatBitWidth() /
                                8))
      return std::nullopt;
    PipelinedLoad l;
    l.load = load;
    l.ring = ringType(type, slots, /*transposed=*/false);
    l.tma = true;
    TensorMapEncoding encoding = encodingOf(l.ring);
    if (!kiln::shapeTensorMap(load.getTensorMap(), encoding.first,
                              encoding.second))
      return std::nullopt;
    return l;
  }

  /// The cp.async form of `load`, an operand tile of a tensor-core dot
  /// (operand `which`: 0 for a, 1 for b), in a ring of `slots` tiles; none
  /// when cp.async cannot copy it.
  std::optional<PipelinedLoad> asCopy(kiln::LoadOp load, unsigned slots,
                                      kiln::AxisInfoAnalysis &axisInfo) {
    std::optional<kiln::CpAsyncForm> form = kiln::cpAsyncForm(load, axisInfo);
    if (!form)
      return std::nullopt;
    PipelinedLoad l;
    l.load = load;
    l.vec = form->vec;
    l.ring =
        ringType(cast<RankedTensorType>(load.getType()), slots, form->dim == 0);
    return l;
  }

  /// A read-back tile whose pointers repeat across its lines (a packed
  /// int4 weight's rows of k, `(k // 8) * stride_k`: eight rows read one
  /// row of words) keeps one line of each run in its ring, so its copies
  /// and its slots shrink by the run. Each thread then reads back what
  /// others copied, which the iteration's barrier after the wait orders.
  /// At least eight lines stay (the swizzle's period).
  static void keepOneLinePerRun(PipelinedLoad &l,
                                kiln::AxisInfoAnalysis &axisInfo,
                                unsigned slots) {
    auto type = cast<RankedTensorType>(l.load.getType());
    bool transposed =
        cast<kiln::gpu::NVMMASharedEncodingAttr>(l.ring.getEncoding())
            .getTransposed();
    unsigned across = transposed ? 1 : 0;
    int64_t lines = type.getDimSize(across);
    int64_t run =
        std::gcd(axisInfo.loadedRuns(l.load.getPtr(), l.load.getMask(),
                                     l.load.getOther())[across],
                 lines);
    run = int64_t(llvm::bit_floor(uint64_t(std::max<int64_t>(run, 1))));
    while (run > 1 && lines / run < 8)
      run /= 2;
    if (run <= 1)
      return;
    SmallVector<int64_t> shape(type.getShape());
    shape[across] /= run;
    l.runs[across] = run;
    l.ring = ringType(
        RankedTensorType::get(shape, type.getElementType(), type.getEncoding()),
        slots, transposed);
  }

  /// Whether the dot operand `operand` is computed in the body: from tiles
  /// loaded there (a weight dequantized in registers: int8 or packed int4
  /// tiles converted, shifted, scaled), from carried values or from other
  /// dots' results (a recurrent state: FLA's gated delta rule multiplies
  /// its carried state, rounded to bf16, and then the new values computed
  /// from that product). The rank-2 loads of its backward slice in the
  /// body that cp.async or TMA can copy get rings, read back where they
  /// were loaded (appended to `loads`); the computation stays where it is.
  /// Other loads of the slice (a row of scales) stay loads, and the slice
  /// stops at dots (their own operands are pipelined as theirs).
  bool computedInBody(Value operand, Block *body, unsigned stages,
                      kiln::AxisInfoAnalysis &axisInfo,
                      SmallVector<PipelinedLoad> &loads) {
    // A carried value read as it is (Lightning Attention-2's kv state, b
    // of q @ kv): staged from its registers, nothing to copy.
    if (auto arg = dyn_cast<BlockArgument>(operand))
      return arg.getOwner() == body && arg.getArgNumber() > 0;
    Operation *def = operand.getDefiningOp();
    if (!def || def->getBlock() != body || isa<kiln::LoadOp>(def))
      return false;
    SmallVector<PipelinedLoad> leaves;
    bool known = false;
    llvm::SmallPtrSet<Operation *, 16> seen;
    SmallVector<Operation *> work{def};
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      if (!seen.insert(op).second)
        continue;
      if (auto load = dyn_cast<kiln::LoadOp>(op)) {
        auto type = dyn_cast<RankedTensorType>(load.getType());
        if (!type || type.getRank() != 2)
          continue;
        auto ring =
            llvm::find_if(loads, [&](auto &l) { return l.load == load; });
        if (ring != loads.end()) {
          // Read back for another operand; a dot's own ring is not.
          if (!ring->readBack)
            return false;
          known = true;
          continue;
        }
        std::optional<PipelinedLoad> l = asTmaCopy(load, stages);
        if (!l) {
          l = asCopy(load, readBackSlots(stages), axisInfo);
          if (l) {
            keepOneLinePerRun(*l, axisInfo, readBackSlots(stages));
            l->fullRing = readBackSlots(stages) == stages;
          }
        }
        if (!l)
          continue;
        l->readBack = true;
        leaves.push_back(*l);
        continue;
      }
      if (isa<kiln::DotOp>(op))
        continue;
      // A region op computes in place too when nothing in it touches
      // memory (GPT-QModel's GGUF GEMMs pick a packed byte's half with
      // `if subblock % 2 == 0:`); the values its regions read are part of
      // the slice.
      if (!isMemoryEffectFree(op))
        return false;
      for (Value input : inputsOf(op))
        if (Operation *d = input.getDefiningOp(); d && d->getBlock() == body)
          work.push_back(d);
    }
    llvm::append_range(loads, leaves);
    return true;
  }

  /// The slots of a ring read back into registers: one fewer than the
  /// stages (shortRing), except in a two-stage loop, where one slot would
  /// leave the next iteration's copies only the rest of the iteration after
  /// the reads and the staging barrier to land: with two, they go right
  /// after the iteration's top barrier, a whole iteration ahead (H200,
  /// FLA's chunk_h with vector decays at 2 stages: 0.94 -> 1.09 of Triton,
  /// the gated delta rule's state 0.98 -> 1.06).
  static unsigned readBackSlots(unsigned stages) {
    return stages == 2 && fullReadBackRings ? 2 : stages - 1;
  }

  /// Whether a loop of mma.sync dots has rings one slot shorter than its
  /// stages, as Triton's are on that path: with one dot the copies refill
  /// the slot it read, behind a barrier after it, so S - 1 slots keep
  /// S - 1 iterations in flight while an iteration waits (refilling the
  /// slot read the iteration before, after the top barrier, keeps S - 2:
  /// on the H200 M = 16 decode GEMMs went 0.94 -> 0.97 of Triton, tutorial
  /// 03 on mma.sync 0.98 -> 0.99 on average). Measured with the S - 2
  /// form, on the H200, beside Triton's mma.sync path: tutorial 03 at
  /// 128x128x64 with 4 warps and 4 stages 0.90 of Triton with 4 slots (one
  /// block an SM), 0.98-1.04 with 3 (two); at 128x256x64 over 8 warps, one
  /// block either way, 0.99-1.01 with 3 slots and 1.02-1.03 with 2; causal
  /// attention at HEAD_DIM 128 0.73 with 3 and 0.80 with 2 (one block
  /// either way: the L1 gets what shared memory leaves). Not for wgmma (its
  /// reads stay in flight into the next iteration), TMA rings, or dots staging
  /// a computed operand (their own short rings).
  bool shortRings(ArrayRef<PipelinedDot> dots, ArrayRef<PipelinedLoad> loads,
                  unsigned stages) const {
    // (At two stages only for one dot, refilled in the slot it read: with
    // several, one slot leaves nothing to copy ahead.)
    return (stages >= 3 ||
            (stages == 2 && dots.size() == 1 && refillReadSlots &&
             shortRingAddsBlocks(loads, stages))) &&
           llvm::none_of(dots,
                         [](const PipelinedDot &pd) {
                           return pd.async || pd.stagedInLoop(0) ||
                                  pd.stagedInLoop(1);
                         }) &&
           llvm::none_of(loads, [](const PipelinedLoad &l) {
             return l.tma || l.readBack;
           });
  }

  /// Whether rings one slot shorter than `stages` let an SM hold more
  /// blocks: a two-stage loop then takes them too, one slot each, as
  /// Triton's does (SGLang's fused MoE at its decode config, 16 x 256 x 128
  /// tiles over 8 warps: 136 KB of rings, one block an SM, against
  /// Triton's 68 KB and two).
  bool shortRingAddsBlocks(ArrayRef<PipelinedLoad> loads,
                           unsigned stages) const {
    int64_t perSlot = 0, fixed = 0;
    for (const PipelinedLoad &l : loads) {
      if (l.once)
        fixed += l.ring.getSizeInBytes();
      else
        perSlot += l.ring.getSizeInBytes() / stages;
    }
    unsigned threads = numWarps_ * kiln::TargetInfo::kThreadsPerWarp;
    auto blocks = [&](int64_t slots) {
      return kiln::blocksPerSMBeforeRegisters(target_, threads,
                                              fixed + slots * perSlot);
    };
    // Only where the rings are what limits an SM to one or two blocks:
    // smaller tiles meet the register limit (not known before ptxas) first.
    return perSlot > 0 && blocks(stages) <= 2 &&
           blocks(stages - 1) > blocks(stages);
  }

  /// Per dot: whether it chains into the next one, which is then staged
  /// and issued with it. A wgmma dot whose result only the next one reads,
  /// as its accumulator (the gated delta rule's `b_v = dot(w1, h1); b_v +=
  /// dot(w2, h2)`), where the next one's computed operands are ready before
  /// it: both dots' staging tiles are written behind one barrier, and the
  /// first is not waited for (the tensor cores run a warpgroup's dots in
  /// order, the second accumulating into the first's registers). Staged
  /// apart, the iteration waited for the first dot, then wrote the second's
  /// tile and met a barrier before issuing it.
  static SmallVector<bool> chainedDots(ArrayRef<PipelinedDot> dots) {
    SmallVector<bool> chained(dots.size(), false);
    for (size_t d = 0; d + 1 < dots.size(); ++d) {
      const PipelinedDot &pd = dots[d], &next = dots[d + 1];
      kiln::DotOp dot = pd.dot, nextDot = next.dot;
      Value result = dot.getD();
      if (!pd.async || !next.async || pd.accumulates || pd.waitedBy >= 0 ||
          pd.restart || pd.epilogue || !result.hasOneUse() ||
          nextDot.getC() != result || (d > 0 && chained[d - 1]) ||
          nextDot->getBlock() != dot->getBlock())
        continue;
      // Its wait would also complete deferred dots (and tie their values).
      if (llvm::any_of(dots, [&](const PipelinedDot &other) {
            return other.waitedBy == int(d);
          }))
        continue;
      chained[d] = llvm::all_of(llvm::seq(0u, 2u), [&](unsigned i) {
        Operation *def = nextDot->getOperand(i).getDefiningOp();
        return !next.stagedInLoop(i) || !def ||
               (def->getBlock() == dot->getBlock() &&
                def->isBeforeInBlock(dot));
      });
    }
    return chained;
  }

  /// For each dot, the later dot of the iteration whose full wait completes
  /// it, or -1. A dot accumulating into a value that is only carried
  /// (attention backward's dv = dot(p, do, dv)) ahead of an async dot whose
  /// result the iteration reads (dp) needs no wait of its own: the later
  /// wait completes its group too, so the two run side by side instead of
  /// the tensor cores draining between them. (`accumulates` keeps a group
  /// in flight into the next iteration, which beside other dots takes 3
  /// stages; this one completes in its iteration.) Only a dot reading
  /// rings or registers, with rings refilled after the iteration's first
  /// barrier: nothing writes what it reads before that wait.
  SmallVector<int> completedByLaterWait(ArrayRef<PipelinedDot> dots,
                                        ArrayRef<bool> chained,
                                        ArrayRef<PipelinedLoad> loads) const {
    SmallVector<int> completedBy(dots.size(), -1);
    if (!deferWaits || llvm::any_of(loads, [](const PipelinedLoad &l) {
          return l.shortRing() || l.refilled;
        }))
      return completedBy;
    for (size_t d = 0; d < dots.size(); ++d) {
      const PipelinedDot &pd = dots[d];
      kiln::DotOp dot = pd.dot;
      if (!pd.async || pd.accumulates || pd.waitedBy >= 0 || chained[d] ||
          pd.restart || pd.epilogue || pd.staged[0] || pd.staged[1] ||
          !dot->hasOneUse())
        continue;
      auto yield = dyn_cast<scf::YieldOp>(*dot->user_begin());
      auto acc = dyn_cast<BlockArgument>(dot.getC());
      if (!yield || yield->getBlock() != dot->getBlock() || !acc ||
          acc.getOwner() != dot->getBlock() || acc.getArgNumber() == 0 ||
          !acc.hasOneUse() ||
          yield.getOperand(acc.getArgNumber() - 1) != dot.getD())
        continue;
      for (size_t j = d + 1; j < dots.size(); ++j) {
        const PipelinedDot &later = dots[j];
        if (later.async && !later.accumulates && later.waitedBy < 0 &&
            !chained[j] && later.dot->getBlock() == dot->getBlock()) {
          completedBy[d] = int(j);
          break;
        }
      }
    }
    return completedBy;
  }

  /// The operand of an earlier dot (dot, operand) whose staging tile the
  /// staged operand `i` of dot `d` shares: the same value, staged into a
  /// tile of the same type (`typeOf`: the delta rule's new values, b of
  /// the state's two halves; Lightning's q, a of two dots). std::nullopt
  /// when it gets a tile of its own.
  static std::optional<std::pair<unsigned, unsigned>> sharedStaging(
      ArrayRef<PipelinedDot> dots, unsigned d, unsigned i,
      llvm::function_ref<kiln::gpu::MemDescType(const PipelinedDot &, unsigned)>
          typeOf) {
    Value operand = dots[d].dot->getOperand(i);
    for (unsigned e = 0; e < d; ++e)
      for (unsigned j = 0; j < 2; ++j)
        if (dots[e].staged[j] && dots[e].dot->getOperand(j) == operand &&
            typeOf(dots[e], j) == typeOf(dots[d], i))
          return std::make_pair(e, j);
    return std::nullopt;
  }

  /// The blocks one SM holds with `sharedBytes` of shared memory a block
  /// and registers for the dots' accumulators plus 64 a thread (operand
  /// fragments, addresses): the estimate the staging choice weighs.
  unsigned blocksPerSM(ArrayRef<PipelinedDot> dots, int64_t sharedBytes) const {
    unsigned threads = numWarps_ * kiln::TargetInfo::kThreadsPerWarp;
    unsigned registers = 64;
    for (const PipelinedDot &pd : dots) {
      auto acc = cast<RankedTensorType>(pd.dot->getResult(0).getType());
      registers += unsigned(acc.getNumElements() *
                            acc.getElementTypeBitWidth() / 32 / threads);
    }
    return std::min(
        kiln::blocksPerSMByRegisters(threads, registers),
        kiln::blocksPerSMBeforeRegisters(target_, threads, sharedBytes));
  }

  /// Whether a computed operand's staging tile has its lines along dim 0.
  /// 8-bit operands have K contiguous (wgmma and ldmatrix want it: a's
  /// lines along K, b's down it), as have tf32 ones of a dot wgmma can
  /// compute (it reads them K-major only; Lightning Attention-2's forward
  /// loop, whose four dots read computed or carried fp32 tiles); others
  /// follow their registers' order, so each thread writes whole chunks.
  static bool stagedTransposed(RankedTensorType operand, unsigned which,
                               bool kMajor) {
    if (operand.getElementTypeBitWidth() == 8 || kMajor)
      return which == 1;
    auto blocked =
        dyn_cast_or_null<kiln::gpu::BlockedEncodingAttr>(operand.getEncoding());
    return blocked && blocked.getOrder()[0] == 0;
  }

  /// Masks off an index load of the stage where `inRange` is false (as
  /// the stage's copies are): it runs up to S-1 iterations past the loop's
  /// last, where its addresses may lie outside what the kernel may read.
  static Value maskPastEnd(kiln::LoadOp load, Value inRange) {
    OpBuilder b(load);
    IRMapping same;
    Value masked = kiln::loadMaskedBy(b, load, inRange, same);
    load.getResult().replaceAllUsesWith(masked);
    load->erase();
    return masked;
  }

  /// `slots`, when set, is the ring depth shortRings chose; `refill` says
  /// that the operand rings are short and refilled in the slot read.
  void pipeline(scf::ForOp loop, kiln::AxisInfoAnalysis &axisInfo,
                unsigned slots = 0, bool refill = false) {
    Block *body = loop.getBody();
    unsigned stages = numStages;
    if (auto attr = loop->getAttrOfType<IntegerAttr>("kiln.num_stages"))
      stages = unsigned(attr.getInt());
    if (slots)
      stages = slots;
    if (stages < 2)
      return;
    auto yield = cast<scf::YieldOp>(body->getTerminator());

    // The dots: each of a tensor-core flavour in the mma layout.
    // Dots nested deeper (under an scf.if) leave the loop alone.
    SmallVector<PipelinedDot> dots;
    bool nested = false;
    loop.walk([&](kiln::DotOp d) {
      if (d->getBlock() != body)
        nested = true;
      else
        dots.push_back({d});
    });
    if (dots.empty() || nested)
      return;
    SmallVector<PipelinedLoad> loads;
    for (PipelinedDot &pd : dots) {
      kiln::DotOp dot = pd.dot;
      RankedTensorType accType = dot.getType();
      std::optional<kiln::TensorCoreFlavour> flavour = kiln::tensorCoreFlavour(
          dot.getA().getType().getElementType(),
          dot.getB().getType().getElementType(), accType.getElementType(),
          dot.getInputPrecision(), target_);
      if (!isa<kiln::gpu::MmaEncodingAttr>(accType.getEncoding()) ||
          accType.getRank() != 2 || !flavour ||
          dot.getA().getType().getDimSize(1) % flavour->kGroup() != 0)
        return;
      Value operands[2] = {dot.getA(), dot.getB()};
      // Whether each operand's tile has K contiguous (a in registers counts
      // as K-contiguous: its fragments need no transpose).
      bool kContiguous[2] = {true, true};
      for (unsigned i = 0; i < 2; ++i) {
        // Loaded in the body: a ring of `stages` tiles. Loaded once before
        // the loop (attention's q): one tile, copied before it. A tile two
        // operands read is copied once.
        OperandSource source = producingLoad(operands[i], body);
        bool once = false;
        // Before the loop: in its block, or in an enclosing one when the
        // loop sits in an `if` (vLLM's decode attention guards its loop
        // with `if split_kv_end > split_kv_start:`, q loaded above it), up
        // to an enclosing loop's body (a load there runs every trip) or
        // the function's.
        for (Operation *at = loop; !source.load;) {
          OperandSource outer = producingLoad(operands[i], at->getBlock());
          if (outer.load && outer.load->isBeforeInBlock(at)) {
            source = outer;
            once = true;
            break;
          }
          Operation *parent = at->getParentOp();
          if (!parent || isa<func::FuncOp, scf::ForOp, scf::WhileOp>(parent))
            break;
          at = parent;
        }
        if (!source.load)
          source = {};
        if (source.load) {
          auto known = llvm::find_if(
              loads, [&](auto &l) { return l.load == source.load; });
          // A tile read back for a computed operand has a short ring, and
          // no slot for a dot that reads it in place.
          if (known != loads.end() && known->readBack)
            return;
          pd.source[i] = int(known - loads.begin());
          if (known == loads.end()) {
            std::optional<PipelinedLoad> l;
            if (!once)
              l = asTmaCopy(source.load, stages);
            if (!l)
              l = asCopy(source.load,
                         once     ? 1
                         : refill ? stages - 1
                                  : stages,
                         axisInfo);
            if (!l)
              return;
            l->once = once;
            l->refilled = refill && !once;
            // An 8-bit b with n contiguous, which wgmma cannot read: read
            // back from a short ring and staged K-major, as a computed
            // operand is (4-byte chunks down its columns: AssignLayouts
            // gives the load four rows a thread).
            auto ring =
                cast<kiln::gpu::NVMMASharedEncodingAttr>(l->ring.getEncoding());
            auto type = cast<RankedTensorType>(operands[i].getType());
            if (i == 1 && !once && !l->tma && !source.transposed &&
                flavour->elementBytes == 1 && target_.hasWgmma() &&
                !ring.getTransposed() && !isa<BlockArgument>(operands[i]) &&
                operands[i].getDefiningOp() == source.load &&
                kiln::isSwizzlableLine(type.getDimSize(0) *
                                       type.getElementTypeBitWidth() / 8)) {
              l = asCopy(source.load, readBackSlots(stages), axisInfo);
              if (!l)
                return;
              l->readBack = true;
              l->fullRing = readBackSlots(stages) == stages;
              loads.push_back(*l);
              pd.source[i] = -1;
              pd.staged[i] = true;
              pd.stagedTransposed[i] = true;
              kContiguous[i] = true;
              continue;
            }
            loads.push_back(*l);
          }
          pd.viewTransposed[i] = source.transposed;
          bool transposed = cast<kiln::gpu::NVMMASharedEncodingAttr>(
                                loads[pd.source[i]].ring.getEncoding())
                                .getTransposed() != source.transposed;
          kContiguous[i] = i == 0 ? !transposed : transposed;
          continue;
        }
        // a computed in registers where its fragments already are
        // (attention's P in P @ V, in the scores' layout; 8-bit ones after
        // a shuffle within each quad): compiler/ir/RegisterA.h.
        auto aType = cast<RankedTensorType>(operands[i].getType());
        auto mma = dyn_cast<kiln::gpu::MmaEncodingAttr>(aType.getEncoding());
        if (i == 0 && kiln::readsAFromRegisters(aType, accType, *flavour) &&
            aType.getDimSize(1) % flavour->kStep() == 0)
          continue; // source stays -1: registers
        // A 16-row a in that layout with warps along N (decode attention's
        // p over a group's query heads): each warp holds columns of it
        // where mma.sync needs all of them, so it is converted into a
        // layout that gives every warp the whole tile (the warps along M
        // wrap around its 16 rows), as for a dot's operand in registers.
        if (i == 0 && flavour->registerA() && mma &&
            mma == accType.getEncoding() && aType.getDimSize(0) == 16 &&
            mma.getWarpsPerCTA()[0] == 1 &&
            aType.getDimSize(1) % flavour->kStep() == 0 &&
            flavour->hasMmaSync(target_)) {
          pd.broadcastA = true;
          continue;
        }
        // Computed before the loop (attention's q, scaled after its load):
        // staged once, before it. Else computed in the body: staged through
        // shared memory each iteration, the loads of tiles it is computed
        // from pipelined.
        bool kMajorWgmma = kiln::accumulatorFitsWgmma(
            *flavour, target_, accType, numWarps_, true, true, false);
        bool transposed =
            stagedTransposed(aType, i, !flavour->transposable() && kMajorWgmma);
        // A carried operand is staged only for wgmma (on mma.sync, kiln.dot
        // reads Lightning Attention-2's tf32 operands from registers
        // faster than from staged tiles: docs/performance.md).
        if (auto arg = dyn_cast<BlockArgument>(operands[i]);
            arg && arg.getOwner() == body && !kMajorWgmma)
          return;
        if (!kiln::isSwizzlableLine(aType.getDimSize(transposed ? 0 : 1) *
                                    aType.getElementTypeBitWidth() / 8))
          return;
        Value invariant = kiln::beforeConversions(operands[i]);
        if (!loop.getRegion().isAncestor(invariant.getParentRegion())) {
          // Only for 16-bit mma.sync dots (H100, this loop staged once and
          // pipelined against kiln-stage-dots' per-iteration tiles: on
          // plain sm_90 triton-lang/kernels' flash attention forward 0.87
          // -> 1.01 of Triton, MInference's 1.19 -> 1.27 and 1.67 -> 1.80;
          // but Lightning Attention-2's tf32 diagonal blocks, loops of 1-4
          // trips, 0.53 -> 0.34, and on sm_90a, where wgmma overlaps the
          // per-iteration copies anyway, all four 0.91-0.97 of before).
          // On sm_90a at 8 warps, with invariant-rings: segment-anything-
          // fast's ViT-H attention (one block an SM either way, its
          // registers) 0.75 -> 0.89 of Triton; but the rings can cost a block
          // an SM (triton-lang/kernels' d128 causal forward: 1.17 -> 0.98),
          // so kilnc compiles again without them and keeps the form with
          // more blocks an SM.
          bool wgmmaRings =
              target_.hasWgmma() && invariantRings && numWarps_ == 8;
          if ((target_.hasWgmma() && !wgmmaRings) ||
              flavour->elementBytes != 2 ||
              flavour->split != kiln::TensorCoreFlavour::Split::None)
            return;
          pd.invariantValue[i] = invariant;
        } else if (!computedInBody(operands[i], body, stages, axisInfo,
                                   loads)) {
          return;
        }
        pd.staged[i] = true;
        pd.stagedTransposed[i] = transposed;
        kContiguous[i] = i == 0 ? !transposed : transposed;
      }
      pd.async = kiln::accumulatorFitsWgmma(
          *flavour, target_, accType, numWarps_, kContiguous[0], kContiguous[1],
          /*aInRegisters=*/pd.source[0] < 0 && !pd.staged[0]);
      if (pd.broadcastA && pd.async)
        return;
      pd.acc = dot.getC();
      if (auto select = dot.getC().getDefiningOp<arith::SelectOp>();
          select && select->hasOneUse() &&
          select.getCondition().getType().isInteger(1) &&
          kiln::isZero(select.getTrueValue()) &&
          isa<BlockArgument>(select.getFalseValue())) {
        pd.acc = select.getFalseValue();
        pd.restart = select;
      }
      // fp8 before sm_89 runs on wgmma only.
      if (!pd.async && !flavour->hasMmaSync(target_))
        return;
      // A dot accumulating into a carried value that it alone produces: its
      // wgmma group stays in flight until a later dot's wait. With other
      // dots in the loop, only when the ring is deep enough for its copies
      // to wait for the iteration's end (see rewrite).
      auto accArg = dyn_cast<BlockArgument>(pd.acc);
      pd.accumulates =
          pd.async && (dots.size() == 1 || stages >= 3) && accArg &&
          accArg.getOwner() == body && accArg.getArgNumber() > 0 &&
          yield.getOperand(accArg.getArgNumber() - 1) == dot.getD() &&
          readOnlyCarriedAndInEpilogue(dot, yield, pd.epilogue) &&
          accArg.hasOneUse();
      if (pd.accumulates)
        pd.carried = accArg.getArgNumber() - 1;
    }
    // Nothing to copy ahead (every operand computed from carried values):
    // the loop stays as it is.
    if (loads.empty())
      return;
    // The loop's vector rows (widenLoopVectors) ride with the copies, in
    // rings of all the stages: read where they were loaded, after the
    // iteration's wait and barrier, and refilled after the next one's
    // barrier, like an operand's ring. Not where the copies refill the
    // slot read in the same iteration: rows read after the dot would race
    // with them.
    // Nor in a loop to warp-specialize, whose producer copies operand
    // tiles alone.
    if (!refill && !withoutVectorRows_ && !warpSpecializeMarked(loop))
      for (Operation &op : body->without_terminator()) {
        auto load = dyn_cast<kiln::LoadOp>(op);
        if (!load || !load->hasAttr(kVectorRowAttr) ||
            llvm::any_of(loads, [&](auto &l) { return l.load == load; }))
          continue;
        std::optional<PipelinedLoad> l = asCopy(load, stages, axisInfo);
        if (!l)
          continue;
        l->readBack = true;
        l->fullRing = true;
        loads.push_back(*l);
        addedVectorRows_ = true;
      }
    // One dot refills the slot it read (a GEMM); several (attention's two)
    // refill the one read the iteration before, so that no barrier after
    // the second dot holds the warps together: at 8 warps, one warp's
    // softmax overlaps another's dots (H200, d128 on mma.sync: 0.86-0.89
    // of Triton refilling the slot read, 0.94-0.98 the earlier one).
    if (!slots && !refill && shortRings(dots, loads, stages))
      return refillReadSlots && dots.size() == 1
                 ? pipeline(loop, axisInfo, 0, /*refill=*/true)
                 : pipeline(loop, axisInfo, stages - 1);
    // A dot whose result is only carried, and read in the next iteration
    // after the full wait of an earlier dot (attention forward: acc * alpha
    // comes after q @ k's wait), stays in flight until that wait, so that
    // the next iteration's first dot issues right behind it. As for
    // accumulating dots beside others, the copies must be able to wait for
    // the slot's last read, so the ring needs 3 slots. Only with TMA rings:
    // beside cp.async's per-thread addresses, the fragments held in flight
    // cost spills (H200, tutorial 06 at d64 from pointers: 1.04 -> 0.98 of
    // Triton), where TMA leaves the registers to them (d128 from host
    // descriptors: 0.95 -> 1.03).
    bool allTma = llvm::all_of(
        loads, [](const PipelinedLoad &l) { return l.once || l.tma; });
    if (dots.size() > 1 && stages >= 3 && allTma && deferWaits)
      for (auto [index, pd] : llvm::enumerate(dots)) {
        if (!pd.async || pd.accumulates || !pd.dot->hasOneUse() ||
            pd.dot->getUses().begin()->getOwner() != yield)
          continue;
        unsigned carried = pd.dot->getUses().begin()->getOperandNumber();
        BlockArgument arg = body->getArgument(carried + 1);
        auto waiter = llvm::find_if(
            ArrayRef(dots).take_front(index),
            [](const PipelinedDot &d) { return d.async && !d.accumulates; });
        if (waiter == dots.begin() + index)
          continue;
        bool readAfter = llvm::all_of(arg.getUsers(), [&](Operation *user) {
          Operation *top = body->findAncestorOpInBlock(*user);
          return top && waiter->dot->isBeforeInBlock(top);
        });
        if (!readAfter)
          continue;
        pd.waitedBy = int(waiter - dots.begin());
        pd.carried = carried;
      }
    // Beside other dots, an accumulator in flight pins its registers through
    // the rest of the iteration. Past half of a thread's 255 registers in
    // accumulators, that costs spills (attention backward at HEAD_DIM 128:
    // dk and dv take 128 each) more than the overlap gains: wait at once.
    if (dots.size() > 1) {
      int64_t registers = 0;
      for (PipelinedDot &pd : dots)
        if (pd.accumulates || pd.waitedBy >= 0)
          registers += pd.dot.getType().getNumElements() *
                       pd.dot.getType().getElementTypeBitWidth() / 32 /
                       (int64_t(numWarps_) * 32);
      if (registers > 128)
        for (PipelinedDot &pd : dots) {
          pd.accumulates = false;
          pd.waitedBy = -1;
        }
    }

    // Staging tiles: two used in turn where the dot stays in flight while
    // the next iteration writes its operand, else one (the dot then
    // completes in its iteration). One also where that lets another block
    // share the SM (shared memory limiting it, the accumulators' registers
    // not): H200, an int8-weight GEMM at 128x128x64 with 4 warps ran at
    // 0.80 of Triton with two tiles (one block an SM), 1.04 with one (two);
    // at 128x256x64 with 8 warps, one block either way, 1.26 with two
    // against 1.06. And one where two do not fit a CTA's shared memory
    // beside the rings; where one does not either, the loop stays as it is.
    bool anyStaged = llvm::any_of(
        dots, [](auto &pd) { return pd.staged[0] || pd.staged[1]; });
    if (anyStaged) {
      auto stagingType = [&](const PipelinedDot &pd, unsigned i, bool two) {
        return ringType(cast<RankedTensorType>(pd.dot->getOperand(i).getType()),
                        two && pd.accumulates && !pd.invariant(i) ? 2 : 1,
                        pd.stagedTransposed[i]);
      };
      // The rings' and staging tiles' bytes, with two tiles for the dots
      // that stay in flight or one for every dot. A value an earlier dot
      // stages alike shares its tile (see rewrite).
      auto sharedBytes = [&](bool two) {
        int64_t bytes = 0;
        for (PipelinedLoad &l : loads)
          bytes += l.ring.getSizeInBytes();
        for (auto [d, pd] : llvm::enumerate(dots))
          for (unsigned i = 0; i < 2; ++i) {
            if (!pd.staged[i])
              continue;
            auto typeOf = [&](const PipelinedDot &p, unsigned j) {
              return stagingType(p, j, two);
            };
            if (!sharedStaging(dots, unsigned(d), i, typeOf))
              bytes += typeOf(pd, i).getSizeInBytes();
          }
        return bytes;
      };
      auto blocks = [&](bool two) {
        return blocksPerSM(dots, sharedBytes(two));
      };
      bool two = blocks(false) <= blocks(true) &&
                 sharedBytes(true) <= target_.maxSharedBytes();
      if (!two && sharedBytes(false) > target_.maxSharedBytes())
        return;
      for (PipelinedDot &pd : dots)
        for (unsigned i = 0; i < 2; ++i)
          if (pd.staged[i]) {
            pd.staging[i] = stagingType(pd, i, two);
            pd.accumulates &= two;
          }
    }

    // A ring replaces its load, so every use of the load must be one of
    // the operands above (a tile read back keeps its uses).
    for (auto [index, l] : llvm::enumerate(loads)) {
      if (l.once || l.readBack)
        continue;
      unsigned reads = 0;
      for (PipelinedDot &pd : dots)
        reads += unsigned(pd.source[0] == int(index)) +
                 unsigned(pd.source[1] == int(index));
      if (reads != unsigned(llvm::range_size(l.load->getUses())))
        return;
    }

    // The load stage: the ring loads' backward slice in the body, closed
    // over the carried values it reads.
    llvm::SetVector<Operation *> stage;
    llvm::SmallDenseSet<unsigned> stageCarried;
    llvm::SmallPtrSet<Operation *, 4> ringLoads;
    SmallVector<kiln::LoadOp> indexLoads;
    SmallVector<Value> work;
    for (PipelinedLoad &l : loads) {
      if (l.once)
        continue;
      ringLoads.insert(l.load);
      stage.insert(l.load);
      // A TMA copy reads only the box offsets, but the load's pointers
      // stay in the stage too: they are dead once the ring replaces it.
      llvm::append_range(work, l.load->getOperands());
    }
    if (ringLoads.empty())
      return;
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
      // Loads the rings' addresses or masks read (a gather's token indices:
      // paged attention's k and v rows) run ahead with the stage, in a loop
      // that writes no memory they could read.
      if (auto index = dyn_cast<kiln::LoadOp>(def)) {
        if (index.getIsVolatile() || index.getBoundaryCheck() ||
            kiln::writesMemoryReadBy(loop, index))
          return;
        indexLoads.push_back(index);
        stage.insert(def);
        llvm::append_range(work, inputsOf(def));
        continue;
      }
      // Pure ops, regions included (a flattened loop's per-tile offsets,
      // under an scf.if).
      if (!isMemoryEffectFree(def))
        return;
      stage.insert(def);
      llvm::append_range(work, inputsOf(def));
    }
    for (PipelinedDot &pd : dots)
      if (auto arg = dyn_cast<BlockArgument>(pd.acc);
          arg && arg.getOwner() == body && arg.getArgNumber() > 0 &&
          stageCarried.contains(arg.getArgNumber() - 1))
        return;
    // What the rest of the body reads of the stage (a causal mask's
    // start_n + offs_n; a flattened loop's tile counters) and what is read
    // of its carried values after the loop is recomputed for the current
    // iteration, since the stage runs ahead. A value depending on a ring's
    // load cannot be.
    auto isStageOp = [&](Operation *op) {
      Operation *top = body->findAncestorOpInBlock(*op);
      return top && stage.contains(top);
    };
    auto stageCarriedIndex = [&](Value v) -> std::optional<unsigned> {
      auto arg = dyn_cast<BlockArgument>(v);
      if (!arg || arg.getOwner() != body || arg.getArgNumber() == 0 ||
          !stageCarried.contains(arg.getArgNumber() - 1))
        return std::nullopt;
      return arg.getArgNumber() - 1;
    };
    // The carried values `v` depends on through the stage; false when it
    // depends on a ring's load.
    auto carriedOf = [&](Value v, llvm::SmallDenseSet<unsigned> &out) {
      llvm::DenseSet<Value> seen;
      SmallVector<Value> todo{v};
      while (!todo.empty()) {
        Value u = todo.pop_back_val();
        if (!seen.insert(u).second)
          continue;
        if (std::optional<unsigned> index = stageCarriedIndex(u)) {
          out.insert(*index);
          continue;
        }
        Operation *def = u.getDefiningOp();
        if (!def || def->getBlock() != body || !stage.contains(def))
          continue;
        if (ringLoads.contains(def))
          return false;
        llvm::append_range(todo, inputsOf(def));
      }
      return true;
    };
    SmallVector<OpOperand *> external;
    bool readsRing = false;
    body->walk([&](Operation *op) {
      if (isStageOp(op))
        return;
      for (OpOperand &use : op->getOpOperands()) {
        Value v = use.get();
        Operation *def = v.getDefiningOp();
        if (def && ringLoads.contains(def))
          continue; // a dot operand's path (counted above)
        if (op == yield && stageCarried.contains(use.getOperandNumber()))
          continue; // the stage's own recurrence
        bool fromStage =
            stageCarriedIndex(v).has_value() ||
            (def && def->getBlock() == body && stage.contains(def));
        if (!fromStage)
          continue;
        llvm::SmallDenseSet<unsigned> ignored;
        readsRing |= !carriedOf(v, ignored);
        external.push_back(&use);
      }
    });
    if (readsRing)
      return;
    // The carried values to keep for the current iteration: those read as
    // above, those read after the loop, and what their recurrences read.
    llvm::SmallDenseSet<unsigned> split;
    for (OpOperand *use : external)
      carriedOf(use->get(), split);
    for (unsigned index : stageCarried)
      if (!loop.getResult(index).use_empty())
        split.insert(index);
    SmallVector<unsigned> pending(split.begin(), split.end());
    while (!pending.empty()) {
      unsigned index = pending.pop_back_val();
      llvm::SmallDenseSet<unsigned> reads;
      if (!carriedOf(yield.getOperand(index), reads))
        return;
      for (unsigned read : reads)
        if (split.insert(read).second)
          pending.push_back(read);
    }
    // From here on the loop is rewritten (nothing above changed the IR).
    rewritten_ = true;
    // Each such value gets a second iter_arg, the stage's, which runs
    // ahead; the original one stays current, its recurrence recomputed.
    llvm::DenseMap<Value, Value> currentOf;
    if (!split.empty()) {
      SmallVector<unsigned> indices(split.begin(), split.end());
      llvm::sort(indices);
      SmallVector<Value> inits, recurrences;
      for (unsigned index : indices) {
        inits.push_back(loop.getInitArgs()[index]);
        recurrences.push_back(yield.getOperand(index));
      }
      unsigned numArgs = loop.getNumRegionIterArgs();
      IRRewriter rewriter(loop);
      loop = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
          rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
          [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
            return recurrences;
          }));
      body = loop.getBody();
      yield = cast<scf::YieldOp>(body->getTerminator());
      for (auto [i, index] : llvm::enumerate(indices)) {
        BlockArgument current = loop.getRegionIterArgs()[index];
        BlockArgument ahead = loop.getRegionIterArgs()[numArgs + i];
        current.replaceUsesWithIf(
            ahead, [&](OpOperand &use) { return isStageOp(use.getOwner()); });
        stageCarried.erase(index);
        stageCarried.insert(numArgs + unsigned(i));
        currentOf[ahead] = current;
        external.push_back(&yield->getOpOperand(index));
      }
    }

    llvm::DenseMap<Operation *, Operation *> copies;
    std::function<Value(Value)> current = [&](Value v) -> Value {
      if (auto it = currentOf.find(v); it != currentOf.end())
        return it->second;
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != body || !stage.contains(def))
        return v;
      auto known = copies.find(def);
      if (known == copies.end()) {
        IRMapping mapping;
        for (Value input : inputsOf(def))
          mapping.map(input, current(input));
        OpBuilder b(def);
        b.setInsertionPointAfter(def);
        known = copies.try_emplace(def, b.clone(*def, mapping)).first;
      }
      return known->second->getResult(cast<OpResult>(v).getResultNumber());
    };
    for (OpOperand *use : external)
      use->set(current(use->get()));

    // A loop to warp-specialize waits for the other loops of its function
    // (attention's two when causal): the program is split once for all.
    if (split.empty() && indexLoads.empty())
      if (std::optional<kiln::WarpSpecializedLoop> spec =
              specializable(loop, dots, loads, stages)) {
        candidates_.push_back(
            {std::move(*spec), dots, loads, stage, stageCarried});
        return;
      }
    rewrite(loop, dots, loads, stage, stageCarried, stages);
  }

  /// Whether tl.range(warp_specialize=True) marks `op` (null: no).
  static bool warpSpecializeAsked(Operation *op) {
    auto marked = op ? op->getAttrOfType<IntegerAttr>(kiln::kWarpSpecializeAttr)
                     : IntegerAttr();
    return marked && marked.getInt() != 0;
  }

  /// Whether tl.range(warp_specialize=True) marks `loop` or the op
  /// around it.
  static bool warpSpecializeMarked(scf::ForOp loop) {
    return warpSpecializeAsked(loop) ||
           warpSpecializeAsked(loop->getParentOp());
  }

  /// A loop that kiln::warpSpecialize may take, with what rewrite needs
  /// when it does not.
  struct Candidate {
    kiln::WarpSpecializedLoop spec;
    SmallVector<PipelinedDot> dots;
    SmallVector<PipelinedLoad> loads;
    llvm::SetVector<Operation *> stage;
    llvm::SmallDenseSet<unsigned> stageCarried;
  };
  std::vector<Candidate> candidates_;

  /// The producer/consumer form (compiler/transforms/WarpSpecialize.cpp)
  /// of a loop, when it or the loop around it (over persistent tiles) asks
  /// for it and its wgmma dots read TMA rings and tiles loaded once; none
  /// to pipeline it as usual.
  std::optional<kiln::WarpSpecializedLoop>
  specializable(scf::ForOp loop, ArrayRef<PipelinedDot> dots,
                ArrayRef<PipelinedLoad> loads, unsigned stages) const {
    auto outer = dyn_cast<scf::ForOp>(loop->getParentOp());
    if (!warpSpecializeAsked(outer))
      outer = nullptr;
    if ((!outer && !warpSpecializeAsked(loop)) || !target_.hasWgmma() ||
        llvm::any_of(loads,
                     [](auto &l) { return (!l.tma && !l.once) || l.readBack; }))
      return std::nullopt;
    kiln::WarpSpecializedLoop spec{outer, loop, {}, {}, stages};
    for (const PipelinedDot &pd : dots) {
      // An accumulator restarting per tile, or read by a flattened loop's
      // epilogue, stays with the usual schedule.
      if (!pd.async || (pd.accumulates && (pd.restart || pd.epilogue)))
        return std::nullopt;
      kiln::SpecializedDot d;
      d.dot = pd.dot;
      for (unsigned i = 0; i < 2; ++i) {
        d.source[i] = pd.source[i];
        d.viewTransposed[i] = pd.viewTransposed[i];
      }
      d.accumulates = pd.accumulates;
      d.waitedBy = pd.waitedBy;
      d.carried = pd.carried;
      spec.dots.push_back(d);
    }
    for (const PipelinedLoad &l : loads)
      spec.operands.push_back({l.load, l.ring, l.once});
    return spec;
  }

  /// Each function's candidates, split together; those kiln::warpSpecialize
  /// leaves alone are pipelined as usual.
  void specializeCandidates() {
    llvm::MapVector<Operation *, SmallVector<Candidate *>> byFunction;
    for (Candidate &c : candidates_)
      byFunction[c.spec.loop->getParentOfType<func::FuncOp>()].push_back(&c);
    for (auto &[func, group] : byFunction) {
      // The launcher encodes a kernel argument's map with its ring tile's
      // box (read here: the transform erases the loads).
      SmallVector<std::pair<unsigned, TensorMapEncoding>> argumentMaps;
      SmallVector<kiln::WarpSpecializedLoop> specs;
      for (Candidate *c : group) {
        specs.push_back(c->spec);
        for (const PipelinedLoad &l : c->loads)
          if (auto arg =
                  dyn_cast<BlockArgument>(kiln::LoadOp(l.load).getTensorMap());
              arg && l.tma)
            argumentMaps.push_back({arg.getArgNumber(), encodingOf(l.ring)});
      }
      if (kiln::warpSpecialize(specs, numWarps_)) {
        for (auto &[arg, encoding] : argumentMaps)
          tensorMaps_[arg] = encoding;
        for (const kiln::WarpSpecializedLoop &spec : specs)
          deferred_ |= llvm::any_of(
              spec.dots, [](const auto &d) { return d.waitedBy >= 0; });
        continue;
      }
      for (Candidate *c : group)
        rewrite(c->spec.loop, c->dots, c->loads, c->stage, c->stageCarried,
                c->spec.stages);
    }
    candidates_.clear();
  }

  /// `iv + k * step` in the induction variable's type.
  /// The copy replacing `load` for the iteration whose induction variable is
  /// `iv`: its operands through `mapping`, masked by iv < ub. A TMA copy
  /// counts its bytes on `barrier`.
  static void emitCopy(OpBuilder &b, PipelinedLoad l, IRMapping &mapping,
                       Value inRange, Value tile, Value barrier) {
    Location loc = l.load.getLoc();
    if (l.tma) {
      SmallVector<Value> offsets;
      for (Value offset : l.load.getBoxOffsets())
        offsets.push_back(mapping.lookupOrDefault(offset));
      kiln::gpu::AsyncTmaCopyOp::create(b, loc, l.load.getTensorMap(), offsets,
                                        tile, barrier, inRange);
      return;
    }
    auto ptrType = cast<RankedTensorType>(l.load.getPtr().getType());
    auto maskType = RankedTensorType::get(ptrType.getShape(), b.getI1Type(),
                                          ptrType.getEncoding());
    Value mask = kiln::SplatOp::create(b, loc, maskType, inRange);
    if (Value original = l.load.getMask())
      mask = arith::AndIOp::create(b, loc, mapping.lookupOrDefault(original),
                                   mask);
    auto copy = kiln::gpu::AsyncCopyOp::create(
        b, loc, mapping.lookupOrDefault(l.load.getPtr()), tile, mask);
    copy->setAttr(kiln::kCopyVecAttr, b.getI32IntegerAttr(int32_t(l.vec)));
    if (l.hasRuns())
      kiln::setTileRuns(copy, l.runs);
  }

  void rewrite(scf::ForOp loop, SmallVector<PipelinedDot> &dots,
               SmallVector<PipelinedLoad> &loads,
               const llvm::SetVector<Operation *> &stage,
               const llvm::SmallDenseSet<unsigned> &stageCarried,
               unsigned stages) {
    Location loc = loop.getLoc();
    OpBuilder b(loop);
    Block *body = loop.getBody();
    auto yield = cast<scf::YieldOp>(body->getTerminator());
    Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
          step = loop.getStep();
    auto i32Const = [&](OpBuilder &builder, int64_t v) -> Value {
      return arith::ConstantOp::create(builder, loc,
                                       builder.getI32IntegerAttr(int32_t(v)));
    };
    bool anyAsync = llvm::any_of(dots, [](auto &d) { return d.async; });
    bool anyTma = llvm::any_of(loads, [](auto &l) { return l.tma; });
    // cp.async groups in the loop: rings copied by cp.async. Tiles copied
    // once by cp.async beside TMA rings alone are waited for before the
    // loop instead, which then has no cp.async wait, commit or fence.
    bool anyCpAsync =
        llvm::any_of(loads, [](auto &l) { return !l.tma && !l.once; });
    bool onceCpAsync =
        llvm::any_of(loads, [](auto &l) { return !l.tma && l.once; });
    bool genericReads = llvm::any_of(dots, [](auto &d) { return !d.async; });
    llvm::DenseMap<Operation *, unsigned> loadIndex;
    for (auto [i, l] : llvm::enumerate(loads))
      loadIndex[l.load] = unsigned(i);

    // Tiles loaded once are copied where they were loaded (as early as
    // possible), unless another loop or region lies between: then right
    // before this loop, so that the tile's buffer is not live across the
    // other loop (attention's two loops over k/v, both reading q).
    auto copyPoint = [&](kiln::LoadOp load) -> Operation * {
      for (Operation *op = load->getNextNode(); op && op != loop.getOperation();
           op = op->getNextNode())
        if (op->getNumRegions() != 0)
          return loop;
      return load;
    };
    // The buffers, before the first copy into any of them.
    Operation *first = loop;
    for (PipelinedLoad &l : loads)
      if (l.once && copyPoint(l.load)->isBeforeInBlock(first))
        first = copyPoint(l.load);
    OpBuilder allocs(first);
    SmallVector<Value> rings;
    for (PipelinedLoad &l : loads)
      rings.push_back(
          kiln::gpu::LocalAllocOp::create(allocs, loc, l.ring, IntegerAttr()));
    // Staging tiles of computed operands, per dot and operand. A value
    // two dots read the same way is staged once, for the first
    // (sharedStaging).
    SmallVector<std::array<Value, 2>> stagingBuffers(dots.size());
    SmallVector<std::array<bool, 2>> stagedEarlier(dots.size(), {false, false});
    bool twoStagingSlots = false;
    for (auto [d, pd] : llvm::enumerate(dots))
      for (unsigned i = 0; i < 2; ++i) {
        if (!pd.staged[i])
          continue;
        if (auto earlier = sharedStaging(dots, unsigned(d), i,
                                         [](const PipelinedDot &p, unsigned j) {
                                           return p.staging[j];
                                         })) {
          stagingBuffers[d][i] =
              stagingBuffers[earlier->first][earlier->second];
          stagedEarlier[d][i] = true;
          continue;
        }
        stagingBuffers[d][i] = kiln::gpu::LocalAllocOp::create(
            allocs, loc, pd.staging[i], IntegerAttr());
        twoStagingSlots |= pd.staging[i].getShape()[0] == 2;
      }
    // Operands computed before the loop: written once, right before it,
    // and visible (to wgmma's async proxy too) before any dot reads them.
    {
      OpBuilder before(loop);
      bool wroteInvariant = false;
      for (auto [d, pd] : llvm::enumerate(dots))
        for (unsigned i = 0; i < 2; ++i)
          if (pd.invariant(i) && !stagedEarlier[d][i]) {
            kiln::storeOperandTile(
                before, loc, pd.invariantValue[i],
                tileOf(before, loc, stagingBuffers[d][i], i32Const(before, 0)));
            wroteInvariant = true;
          }
      if (wroteInvariant) {
        invariantRinged_ |= target_.hasWgmma();
        if (llvm::any_of(dots, [](auto &pd) { return pd.async; }))
          kiln::gpu::FenceAsyncSharedOp::create(before, loc);
        kiln::gpu::BarrierOp::create(before, loc);
      }
    }
    // A TMA ring's slots each have an mbarrier: one arrival (the issuing
    // thread's, expecting the tile's bytes) and the bytes complete a phase.
    SmallVector<Value> barriers(loads.size());
    auto barrierRing = kiln::barrierRingType(b.getContext(), stages);
    for (auto [i, l] : llvm::enumerate(loads)) {
      if (!l.tma)
        continue;
      barriers[i] = kiln::gpu::LocalAllocOp::create(allocs, loc, barrierRing,
                                                    IntegerAttr());
      for (unsigned j = 0; j < stages; ++j)
        kiln::gpu::InitBarrierOp::create(
            b, loc, tileOf(b, loc, barriers[i], i32Const(b, j)), 1);
      // A kernel argument's map is the launcher's to encode (the one the
      // kernel encodes was shaped by asTmaCopy).
      if (auto arg = dyn_cast<BlockArgument>(l.load.getTensorMap()))
        tensorMaps_[arg.getArgNumber()] = encodingOf(l.ring);
    }
    if (anyTma) {
      // The barriers are ready before any thread or TMA unit uses them.
      kiln::gpu::FenceAsyncSharedOp::create(b, loc);
      kiln::gpu::BarrierOp::create(b, loc);
    }
    auto barrierOf = [&](OpBuilder &at, unsigned i, Value slot) -> Value {
      return barriers[i] ? tileOf(at, loc, barriers[i], slot) : Value();
    };

    // Tiles loaded once: one group each (older than the prologue's, so the
    // loop's first wait covers them).
    for (auto [i, l] : llvm::enumerate(loads)) {
      if (!l.once)
        continue;
      OpBuilder at(copyPoint(l.load));
      Value all = arith::ConstantOp::create(at, loc, at.getBoolAttr(true));
      IRMapping identity;
      emitCopy(at, l, identity, all, tileOf(at, loc, rings[i], i32Const(at, 0)),
               Value());
      kiln::gpu::AsyncCommitGroupOp::create(at, loc);
    }

    // Prologue: the load stage for iterations 0 .. S-2.
    SmallVector<Value> carried(loop.getInitArgs());
    for (unsigned j = 0; j + 1 < stages; ++j) {
      IRMapping mapping;
      Value iv = kiln::ivPlus(b, loc, lb, step, j);
      mapping.map(loop.getInductionVar(), iv);
      for (unsigned index : stageCarried)
        mapping.map(loop.getRegionIterArgs()[index], carried[index]);
      Value inRange =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, iv, ub);
      for (Operation &op : body->without_terminator()) {
        if (!stage.contains(&op))
          continue;
        auto it = loadIndex.find(&op);
        if (it != loadIndex.end()) {
          emitCopy(b, loads[it->second], mapping, inRange,
                   tileOf(b, loc, rings[it->second], i32Const(b, j)),
                   barrierOf(b, it->second, i32Const(b, j)));
          continue;
        }
        Operation *clone = b.clone(op, mapping);
        if (auto index = dyn_cast<kiln::LoadOp>(clone))
          mapping.map(op.getResult(0), maskPastEnd(index, inRange));
      }
      if (anyCpAsync)
        kiln::gpu::AsyncCommitGroupOp::create(b, loc);
      for (unsigned index : stageCarried)
        carried[index] = mapping.lookupOrDefault(yield.getOperand(index));
    }

    if (onceCpAsync && !anyCpAsync) {
      kiln::gpu::AsyncWaitOp::create(b, loc, 0);
      kiln::gpu::BarrierOp::create(b, loc);
      if (anyAsync)
        kiln::gpu::FenceAsyncSharedOp::create(b, loc);
    }

    // The loop carries the stage S-1 iterations ahead, and the ring slots
    // read and written.
    for (unsigned index : stageCarried)
      loop.getInitArgsMutable()[index].set(carried[index]);
    IRRewriter rewriter(b);
    SmallVector<Value> slotInits{i32Const(b, 0),
                                 i32Const(b, int64_t(stages) - 1)};
    if (anyTma)
      slotInits.push_back(i32Const(b, 0));
    if (twoStagingSlots)
      slotInits.push_back(i32Const(b, 0));
    bool anyShortRing =
        llvm::any_of(loads, [](auto &l) { return l.shortRing(); });
    if (anyShortRing)
      slotInits.push_back(i32Const(b, 0));
    auto newLoop = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
        rewriter, slotInits,
        /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &, Location, ArrayRef<BlockArgument> newArgs) {
          return SmallVector<Value>(newArgs.begin(), newArgs.end());
        }));
    body = newLoop.getBody();
    yield = cast<scf::YieldOp>(body->getTerminator());
    unsigned numArgs = newLoop.getNumRegionIterArgs();
    // The slot read, the slot written, and the parity of the read slot's
    // mbarrier phase (TMA rings; it flips each time the reads wrap).
    unsigned firstSlotArg = numArgs - unsigned(slotInits.size());
    Value readSlot = newLoop.getRegionIterArgs()[firstSlotArg];
    Value writeSlot = newLoop.getRegionIterArgs()[firstSlotArg + 1];
    Value phase =
        anyTma ? newLoop.getRegionIterArgs()[firstSlotArg + 2] : Value();
    // The staging tile written and read (of two, used in turn).
    unsigned stagingSlotArg = firstSlotArg + 2 + unsigned(anyTma);
    Value stagingSlot =
        twoStagingSlots ? newLoop.getRegionIterArgs()[stagingSlotArg] : Value();
    // The slot of the short rings read and then refilled.
    unsigned shortSlotArg = stagingSlotArg + unsigned(twoStagingSlots);
    Value shortSlot =
        anyShortRing ? newLoop.getRegionIterArgs()[shortSlotArg] : Value();

    newLoop->setAttr(kiln::kStageLeadAttr,
                     b.getI32IntegerAttr(int32_t(stages) - 1));
    // The stage reads iv + (S-1) * step.
    b.setInsertionPointToStart(body);
    Value iv = newLoop.getInductionVar();
    Value ahead =
        kiln::ivPlus(b, loc, iv, newLoop.getStep(), int64_t(stages) - 1);
    iv.replaceUsesWithIf(ahead, [&](OpOperand &use) {
      Operation *top = body->findAncestorOpInBlock(*use.getOwner());
      return top && stage.contains(top);
    });
    // Whether a dot of the previous iteration may still read its tiles here
    // (an accumulating dot keeps its wgmma group in flight).
    bool inFlight = llvm::any_of(
        dots, [](auto &d) { return d.accumulates || d.waitedBy >= 0; });
    deferred_ |= llvm::any_of(dots, [](auto &d) { return d.waitedBy >= 0; });
    if (anyCpAsync)
      kiln::gpu::AsyncWaitOp::create(b, loc, int32_t(stages) - 2);
    Operation *top = nullptr;
    // The barrier makes every thread's cp.async bytes visible to all, and,
    // when the copies follow it, keeps them from overwriting the slot the
    // previous iteration's dots read. TMA bytes are visible through the
    // mbarrier (waited for before the first dot reading the tile); with the
    // copies at the iteration's end, the barrier has no work.
    if (anyCpAsync || !inFlight)
      top = kiln::gpu::BarrierOp::create(b, loc);
    // TMA writes through the async proxy after ldmatrix reads. wgmma reads
    // cp.async's bytes once the wait and the barrier above made them
    // visible, with no proxy fence, as upstream Triton's pipelined loops
    // do: the fence (MEMBAR.ALL.CTA in SASS) in every iteration cost the
    // H200 up to 7% (tutorial 03 at 128x128x64 w4 s4, 4096^3; tutorial 06's
    // backward, d64 causal, 0.983 -> 1.001 of Triton at N_CTX 1024).
    if (anyTma && genericReads)
      top = kiln::gpu::FenceAsyncSharedOp::create(b, loc);

    // Each dot on the tiles that have landed (or a from registers). Every
    // async dot is followed by a wait that leaves at most itself in flight
    // (none when its result is read in the iteration), so the iteration's
    // first dot completes the previous iteration's, and at its end at most
    // its last accumulating dot still reads this iteration's slot.
    SmallVector<unsigned> accumulators;
    llvm::SmallDenseSet<unsigned> waited;
    // The first wait that completes the previous iteration's deferred dots.
    Operation *waitOfDeferred = nullptr;
    // The wait of an accumulating dot that an epilogue region reads (a
    // flattened loop's), after which the slot to refill is free.
    Operation *waitBeforeEpilogue = nullptr;
    // Tiles computed operands are made from are read back where they were
    // loaded (after the iteration's wait and barrier; TMA's after its
    // mbarrier, so that every thread's bytes are there for all). A tile only
    // converted into another layout (gated delta rule's `tl.load(p_v) -
    // b_v`, read in the accumulator's) is read back in that one: the
    // conversion's trip through shared memory, and its two barriers, go.
    // Reading other threads' chunks of a short ring's slot needs a barrier
    // between the reads and the copies refilling it: the staging barrier of
    // the operands those tiles make. A dot with a computed a in registers
    // (no staging) keeps the chunks each thread copied.
    bool stagedReadBacks = llvm::none_of(dots, [](const PipelinedDot &d) {
      return d.source[0] < 0 && !d.staged[0];
    });
    for (auto [i, l] : llvm::enumerate(loads)) {
      if (!l.readBack)
        continue;
      OpBuilder at(l.load);
      if (l.tma && waited.insert(unsigned(i)).second)
        kiln::gpu::WaitBarrierOp::create(
            at, loc, barrierOf(at, unsigned(i), readSlot), phase);
      Operation *replaced = l.load;
      if (l.load->hasOneUse() && !l.hasRuns() && stagedReadBacks)
        if (auto convert =
                dyn_cast<kiln::gpu::ConvertLayoutOp>(*l.load->user_begin()))
          replaced = convert;
      auto read = kiln::gpu::LocalLoadOp::create(
          at, l.load.getLoc(), replaced->getResult(0).getType(),
          tileOf(at, loc, rings[i], l.shortRing() ? shortSlot : readSlot));
      if (l.hasRuns())
        kiln::setTileRuns(read, l.runs);
      replaced->getResult(0).replaceAllUsesWith(read.getResult());
      if (replaced != l.load)
        replaced->erase();
    }
    // The last barrier after staging tiles were written: every thread has
    // read back its short rings' slots by then.
    Operation *stagingBarrier = nullptr;
    SmallVector<bool> chained = chainedDots(dots);
    SmallVector<int> completedBy = completedByLaterWait(dots, chained, loads);
    // Per dot: the results of earlier dots its wait completes.
    SmallVector<SmallVector<Value>> completes(dots.size());
    auto stagingTileOf = [&](unsigned d, unsigned i) {
      Value slot =
          dots[d].staging[i].getShape()[0] == 2 ? stagingSlot : i32Const(b, 0);
      return tileOf(b, loc, stagingBuffers[d][i], slot);
    };
    for (auto [d, pd] : llvm::enumerate(dots)) {
      kiln::DotOp dot = pd.dot;
      b.setInsertionPoint(dot);
      Value operands[2] = {dot.getA(), dot.getB()};
      Value tiles[2];
      bool wroteStaging = false;
      for (unsigned i = 0; i < 2; ++i) {
        // A computed operand is written into its staging tile (unless an
        // earlier dot of the iteration wrote it there, or it was written
        // with the dot before, whose result this one accumulates).
        if (pd.staged[i]) {
          tiles[i] = stagingTileOf(unsigned(d), i);
          if (pd.stagedInLoop(i) && !stagedEarlier[d][i] &&
              !(d > 0 && chained[d - 1])) {
            kiln::storeOperandTile(b, loc, operands[i], tiles[i]);
            wroteStaging = true;
          }
          continue;
        }
        if (pd.source[i] < 0) {
          tiles[i] = operands[i];
          if (i == 0 && pd.broadcastA) {
            auto type = cast<RankedTensorType>(operands[i].getType());
            auto whole = kiln::gpu::MmaEncodingAttr::get(b.getContext(),
                                                         {numWarps_, 1u});
            tiles[i] = kiln::gpu::ConvertLayoutOp::create(
                b, loc,
                RankedTensorType::get(type.getShape(), type.getElementType(),
                                      whole),
                operands[i]);
          }
          continue;
        }
        PipelinedLoad &l = loads[pd.source[i]];
        // A TMA tile is waited for by its first reader alone, so that the
        // work before it (attention's softmax before p @ v) hides the copy.
        if (l.tma && waited.insert(unsigned(pd.source[i])).second)
          kiln::gpu::WaitBarrierOp::create(
              b, loc, barrierOf(b, unsigned(pd.source[i]), readSlot), phase);
        tiles[i] = kiln::readView(b, loc,
                                  tileOf(b, loc, rings[pd.source[i]],
                                         l.once          ? i32Const(b, 0)
                                         : l.shortRing() ? shortSlot
                                                         : readSlot),
                                  pd.viewTransposed[i]);
      }
      if (chained[d])
        for (unsigned i = 0; i < 2; ++i)
          if (dots[d + 1].stagedInLoop(i) && !stagedEarlier[d + 1][i]) {
            kiln::storeOperandTile(b, loc, dots[d + 1].dot->getOperand(i),
                                   stagingTileOf(unsigned(d + 1), i));
            wroteStaging = true;
          }
      // Every thread's part of the staging tiles is written before any
      // warp reads them (wgmma through the async proxy).
      if (wroteStaging) {
        if (pd.async)
          kiln::gpu::FenceAsyncSharedOp::create(b, loc);
        stagingBarrier = kiln::gpu::BarrierOp::create(b, loc);
      }
      kiln::InputPrecisionAttr precision = kiln::sharedDotPrecision(dot);
      // A restarting accumulator (a flattened loop's first iteration of a
      // tile) is not added then.
      Value useC;
      if (pd.restart)
        useC = arith::XOrIOp::create(
            b, loc, pd.restart.getCondition(),
            arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
      auto sharedDot = kiln::gpu::SharedDotOp::create(
          b, loc, dot.getType(), tiles[0], tiles[1],
          pd.restart ? pd.restart.getFalseValue() : dot.getC(), useC,
          pd.async ? b.getUnitAttr() : UnitAttr(), precision, UnitAttr(),
          dot.getMaxNumImpreciseAccAttr());
      Value result = sharedDot.getD();
      if (completedBy[d] >= 0) {
        // Passed on with those it was to complete (a later dot completed
        // in turn by another).
        SmallVector<Value> &into = completes[completedBy[d]];
        into.push_back(result);
        llvm::append_range(into, completes[d]);
      } else if (pd.async && pd.waitedBy < 0 && !chained[d]) {
        // An accumulating dot stays in flight (the wait leaves its own
        // group pending); other dots' results are read in this iteration.
        // A full wait also completes the previous iteration's dots that
        // stay in flight until it, and ties their carried values, and this
        // iteration's earlier dots that it completes (completedBy).
        SmallVector<Value> waitFor = {result};
        SmallVector<BlockArgument> tied;
        for (PipelinedDot &other : dots)
          if (other.waitedBy == int(d))
            tied.push_back(newLoop.getRegionIterArgs()[other.carried]);
        for (BlockArgument arg : tied)
          waitFor.push_back(arg);
        llvm::append_range(waitFor, completes[d]);
        auto wait =
            kiln::gpu::DotWaitOp::create(b, loc, ValueRange(waitFor).getTypes(),
                                         waitFor, pd.accumulates ? 1 : 0);
        result = wait.getOutputs()[0];
        if (!tied.empty() && !waitOfDeferred)
          waitOfDeferred = wait;
        if (pd.accumulates && pd.epilogue && !waitBeforeEpilogue)
          waitBeforeEpilogue = wait;
        for (auto [arg, ready] :
             llvm::zip(tied, wait.getOutputs().drop_front()))
          arg.replaceAllUsesExcept(ready, wait);
        for (auto [earlier, ready] : llvm::zip(
                 completes[d], wait.getOutputs().drop_front(1 + tied.size())))
          earlier.replaceAllUsesExcept(ready, wait);
      }
      if (pd.accumulates || pd.waitedBy >= 0)
        accumulators.push_back(pd.carried);
      dot.getD().replaceAllUsesWith(result);
      dot->erase();
      if (pd.restart)
        pd.restart->erase();
      // The epilogue reading an accumulating dot's result waits for it.
      if (pd.accumulates && pd.epilogue)
        for (Region &region : pd.epilogue->getRegions()) {
          bool reads = llvm::any_of(result.getUses(), [&](OpOperand &use) {
            return region.isAncestor(use.getOwner()->getParentRegion());
          });
          if (!reads)
            continue;
          OpBuilder at = OpBuilder::atBlockBegin(&region.front());
          auto ready = kiln::gpu::DotWaitOp::create(
              at, loc, TypeRange{result.getType()}, ValueRange{result}, 0);
          result.replaceUsesWithIf(ready.getOutputs()[0], [&](OpOperand &use) {
            return use.getOwner() != ready &&
                   region.isAncestor(use.getOwner()->getParentRegion());
          });
        }
      // The operands' paths from their loads, now unused.
      for (unsigned i = 0; i < 2; ++i)
        if (pd.source[i] >= 0)
          kiln::eraseOperandPath(operands[i]);
    }

    // The stage's copies fill the slot the previous iteration's dots read.
    // With none of them in flight, every thread is past them at the
    // barrier above, so the copies go right after it (with the stage's
    // address arithmetic, which nothing else in the body reads), as early
    // as they can, and have a whole iteration more to land. Otherwise they
    // go last, after the waits that complete those dots.
    if (!inFlight) {
      // Short rings are refilled in the slot read this iteration: after
      // the barrier that follows the reads (refilled operand rings: a
      // barrier after the dots).
      if (anyShortRing)
        top = stagingBarrier;
      if (llvm::any_of(loads, [](auto &l) { return l.refilled; })) {
        b.setInsertionPoint(yield);
        top = kiln::gpu::BarrierOp::create(b, loc);
      }
      llvm::SmallPtrSet<Operation *, 4> ringLoads;
      for (PipelinedLoad &l : loads)
        ringLoads.insert(l.load);
      // Collected first: they may move past ops not yet visited.
      SmallVector<Operation *> moved;
      for (Operation &op : *body)
        if (stage.contains(&op) && !ringLoads.contains(&op))
          moved.push_back(&op);
      for (Operation *op : moved) {
        if (top)
          op->moveAfter(top);
        else
          op->moveBefore(body, body->begin());
        top = op;
      }
      if (top)
        b.setInsertionPointAfter(top);
      else
        b.setInsertionPointToStart(body);
    } else {
      // With only deferred dots in flight, the slot to refill was last read
      // by the previous iteration's dots, all complete at the first wait
      // that ties a deferred one: in one warpgroup, the copies go right
      // after it, which gives them most of an iteration more to land than
      // at its end. With several, they would need a barrier there, which
      // keeps the warpgroups from overlapping one's softmax with the
      // other's dots (H200, d128 at 8 warps: 1.03 -> 0.97 of Triton), so
      // they go last, as after an accumulating dot, which reads its slot up
      // to the next iteration's wait.
      //
      // A flattened loop's epilogue (a tile's last iteration) runs between
      // the accumulating dot's wait and the end of the body; the slot is
      // free at that wait already, so the copies go before the epilogue:
      // the next tile's tiles land while it runs, and their addresses are
      // not live through it.
      bool accumulating =
          llvm::any_of(dots, [](auto &d) { return d.accumulates; });
      Operation *earliest = nullptr;
      if (!accumulating && waitOfDeferred && numWarps_ <= 4)
        earliest = waitOfDeferred;
      else if (waitBeforeEpilogue)
        earliest = waitBeforeEpilogue;
      if (earliest) {
        // The stage's address arithmetic below the wait moves up with them
        // (nothing else in the body reads it).
        Operation *last = earliest;
        llvm::SmallPtrSet<Operation *, 4> ringLoads;
        for (PipelinedLoad &l : loads)
          ringLoads.insert(l.load);
        for (Operation &op : llvm::make_early_inc_range(llvm::make_range(
                 std::next(earliest->getIterator()), body->end())))
          if (stage.contains(&op) && !ringLoads.contains(&op)) {
            op.moveAfter(last);
            last = &op;
          }
        b.setInsertionPointAfter(last);
      } else
        b.setInsertionPoint(yield);
      // The other warpgroups may still read the slot about to be refilled.
      if (numWarps_ > 4)
        kiln::gpu::BarrierOp::create(b, loc);
    }
    Value inRange =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, ahead, ub);
    IRMapping identity;
    for (auto [i, l] : llvm::enumerate(loads)) {
      if (l.once)
        continue;
      Value slot = l.shortRing() ? shortSlot : writeSlot;
      emitCopy(b, l, identity, inRange, tileOf(b, loc, rings[i], slot),
               barrierOf(b, unsigned(i), slot));
    }
    if (anyCpAsync)
      kiln::gpu::AsyncCommitGroupOp::create(b, loc);
    // The stage's index loads, now for iteration i + S - 1.
    SmallVector<kiln::LoadOp> indexLoads;
    for (Operation &op : *body)
      if (auto index = dyn_cast<kiln::LoadOp>(op);
          index && stage.contains(&op) && !loadIndex.count(&op))
        indexLoads.push_back(index);
    for (kiln::LoadOp index : indexLoads) {
      OpBuilder at(index);
      maskPastEnd(index, arith::CmpIOp::create(
                             at, loc, arith::CmpIPredicate::slt, ahead, ub));
    }
    // The next of `slots` slots.
    auto advance = [&](Value slot, int64_t slots) -> Value {
      Value next = arith::AddIOp::create(b, loc, slot, i32Const(b, 1));
      Value wrap = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, next,
                                         i32Const(b, slots));
      return arith::SelectOp::create(b, loc, wrap, i32Const(b, 0), next);
    };
    Value nextRead = advance(readSlot, stages);
    yield->setOperand(firstSlotArg, nextRead);
    yield->setOperand(firstSlotArg + 1, advance(writeSlot, stages));
    if (anyShortRing)
      yield->setOperand(shortSlotArg, advance(shortSlot, int64_t(stages) - 1));
    if (twoStagingSlots)
      yield->setOperand(
          stagingSlotArg,
          arith::XOrIOp::create(b, loc, stagingSlot, i32Const(b, 1)));
    if (anyTma) {
      Value wrapped = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            nextRead, i32Const(b, 0));
      Value flipped = arith::XOrIOp::create(b, loc, phase, i32Const(b, 1));
      yield->setOperand(firstSlotArg + 2, arith::SelectOp::create(
                                              b, loc, wrapped, flipped, phase));
    }
    // Last: the builder may insert before one of them.
    for (PipelinedLoad &l : loads)
      if (l.load->use_empty())
        l.load->erase();

    // After the loop: nothing in flight, then the accumulator is readable.
    b.setInsertionPointAfter(newLoop);
    if (anyCpAsync)
      kiln::gpu::AsyncWaitOp::create(b, loc, 0);
    if (!accumulators.empty()) {
      SmallVector<Value> accs;
      for (unsigned index : accumulators)
        accs.push_back(newLoop.getResult(index));
      // Only a loop that ran has dots in flight. Where it may run no
      // iteration, the loop and the wait go under an `if` it runs, and the
      // other path takes the initial values: a path reaching the wait with
      // them (or copying them) is, to ptxas, instructions defining the
      // accumulators' registers within the wgmma pipeline, and it then
      // serializes every wgmma of the kernel (C7515; tutorial 03's fp8
      // 128x256x128 config on the H200: 1.02 -> 1.29 of Triton).
      std::optional<int64_t> lb = getConstantIntValue(newLoop.getLowerBound());
      std::optional<int64_t> ub = getConstantIntValue(newLoop.getUpperBound());
      if (lb && ub && *lb < *ub) {
        auto wait = kiln::gpu::DotWaitOp::create(
            b, loc, ValueRange(accs).getTypes(), accs, 0);
        for (auto [acc, ready] : llvm::zip(accs, wait.getOutputs()))
          acc.replaceAllUsesExcept(ready, wait);
      } else {
        OpBuilder before(newLoop);
        Value ran = arith::CmpIOp::create(
            before, loc, arith::CmpIPredicate::slt, newLoop.getLowerBound(),
            newLoop.getUpperBound());
        auto ifRan = scf::IfOp::create(before, loc, newLoop.getResultTypes(),
                                       ran, /*withElseRegion=*/true);
        Block *thenBlock = ifRan.thenBlock();
        newLoop->moveBefore(thenBlock, thenBlock->end());
        OpBuilder thenBuilder = OpBuilder::atBlockEnd(thenBlock);
        auto wait = kiln::gpu::DotWaitOp::create(
            thenBuilder, loc, ValueRange(accs).getTypes(), accs, 0);
        SmallVector<Value> ranResults(newLoop.getResults());
        for (auto [index, ready] : llvm::zip(accumulators, wait.getOutputs()))
          ranResults[index] = ready;
        scf::YieldOp::create(thenBuilder, loc, ranResults);
        OpBuilder elseBuilder = OpBuilder::atBlockEnd(ifRan.elseBlock());
        scf::YieldOp::create(elseBuilder, loc, newLoop.getInitArgs());
        for (auto [result, merged] :
             llvm::zip(newLoop.getResults(), ifRan.getResults()))
          result.replaceUsesWithIf(merged, [&](OpOperand &use) {
            return !ifRan->isAncestor(use.getOwner());
          });
      }
    }
    kiln::gpu::BarrierOp::create(b, loc);
    // Every copy issued was waited for in the loop (those past its end were
    // never issued), and no thread waits any more: the barriers' bytes may
    // hold other data from here.
    for (auto [i, l] : llvm::enumerate(loads))
      if (l.tma)
        for (unsigned j = 0; j < stages; ++j)
          kiln::gpu::InvalBarrierOp::create(
              b, loc, barrierOf(b, unsigned(i), i32Const(b, j)));
  }
};

} // namespace
