//===- StageDots.cpp - shared tiles for the dots the pipeliner left ------===//
//
// kiln-pipeline-dots gives wgmma the dots of the loops it pipelines. A dot
// it leaves alone (outside any loop, in a loop with num_stages 1, in a loop
// it cannot prove safe) multiplies from registers with mma.sync, which on
// an H100/H200 reaches about 60% of wgmma's rate. Upstream Triton stages
// such operands through shared memory for wgmma whether or not the loop is
// pipelined, and so does this pass, on targets with wgmma (where wgmma does
// not take the dot, for mma.sync):
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
// dimension where wgmma can read it so (16-bit types), else along K. Dots the
// wgmma lowering takes (TensorCoreFlavour::fitsWgmma) are staged, and 16-bit
// dots it does not (fewer than 64 rows), whose shared dot then runs mma.sync
// on fragments read with ldmatrix: SGLang's MLA extend attention (32-row
// tiles) 0.16 -> 0.35 of Triton on the H200. Only where their tiles fit:
// beside every other buffer of the function, or, failing that, where
// kiln-allocate-shared would place them among the buffers live beside them
// (kiln::SharedPlacement; that kernel's second loop then takes its tiles in
// the bytes of the first loop's: 0.35 -> 1.27). An operand read back from
// a tile that already holds it (q, copied for a first loop) is read from
// that tile, not copied again.
//
// Targets without wgmma (sm_80-89, plain sm_90) stage 16-bit dots the same
// way for mma.sync, a in registers where it holds the fragments (p), with
// no proxy fence (ldmatrix reads through the generic proxy) and no wait
// (mma.sync is done when it returns). kiln.dot's own staging arrays took
// such operands element by element (2-byte stores, a word a fragment
// register): attention kernels the pipeliner leaves alone (num_stages 1,
// a q scaled before the loop, backward kernels) ran at 0.15-0.45 of
// Triton's mma.sync path, and at 0.87-1.64 staged (an H100, plain sm_90).
// On targets with wgmma, 16-bit dots it does not take (fewer than 64 rows,
// fewer than 4 warps) take the same mma.sync path, p from registers too
// (fla-org's NSA selected attention, 16 rows on one warp: spilled 332
// bytes with kiln.dot's arrays, none staged), and no fence or wait either.
//
// Dots in one block whose operands are all ready before the first of them,
// none reading another's result before the last (FLA's backward kernels:
// do @ v^T, do @ h, v @ dh), are staged together: each distinct operand
// written to one tile before the first, one barrier, the wgmmas issued
// without waiting and waited for after the last. Staged one at a time, each
// dot waited for the one before it, and the operands of the later ones
// stayed in registers through the earlier ones (FLA's dq/dk/dg kernel
// spilled 3.4 KB). An operand that is the transpose of another's (v^T of do
// @ v^T beside v of v @ dh), or of a tile copied where it was loaded,
// reads a memdesc_trans view of that one's tile.
//
// An operand loaded from global memory in the block that stages it (FLA's
// q and k, loaded after the dq/dk loop) is copied into its tile with
// cp.async where the load was: the copy runs under the work between the
// load and the dot, and no register holds the tile. The first reader
// waits for it (kiln_gpu.async_wait, then a barrier); other readers of
// the loaded values take them from the tile (local_load in their layout,
// where they were converted), and a tile last read that way gets a
// barrier after the read, as the dots' tiles do after their dots. Only
// where cp.async can copy the load (AsyncCopies.h: zero padding, 4-byte
// or wider chunks along the tile's lines) and nothing between the load
// and the wait may write what it reads (EarlyLoads.h's rule: stores through
// other kernel arguments do not count).
//
//===----------------------------------------------------------------------===//
#include "compiler/ir/RegisterA.h"
#include "compiler/ir/SharedDotForm.h"
#include "compiler/ir/TargetInfo.h"
#include "compiler/ir/TensorCoreFlavour.h"
#include "compiler/transforms/AsyncCopies.h"
#include "compiler/transforms/AxisInfo.h"
#include "compiler/transforms/EarlyLoads.h"
#include "compiler/transforms/Passes.h"
#include "compiler/transforms/RingTiles.h"
#include "compiler/transforms/SharedBudget.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
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

// Off only to compare code with and without it.
static llvm::cl::opt<bool> copyAtLoadsFlag(
    "kiln-stage-dots-copy-at-loads", llvm::cl::init(true), llvm::cl::Hidden,
    llvm::cl::desc("Copy staged dot operands into their tiles with cp.async "
                   "where they are loaded"));

// Off only to compare code with and without it.
static llvm::cl::opt<bool> besideLiveBuffersFlag(
    "kiln-stage-dots-beside-live-buffers", llvm::cl::init(true),
    llvm::cl::Hidden,
    llvm::cl::desc("Place staged dots' tiles among the buffers live beside "
                   "them where they do not fit beside all"));

