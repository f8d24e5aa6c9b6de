//===- PlaceTensorMaps.cpp - the tensor maps TMA uses, in global scratch --===//
//
// kiln-lower-tensor-descriptors gives each descriptor access TMA might serve
// a kiln.make_tensor_map of its own; kiln-pipeline-dots and kiln-tma-stores
// shape those they turn into TMA copies and stores. Here the rest go (an
// access that kept its masked form drops the map it named), maps equal in
// tensor, box and swizzle merge (the program encodes each once), and each
// kept map takes the next 128 bytes of the program's share of the global
// scratch buffer.
//
//===----------------------------------------------------------------------===//
#include "compiler/transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln {
#define GEN_PASS_DEF_KILNPLACETENSORMAPS
#include "compiler/transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Bytes of one encoded map in the scratch buffer (its size and an
/// alignment above the 64 bytes TMA needs).
constexpr int64_t kMapBytes = 128;

bool isTmaAccess(Operation *op) {
  return isa<kiln::gpu::AsyncTmaCopyOp, kiln::gpu::AsyncTmaStoreOp,
             kiln::gpu::TensorMapAcquireOp>(op);
}

/// Takes the tensor map (and its box offsets) off a masked access.
void dropMap(Operation *user) {
  if (auto load = dyn_cast<kiln::LoadOp>(user)) {
    load.getTensorMapMutable().clear();
    load.getBoxOffsetsMutable().clear();
  } else if (auto store = dyn_cast<kiln::StoreOp>(user)) {
    store.getTensorMapMutable().clear();
    store.getBoxOffsetsMutable().clear();
  } else if (auto rmw = dyn_cast<kiln::AtomicRMWOp>(user)) {
    rmw.getTensorMapMutable().clear();
    rmw.getBoxOffsetsMutable().clear();
  }
}

bool sameMap(kiln::MakeTensorMapOp a, kiln::MakeTensorMapOp b) {
  return a->getOperands() == b->getOperands() &&
         a.getBoxAttr() == b.getBoxAttr() && a.getSwizzle() == b.getSwizzle();
}

struct PlaceTensorMapsPass
    : kiln::impl::KilnPlaceTensorMapsBase<PlaceTensorMapsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t share = 0;
    bool takesScratch = false;
    module.walk([&](func::FuncOp func) {
      takesScratch |= func->hasAttr(kiln::kGlobalScratchAttr);
      share = std::max(share, place(func));
    });
    if (takesScratch)
      module->setAttr(
          kiln::kGlobalScratchBytesAttr,
          IntegerAttr::get(IntegerType::get(&getContext(), 64), share));
  }

  /// Keeps, merges and places the function's maps; returns the bytes of a
  /// program's share.
  int64_t place(func::FuncOp func) {
    SmallVector<kiln::MakeTensorMapOp> maps;
    func.walk([&](kiln::MakeTensorMapOp map) { maps.push_back(map); });
    SmallVector<kiln::MakeTensorMapOp> kept;
    for (kiln::MakeTensorMapOp map : maps) {
      for (Operation *user : llvm::to_vector(map->getUsers()))
        if (!isTmaAccess(user))
          dropMap(user);
      if (map->use_empty() || !map.getBoxAttr()) {
        map->erase();
        continue;
      }
      auto equal = llvm::find_if(kept, [&](kiln::MakeTensorMapOp other) {
        return sameMap(map, other) && other->getBlock() == map->getBlock() &&
               other->isBeforeInBlock(map);
      });
      if (equal != kept.end()) {
        map.getResult().replaceAllUsesWith(equal->getResult());
        map->erase();
        continue;
      }
      kept.push_back(map);
    }
    Builder b(func.getContext());
    for (auto [i, map] : llvm::enumerate(kept))
      map.setScratchOffsetAttr(b.getI64IntegerAttr(int64_t(i) * kMapBytes));
    return int64_t(kept.size()) * kMapBytes;
  }
};

} // namespace
