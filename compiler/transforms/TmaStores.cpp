//===- TmaStores.cpp - descriptor stores as TMA stores -------------------===//
//
// On targets with wgmma and TMA, a kiln.store that kiln-lower-tensor-
// descriptors marked with a kernel argument's tensor map (the box at its
// box_offsets) goes through shared memory and the TMA unit instead of one
// masked store per thread:
//
//   tile = local_alloc       (nvmma_shared: lines swizzled by their bytes,
//                             up to 128, as the TMA rings of loads)
//   local_store value, tile  (each thread writes its chunks)
//   fence_async_shared       (generic writes before the async proxy reads)
//   barrier
//   async_tma_store map[offsets], tile   (thread 0: one box per panel)
//   tma_store_wait tile      (thread 0: the tile has been read)
//   barrier                  (before its bytes may hold other data)
//
// In a loop's body (scf.for or scf.while), or under ifs in it (a persistent
// kernel's epilogue), when it fits beside the other buffers, the tile is
// allocated before the loop instead, and the wait (and a barrier) moves
// before the local_store:
// one iteration's store reads the tile while the next iteration computes,
// and a last wait follows the loop.
//
// A descriptor reduction TMA can do (kiln.atomic_rmw with a tensor map and
// no reader of its old values: adds, and/or/xor) goes the same way, its
// tile combined into memory by `cp.reduce.async.bulk.tensor`.
//
// TMA drops what falls outside the tensor, as the store's mask did. The box
// and swizzle join the module's `kiln_gpu.tensor_maps` (the launcher encodes
// the map with them), or shape the kiln.make_tensor_map of a map the kernel
// encodes; a store whose map another access already uses with
// another box keeps its masked form, as does any store TMA cannot make
// (not 2-D, lines that are not a power of two of at least 32 bytes, more
// than 256 rows).
//
//===----------------------------------------------------------------------===//
#include "compiler/ir/TargetInfo.h"
#include "compiler/ir/TensorMapAccess.h"
#include "compiler/transforms/Passes.h"
#include "compiler/transforms/SharedBudget.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/MathExtras.h"

namespace kiln {
#define GEN_PASS_DEF_KILNTMASTORES
#include "compiler/transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr StringLiteral kTensorMapsAttr = "kiln_gpu.tensor_maps";

/// A store, or a reduction whose old values nobody reads, that carries a
/// tensor map: the box at `offsets` gets `value` (combined with `reduce`,
/// a cp.reduce.async.bulk.tensor operation, when set).
struct BoxAccess {
  Operation *op;
  Value tensorMap;
  ValueRange offsets;
  Value value;
  StringAttr reduce;

  static std::optional<BoxAccess> of(Operation *op) {
    if (auto store = dyn_cast<kiln::StoreOp>(op); store && store.getTensorMap())
      return BoxAccess{op, store.getTensorMap(), store.getBoxOffsets(),
                       store.getValue(), StringAttr()};
    auto rmw = dyn_cast<kiln::AtomicRMWOp>(op);
    if (!rmw || !rmw.getTensorMap() || !rmw.getResult().use_empty())
      return std::nullopt;
    StringRef reduce;
    switch (rmw.getRmwOp()) {
    case kiln::RMWOp::Add:
    case kiln::RMWOp::FAdd:
      reduce = "add";
      break;
    case kiln::RMWOp::And:
      reduce = "and";
      break;
    case kiln::RMWOp::Or:
      reduce = "or";
      break;
    case kiln::RMWOp::Xor:
      reduce = "xor";
      break;
    default:
      return std::nullopt;
    }
    return BoxAccess{op, rmw.getTensorMap(), rmw.getBoxOffsets(), rmw.getVal(),
                     StringAttr::get(op->getContext(), reduce)};
  }
};

struct TmaStoresPass : kiln::impl::KilnTmaStoresBase<TmaStoresPass> {
  using KilnTmaStoresBase::KilnTmaStoresBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    tight_ = false;
    kiln::TargetInfo target = kiln::TargetInfo::of(module);
    if (!target.hasWgmma())
      return;
    Builder b(&getContext());
    SmallVector<NamedAttribute> maps;
    if (auto known = module->getAttrOfType<DictionaryAttr>(kTensorMapsAttr))
      llvm::append_range(maps, known.getValue());
    bool changed = false;
    module.walk([&](Operation *op) {
      std::optional<BoxAccess> access = BoxAccess::of(op);
      if (!access)
        return;
      std::optional<kiln::gpu::MemDescType> tile = tileOf(*access);
      if (!tile)
        return;
      SmallVector<int64_t, 2> box = kiln::gpu::AsyncTmaCopyOp::boxShape(*tile);
      unsigned swizzle =
          cast<kiln::gpu::NVMMASharedEncodingAttr>(tile->getEncoding())
              .getSwizzle();
      // A map the kernel encodes is shaped on its op; a kernel argument's
      // goes into the module's list, for the launcher.
      if (auto arg = dyn_cast<BlockArgument>(access->tensorMap)) {
        std::string key = std::to_string(arg.getArgNumber());
        auto encoding = b.getDictionaryAttr(
            {b.getNamedAttr("box", b.getDenseI64ArrayAttr(box)),
             b.getNamedAttr("swizzle", b.getI32IntegerAttr(int32_t(swizzle)))});
        auto known = llvm::find_if(
            maps, [&](NamedAttribute a) { return a.getName() == key; });
        if (known != maps.end() && known->getValue() != encoding)
          return;
        if (known == maps.end())
          maps.push_back(b.getNamedAttr(key, encoding));
        changed = true;
      } else if (!kiln::shapeTensorMap(access->tensorMap, box, swizzle)) {
        return;
      }
      rewrite(*access, *tile, target.maxSharedBytes());
    });
    if (changed)
      module->setAttr(kTensorMapsAttr, b.getDictionaryAttr(maps));
    if (tight_)
      module->setAttr(kiln::kTightTmaStoreTilesAttr, b.getUnitAttr());
  }