namespace {

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

/// How one dot is staged: its operands' values before conversions and the
/// tiles they are written to (a stays in registers when aInRegisters).
struct StagingPlan {
  kiln::DotOp dot;
  Value sources[2];
  kiln::gpu::MemDescType tiles[2];
  bool aInRegisters = false;
  /// wgmma computes it (else mma.sync, from the same tiles).
  bool wgmma = false;
};

/// Where a tile of `source` for `dot` is written: before the outermost loop
/// around the dot that does not change the source (attention's q, written
/// once; through ifs inside the loops: NSA's selected blocks, each dot
/// under a test of its block's index), else before `first`.
Operation *storePoint(Value source, Operation *dot, Operation *first) {
  Operation *at = first;
  for (Operation *op = dot->getParentOp();
       isa_and_nonnull<scf::ForOp, scf::WhileOp, scf::IfOp>(op) &&
       !op->isAncestor(source.getParentBlock()->getParentOp());
       op = op->getParentOp())
    if (!isa<scf::IfOp>(op))
      at = op;
  return at;
}

/// A load copied into a tile with cp.async (the pass's header): `wait` is
/// the async_wait before the first reader of the tile.
struct CopiedLoad {
  kiln::LoadOp load;
  Value tile;
  Operation *commit;
  kiln::gpu::AsyncWaitOp wait;
  Operation *barrier; // right after the wait
};

/// How many async copy groups `op` commits: -1 where that is not known
/// statically (a loop committing some).
int64_t committedGroups(Operation *op) {
  if (isa<kiln::gpu::AsyncCommitGroupOp>(op))
    return 1;
  bool nested = false;
  op->walk([&](Operation *inner) {
    nested |= inner != op &&
              isa<kiln::gpu::AsyncCommitGroupOp, kiln::gpu::AsyncWaitOp>(inner);
  });
  return nested ? -1 : 0;
}

struct StageDotsPass : kiln::impl::KilnStageDotsBase<StageDotsPass> {
  using KilnStageDotsBase::KilnStageDotsBase;
  std::optional<kiln::AxisInfoAnalysis> axisInfo_;
  SmallVector<CopiedLoad> copied_;
  /// The results of staged dots, and what replaced them. The dots (and
  /// their operands' paths, erasedAtEnd) stay until the pass ends, so that
  /// no new value takes the place of a key.
  llvm::DenseMap<Value, Value> replaced_;
  SmallVector<Operation *> stagedDots_;
  SmallVector<Value> stagedOperands_;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    kiln::TargetInfo target = kiln::TargetInfo::of(module);
    // Every target with tensor-core instructions (wgmma's have mma.sync).
    if (!stageDots || !target.hasMmaSync())
      return;
    axisInfo_.emplace(module);
    copied_.clear();
    auto warps = module->getAttrOfType<IntegerAttr>(
        kiln::gpu::KilnGPUDialect::kNumWarpsAttrName);
    unsigned numWarps = warps ? unsigned(warps.getInt()) : 4;
    SmallVector<StagingPlan> plans;
    module.walk([&](kiln::DotOp dot) {
      if (std::optional<StagingPlan> p = plan(dot, target, numWarps))
        plans.push_back(*p);
    });
    DominanceInfo dominance(module);
    SmallVector<SmallVector<StagingPlan>> groups;
    for (const StagingPlan &p : plans) {
      if (groups.empty() || !joins(groups.back(), p, dominance))
        groups.emplace_back();
      groups.back().push_back(p);
    }
    replaced_.clear();
    for (ArrayRef<StagingPlan> planned : groups) {
      // An operand that is an earlier staged dot's result (FLA's
      // `dot(dot(k^T, w), m)`) is now the value that replaced it.
      SmallVector<StagingPlan> group(planned);
      for (StagingPlan &p : group)
        for (Value &source : p.sources)
          if (Value next = replaced_.lookup(source))
            source = next;
      if (group.size() > 1 && stageTogether(group, target))
        continue;
      for (const StagingPlan &p : group)
        stageAlone(p, target);
    }
    for (Operation *dot : stagedDots_)
      dot->erase();
    // The layout conversions and transposes that fed them, where nothing
    // else reads them now (dots may share them: erased once, in any order).
    llvm::SetVector<Operation *> feeding;
    for (Value v : stagedOperands_)
      while (isa_and_nonnull<kiln::gpu::ConvertLayoutOp, kiln::TransOp>(
          v.getDefiningOp())) {
        feeding.insert(v.getDefiningOp());
        v = v.getDefiningOp()->getOperand(0);
      }
    llvm::SmallPtrSet<Operation *, 16> erased;
    for (bool changed = true; changed;) {
      changed = false;
      for (Operation *op : feeding)
        if (!erased.contains(op) && op->use_empty()) {
          erased.insert(op);
          op->erase();
          changed = true;
        }
    }
    stagedDots_.clear();
    stagedOperands_.clear();
    for (CopiedLoad &c : copied_)
      finishCopy(c);
    mergeWaits();
    if (!copied_.empty())
      module->setAttr(kiln::kCopiedAtLoadsAttr, UnitAttr::get(&getContext()));
    axisInfo_.reset();
  }

  /// Waits before one reader (several tiles copied for one dot) become
  /// one, the least pending, behind one barrier; and a barrier between a
  /// wait and the proxy fence before a dot goes: each thread fences the
  /// bytes it waited for, and the barrier after the fence shows them all.
  /// A wait before the stores of the dot's other tiles moves past them to
  /// that dot's barrier, which then shows both the copied bytes and the
  /// stored ones: staged stores need no barrier before them (the last
  /// reader of their bytes closed with one), so the wait's own barrier
  /// ordered nothing for them. FLASHNN's A16W8 decode GEMM (a copied, the
  /// dequantized b stored) then syncs twice an iteration, as Triton's does.
  void mergeWaits() {
    SmallVector<CopiedLoad *> inOrder;
    for (CopiedLoad &c : copied_)
      inOrder.push_back(&c);
    llvm::sort(inOrder, [](CopiedLoad *x, CopiedLoad *y) {
      Operation *a = x->wait, *b = y->wait;
      return a->getBlock() == b->getBlock() ? a->isBeforeInBlock(b)
                                            : a->getBlock() < b->getBlock();
    });
    for (CopiedLoad *c : inOrder) {
      // Past views and allocations of tiles (no shared-memory access of
      // their own), and stores into tiles other than this copy's.
      Operation *next = c->barrier->getNextNode();
      bool pastStores = false;
      for (;; next = next->getNextNode()) {
        if (isa_and_nonnull<kiln::gpu::MemDescTransOp,
                            kiln::gpu::MemDescIndexOp, kiln::gpu::LocalAllocOp>(
                next))
          continue;
        auto store = dyn_cast_or_null<kiln::gpu::LocalStoreOp>(next);
        if (!store || baseTile(store.getDst()) == c->tile)
          break;
        pastStores = true;
      }
      if (auto later = dyn_cast_or_null<kiln::gpu::AsyncWaitOp>(next)) {
        later.setPending(std::min(later.getPending(), c->wait.getPending()));
        c->barrier->erase();
        c->wait->erase();
        continue;
      }
      if ((isa_and_nonnull<kiln::gpu::FenceAsyncSharedOp>(next) &&
           isa_and_nonnull<kiln::gpu::BarrierOp>(next->getNextNode())) ||
          isa_and_nonnull<kiln::gpu::BarrierOp>(next)) {
        c->barrier->erase();
        if (pastStores)
          c->wait->moveBefore(next);
      }
    }
  }

  /// The allocation a tile view reads.
  static Value baseTile(Value tile) {
    while (
        isa_and_nonnull<kiln::gpu::MemDescTransOp, kiln::gpu::MemDescIndexOp>(
            tile.getDefiningOp()))
      tile = tile.getDefiningOp()->getOperand(0);
    return tile;
  }

  /// A `tile` allocated and `source` written to it at storePoint: by
  /// cp.async at the load where copyAtLoad can, else by a local_store.
  Value writeTile(Value source, kiln::gpu::MemDescType tile, Operation *dot,
                  Operation *first, Location loc) {
    if (Value existing = existingTile(source, tile, dot))
      return existing;
    Operation *at = storePoint(source, dot, first);
    // The transpose of a loaded tile: a view of the tile the load is
    // copied into (here, or for another dot).
    if (auto trans = source.getDefiningOp<kiln::TransOp>()) {
      Value base = kiln::beforeConversions(trans.getSrc());
      kiln::gpu::MemDescType baseType =
          kiln::gpu::MemDescTransOp::transposedType(tile);
      Value baseTile;
      for (CopiedLoad &c : copied_)
        if (c.load.getResult() == base && c.tile.getType() == baseType)
          baseTile = c.tile;
      if (!baseTile)
        baseTile = copyAtLoad(base, baseType, at);
      if (baseTile) {
        OpBuilder before(at);
        return kiln::gpu::MemDescTransOp::create(before, loc, tile, baseTile);
      }
    }
    if (Value copied = copyAtLoad(source, tile, at))
      return copied;
    OpBuilder before(at);
    Value allocated =
        kiln::gpu::LocalAllocOp::create(before, loc, tile, IntegerAttr());
    kiln::storeOperandTile(before, loc, source, allocated);
    return allocated;
  }

  /// The tile `source` was read from (local_load), where it has the
  /// staging type and every write of it comes before the read, in the
  /// read's block or one around it: the dot reads the same bytes there.
  /// Attention's q, copied into a tile for its first loop and read back for
  /// a second (SGLang's extend attention: prefix, then extend tokens), is
  /// not copied again.
  static Value readBackTile(Value source, kiln::gpu::MemDescType type) {
    auto read = source.getDefiningOp<kiln::gpu::LocalLoadOp>();
    if (!read || read.getSrc().getType() != type ||
        !read.getSrc().getDefiningOp<kiln::gpu::LocalAllocOp>())
      return Value();
    for (Operation *user : read.getSrc().getUsers()) {
      if (isa<kiln::gpu::LocalLoadOp, kiln::gpu::SharedDotOp>(user))
        continue;
      Operation *at = user->getBlock()->findAncestorOpInBlock(*read);
      if (!at || !user->isBeforeInBlock(at))
        return Value();
    }
    return read.getSrc();
  }