  /// The shared tile `access` goes through, when TMA can store it.
  static std::optional<kiln::gpu::MemDescType> tileOf(const BoxAccess &access) {
    if (!kiln::isTmaReadyMap(access.tensorMap))
      return std::nullopt;
    auto type = dyn_cast<RankedTensorType>(access.value.getType());
    if (!type || type.getRank() != 2 || !type.getEncoding() ||
        !type.getElementType().isIntOrFloat() ||
        type.getElementType().getIntOrFloatBitWidth() < 8 ||
        type.getDimSize(0) > 256)
      return std::nullopt;
    int64_t lineBytes =
        type.getDimSize(1) * type.getElementType().getIntOrFloatBitWidth() / 8;
    if (lineBytes < 32 || !llvm::isPowerOf2_64(uint64_t(lineBytes)))
      return std::nullopt;
    return kiln::gpu::MemDescType::get(
        type.getContext(), type.getShape(), type.getElementType(),
        kiln::gpu::NVMMASharedEncodingAttr::get(
            type.getContext(), unsigned(std::min<int64_t>(128, lineBytes)),
            /*transposed=*/false));
  }

  void rewrite(const BoxAccess &access, kiln::gpu::MemDescType tileType,
               int64_t sharedLimit) {
    Operation *store = access.op;
    OpBuilder b(store);
    Location loc = store->getLoc();
    // A store in a loop's body (a persistent kernel's epilogue) keeps its
    // tile for the whole loop, when the tile fits beside every other
    // buffer: the store of one iteration then reads it while the next
    // computes, and only the next store waits for it.
    // The loop may hold the store under ifs (a flattened loop's epilogue
    // runs at each tile's last iteration; tutorial 08's runtime chunk
    // check), and be a while loop (tutorial 08's loop over a group's tiles).
    Operation *loop = nullptr;
    for (Operation *parent = store->getParentOp(); parent;
         parent = parent->getParentOp()) {
      if (isa<scf::ForOp, scf::WhileOp>(parent))
        loop = parent;
      if (loop || !isa<scf::IfOp>(parent))
        break;
    }
    if (loop && fitsBesideBuffers(loop, tileType, sharedLimit, scratchMargin)) {
      tight_ |= !fitsBesideBuffers(loop, tileType, sharedLimit,
                                   kDefaultScratchMargin);
      OpBuilder before(loop);
      Value tile =
          kiln::gpu::LocalAllocOp::create(before, loc, tileType, IntegerAttr());
      kiln::gpu::TmaStoreWaitOp::create(b, loc, tile);
      kiln::gpu::BarrierOp::create(b, loc);
      kiln::gpu::LocalStoreOp::create(b, loc, access.value, tile);
      kiln::gpu::FenceAsyncSharedOp::create(b, loc);
      kiln::gpu::BarrierOp::create(b, loc);
      kiln::gpu::AsyncTmaStoreOp::create(b, loc, access.tensorMap,
                                         access.offsets, tile, access.reduce);
      OpBuilder after(loop->getContext());
      after.setInsertionPointAfter(loop);
      kiln::gpu::TmaStoreWaitOp::create(after, loc, tile);
      kiln::gpu::BarrierOp::create(after, loc);
      store->erase();
      return;
    }
    Value tile =
        kiln::gpu::LocalAllocOp::create(b, loc, tileType, IntegerAttr());
    kiln::gpu::LocalStoreOp::create(b, loc, access.value, tile);
    kiln::gpu::FenceAsyncSharedOp::create(b, loc);
    kiln::gpu::BarrierOp::create(b, loc);
    kiln::gpu::AsyncTmaStoreOp::create(b, loc, access.tensorMap, access.offsets,
                                       tile, access.reduce);
    kiln::gpu::TmaStoreWaitOp::create(b, loc, tile);
    kiln::gpu::BarrierOp::create(b, loc);
    store->erase();
  }

  /// Whether `a` and `b` lie in different branches of one scf.if (a
  /// flattened loop and the nested one it falls back on): never live at once.
  static bool inOtherBranch(Operation *a, Operation *b) {
    for (Operation *parent = a->getParentOp(); parent;
         parent = parent->getParentOp()) {
      auto branch = dyn_cast<scf::IfOp>(parent);
      if (!branch || !branch->isProperAncestor(b))
        continue;
      Region &then = branch.getThenRegion();
      return then.isAncestor(a->getParentRegion()) !=
             then.isAncestor(b->getParentRegion());
    }
    return false;
  }

  /// The scratch-margin option's default: room for the scratch of single
  /// ops (layout exchanges, reductions) beside the buffers.
  static constexpr int64_t kDefaultScratchMargin = 16 * 1024;

  /// A tile was kept that fits only under a margin below the default.
  bool tight_ = false;

  /// Whether `tile`, aligned as kiln-allocate-shared aligns it, fits with
  /// every buffer of the function that may live beside it at once (an upper
  /// bound) and `margin` bytes for the scratch of single ops.
  static bool fitsBesideBuffers(Operation *loop, kiln::gpu::MemDescType tile,
                                int64_t sharedLimit, int64_t margin) {
    int64_t total =
        kiln::alignedBufferBytes(tile.getSizeInBytes()) + margin +
        kiln::bufferBytes(loop->getParentOfType<FunctionOpInterface>(),
                          [&](kiln::gpu::LocalAllocOp alloc) {
                            return inOtherBranch(alloc, loop);
                          });
    return total <= sharedLimit;
  }
};

} // namespace