  /// A tile of type `type` that already holds `source` where `dot` reads
  /// it: the one it was read back from (readBackTile), or the one its load
  /// was copied into for another dot, waited for before `dot`.
  Value existingTile(Value source, kiln::gpu::MemDescType type,
                     Operation *dot) {
    if (Value tile = readBackTile(source, type))
      return tile;
    auto load = source.getDefiningOp<kiln::LoadOp>();
    for (CopiedLoad &c : copied_) {
      if (!load || c.load != load || c.tile.getType() != type)
        continue;
      Operation *at = c.wait->getBlock()->findAncestorOpInBlock(*dot);
      if (at && at != c.wait.getOperation() && c.wait->isBeforeInBlock(at))
        return c.tile;
    }
    return Value();
  }

  /// `tile` filled by cp.async where `source` is loaded, waited for
  /// before `at`; null where the pass's header says it cannot be.
  Value copyAtLoad(Value source, kiln::gpu::MemDescType tile, Operation *at) {
    auto load = source.getDefiningOp<kiln::LoadOp>();
    if (!copyAtLoads || !copyAtLoadsFlag || !load ||
        llvm::any_of(copied_,
                     [&](const CopiedLoad &c) { return c.load == load; }))
      return Value();
    Block *block = load->getBlock();
    Operation *reader = block->findAncestorOpInBlock(*at);
    if (!reader || !kiln::cpAsyncForm(load, *axisInfo_))
      return Value();
    // Chunks along the tile's lines, within each thread's registers.
    auto type = cast<RankedTensorType>(load.getType());
    auto ptrType = cast<RankedTensorType>(load.getPtr().getType());
    auto blocked =
        dyn_cast<kiln::gpu::BlockedEncodingAttr>(ptrType.getEncoding());
    if (!blocked || type.getRank() != 2)
      return Value();
    unsigned lineDim =
        cast<kiln::gpu::NVMMASharedEncodingAttr>(tile.getEncoding())
                .getTransposed()
            ? 0
            : 1;
    unsigned bits = type.getElementTypeBitWidth();
    unsigned vec = std::min(axisInfo_->vectorWidthAlong(
                                load.getPtr(), load.getMask(), bits, lineDim),
                            unsigned(blocked.getSizePerThread()[lineDim]));
    if (vec * bits < 32)
      return Value();
    // Nothing between the load and its first reader may write memory the
    // copy reads (stores through other kernel arguments do not count:
    // EarlyLoads.h).
    for (Operation *op = load->getNextNode(); op != reader;
         op = op->getNextNode())
      if (kiln::mayWriteMemoryReadBy(op, load))
        return Value();
    Location loc = load.getLoc();
    OpBuilder b(load);
    IRMapping addresses;
    if (Operation *early = earlyIssuePoint(load, addresses))
      b.setInsertionPoint(early);
    Value allocated =
        kiln::gpu::LocalAllocOp::create(b, loc, tile, IntegerAttr());
    auto copy = kiln::gpu::AsyncCopyOp::create(
        b, loc, addresses.lookupOrDefault(load.getPtr()), allocated,
        load.getMask() ? addresses.lookupOrDefault(load.getMask()) : Value());
    copy->setAttr(kiln::kCopyVecAttr, b.getI32IntegerAttr(int32_t(vec)));
    Operation *commit = kiln::gpu::AsyncCommitGroupOp::create(b, loc);
    b.setInsertionPoint(reader);
    auto wait = kiln::gpu::AsyncWaitOp::create(b, loc, 0);
    Operation *barrier = kiln::gpu::BarrierOp::create(b, loc);
    copied_.push_back({load, allocated, commit, wait, barrier});
    return allocated;
  }

  /// Where a copy of `load` can be issued ahead of region ops before it
  /// (attention's v, loaded after q @ k and the softmax's reductions in a
  /// one-stage loop: lightllm's prefill 1.36 -> 1.45 of Triton on the
  /// H200): right after the last op it cannot pass (one that may write what
  /// it reads, a pipelined loop, a second dot, a region or impure op its
  /// addresses come from), with clones of the pure address arithmetic after
  /// that point built there into `addresses` (the originals stay for their
  /// other users, so that nothing lives longer). Null where no region op lies
  /// between: the copy stays at the load.
  Operation *earlyIssuePoint(kiln::LoadOp load, IRMapping &addresses) {
    Block *block = load->getBlock();
    // The address arithmetic in this block, and the last op it cannot pass.
    llvm::SetVector<Operation *> slice;
    Operation *fixed = nullptr;
    auto later = [](Operation *a, Operation *b) {
      return !a ? b : !b ? a : a->isBeforeInBlock(b) ? b : a;
    };
    SmallVector<Value> work{load.getPtr()};
    if (load.getMask())
      work.push_back(load.getMask());
    while (!work.empty()) {
      Operation *def = work.pop_back_val().getDefiningOp();
      if (!def || def->getBlock() != block || slice.contains(def))
        continue;
      if (def->getNumRegions() != 0 || !isMemoryEffectFree(def)) {
        fixed = later(fixed, def);
        continue;
      }
      slice.insert(def);
      llvm::append_range(work, def->getOperands());
    }
    // Not past a pipelined loop: its waits would complete this older
    // group first, and its tile would sit beside the rings through the loop
    // (FLA's chunk_fwd_o 0.986 -> 0.94 of Triton, FlagGems' mm 1.20 ->
    // 0.95, measured on the H200).
    auto pipelined = [](Operation *op) {
      return op
          ->walk([](Operation *inner) {
            return isa<kiln::gpu::AsyncCopyOp, kiln::gpu::AsyncWaitOp,
                       kiln::gpu::AsyncTmaCopyOp, kiln::gpu::WaitBarrierOp>(
                       inner)
                       ? WalkResult::interrupt()
                       : WalkResult::advance();
          })
          .wasInterrupted();
    };
    // Nor past a second dot: one dot and the work after it hide a load's
    // latency, and the tiles of every dot passed live beside this one.
    // modded-nanogpt's windowed attention correction runs six heads' q @
    // k^T one after another in straight-line code; each head's copies went
    // ahead of all the earlier heads' dots to the kernel's start, and all
    // twelve tiles (216 KiB) lived at once: one block an SM where Triton's
    // 38 KiB fit two. Attention's v still goes ahead of q @ k^T.
    // (A dot already staged stays beside its shared_dot until the pass
    // ends: one dot, not two.)
    auto computesDot = [&](Operation *op) {
      return op
          ->walk([&](Operation *inner) {
            return isa<kiln::gpu::SharedDotOp>(inner) ||
                           (isa<kiln::DotOp>(inner) &&
                            !llvm::is_contained(stagedDots_, inner))
                       ? WalkResult::interrupt()
                       : WalkResult::advance();
          })
          .wasInterrupted();
    };
    bool crossesRegion = false;
    unsigned dotsPassed = 0;
    for (Operation *op = load->getPrevNode(); op && op != fixed;
         op = op->getPrevNode()) {
      if (kiln::mayWriteMemoryReadBy(op, load) ||
          (op->getNumRegions() != 0 && pipelined(op)) ||
          (computesDot(op) && ++dotsPassed > 1)) {
        fixed = op;
        break;
      }
      crossesRegion |= op->getNumRegions() != 0;
    }
    if (!crossesRegion)
      return nullptr;
    // Clones of the slice's ops after `fixed`, in order, at the point: past
    // the waits and barrier that close `fixed` (a staged dot's, a pipelined
    // loop's), since the tile may take the bytes of tiles read up to that
    // barrier, which another warp may still be reading (a copy between a
    // dot and its barrier raced: racecheck on modded-nanogpt's windowed
    // attention correction).
    Operation *point = fixed ? fixed->getNextNode() : &block->front();
    while (point != load &&
           isa<kiln::gpu::AsyncWaitOp, kiln::gpu::DotWaitOp,
               kiln::gpu::BarrierOp, kiln::gpu::FenceAsyncSharedOp>(point))
      point = point->getNextNode();
    OpBuilder b(point);
    for (Operation &op :
         llvm::make_range(point->getIterator(), load->getIterator()))
      if (slice.contains(&op))
        b.clone(op, addresses);
    return point;
  }

  /// The loaded values' other readers take them from the tile; the wait
  /// moves before the first of them and leaves the copies committed after
  /// this one in flight; the load goes.
  void finishCopy(CopiedLoad &c) {
    kiln::LoadOp load = c.load;
    Block *block = load->getBlock();
    Location loc = load.getLoc();
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : load->getUses())
      uses.push_back(&use);
    Operation *firstReader = c.wait;
    for (OpOperand *use : uses) {
      Operation *user = use->getOwner();
      OpBuilder b(block->findAncestorOpInBlock(*user));
      Value read;
      if (auto convert = dyn_cast<kiln::gpu::ConvertLayoutOp>(user)) {
        read =
            kiln::gpu::LocalLoadOp::create(b, loc, convert.getType(), c.tile);
        convert.getResult().replaceAllUsesWith(read);
        convert->erase();
      } else {
        read = kiln::gpu::LocalLoadOp::create(b, loc, load.getType(), c.tile);
        use->set(read);
      }
      if (read.getDefiningOp()->isBeforeInBlock(firstReader))
        firstReader = read.getDefiningOp();
    }
    // And views of the tile (a transposed operand of another dot).
    for (Operation *user : c.tile.getUsers()) {
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (isa<kiln::gpu::MemDescTransOp>(user) &&
          ancestor->isBeforeInBlock(firstReader))
        firstReader = ancestor;
    }
    if (firstReader != c.wait.getOperation()) {
      c.wait->moveBefore(firstReader);
      c.barrier->moveAfter(c.wait);
    }
    load->erase();
    // Groups committed after this one need not have landed.
    int64_t pending = 0;
    for (Operation *op = c.commit->getNextNode(); op != c.wait.getOperation();
         op = op->getNextNode()) {
      int64_t groups = committedGroups(op);
      if (groups < 0) {
        pending = 0;
        break;
      }
      pending += groups;
    }
    c.wait.setPending(int32_t(pending));
    // A tile whose last reader is a local_load: no later buffer in its
    // bytes may be written before every thread has read it.
    Operation *last = nullptr;
    for (Operation *user : c.tile.getUsers()) {
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!last || last->isBeforeInBlock(ancestor))
        last = ancestor;
    }
    if (isa_and_nonnull<kiln::gpu::LocalLoadOp>(last)) {
      OpBuilder after(last->getBlock(), std::next(last->getIterator()));
      kiln::gpu::BarrierOp::create(after, loc);
    }
  }

  /// The tiles `dot` is staged in, or nothing where wgmma does not take it.
  std::optional<StagingPlan>
  plan(kiln::DotOp dot, const kiln::TargetInfo &target, unsigned numWarps) {
    RankedTensorType accType = dot.getType();
    if (!isa<kiln::gpu::MmaEncodingAttr>(accType.getEncoding()) ||
        accType.getRank() != 2)
      return std::nullopt;
    std::optional<kiln::TensorCoreFlavour> flavour = kiln::tensorCoreFlavour(
        dot.getA().getType().getElementType(),
        dot.getB().getType().getElementType(), accType.getElementType(),
        dot.getInputPrecision(), target);
    int64_t k = dot.getA().getType().getDimSize(1);
    if (!flavour || k % flavour->kGroup() != 0 || k % flavour->kStep() != 0)
      return std::nullopt;
    StagingPlan p;
    p.dot = dot;
    p.sources[0] = kiln::beforeConversions(dot.getA());
    p.sources[1] = kiln::beforeConversions(dot.getB());
    // a where its registers are wgmma's A fragments (RegisterA.h).
    auto aType = cast<RankedTensorType>(p.sources[0].getType());
    p.aInRegisters = kiln::readsAFromRegisters(aType, accType, *flavour);
    bool kContiguous[2] = {true, true};
    for (unsigned i = p.aInRegisters ? 1 : 0; i < 2; ++i) {
      auto type = cast<RankedTensorType>(p.sources[i].getType());
      p.tiles[i] = stagingTile(type, i, flavour->transposable());
      bool transposed =
          cast<kiln::gpu::NVMMASharedEncodingAttr>(p.tiles[i].getEncoding())
              .getTransposed();
      kContiguous[i] = i == 0 ? !transposed : transposed;
      // A 32-bit operand loaded with M or N contiguous would be copied into
      // a K-major tile one 4-byte element at a time, lanes down one bank
      // (Lightning Attention-2's kv, row-major fp32: 0.63 of Triton on
      // wgmma, 1.32 on mma.sync from kiln.dot's arrays, an H200): its dot
      // keeps mma.sync. Outside loops, where kiln-assign-layouts gives such
      // dots wgmma's layout whatever their operands' order.
      if (!flavour->transposable() &&
          !dot->getParentOfType<LoopLikeOpInterface>() &&
          p.sources[i].getDefiningOp<kiln::LoadOp>() &&
          stagingTile(type, i, /*transposable=*/true) != p.tiles[i])
        return std::nullopt;
      int64_t lineBytes = type.getDimSize(transposed ? 0 : 1) *
                          type.getElementTypeBitWidth() / 8;
      if (!kiln::isSwizzlableLine(lineBytes))
        return std::nullopt;
    }
    if (kiln::accumulatorFitsWgmma(*flavour, target, accType, numWarps,
                                   kContiguous[0], kContiguous[1],
                                   p.aInRegisters)) {
      p.wgmma = true;
      return p;
    }
    // A 16-bit dot wgmma does not take (fewer than 64 rows: SGLang's MLA
    // extend attention at 32, NSA's 16 on one warp; every dot on targets
    // without wgmma) runs mma.sync on the same tiles, its fragments read
    // with ldmatrix (the shared dot's lowering), rather than from
    // kiln.dot's padded staging arrays element by element (2-byte stores,
    // one word a fragment register); a in registers where it holds the
    // fragments (attention's p) stays there. tf32 dots keep kiln.dot's
    // arrays on mma.sync, which store a's and b's runs whole: K-contiguous
    // tiles took one 4-byte store or copy an element (H100, plain sm_90:
    // FBGEMM's jagged attention 1.01 -> 0.74 of Triton's mma.sync path,
    // Lightning Attention-2's forward 0.93 -> 0.68).
    if (flavour->elementBytes == 2 &&
        flavour->split == kiln::TensorCoreFlavour::Split::None &&
        flavour->hasMmaSync(target))
      return p;
    return std::nullopt;
  }

  /// Whether the tiles `written` (operand, tile type) for the dots from
  /// `first` to `last` (one block) fit in shared memory, those that exist
  /// already (existingTile) taking nothing: beside every other buffer of
  /// the function (an upper bound: they may not all live there), or, with
  /// beside-live-buffers, where kiln-allocate-shared would place them among
  /// the buffers live while they might be (SGLang's MLA extend attention:
  /// its second loop's tiles in the bytes of its first loop's).
  bool fits(ArrayRef<std::pair<Value, kiln::gpu::MemDescType>> written,
            Operation *first, Operation *last, const kiln::TargetInfo &target) {
    int64_t bytes = 0;
    SmallVector<Value> sources;
    for (auto [source, type] : written)
      if (!existingTile(source, type, first)) {
        bytes += kiln::alignedBufferBytes(type.getSizeInBytes());
        sources.push_back(source);
      }
    auto func = first->getParentOfType<FunctionOpInterface>();
    if (bytes + kiln::bufferBytes(func) <= target.maxSharedBytes())
      return true;
    if (!besideLiveBuffers || !besideLiveBuffersFlag)
      return false;
    // The widest life writeTile can give them: from the storePoint, or,
    // where copyAtLoad may copy a loaded operand, from the start of the
    // load's block (the copy may be issued anywhere before the load there)
    // to its end (the load's other readers take the values from the tile).
    kiln::SharedPlacement placement(func);
    Operation *from = first, *to = last;
    auto widen = [&](Operation *start, Operation *end) {
      if (placement.index(start) < placement.index(from))
        from = start;
      if (placement.lastNested(end) > placement.lastNested(to))
        to = end;
    };
    for (Value source : sources) {
      SmallVector<Value, 2> stored{source};
      if (auto trans = source.getDefiningOp<kiln::TransOp>())
        stored.push_back(kiln::beforeConversions(trans.getSrc()));
      for (Value v : stored) {
        Operation *at = storePoint(v, first, first);
        widen(at, at == first ? last : at);
        auto load = v.getDefiningOp<kiln::LoadOp>();
        if (load && copyAtLoads && copyAtLoadsFlag &&
            llvm::none_of(copied_,
                          [&](const CopiedLoad &c) { return c.load == load; }))
          widen(&load->getBlock()->front(), &load->getBlock()->back());
      }
    }
    placement.plan(from, to, bytes);
    if (placement.place() > target.maxSharedBytes())
      return false;
    first->getParentOfType<ModuleOp>()->setAttr(
        kiln::kStagedBesideLiveBuffersAttr, UnitAttr::get(&getContext()));
    return true;
  }

  /// Whether `next` can run beside the dots of `group` (FLA's backward: do
  /// @ v^T, do @ h and v @ dh one after the other): in their block, its
  /// operands and accumulator ready before the first of them, and nothing
  /// up to it reading their results.
  static bool joins(ArrayRef<StagingPlan> group, const StagingPlan &next,
                    DominanceInfo &dominance) {
    Operation *first = group.front().dot;
    Block *block = first->getBlock();
    if (next.dot->getBlock() != block)
      return false;
    kiln::DotOp nextDot = next.dot;
    for (Value v : {next.sources[0], next.sources[1], Value(nextDot.getC())})
      if (!dominance.properlyDominates(v, first))
        return false;
    for (const StagingPlan &member : group)
      for (Operation *user : member.dot->getUsers()) {
        Operation *at = block->findAncestorOpInBlock(*user);
        if (!at || !next.dot->isBeforeInBlock(at))
          return false;
      }
    return true;
  }

  /// Every tile of `group` written once before its first dot, one barrier,
  /// the dots issued without waiting and waited for together after the
  /// last: the tensor cores run them back to back, and the registers the
  /// operands held are free before any of them. False (nothing changed)
  /// where the tiles do not all fit at once.
  bool stageTogether(ArrayRef<StagingPlan> group,
                     const kiln::TargetInfo &target) {
    Operation *first = group.front().dot, *last = group.back().dot;
    using TileKey = std::pair<Value, Type>;
    llvm::MapVector<TileKey, Value> tiles;
    for (const StagingPlan &p : group)
      for (unsigned i = p.aInRegisters ? 1 : 0; i < 2; ++i)
        tiles.insert({{p.sources[i], p.tiles[i]}, Value()});
    // A tile whose transpose is another tile of the group (FLA's do @ v^T
    // and v @ dh) is a memdesc_trans view of it, not a second copy.
    llvm::DenseMap<TileKey, TileKey> viewOf;
    for (auto &[key, unused] : tiles) {
      auto trans = key.first.getDefiningOp<kiln::TransOp>();
      if (!trans || viewOf.count(key))
        continue;
      TileKey base{kiln::beforeConversions(trans.getSrc()),
                   kiln::gpu::MemDescTransOp::transposedType(
                       cast<kiln::gpu::MemDescType>(key.second))};
      if (tiles.count(base) && !viewOf.count(base))
        viewOf[key] = base;
    }
    SmallVector<std::pair<Value, kiln::gpu::MemDescType>> written;
    for (auto &[key, unused] : tiles)
      if (!viewOf.count(key))
        written.push_back(
            {key.first, cast<kiln::gpu::MemDescType>(key.second)});
    if (!fits(written, first, last, target))
      return false;
    Location loc = first->getLoc();
    auto tileFor = [&](const TileKey &key, Operation *dot) -> Value {
      if (Value tile = tiles.lookup(key))
        return tile;
      Value tile;
      if (auto base = viewOf.find(key); base != viewOf.end()) {
        Value baseTile = tiles.lookup(base->second);
        if (!baseTile)
          baseTile = tiles[base->second] =
              writeTile(base->second.first,
                        cast<kiln::gpu::MemDescType>(base->second.second), dot,
                        first, loc);
        OpBuilder b(first);
        tile = kiln::gpu::MemDescTransOp::create(
            b, loc, cast<kiln::gpu::MemDescType>(key.second), baseTile);
      } else {
        tile = writeTile(key.first, cast<kiln::gpu::MemDescType>(key.second),
                         dot, first, loc);
      }
      return tiles[key] = tile;
    };
    for (const StagingPlan &p : group)
      for (unsigned i = p.aInRegisters ? 1 : 0; i < 2; ++i)
        tileFor({p.sources[i], p.tiles[i]}, p.dot);
    OpBuilder b(first);
    // mma.sync reads the tiles with ldmatrix (the generic proxy): no
    // fence, and each shared dot is done when it returns (no wait). So on
    // sm_90a too for dots wgmma does not take (16-row decode GEMMs: the
    // fence cost FLASHNN's A16W8 GEMM one in each iteration).
    const bool wgmma =
        llvm::any_of(group, [](const StagingPlan &p) { return p.wgmma; });
    if (wgmma)
      kiln::gpu::FenceAsyncSharedOp::create(b, loc);
    kiln::gpu::BarrierOp::create(b, loc);
    SmallVector<Value> results;
    for (const StagingPlan &p : group) {
      kiln::DotOp dot = p.dot;
      b.setInsertionPoint(dot);
      Value a = p.aInRegisters ? p.sources[0]
                               : tiles.lookup({p.sources[0], p.tiles[0]});
      Value tileB = tiles.lookup({p.sources[1], p.tiles[1]});
      results.push_back(kiln::gpu::SharedDotOp::create(
                            b, dot.getLoc(), dot.getType(), a, tileB,
                            dot.getC(), Value(),
                            p.wgmma ? b.getUnitAttr() : UnitAttr(),
                            kiln::sharedDotPrecision(dot), UnitAttr(),
                            dot.getMaxNumImpreciseAccAttr())
                            .getD());
    }
    // Right after the last shared dot (it stands just before `last`).
    b.setInsertionPoint(last);
    SmallVector<Value> readyResults(results);
    SmallVector<Value> async;
    for (auto [p, result] : llvm::zip_equal(group, results))
      if (p.wgmma)
        async.push_back(result);
    if (!async.empty()) {
      auto wait = kiln::gpu::DotWaitOp::create(
          b, last->getLoc(), ValueRange(async).getTypes(), async, 0);
      unsigned next = 0;
      for (auto [p, ready] : llvm::zip_equal(group, readyResults))
        if (p.wgmma)
          ready = wait.getResult(next++);
    }
    kiln::gpu::BarrierOp::create(b, last->getLoc());
    SmallVector<Value> oldOperands;
    for (auto [p, ready] : llvm::zip_equal(group, readyResults)) {
      kiln::DotOp dot = p.dot;
      replaced_[dot.getResult()] = ready;
      dot.getResult().replaceAllUsesWith(ready);
      for (Value operand : {dot.getA(), dot.getB()})
        if (!llvm::is_contained(oldOperands, operand))
          oldOperands.push_back(operand);
    }
    for (const StagingPlan &p : group)
      stagedDots_.push_back(p.dot);
    llvm::append_range(stagedOperands_, oldOperands);
    return true;
  }

  void stageAlone(const StagingPlan &p, const kiln::TargetInfo &target) {
    kiln::DotOp dot = p.dot;
    // No op between the tiles' allocation and the dot takes scratch.
    SmallVector<std::pair<Value, kiln::gpu::MemDescType>> written;
    for (unsigned i = p.aInRegisters ? 1 : 0; i < 2; ++i)
      written.push_back({p.sources[i], p.tiles[i]});
    if (!fits(written, dot, dot, target))
      return;
    OpBuilder b(dot);
    Location loc = dot.getLoc();
    Value operands[2] = {p.sources[0], p.sources[1]};
    for (unsigned i = p.aInRegisters ? 1 : 0; i < 2; ++i)
      operands[i] = writeTile(p.sources[i], p.tiles[i], dot, dot, loc);
    if (p.wgmma)
      kiln::gpu::FenceAsyncSharedOp::create(b, loc);
    kiln::gpu::BarrierOp::create(b, loc);
    auto shared = kiln::gpu::SharedDotOp::create(
        b, loc, dot.getType(), operands[0], operands[1], dot.getC(), Value(),
        UnitAttr(), kiln::sharedDotPrecision(dot), UnitAttr(),
        dot.getMaxNumImpreciseAccAttr());
    kiln::gpu::BarrierOp::create(b, loc);
    Value oldA = dot.getA(), oldB = dot.getB();
    replaced_[dot.getResult()] = shared.getD();
    dot.getResult().replaceAllUsesWith(shared.getD());
    stagedDots_.push_back(dot);
    stagedOperands_.push_back(oldA);
    if (oldB != oldA)
      stagedOperands_.push_back(oldB);
  }
};

} // namespace
