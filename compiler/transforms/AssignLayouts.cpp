//===- AssignLayouts.cpp - pick a thread layout for every tensor ----------===//
//
// The layout decides coalescing: consecutive lanes should touch consecutive
// 16-byte chunks. The pass works per function, in three steps.
//
// 1. Preferred layouts. A 1-D tensor of n elements gets a blocked layout in
//    which each thread owns as many contiguous elements as the widest
//    vectorizable global access of that size allows. Tensors of rank r >= 2
//    share one blocked encoding per rank, chosen for the largest global
//    access of that rank: rows along the last dimension, each thread owning
//    one vector of it, lanes and then warps filling the fastest dimensions
//    first. Tensor-core dots take an mma accumulator layout, one for all of
//    a kernel's 2-D dots; but attention over 64-row tiles at 8 warps on
//    wgmma gives the dots that compute p all warps along M and p @ v its
//    warpgroups along N (splitChainedDots).
// 2. Propagation, in program order. Memory ops, make_range, splat and
//    constants take the preferred layout; elementwise ops take their
//    operands' layout; expand_dims takes a slice of the preferred encoding,
//    and reductions give slices of theirs (so that `x[:, None]` and
//    `tl.sum(x, 1)[:, None]` move no data); broadcast keeps its operand's
//    encoding and trans permutes it. Where an operand's layout differs from
//    the one its user needs, a kiln_gpu.convert_layout is inserted. Loops and
//    ifs carry their initial or then-branch layouts; yields convert to them.
//    A loop value whose body gives it the layout of a tensor-core dot (or,
//    without such dots, of a load), reduced or combined elementwise, is
//    carried in that layout instead (inferCarriedLayouts).
// 3. Rematerialization. A conversion of a value computed only from
//    make_range, splat and constants through elementwise ops (index
//    arithmetic), or of a broadcast row of a small 1-D load from such
//    addresses in a loop with a dot (`m[None, :]`), is replaced by a copy
//    of that computation in the wanted layout: cheaper than moving data
//    through shared memory. In kernels without tensor-core dots, a small
//    1-D load that only a conversion reads is loaded again in the wanted
//    layout, and conversions of loop-invariant values leave their loops.
//    In kernels whose dots run in a loop, so is a float load outside loops
//    with fewer elements than threads (a per-row scale of the epilogue); a
//    larger `[None, :]` row of one is converted from a layout without the
//    rank's copies.
//
//===----------------------------------------------------------------------===//
#include "compiler/ir/ChainedDots.h"
#include "compiler/ir/ElementTypes.h"
#include "compiler/ir/Elementwise.h"
#include "compiler/ir/ExtractPieces.h"
#include "compiler/ir/TargetInfo.h"
#include "compiler/ir/TensorCoreFlavour.h"
#include "compiler/layout/EqualRuns.h"
#include "compiler/layout/WarpShuffle.h"
#include "compiler/transforms/AsyncCopies.h"
#include "compiler/transforms/AxisInfo.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <set>

namespace kiln {
#define GEN_PASS_DEF_KILNASSIGNLAYOUTS
#include "compiler/transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr unsigned kThreadsPerWarp = kiln::TargetInfo::kThreadsPerWarp;
using kiln::isElementwise;
using kiln::gpu::BlockedEncodingAttr;
using kiln::gpu::SliceEncodingAttr;
/// A load's copies in other layouts (rematerializeConversions).
using ReloadMap = llvm::MapVector<std::pair<Operation *, Attribute>, Value>;

/// A blocked encoding for tensors of `shape` whose threads hold `spt`
/// elements: lanes, then warps, go to the fastest dimensions first, as far as
/// the shape has room; what is left over goes to the slowest dimension (its
/// elements are then held twice).
/// `fastest` lists the dimensions fastest first (default: last first).
BlockedEncodingAttr blockedWith(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                SmallVector<unsigned> spt, unsigned numWarps,
                                ArrayRef<unsigned> fastest = {}) {
  size_t rank = shape.size();
  SmallVector<unsigned> order(fastest), tpw(rank, 1), wpc(rank, 1);
  if (order.empty())
    for (size_t i = 0; i < rank; ++i)
      order.push_back(unsigned(rank - 1 - i));
  unsigned lanes = kThreadsPerWarp, warps = numWarps;
  for (unsigned d : order) {
    int64_t room = std::max<int64_t>(1, shape[d] / spt[d]);
    tpw[d] = unsigned(std::min<int64_t>(lanes, room));
    lanes /= tpw[d];
    room = std::max<int64_t>(1, room / tpw[d]);
    wpc[d] = unsigned(std::min<int64_t>(warps, room));
    warps /= wpc[d];
  }
  tpw[order.back()] *= lanes;
  wpc[order.back()] *= warps;
  return BlockedEncodingAttr::get(ctx, spt, tpw, wpc, order);
}

/// `vec` contiguous elements per thread along the last dimension.
BlockedEncodingAttr defaultBlocked(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                   unsigned vec, unsigned numWarps) {
  SmallVector<unsigned> spt(shape.size(), 1);
  spt.back() = unsigned(std::min<int64_t>(vec, shape.back()));
  return blockedWith(ctx, shape, spt, numWarps);
}

/// The mma.sync accumulator layout for a 2-D dot result: warps split M and
/// N so that each warp's share is about square (and at least one 16 x 8
/// tile where the shape allows). When one dot's result feeds another's a
/// (`chained`, attention's P @ V), warps go along M only: each warp then
/// holds whole rows of that result, which are its A fragments.
kiln::gpu::MmaEncodingAttr mmaFor(MLIRContext *ctx, RankedTensorType type,
                                  unsigned numWarps, bool wgmma, bool chained,
                                  int64_t splitColumns = 0) {
  int64_t m = type.getDimSize(0), n = type.getDimSize(1);
  // wgmma: warpgroups of four warps, each 16 rows of an m64 tile, all
  // along M (the accumulator of m64nN is the mma.sync one repeated).
  if (wgmma && numWarps % 4 == 0 && m % 64 == 0 && m >= 16 * numWarps &&
      n % 8 == 0 && n <= 256)
    return kiln::gpu::MmaEncodingAttr::get(ctx, {numWarps, 1});
  // Too few rows for all warps along M: warpgroups split N, each taking
  // splitColumns adjacent columns (TensorCoreFlavour::columnsSplittingN).
  if (wgmma && splitColumns > 0) {
    unsigned alongM = unsigned(m / 16);
    return kiln::gpu::MmaEncodingAttr::get(ctx, {alongM, numWarps / alongM},
                                           unsigned(splitColumns));
  }
  if (chained && m >= 16 * int64_t(numWarps))
    return kiln::gpu::MmaEncodingAttr::get(ctx, {numWarps, 1});
  unsigned wm = unsigned(std::clamp<int64_t>(m / 16, 1, numWarps));
  unsigned wn = numWarps / wm;
  while (wm > 1 && m / wm < n / wn) {
    wm /= 2;
    wn *= 2;
  }
  return kiln::gpu::MmaEncodingAttr::get(ctx, {wm, wn});
}

/// The batched mma.sync layout for a 3-D dot result: warps along the
/// batch first (each then multiplies whole batches), the rest split M and
/// N as mmaFor does.
kiln::gpu::MmaEncodingAttr mmaFor3D(MLIRContext *ctx, RankedTensorType type,
                                    unsigned numWarps) {
  unsigned wb = unsigned(std::clamp<int64_t>(type.getDimSize(0), 1, numWarps));
  auto rest = RankedTensorType::get(type.getShape().drop_front(),
                                    type.getElementType());
  ArrayRef<unsigned> mn = mmaFor(ctx, rest, numWarps / wb, /*wgmma=*/false,
                                 /*chained=*/false)
                              .getWarpsPerCTA();
  return kiln::gpu::MmaEncodingAttr::get(ctx, {wb, mn[0], mn[1]});
}

/// Whether a 3-D dot of `flavour` takes mma.sync: K a multiple of the
/// instruction group's, and both operands (every batch, one group of K,
/// rows padded by a word) staged within DotToLLVM.cpp's budget. M under 16
/// or N under 8 is held repeated in the 16 x 8 tiles (the layout's bases
/// past the shape are zero), as a thin dot's operands are read.
bool batchedOnTensorCores(kiln::DotOp dot, const kiln::TensorCoreFlavour &f,
                          unsigned numWarps) {
  ArrayRef<int64_t> shape = dot.getType().getShape();
  int64_t k = dot.getA().getType().getDimSize(2);
  if (k % f.kGroup() != 0)
    return false;
  // fp8 operands are staged widened to fp32.
  return kiln::stagedDotBytes(shape[0], shape[1], shape[2], f.kGroup(),
                              f.fp8 ? 4 : f.elementBytes,
                              int64_t(numWarps) * kThreadsPerWarp) <=
         kiln::kDotStagingBytes;
}

/// A thread's share of `type`'s elements over `numWarps` warps (at least
/// one): no layout gives a thread more along a dimension than this.
int64_t threadShare(RankedTensorType type, unsigned numWarps) {
  return std::max<int64_t>(1, type.getNumElements() /
                                  int64_t(numWarps * kThreadsPerWarp));
}

/// For a dot's result: each thread a nearly square block of the last two
/// dimensions, so that its multiply-adds per k (rows x columns) need few
/// operand loads (rows + columns).
BlockedEncodingAttr dotBlocked(MLIRContext *ctx, RankedTensorType type,
                               unsigned numWarps) {
  ArrayRef<int64_t> shape = type.getShape();
  size_t rank = shape.size();
  int64_t perThread = threadShare(type, numWarps);
  unsigned bits = llvm::Log2_64(uint64_t(perThread));
  SmallVector<unsigned> spt(rank, 1);
  spt[rank - 1] = unsigned(
      std::min<int64_t>(shape[rank - 1], int64_t(1) << (bits - bits / 2)));
  spt[rank - 2] =
      unsigned(std::min<int64_t>(shape[rank - 2], perThread / spt[rank - 1]));
  return blockedWith(ctx, shape, spt, numWarps);
}

RankedTensorType withEncoding(Type type, Attribute encoding) {
  auto tensor = cast<RankedTensorType>(type);
  return RankedTensorType::get(tensor.getShape(), tensor.getElementType(),
                               encoding);
}

Attribute encodingOf(Value v) {
  auto tensor = dyn_cast<RankedTensorType>(v.getType());
  return tensor ? tensor.getEncoding() : Attribute();
}

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
    kiln::AxisInfoAnalysis axisInfo(module);
    bool failed = false;
    module.walk([&](func::FuncOp func) {
      failed |= assignLayouts(func, axisInfo).failed();
    });
    if (failed)
      return signalPassFailure();
    OpBuilder b(ctx);
    module->setAttr(kiln::gpu::KilnGPUDialect::kNumWarpsAttrName,
                    b.getI32IntegerAttr(numWarps));
    module->setAttr(kiln::gpu::KilnGPUDialect::kThreadsPerWarpAttrName,
                    b.getI32IntegerAttr(kThreadsPerWarp));
  }

  //===--------------------------------------------------------------------===//
  // 1. Preferred layouts
  //===--------------------------------------------------------------------===//

  llvm::DenseMap<int64_t, unsigned> widest1D; // 1-D size → elements per chunk
  /// 1-D size → the fewest elements a whole 16-byte store of that size takes
  /// (its widest stored element type).
  llvm::DenseMap<int64_t, unsigned> fullStores1D;
  /// The same for shapes of rank >= 2 (their last dimension's elements).
  std::map<SmallVector<int64_t>, unsigned> fullStores;
  llvm::DenseMap<unsigned, Attribute> encodingOfRank; // rank ≥ 2
  /// Shapes the encoding of their rank would replicate (see preferred).
  std::map<SmallVector<int64_t>, Attribute> encodingOfShape;
  /// Shapes of a rank no load or store uses that a reshape joins to one of
  /// a rank some access does: the layout that keeps the reshape's elements
  /// in their threads (choosePreferred), for them and the shapes that
  /// broadcast into them.
  std::map<SmallVector<int64_t>, Attribute> reshapedShapes;
  /// The shapes of the function's dots' results.
  std::set<SmallVector<int64_t>> dotShapes;
  /// In a kernel whose 2-D dots run on tensor cores: their accumulator
  /// layout (null otherwise).
  Attribute mmaEncoding;
  /// Dots whose accumulator layout is not mmaEncoding (splitChainedDots).
  llvm::DenseMap<Operation *, Attribute> dotEncoding;
  /// In such a kernel: some of those dots run in a loop.
  bool dotsInLoop = false;
  /// The target has wgmma (and TMA): kiln-tma-stores takes descriptor stores.
  bool tmaStores = false;
  /// The 2-D access with the fewest columns, and its vector width.
  std::pair<RankedTensorType, unsigned> narrowest2D;
  /// Encodings decided backwards from tensor-core operand loads that run
  /// down their columns (b of `x @ w.T`): the load, its pointers and mask,
  /// and what computes them, through loops.
  llvm::DenseMap<Value, Attribute> forced;
  /// Loop-carried values that live in a tensor-core dot's layout (or a
  /// slice of it), by (loop, iter arg index).
  llvm::DenseMap<std::pair<Operation *, unsigned>, Attribute> carried;
  /// Stores of rank ≥ 2 whose addresses run along the last dimension.
  llvm::DenseSet<Operation *> rowContiguousStores;
  /// 2-D stores whose addresses run down their columns only (a tile
  /// written transposed or column-major): the layout they store from.
  llvm::DenseMap<Operation *, Attribute> columnStores;
  /// The widest vector each store's (and atomic's) addresses allow
  /// (without its mask).
  llvm::DenseMap<Operation *, unsigned> storeVectorWidth;
  /// The target's compute capability (vector atomics).
  unsigned computeCapability = 0;

  void choosePreferred(func::FuncOp func, kiln::AxisInfoAnalysis &axisInfo) {
    MLIRContext *ctx = &getContext();
    widest1D.clear();
    fullStores1D.clear();
    fullStores.clear();
    encodingOfRank.clear();
    encodingOfShape.clear();
    reshapedShapes.clear();
    dotShapes.clear();
    func.walk([&](kiln::DotOp dot) {
      dotShapes.insert(SmallVector<int64_t>(dot.getType().getShape()));
    });
    narrowest2D = {};
    rowContiguousStores.clear();
    columnStores.clear();
    storeVectorWidth.clear();
    // Per rank >= 2: the largest access, and its vector width.
    llvm::DenseMap<unsigned, std::pair<RankedTensorType, unsigned>> anchors;
    // Per rank: the anchor's columns-first layout where it runs down them.
    llvm::DenseMap<unsigned, Attribute> anchorColumns;
    // The ranks >= 2 some load or store accesses.
    llvm::SmallDenseSet<unsigned> accessed;
    // Notes a tensor access; returns its vector width (0: not a tensor).
    auto noteAccess = [&](Operation *op, Value ptr,
                          Type valueType) -> unsigned {
      auto tensor = dyn_cast<RankedTensorType>(valueType);
      if (!tensor)
        return 0;
      unsigned bits = tensor.getElementType().getIntOrFloatBitWidth();
      // The mask does not limit the layout, only the vector instructions.
      unsigned vec = axisInfo.vectorWidth(ptr, /*mask=*/nullptr, bits);
      if (tensor.getRank() == 1) {
        unsigned &w = widest1D[tensor.getDimSize(0)];
        w = std::max(w, vec);
        return vec;
      }
      if (tensor.getRank() == 2) {
        // Tiles that run along their rows come first: one that runs down
        // its columns (k of `q @ k.T`) gets its own layout backwards
        // (forceOperandLayouts) and would leave the others unvectorized.
        auto &[narrow, narrowVec] = narrowest2D;
        bool better =
            !narrow ||
            ((vec > 1) != (narrowVec > 1)
                 ? vec > 1
                 : tensor.getDimSize(1) < narrow.getDimSize(1) ||
                       (tensor.getDimSize(1) == narrow.getDimSize(1) &&
                        vec > narrowVec));
        if (better)
          narrowest2D = {tensor, vec};
      }
      accessed.insert(unsigned(tensor.getRank()));
      auto &anchor = anchors[unsigned(tensor.getRank())];
      if (!anchor.first ||
          tensor.getNumElements() > anchor.first.getNumElements() ||
          (tensor.getNumElements() == anchor.first.getNumElements() &&
           vec > anchor.second)) {
        anchor = {tensor, vec};
        // An anchor in a loop that runs down its columns lays the rank out
        // so: scattermoe's GEMV reads K-contiguous weight tiles and sums
        // down them, and in the rows' layout converted each tile through
        // 32 KiB of shared memory and reduced across lanes and warps. (Not
        // a state read before its loop and written after it, FLA's
        // recurrent h0 and ht: the loop's own work decides there.)
        anchorColumns[unsigned(tensor.getRank())] =
            tensor.getRank() == 2 && tensor.getDimSize(1) > 1 &&
                    op->getParentOfType<LoopLikeOpInterface>()
                ? columnAccessLayout(ptr, tensor, axisInfo)
                : Attribute();
      }
      return vec;
    };
    func.walk([&](Operation *op) {
      // Packed inline asm (and a packed map_elementwise function) takes that
      // many consecutive elements of a thread at a time.
      unsigned pack = 1;
      if (auto asmOp = dyn_cast<kiln::InlineAsmElementwiseOp>(op))
        pack = asmOp.getPackedElement();
      else if (auto map = dyn_cast<kiln::MapElementwiseOp>(op))
        pack = map.getPack();
      if (pack > 1)
        for (Type type : op->getResultTypes())
          if (auto tensor = dyn_cast<RankedTensorType>(type);
              tensor && tensor.getRank() == 1) {
            unsigned &w = widest1D[tensor.getDimSize(0)];
            w = std::max(w, pack);
          }
      if (auto load = dyn_cast<kiln::LoadOp>(op))
        noteAccess(op, load.getPtr(), load.getType());
      else if (auto rmw = dyn_cast<kiln::AtomicRMWOp>(op)) {
        // Not an anchor: only its own layout (ownAtomicLayout) uses it.
        if (auto t = dyn_cast<RankedTensorType>(rmw.getVal().getType()))
          storeVectorWidth[op] =
              axisInfo.vectorWidth(rmw.getPtr(), /*mask=*/nullptr,
                                   t.getElementType().getIntOrFloatBitWidth());
      } else if (auto store = dyn_cast<kiln::StoreOp>(op)) {
        if (unsigned vec =
                noteAccess(op, store.getPtr(), store.getValue().getType())) {
          storeVectorWidth[op] = vec;
          auto tensor = cast<RankedTensorType>(store.getValue().getType());
          unsigned bits = tensor.getElementType().getIntOrFloatBitWidth();
          if (tensor.getRank() == 1 && vec * bits == 128) {
            unsigned &w = fullStores1D[tensor.getDimSize(0)];
            w = w ? std::min(w, vec) : vec;
          } else if (tensor.getRank() >= 2 && vec * bits == 128) {
            unsigned &w = fullStores[SmallVector<int64_t>(tensor.getShape())];
            w = w ? std::min(w, vec) : vec;
          }
        }
        if (auto t = dyn_cast<RankedTensorType>(store.getPtr().getType());
            t && t.getRank() >= 2 &&
            axisInfo.get(store.getPtr()).contiguity.back() > 1)
          rowContiguousStores.insert(op);
      }
      // Tensors of a rank no memory op uses still need an encoding: the
      // largest of them decides.
      for (Value result : op->getResults())
        if (auto tensor = dyn_cast<RankedTensorType>(result.getType());
            tensor && tensor.getRank() >= 2) {
          auto &anchor = anchors[unsigned(tensor.getRank())];
          if (!anchor.first)
            anchor = {tensor, 1};
        }
    });
    // A kernel that multiplies matrices lays out tensors of the dot's rank
    // for the dot (the accumulator, often loop-carried, then never moves).
    // 2-D dots of a tensor-core flavour (compiler/ir/TensorCoreFlavour.h),
    // when all of them are, go to the tensor cores: their rank's encoding
    // is the mma accumulator layout.
    llvm::DenseMap<unsigned, RankedTensorType> dots;
    bool tensorCores = true;
    // Batched (3-D) dots, when all of them have a tensor-core flavour and
    // their operands fit the staged lowering's shared memory: every 3-D
    // tensor takes the batched mma layout (mma.sync per batch).
    bool tensorCores3D = true;
    mmaEncoding = {};
    dotEncoding.clear();
    dotsInLoop = false;
    kiln::TargetInfo target =
        kiln::TargetInfo::of(func->getParentOfType<ModuleOp>());
    tmaStores = target.hasWgmma();
    computeCapability = target.computeCapability();
    // Whether wgmma can read every dot's operands: 32- and 8-bit tiles must
    // be K-contiguous (an operand loaded with pointers contiguous along K;
    // one computed in registers is 16-bit or takes mma.sync anyway; one of
    // a dot outside loops, which kiln-stage-dots writes K-contiguous).
    // Otherwise the dots take mma.sync, whose warps split M and N.
    bool wgmmaReadable = target.hasWgmma();
    // A transposed tile (`b_desc.load(...).T`, tutorial 09's fp8 B) is K-
    // contiguous when the loaded one is along the other dimension: the
    // pipeliner loads it through transposed pointers (PipelineDots).
    auto kContiguous = [&](Value operand, unsigned kDim) {
      if (auto trans = operand.getDefiningOp<kiln::TransOp>();
          trans && trans.getType().getRank() == 2) {
        operand = trans.getSrc();
        kDim = 1 - kDim;
      }
      auto load = operand.getDefiningOp<kiln::LoadOp>();
      if (!load || !isa<RankedTensorType>(load.getPtr().getType()))
        return false;
      return axisInfo.get(load.getPtr()).contiguity[kDim] > 1;
    };
    bool anyDotInLoop = false;
    // Warpgroups split N (wgmma at 64 rows and 8 warps) where every 2-D dot
    // has the one shape that allows it and takes a from shared memory.
    std::optional<int64_t> splitColumns;
    SmallVector<int64_t> splitShape;
    func.walk([&](kiln::DotOp dot) {
      anyDotInLoop |= bool(dot->getParentOfType<LoopLikeOpInterface>());
      RankedTensorType &largest = dots[unsigned(dot.getType().getRank())];
      if (!largest || dot.getType().getNumElements() > largest.getNumElements())
        largest = dot.getType();
      std::optional<kiln::TensorCoreFlavour> flavour = kiln::tensorCoreFlavour(
          dot.getA().getType().getElementType(),
          dot.getB().getType().getElementType(), dot.getType().getElementType(),
          dot.getInputPrecision(), target);
      if (dot.getType().getRank() == 3 &&
          !(flavour && flavour->hasMmaSync(target) &&
            batchedOnTensorCores(dot, *flavour, numWarps)))
        tensorCores3D = false;
      if (dot.getType().getRank() == 2 &&
          (!flavour ||
           dot.getA().getType().getDimSize(1) % flavour->kGroup() != 0 ||
           dot.getType().getDimSize(0) < 8 || dot.getType().getDimSize(1) < 8))
        tensorCores = false;
      // An 8-bit a computed in registers (fp8 attention's p) is read from
      // them.
      Operation *aDef = dot.getA().getDefiningOp();
      bool aInRegisters =
          flavour && flavour->registerA() && aDef && isElementwise(aDef);
      if (dot.getType().getRank() == 2) {
        int64_t columns = flavour && !aInRegisters
                              ? flavour->columnsSplittingN(
                                    dot.getType().getDimSize(0),
                                    dot.getType().getDimSize(1), numWarps)
                              : 0;
        // One shape for all: the layout's columns fit every dot.
        if (!splitColumns) {
          splitColumns = columns;
          splitShape.assign(dot.getType().getShape().begin(),
                            dot.getType().getShape().end());
        } else if (dot.getType().getShape() != ArrayRef(splitShape) ||
                   columns != *splitColumns) {
          splitColumns = 0;
        }
      }
      // An 8-bit b loaded with n contiguous is restaged K-major by the
      // pipeliner (kiln-pipeline-dots), through registers. A dot outside
      // loops has its operands written into K-contiguous tiles by
      // kiln-stage-dots, or, a 32-bit one loaded with M or N contiguous,
      // keeps mma.sync there, warps along M as well (Lightning
      // Attention-2's inter-block backward, three tf32 dots, one with kv
      // row-major: 0.58 -> 1.15 of Triton on an H200; its forward, that
      // dot alone, 1.28 -> 1.32).
      bool staged = !dot->getParentOfType<LoopLikeOpInterface>();
      if (flavour && !flavour->transposable() && !staged &&
          !((aInRegisters || kContiguous(dot.getA(), 1)) &&
            (kContiguous(dot.getB(), 0) || restageable(dot, *flavour))))
        wgmmaReadable = false;
      // The fp32 emulations split their operands in registers: mma.sync.
      if (flavour && flavour->split != kiln::TensorCoreFlavour::Split::None)
        wgmmaReadable = false;
    });
    for (auto &[rank, anchor] : anchors) {
      if (RankedTensorType dot = dots.lookup(rank)) {
        if (rank == 2 && tensorCores) {
          // The accumulator chain in the mma layout; everything else,
          // operand tiles included, coalesced for the narrowest tile so
          // that no lane holds a copy of another's elements.
          bool chained = hasChainedDots(func);
          mmaEncoding = chained && wgmmaReadable
                            ? splitChainedDots(func, target)
                            : Attribute();
          if (!mmaEncoding) {
            mmaEncoding = mmaFor(ctx, dot, numWarps, wgmmaReadable, chained,
                                 chained ? 0 : splitColumns.value_or(0));
            ownLayoutsForReplicatedDots(func, target, chained);
          }
          dotsInLoop = anyDotInLoop;
          auto [narrow, vec] = narrowest2D;
          encodingOfRank[rank] =
              narrow ? Attribute(defaultBlocked(ctx, narrow.getShape(),
                                                std::max(1u, vec), numWarps))
                     : Attribute(mmaEncoding);
          continue;
        }
        if (rank == 3 && tensorCores3D) {
          encodingOfRank[rank] = Attribute(mmaFor3D(ctx, dot, numWarps));
          continue;
        }
        encodingOfRank[rank] = Attribute(dotBlocked(ctx, dot, numWarps));
        continue;
      }
      if (Attribute column = anchorColumns.lookup(rank)) {
        encodingOfRank[rank] = column;
        continue;
      }
      RankedTensorType type = anchor.first;
      // Never more per thread than the thread's share of the tensor.
      int64_t share = threadShare(type, numWarps);
      unsigned vec = unsigned(std::min<int64_t>(anchor.second, share));
      // As for 1-D sizes (preferred): where the anchor's shape is stored
      // whole 16 bytes at a time in a wider type than it is loaded, a
      // thread holds one such store (FLA's KDA gate cumsum: bf16 in, fp32
      // out; two 16-byte stores a thread each wrote half of every sector).
      if (auto store = fullStores.find(SmallVector<int64_t>(type.getShape()));
          store != fullStores.end())
        vec = std::min(vec, store->second);
      encodingOfRank[rank] =
          defaultBlocked(ctx, type.getShape(), std::max(1u, vec), numWarps);
    }
    // A shape of a rank no load or store uses, reshaped from or into one
    // of a rank that some access anchors, takes the layout that keeps the
    // reshape's elements in their threads: Transformer Engine's mHC forward
    // computes its [M, C, 4] output in 3-D and stores it reshaped to
    // [M, 4C], and the default 3-D layout (4 lanes along the 4) left its
    // stores 2 bytes wide and its operands converted through shared memory.
    // The rank's other shapes keep its default (dot_scaled's [M, K/32, 32]
    // scale broadcasts lost the lanes they shared with their 2-D scales),
    // and so do the shapes that broadcast into a dot's result, whose layout
    // is the dot's (TE's mHC backward: its [M, C, 4] gradient, beside
    // [M, 4, 4] batched dots, had taken their mma layout).
    func.walk([&](kiln::ReshapeOp reshape) {
      auto src = cast<RankedTensorType>(reshape.getSrc().getType());
      auto dst = cast<RankedTensorType>(reshape.getType());
      for (auto [from, to] : {std::pair(src, dst), std::pair(dst, src)}) {
        unsigned fromRank = unsigned(from.getRank());
        unsigned toRank = unsigned(to.getRank());
        if (!accessed.count(fromRank) || accessed.count(toRank) ||
            fromRank < 2 || toRank < 2 || besideDot(to.getShape()))
          continue;
        if (Attribute layout = reshapedLayout(encodingOfRank.lookup(fromRank),
                                              from.getShape(), to.getShape()))
          reshapedShapes.try_emplace(SmallVector<int64_t>(to.getShape()),
                                     layout);
      }
    });
  }

  /// Attention over 64-row tiles at 8 warps on wgmma
  /// (compiler/ir/ChainedDots.h): records the layout of the dots that
  /// compute p, all warps along M, in dotEncoding and returns p @ v's, its
  /// warpgroups along N; null, recording nothing, where that does not apply
  /// (then one layout serves every dot).
  Attribute splitChainedDots(func::FuncOp func,
                             const kiln::TargetInfo &target) {
    MLIRContext *ctx = &getContext();
    std::optional<kiln::ChainedDotSplit> split =
        kiln::splitChainedDots(func, target, numWarps);
    if (!split)
      return {};
    unsigned alongM = unsigned(split->rows / 16);
    Attribute allAlongM = kiln::gpu::MmaEncodingAttr::get(ctx, {numWarps, 1});
    for (Operation *dot : split->feeding)
      dotEncoding[dot] = allAlongM;
    return kiln::gpu::MmaEncodingAttr::get(ctx, {alongM, numWarps / alongM},
                                           unsigned(split->columns));
  }

  /// A 2-D dot that mmaEncoding (chosen for the largest dot) would hold
  /// several times over, its rows or columns fewer than the layout's warps
  /// cover, and that takes mma.sync whatever its layout (no wgmma target, or
  /// M not a multiple of 64), gets a layout of its own in dotEncoding. Held
  /// in the shared layout, every warp would compute and keep the whole tile:
  /// modded-nanogpt's windowed attention backward keeps six 16 x 128 fp32
  /// score tiles beside a 128 x 128 dot at 8 warps, 64 registers a tile
  /// each where its own layout (warps along N) takes 8.
  void ownLayoutsForReplicatedDots(func::FuncOp func,
                                   const kiln::TargetInfo &target,
                                   bool chained) {
    auto shared = dyn_cast<kiln::gpu::MmaEncodingAttr>(mmaEncoding);
    if (!shared || shared.getInstrN())
      return;
    ArrayRef<unsigned> warps = shared.getWarpsPerCTA();
    MLIRContext *ctx = &getContext();
    func.walk([&](kiln::DotOp dot) {
      RankedTensorType type = dot.getType();
      if (type.getRank() != 2)
        return;
      int64_t m = type.getDimSize(0), n = type.getDimSize(1);
      bool replicated = 16 * int64_t(warps[0]) > m || 8 * int64_t(warps[1]) > n;
      if (!replicated || (target.hasWgmma() && m % 64 == 0))
        return;
      Attribute own = mmaFor(ctx, type, numWarps, /*wgmma=*/false, chained);
      if (own != mmaEncoding)
        dotEncoding[dot] = own;
    });
  }

  /// The accumulator layout of a 2-D tensor-core dot.
  Attribute accumulatorEncoding(Operation *dot) const {
    Attribute own = dotEncoding.lookup(dot);
    return own ? own : mmaEncoding;
  }

  /// Whether `encoding` is some 2-D tensor-core dot's accumulator layout.
  bool isAccumulatorEncoding(Attribute encoding) const {
    return encoding && (encoding == mmaEncoding ||
                        llvm::any_of(dotEncoding, [&](auto &entry) {
                          return entry.second == encoding;
                        }));
  }

  /// Whether some dot's a is computed (elementwise) from another dot's
  /// result.
  static bool hasChainedDots(func::FuncOp func) {
    llvm::SetVector<Operation *> feeding;
    func.walk([&](kiln::DotOp dot) {
      kiln::collectFeedingDots(dot.getA(), feeding);
    });
    return !feeding.empty();
  }

  /// For a store whose preferred layout gives each thread more elements
  /// along the contiguous dimension than one store instruction takes (16
  /// bytes, or what its addresses' alignment allows), a layout of that many
  /// per thread (when its pointers and mask are cheap to recompute); else
  /// null.
  Attribute ownStoreLayout(kiln::StoreOp store) {
    auto type = dyn_cast<RankedTensorType>(store.getValue().getType());
    unsigned bytes =
        type ? type.getElementType().getIntOrFloatBitWidth() / 8 : 0;
    return bytes ? ownAccessLayout(store, store.getPtr(), store.getMask(), type,
                                   16 / bytes)
                 : Attribute();
  }

  /// For a store of a value held in `from` (blocked, its threads along the
  /// last dimension) with more elements a thread along it than one store
  /// instruction takes at the store's addresses, a layout of that many a
  /// thread (when its pointers and mask are cheap to recompute); else null.
  Attribute narrowStoreLayout(kiln::StoreOp store, BlockedEncodingAttr from) {
    auto type = dyn_cast<RankedTensorType>(store.getValue().getType());
    // Not a small side result (a row of block scales), whose replicated
    // stores cost less than the trip through shared memory.
    if (!from || !type || type.getRank() > 2 ||
        type.getNumElements() < int64_t(numWarps * kThreadsPerWarp) ||
        from.getOrder().front() + 1 != unsigned(type.getRank()) ||
        !isIndexMath(store.getPtr()) ||
        (store.getMask() && !isIndexMath(store.getMask())))
      return {};
    // What a thread holds along the last dimension, not what the layout
    // would give it of a wider one (a [4, 1] row statistic in a tile's
    // layout holds one).
    // Where one store takes less than that run: narrower than 16 bytes a
    // store, or more than two whole 16-byte stores (below). Two cost less
    // than the trip (Liger's RMSNorm backward, Mamba-2's state passing:
    // 1.03 -> 1.02 and 1.01 -> 0.99 of Triton converted).
    unsigned vec = std::max(1u, storeVectorWidth.lookup(store));
    int64_t run = std::min<int64_t>(from.getSizePerThread().back(),
                                    type.getShape().back());
    if (run <= vec)
      return {};
    // Whole 16-byte stores, but more than two a thread along a row that
    // other lanes continue: each warp store then writes a quarter or less
    // of every 128-byte line it touches, and the lines take that many
    // requests each (vLLM's AWQ dequantizer, 64 bytes a thread of its
    // interleaved fp16 rows: 0.63x Triton, which converts).
    bool wholeVectors = vec * type.getElementTypeBitWidth() >= 128;
    if (wholeVectors &&
        (run * type.getElementTypeBitWidth() <= 256 ||
         from.getThreadsPerWarp().back() == 1 ||
         from.getSizePerThread().back() > type.getShape().back()))
      return {};
    return defaultBlocked(&getContext(), type.getShape(), vec, numWarps);
  }

  /// For an atomic add of a tensor-core result (split-K's partial tiles),
  /// a layout of as many elements a thread as one vector atomic takes
  /// (AtomicsToLLVM: 4 floats or 8 halves or bf16 from sm_90; before, 2
  /// halves, else 1), where the preferred layout gives each thread more along
  /// its rows: each of a warp's atomics then covers whole sectors, not half of
  /// each (split-K's fp32 tiles, 8 floats a thread in two 16-byte atomics).
  Attribute ownAtomicLayout(kiln::AtomicRMWOp rmw) {
    auto type = dyn_cast<RankedTensorType>(rmw.getVal().getType());
    if (!type || !isa<FloatType>(type.getElementType()) ||
        (rmw.getRmwOp() != kiln::RMWOp::FAdd &&
         rmw.getRmwOp() != kiln::RMWOp::Add))
      return {};
    Type element = type.getElementType();
    unsigned perAtomic = 1;
    if (element.isF32() && computeCapability >= 90)
      perAtomic = 4;
    else if ((element.isF16() || element.isBF16()) && computeCapability >= 90)
      perAtomic = 8;
    else if (element.isF16())
      perAtomic = 2;
    return ownAccessLayout(rmw, rmw.getPtr(), rmw.getMask(), type, perAtomic);
  }

  /// For `op`, an access of `type` through `ptr` under `mask`, a layout of
  /// `perAccess` elements a thread along its rows (fewer where its
  /// addresses allow fewer), when the preferred layout gives each thread
  /// more and its pointers and mask are cheap to recompute; else null.
  Attribute ownAccessLayout(Operation *op, Value ptr, Value mask,
                            RankedTensorType type, unsigned perAccess) {
    if (!type || type.getRank() != 2 || !isCheap(ptr, 0, true) ||
        (mask && !isCheap(mask, 0, true)))
      return {};
    auto blocked = dyn_cast<BlockedEncodingAttr>(preferred(type));
    if (!blocked || blocked.getOrder().front() != 1)
      return {};
    // Nor more than its addresses let one instruction store: where they
    // are not known aligned (a C pointer the kernel loads, tutorial 08),
    // 8 elements a thread would take 8 stores, each writing 2 bytes of a
    // sector per lane; one element a thread keeps a warp's store on one
    // run of the row.
    unsigned vec =
        std::min(perAccess, std::max(1u, storeVectorWidth.lookup(op)));
    if (blocked.getSizePerThread()[1] <= vec)
      return {};
    return defaultBlocked(&getContext(), type.getShape(), vec, numWarps);
  }

  /// The layout a tensor of this type gets where nothing else decides.
  Attribute preferred(RankedTensorType type) {
    if (type.getRank() == 1) {
      int64_t n = type.getDimSize(0);
      unsigned perThread = std::max(1u, widest1D.lookup(n));
      // Where a narrower type is loaded (or stored) than the widest one
      // stored, a thread holds what one 16-byte store of the widest takes:
      // the narrower accesses are then 8 bytes or less a lane but still
      // cover whole sectors, where two 16-byte stores a thread would each
      // write half of every sector they touch (Thunder's cross-entropy
      // forward: bf16 logits in, fp32 log-probabilities out).
      if (unsigned store = fullStores1D.lookup(n))
        perThread = std::min(perThread, store);
      perThread = unsigned(std::min<int64_t>(
          perThread,
          std::max<int64_t>(1, n / int64_t(numWarps * kThreadsPerWarp))));
      return BlockedEncodingAttr::get(&getContext(), {perThread},
                                      {kThreadsPerWarp}, {numWarps}, {0});
    }
    // (Shapes that broadcast into one too: the [M, C, 1] and [M, 1, 4]
    // factors of the [M, C, 4] product.)
    if (!besideDot(type.getShape()))
      for (auto &[shape, layout] : reshapedShapes)
        if (broadcastsInto(type.getShape(), shape))
          return layout;
    auto it = encodingOfRank.find(unsigned(type.getRank()));
    if (it != encodingOfRank.end()) {
      // The rank's encoding serves its other shapes too, unless it puts
      // more lanes and warps along a dimension than the shape has elements
      // (tutorial 09's EPILOGUE_SUBTILE splits a 128x128x2 tile whose rank
      // came from a 128x2x128 one: 32 lanes along the 2, each thread then
      // holding 16 copies, 150 KB of spills). Such a shape gets its own.
      // Only where the threads have enough elements not to replicate, and
      // the shape as many as the encoding's tile: a small side tile (a
      // block scale's 64 x 4) broadcast into the big ones keeps their
      // layout, which its broadcasts need.
      auto blocked = dyn_cast<BlockedEncodingAttr>(it->second);
      if (!blocked ||
          type.getNumElements() < int64_t(numWarps * kThreadsPerWarp) ||
          type.getNumElements() < tileElements(blocked) ||
          !replicates(blocked, type.getShape()))
        return it->second;
      auto [own, inserted] = encodingOfShape.try_emplace(
          SmallVector<int64_t>(type.getShape()), Attribute());
      if (inserted) {
        int64_t share = threadShare(type, numWarps);
        unsigned vec =
            unsigned(std::min<int64_t>({4, share, type.getShape().back()}));
        own->second = defaultBlocked(&getContext(), type.getShape(),
                                     std::max(1u, vec), numWarps);
      }
      return own->second;
    }
    Attribute encoding =
        defaultBlocked(&getContext(), type.getShape(), 1, numWarps);
    encodingOfRank[unsigned(type.getRank())] = encoding;
    return encoding;
  }

  /// Whether a tensor of `shape` broadcasts into one of `into` (each
  /// dimension the same or 1).
  static bool broadcastsInto(ArrayRef<int64_t> shape, ArrayRef<int64_t> into) {
    return shape.size() == into.size() &&
           llvm::all_of(llvm::zip(shape, into), [](auto dims) {
             auto [n, of] = dims;
             return n == of || n == 1;
           });
  }

  /// Whether `shape` broadcasts into a dot's result (the accumulator's
  /// layout is the dot's to decide).
  bool besideDot(ArrayRef<int64_t> shape) const {
    return llvm::any_of(dotShapes, [&](const SmallVector<int64_t> &dot) {
      return broadcastsInto(shape, dot);
    });
  }

  /// The elements one tile of `encoding` covers (runs, lanes and warps).
  static int64_t tileElements(BlockedEncodingAttr encoding) {
    int64_t n = 1;
    for (size_t d = 0; d < encoding.getSizePerThread().size(); ++d)
      n *= int64_t(encoding.getSizePerThread()[d]) *
           encoding.getThreadsPerWarp()[d] * encoding.getWarpsPerCTA()[d];
    return n;
  }

  /// Whether `encoding` covers more of some dimension of `shape` than it
  /// has elements (so that threads hold copies): its threads' runs, lanes
  /// and warps along it (torchao's 128 x 32 bf16 tile under the 16-byte
  /// runs of a 32 x 128 fp8 one: 16 x 8 columns, each element loaded four
  /// times). Dimensions of one element (`x[:, None]`, broadcast later) do
  /// not count.
  static bool replicates(BlockedEncodingAttr encoding,
                         ArrayRef<int64_t> shape) {
    for (auto [d, extent] : llvm::enumerate(shape))
      if (extent > 1 && int64_t(encoding.getSizePerThread()[d]) *
                                encoding.getThreadsPerWarp()[d] *
                                encoding.getWarpsPerCTA()[d] >
                            extent)
        return true;
    return false;
  }

  //===--------------------------------------------------------------------===//
  // 2. Propagation
  //===--------------------------------------------------------------------===//

  /// Makes operand `i` of `op` have `encoding`, converting if needed.
  void requireOperand(Operation *op, unsigned i, Attribute encoding) {
    Value v = op->getOperand(i);
    auto tensor = dyn_cast<RankedTensorType>(v.getType());
    if (!tensor || tensor.getEncoding() == encoding)
      return;
    // One conversion serves every later reader in its block (a tile both
    // reduced and scanned in the same other layout).
    Type wanted = withEncoding(tensor, encoding);
    for (Operation *user : v.getUsers())
      if (auto convert = dyn_cast<kiln::gpu::ConvertLayoutOp>(user);
          convert && convert.getType() == wanted &&
          convert->getBlock() == op->getBlock() &&
          convert->isBeforeInBlock(op)) {
        op->setOperand(i, convert.getResult());
        return;
      }
    OpBuilder b(op);
    Value converted =
        kiln::gpu::ConvertLayoutOp::create(b, op->getLoc(), wanted, v);
    op->setOperand(i, converted);
  }

  /// Every tensor operand of `op` in `encoding`.
  void requireAllOperands(Operation *op, Attribute encoding) {
    for (OpOperand &operand : op->getOpOperands())
      if (isa<RankedTensorType>(operand.get().getType()))
        requireOperand(op, operand.getOperandNumber(), encoding);
  }

  void setResult(Value result, Attribute encoding) {
    if (isa<RankedTensorType>(result.getType()))
      result.setType(withEncoding(result.getType(), encoding));
  }

  /// The layout of kiln.join's result over operands in `encoding` (a
  /// blocked one): the new last dimension of 2 in each thread's registers,
  /// innermost; the other dimensions as the operands have them. Null for
  /// other encodings.
  Attribute joinedLayout(Attribute encoding) {
    auto blocked = dyn_cast_or_null<BlockedEncodingAttr>(encoding);
    if (!blocked)
      return {};
    SmallVector<unsigned> spt(blocked.getSizePerThread()),
        tpw(blocked.getThreadsPerWarp()), wpc(blocked.getWarpsPerCTA());
    spt.push_back(2);
    tpw.push_back(1);
    wpc.push_back(1);
    SmallVector<unsigned> order{unsigned(spt.size() - 1)};
    llvm::append_range(order, blocked.getOrder());
    return BlockedEncodingAttr::get(&getContext(), spt, tpw, wpc, order);
  }

  /// The layout of kiln.split's results over an operand in `encoding`
  /// whose threads hold both halves of their elements (a blocked layout
  /// with the last dimension of 2 in registers, joinedLayout's): the
  /// operand's without that dimension. Null otherwise.
  Attribute splitLayout(Attribute encoding) {
    auto blocked = dyn_cast_or_null<BlockedEncodingAttr>(encoding);
    if (!blocked || blocked.getSizePerThread().size() < 2)
      return {};
    unsigned last = unsigned(blocked.getSizePerThread().size() - 1);
    if (blocked.getSizePerThread()[last] != 2 ||
        blocked.getThreadsPerWarp()[last] != 1 ||
        blocked.getWarpsPerCTA()[last] != 1)
      return {};
    SmallVector<unsigned> spt(blocked.getSizePerThread().drop_back()),
        tpw(blocked.getThreadsPerWarp().drop_back()),
        wpc(blocked.getWarpsPerCTA().drop_back()), order;
    for (unsigned o : blocked.getOrder())
      if (o != last)
        order.push_back(o);
    return BlockedEncodingAttr::get(&getContext(), spt, tpw, wpc, order);
  }

  /// The layout of a kiln.reshape from `from` (`encoding`, blocked) to `to`
  /// that keeps every element in its thread: `to` merges dimensions d and
  /// d + 1 of `from`, and `encoding` holds dimension d + 1 whole in each
  /// thread (its elements then follow d's in-thread ones); or `to` splits
  /// one (splitDimensionLayout). Null otherwise.
  Attribute reshapedLayout(Attribute encoding, ArrayRef<int64_t> from,
                           ArrayRef<int64_t> to) {
    auto blocked = dyn_cast_or_null<BlockedEncodingAttr>(encoding);
    if (blocked && to.size() == from.size() + 1)
      return splitDimensionLayout(blocked, from, to);
    if (!blocked || from.size() != to.size() + 1)
      return {};
    for (size_t d = 0; d + 1 < from.size(); ++d) {
      if (to[d] != from[d] * from[d + 1] ||
          !std::equal(from.begin(), from.begin() + d, to.begin()) ||
          !std::equal(from.begin() + d + 2, from.end(), to.begin() + d + 1))
        continue;
      if (int64_t(blocked.getSizePerThread()[d + 1]) != from[d + 1] ||
          blocked.getThreadsPerWarp()[d + 1] != 1 ||
          blocked.getWarpsPerCTA()[d + 1] != 1 ||
          // A run longer than d itself (the layout wraps inside a thread).
          int64_t(blocked.getSizePerThread()[d]) > from[d])
        return {};
      SmallVector<unsigned> spt, tpw, wpc, order;
      for (size_t i = 0; i < from.size(); ++i) {
        if (i == d + 1)
          continue;
        unsigned merged = i == d ? unsigned(from[d + 1]) : 1u;
        spt.push_back(blocked.getSizePerThread()[i] * merged);
        tpw.push_back(blocked.getThreadsPerWarp()[i]);
        wpc.push_back(blocked.getWarpsPerCTA()[i]);
      }
      for (unsigned o : blocked.getOrder())
        if (o != d + 1)
          order.push_back(o > d + 1 ? o - 1 : o);
      return BlockedEncodingAttr::get(&getContext(), spt, tpw, wpc, order);
    }
    return {};
  }

  /// Each register, lane and warp basis of `layout` (of a tensor of
  /// `shape`; entries 0, 1 and 2) as a bit of the row-major flat index: -1
  /// for none (copies), nullopt where a basis is no single bit.
  static std::optional<std::array<SmallVector<int>, 3>>
  flatIndexBits(const kiln::layout::LinearLayout &layout,
                ArrayRef<int64_t> shape) {
    namespace L = kiln::layout;
    std::array<SmallVector<int>, 3> bits;
    for (auto [kind, hw] : llvm::enumerate(
             std::array<StringRef, 3>{L::kRegister, L::kLane, L::kWarp}))
      for (int32_t i = 0; i < layout.getInDimSizeLog2(hw); ++i) {
        int64_t flat = 0;
        for (auto [c, n] : llvm::zip(layout.getBasis(hw, i), shape))
          flat = flat * n + c;
        if (flat != 0 && !llvm::isPowerOf2_64(uint64_t(flat)))
          return std::nullopt;
        bits[kind].push_back(flat == 0 ? -1
                                       : int(llvm::Log2_64(uint64_t(flat))));
      }
    return bits;
  }

  /// Whether a row-major reshape from `from` (of shape `fromShape`) to `to`
  /// moves no element between threads: the same lanes and warps hold each
  /// bit of the flat index, and each thread's registers the same ones.
  static bool keepsThreads(const kiln::layout::LinearLayout &from,
                           ArrayRef<int64_t> fromShape,
                           const kiln::layout::LinearLayout &to,
                           ArrayRef<int64_t> toShape) {
    auto a = flatIndexBits(from, fromShape), b = flatIndexBits(to, toShape);
    if (!a || !b || (*a)[1] != (*b)[1] || (*a)[2] != (*b)[2])
      return false;
    SmallVector<int> ra((*a)[0]), rb((*b)[0]);
    llvm::sort(ra);
    llvm::sort(rb);
    return ra == rb;
  }

  /// The blocked layout of a kiln.reshape's result (`to`) that keeps every
  /// element of `src` in its thread, for reshapes reshapedLayout does not
  /// take that split and merge dimensions (the bitonic sorts libraries
  /// write with tl.reshape to [n, 2, m] and back, Transformer Engine's MoE
  /// permutation among them, went through shared memory at every step).
  /// Row-major, element i of the operand is element i of the result: read
  /// as bits of that flat index, each lane and warp basis of the operand's
  /// layout is one bit (or none: copies), and a blocked layout of `to` in
  /// row-major order gives each dimension, from its lowest bit, registers,
  /// then lanes, then warps, then registers again (repeats). Copies go to
  /// the dimension where they wrap. Null where no such layout keepsThreads,
  /// for reshapes that only add or drop dimensions of 1 (the layouts the
  /// ops around them are given serve those: a [256] block viewed as [1,
  /// 256] in bitsandbytes' quantizer took 0.24 of Triton's speed with its
  /// loop's values converted to this layout), and where the preferred
  /// layouts on both sides already keep the threads, and where what is
  /// computed from the result is read in another block than the reshape's
  /// (a loop's values would be converted to its layout every iteration:
  /// bitsandbytes' 4-bit quantizer, whose code-table search loop compares
  /// with the reshaped block).
  Attribute relaidReshapeLayout(kiln::ReshapeOp reshape) {
    namespace L = kiln::layout;
    Value src = reshape.getSrc();
    ArrayRef<int64_t> to = reshape.getType().getShape();
    auto type = cast<RankedTensorType>(src.getType());
    auto withoutOnes = [](ArrayRef<int64_t> shape) {
      SmallVector<int64_t> kept;
      llvm::copy_if(shape, std::back_inserter(kept),
                    [](int64_t n) { return n != 1; });
      return kept;
    };
    auto encoding =
        dyn_cast_or_null<kiln::gpu::DistributedEncodingAttr>(encodingOf(src));
    if (!encoding || withoutOnes(type.getShape()) == withoutOnes(to) ||
        llvm::any_of(
            to, [](int64_t n) { return !llvm::isPowerOf2_64(uint64_t(n)); }))
      return {};
    std::optional<L::LinearLayout> from =
        encoding.toLinearLayout(type.getShape());
    if (!from)
      return {};
    auto toType = RankedTensorType::get(to, type.getElementType());
    if (encodingOf(src) == preferred(type))
      if (auto free = dyn_cast_or_null<kiln::gpu::DistributedEncodingAttr>(
              preferred(toType)))
        if (auto freeLayout = free.toLinearLayout(to);
            freeLayout && keepsThreads(*from, type.getShape(), *freeLayout, to))
          return {};
    // Last, as it walks every op computed from the result.
    llvm::SetVector<Operation *> slice;
    SmallVector<Operation *> work{reshape};
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      for (Operation *user : op->getUsers()) {
        if (user->getBlock() != reshape->getBlock() || slice.size() > 4096)
          return {};
        if (slice.insert(user))
          work.push_back(user);
      }
    }
    return keepingThreadsLayout(*from, type.getShape(), to);
  }

  /// The blocked layout of shape `to` that holds every element of a tensor
  /// of shape `fromShape` laid out by `from` in the same thread, element i
  /// of one being element i of the other in row-major order (see
  /// relaidReshapeLayout); null where none does.
  Attribute keepingThreadsLayout(const kiln::layout::LinearLayout &from,
                                 ArrayRef<int64_t> fromShape,
                                 ArrayRef<int64_t> to) {
    if (llvm::any_of(
            to, [](int64_t n) { return !llvm::isPowerOf2_64(uint64_t(n)); }))
      return {};
    std::optional<std::array<SmallVector<int>, 3>> bits =
        flatIndexBits(from, fromShape);
    if (!bits || llvm::is_contained((*bits)[0], -1))
      return {};
    const SmallVector<int> &lanes = (*bits)[1], &warps = (*bits)[2];
    // Which basis holds each flat bit: kind (register, lane, warp), index.
    std::map<int, std::pair<unsigned, int>> owner;
    for (unsigned kind = 0; kind < 3; ++kind)
      for (auto [i, bit] : llvm::enumerate((*bits)[kind]))
        if (bit >= 0 && !owner.try_emplace(bit, kind, int(i)).second)
          return {};
    size_t rank = to.size();
    SmallVector<unsigned> spt(rank, 1), tpw(rank, 1), wpc(rank, 1);
    int next[3] = {0, 0, 0}, bit = 0;
    for (size_t d = rank; d-- > 0;) {
      int end = bit + int(llvm::Log2_64(uint64_t(to[d])));
      // The bits of `kind` next in order (registers in any order).
      auto take = [&](unsigned kind, unsigned &count) {
        while (bit < end) {
          auto it = owner.find(bit);
          if (it == owner.end() || it->second.first != kind ||
              (kind != 0 && it->second.second != next[kind]))
            return;
          count *= 2;
          ++bit;
          ++next[kind];
        }
      };
      unsigned repeats = 1;
      take(0, spt[d]);
      take(1, tpw[d]);
      take(2, wpc[d]);
      take(0, repeats);
      if (bit != end)
        return {};
    }
    // The copies: the lanes and warps left, none with a bit of its own.
    auto copies = [](ArrayRef<int> hw, int used) {
      return llvm::all_of(hw.drop_front(used), [](int b) { return b < 0; })
                 ? std::optional<unsigned>(1u << (hw.size() - size_t(used)))
                 : std::nullopt;
    };
    std::optional<unsigned> copyLanes = copies(lanes, next[1]),
                            copyWarps = copies(warps, next[2]);
    if (!copyLanes || !copyWarps)
      return {};
    SmallVector<unsigned> order;
    for (size_t d = rank; d-- > 0;)
      order.push_back(unsigned(d));
    // The copies wrap where a dimension's lanes (warps) pass its size.
    for (size_t laneDim = 0; laneDim < rank; ++laneDim)
      for (size_t warpDim = 0; warpDim < rank; ++warpDim) {
        SmallVector<unsigned> t(tpw), w(wpc);
        t[laneDim] *= *copyLanes;
        w[warpDim] *= *copyWarps;
        auto candidate =
            BlockedEncodingAttr::get(&getContext(), spt, t, w, order);
        if (auto result = candidate.toLinearLayout(to);
            result && keepsThreads(from, fromShape, *result, to))
          return candidate;
      }
    return {};
  }

  /// The 1-D blocked layout holding in each register, lane and warp one
  /// element of `value`'s distributed layout, when that layout holds each
  /// element once: a reordering reshape to it renames registers.
  Attribute reorderedFlatLayout(Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    auto encoding =
        dyn_cast_or_null<kiln::gpu::DistributedEncodingAttr>(encodingOf(value));
    std::optional<kiln::layout::LinearLayout> layout =
        encoding ? encoding.toLinearLayout(type.getShape()) : std::nullopt;
    if (!layout || !layout->isInvertible())
      return {};
    auto size = [&](StringRef hw) {
      return unsigned(layout->getInDimSize(hw));
    };
    return BlockedEncodingAttr::get(
        &getContext(), {size(kiln::layout::kRegister)},
        {size(kiln::layout::kLane)}, {size(kiln::layout::kWarp)}, {0});
  }

  /// reshapedLayout's other direction: `to` splits dimension d of `from` into
  /// (d, d + 1), and each thread of `blocked` holds a whole number of runs
  /// of to[d + 1] elements along d (an interleaved pair, `reshape(x, (M,
  /// N // 2, 2))` before a split): d + 1 stays in the threads' registers.
  Attribute splitDimensionLayout(BlockedEncodingAttr blocked,
                                 ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
    for (size_t d = 0; d < from.size(); ++d) {
      if (from[d] != to[d] * to[d + 1] ||
          !std::equal(from.begin(), from.begin() + d, to.begin()) ||
          !std::equal(from.begin() + d + 1, from.end(), to.begin() + d + 2))
        continue;
      unsigned inner = unsigned(to[d + 1]);
      unsigned run = blocked.getSizePerThread()[d];
      if (run % inner != 0 || int64_t(run) > from[d])
        return {};
      SmallVector<unsigned> spt, tpw, wpc, order;
      for (size_t i = 0; i < from.size(); ++i) {
        spt.push_back(i == d ? run / inner : blocked.getSizePerThread()[i]);
        tpw.push_back(blocked.getThreadsPerWarp()[i]);
        wpc.push_back(blocked.getWarpsPerCTA()[i]);
        if (i == d) {
          spt.push_back(inner);
          tpw.push_back(1);
          wpc.push_back(1);
        }
      }
      for (unsigned o : blocked.getOrder()) {
        if (o == d)
          order.push_back(unsigned(d + 1));
        order.push_back(o > d ? o + 1 : o);
      }
      return BlockedEncodingAttr::get(&getContext(), spt, tpw, wpc, order);
    }
    return {};
  }

  /// Permutes a blocked encoding for kiln.trans (result dim i = src order[i]).
  Attribute permuted(Attribute encoding, ArrayRef<int32_t> perm) {
    auto blocked = dyn_cast<BlockedEncodingAttr>(encoding);
    if (!blocked)
      return {};
    size_t rank = perm.size();
    SmallVector<unsigned> spt(rank), tpw(rank), wpc(rank), order, inverse(rank);
    for (size_t i = 0; i < rank; ++i) {
      spt[i] = blocked.getSizePerThread()[perm[i]];
      tpw[i] = blocked.getThreadsPerWarp()[perm[i]];
      wpc[i] = blocked.getWarpsPerCTA()[perm[i]];
      inverse[perm[i]] = unsigned(i);
    }
    for (unsigned d : blocked.getOrder())
      order.push_back(inverse[d]);
    return BlockedEncodingAttr::get(&getContext(), spt, tpw, wpc, order);
  }

  /// True when `v` is computed from make_range, splat and constants alone
  /// (through elementwise ops): such values are rematerialized, not moved.
  /// With `shapes`, also through expand_dims and broadcast (index math
  /// such as a causal mask's `offs_m[:, None] >= offs_n[None, :]`).
  /// With `leaf`, that value counts as cheap too (a loop's carried index
  /// vector, splitCarriedIndexVectors).
  bool isCheap(Value v, unsigned depth = 0, bool shapes = false,
               Value leaf = {}) {
    if (leaf && v == leaf)
      return true;
    Operation *def = v.getDefiningOp();
    if (!def || depth > 8)
      return false;
    if (isa<kiln::MakeRangeOp, kiln::SplatOp, arith::ConstantOp>(def))
      return true;
    // A conversion is free to look through: rematerializing drops it.
    if (isa<kiln::gpu::ConvertLayoutOp>(def))
      return isCheap(def->getOperand(0), depth, shapes, leaf);
    // Shape ops, one operand each, do not count towards the depth (which
    // bounds the walk over operands).
    if (shapes && isa<kiln::ExpandDimsOp, kiln::BroadcastOp>(def))
      return isCheap(def->getOperand(0), depth, shapes, leaf);
    // A row-major reshape is recomputed over its operand recomputed in the
    // layout that keeps each element in its thread (rematerialize).
    if (auto reshape = dyn_cast<kiln::ReshapeOp>(def);
        shapes && reshape && !reshape.flattensForReduction())
      return isCheap(reshape.getSrc(), depth, shapes, leaf);
    if (!isElementwise(def) || def->getNumResults() != 1)
      return false;
    return llvm::all_of(def->getOperands(), [&](Value operand) {
      return !isa<RankedTensorType>(operand.getType()) ||
             isCheap(operand, depth + 1, shapes, leaf);
    });
  }

  /// isCheap with `shapes`, through however long a chain of at most 64
  /// ops: a paged cache's addresses (heads, blocks and 16-byte pieces of a
  /// row, each a multiply and a division or remainder) run deeper than
  /// isCheap looks.
  bool isIndexMath(Value v) {
    SmallVector<Value> work{v};
    llvm::SmallPtrSet<Operation *, 16> seen;
    while (!work.empty()) {
      Operation *def = work.pop_back_val().getDefiningOp();
      if (!def || !isa<RankedTensorType>(def->getResult(0).getType()))
        return false;
      if (!seen.insert(def).second ||
          isa<kiln::MakeRangeOp, kiln::SplatOp, arith::ConstantOp>(def))
        continue;
      if (seen.size() > 64 ||
          !(isa<kiln::gpu::ConvertLayoutOp, kiln::ExpandDimsOp,
                kiln::BroadcastOp>(def) ||
            (isElementwise(def) && def->getNumResults() == 1)))
        return false;
      for (Value operand : def->getOperands())
        if (isa<RankedTensorType>(operand.getType()))
          work.push_back(operand);
    }
    return true;
  }

  /// True when `v` is a small 1-D load (at most 8 registers a thread in
  /// `target`) that only one op (its conversion) reads, from addresses computed
  /// as isCheap computes, in a loop: attention backward's row statistics,
  /// which the loop reads in a slice of the accumulator's layout, or a decode
  /// kernel's token indices, which address the rows of its k and v blocks.
  /// Loading them in that layout (L1 serves the replicas) saves a trip through
  /// shared memory and two barriers, or a round of shuffles after the load,
  /// every iteration.
  bool isCheapLoad(Value v, Attribute target, bool onlyReader = true) {
    auto load = v.getDefiningOp<kiln::LoadOp>();
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!load || !type || type.getRank() != 1 ||
        (onlyReader && !load->hasOneUse()) || !readsCheapAddresses(load))
      return false;
    // Kernels with tensor-core dots keep the rule they were measured with:
    // loops that hold a dot (or an `if` in them beside its dots).
    if (!loopThroughIf(load) || (mmaEncoding && !besideDot(load)))
      return false;
    auto encoding = dyn_cast<kiln::gpu::DistributedEncodingAttr>(target);
    std::optional<kiln::layout::LinearLayout> layout =
        encoding ? encoding.toLinearLayout(type.getShape()) : std::nullopt;
    return layout &&
           loadableInPlace(type, layout->getInDimSize(kiln::layout::kRegister));
  }

  /// Whether a 1-D load of `type` that fills `registers` registers a thread
  /// in the layout its reader wants is loaded there (L1 serving the
  /// replicas) rather than converted through shared memory: at most 8
  /// 32-bit registers, or, as Triton rematerializes loads, fewer elements
  /// than the kernel has threads (an attention backward's 64 lse and delta
  /// values along the columns of a [4, 1] accumulator, 16 registers a
  /// thread, went through shared memory with two barriers each every
  /// iteration), up to 16 registers: ring-attention-pytorch's forward with a
  /// bias row of 128 floats along the columns of an [8, 1] accumulator (32
  /// registers a thread) ran at 1.005 of Triton loaded so, 1.03 converted
  /// (H100).
  bool loadableInPlace(RankedTensorType type, int64_t registers) const {
    int64_t bits = registers * type.getElementTypeBitWidth();
    return bits <= 8 * 32 ||
           (bits <= 16 * 32 &&
            type.getNumElements() < int64_t(numWarps * kThreadsPerWarp));
  }

  /// True when `v` (1-D) is computed elementwise, through at most a few
  /// ops and cheap index math, from one small load isCheapLoad takes but
  /// for its other readers (it has several), in a loop holding a dot: GLA's
  /// per-channel decay, `exp2(gk_last)` read in a slice of the accumulator's
  /// layout and `gk_last` itself in one of the decayed operand's. Loaded and
  /// computed again in each layout (L1 serves the copies), it is not converted
  /// through shared memory, with two barriers, every iteration.
  bool isReloadable(Value v, Attribute target, unsigned depth = 0) {
    Operation *def = v.getDefiningOp();
    if (!def || depth > 3)
      return false;
    // Values, not indices: a gather's token indices, read in k's and v's
    // layouts, run ahead with the copies they address, where loading them
    // twice costs more than it saves (lightllm's prefill attention 1.28 ->
    // 1.22 of Triton on the H200, its decode 1.89 -> 1.83). A load with one
    // reader is isCheapLoad's to decide.
    auto valueType = dyn_cast<RankedTensorType>(v.getType());
    if (!valueType || !isa<FloatType>(valueType.getElementType()))
      return false;
    if (isa<kiln::LoadOp>(def))
      return !def->hasOneUse() && inLoopWithDot(def) &&
             isCheapLoad(v, target, /*onlyReader=*/false);
    if (valueType.getRank() != 1 || !isElementwise(def) ||
        def->getNumResults() != 1)
      return false;
    unsigned loaded = 0;
    for (Value operand : def->getOperands()) {
      if (!isa<RankedTensorType>(operand.getType()) ||
          isCheap(operand, 0, /*shapes=*/true))
        continue;
      if (!isReloadable(operand, target, depth + 1))
        return false;
      ++loaded;
    }
    return loaded == 1;
  }

  /// The load `v` is, or is computed from through elementwise ops and
  /// expand_dims (`a_scale.to(tl.float32)[:, None]`), when it is a float
  /// load outside loops from addresses isCheap computes, in a kernel whose
  /// tensor-core dots run in a loop: a per-row or per-column scale loaded
  /// before the matmul loop, or a decay loaded after it, that the epilogue
  /// reads in (slices of) the accumulator's layout.
  kiln::LoadOp epilogueLoad(Value v, unsigned depth = 0) {
    Operation *def = v.getDefiningOp();
    if (!dotsInLoop || !def || !isa<RankedTensorType>(v.getType()) ||
        depth > 4 || def->getParentOfType<LoopLikeOpInterface>())
      return {};
    // Values, not indices (isReloadable's reason): loading a MoE block's
    // token indices again for its operand's addresses cost 3%.
    if (auto load = dyn_cast<kiln::LoadOp>(def))
      return isa<FloatType>(getElementTypeOrSelf(v.getType())) &&
                     readsCheapAddresses(load)
                 ? load
                 : kiln::LoadOp();
    if (isa<kiln::ExpandDimsOp>(def))
      return epilogueLoad(def->getOperand(0), depth + 1);
    if (!isElementwise(def) || def->getNumResults() != 1)
      return {};
    kiln::LoadOp found;
    for (Value operand : def->getOperands()) {
      if (!isa<RankedTensorType>(operand.getType()) ||
          isCheap(operand, 0, /*shapes=*/true))
        continue;
      kiln::LoadOp load = epilogueLoad(operand, depth + 1);
      if (!load || found)
        return {};
      found = load;
    }
    return found;
  }

  /// True when `v` is an epilogueLoad chain whose load has fewer elements
  /// than the kernel has threads (Triton's rule for cheap loads). It is
  /// loaded again in each layout it is converted to (as FLA's `b_g[:, None]
  /// - b_g[None, :]` reads it in both slices of the accumulator's): each
  /// thread loads its few rows (L1 serves the replicas) where a conversion
  /// went through shared memory, with two barriers, in the epilogue.
  /// (Straight-line kernels, FLA's backward ones, are left alone: there the
  /// copies, held beside unrolled dots, cost registers they cannot spare.)
  /// Loads inside loops are isCheapLoad's and isReloadable's.
  bool isSmallLoadOutsideLoops(Value v) {
    kiln::LoadOp load = epilogueLoad(v);
    return load && cast<RankedTensorType>(load.getType()).getNumElements() <
                       int64_t(numWarps * kThreadsPerWarp);
  }

  /// For an epilogueLoad chain of a load of its own rank whose blocked
  /// layout holds each element in at least four threads (lightllm's
  /// per-column scales, loaded through a `[None, :]` row of pointers into
  /// the rank's layout, its lanes and warps along the unit dimension): a
  /// layout that spreads the elements over the threads (null otherwise).
  /// Converted from there, each thread loads, widens and stores one
  /// element, not 32 (lightllm's fp8 batched GEMM 0.96 -> 1.00 of Triton
  /// on the H200, torchao's int8 GEMM 1.18 -> 1.22). A 1-D load broadcast
  /// by expand_dims (attorch's bias, a w8a16 GEMM's scales) is already
  /// spread; rebuilding its chain this way measured 4% slower there.
  Attribute compactLayoutFor(Value v) {
    auto type = cast<RankedTensorType>(v.getType());
    auto blocked = dyn_cast_or_null<BlockedEncodingAttr>(type.getEncoding());
    if (!blocked || tileElements(blocked) < 4 * type.getNumElements())
      return {};
    kiln::LoadOp load = epilogueLoad(v);
    if (!load ||
        cast<RankedTensorType>(load.getType()).getRank() != type.getRank())
      return {};
    BlockedEncodingAttr compact =
        defaultBlocked(&getContext(), type.getShape(), 1, numWarps);
    return tileElements(compact) < tileElements(blocked) ? compact
                                                         : Attribute();
  }

  /// Puts the ops of an epilogueLoad chain (or an isCheapLoad load alone),
  /// down to its load, into `dead` (they go where no other op reads them).
  void markLoadChain(Value v, llvm::SetVector<Operation *> &dead) {
    while (Operation *def = v.getDefiningOp()) {
      dead.insert(def);
      if (isa<kiln::LoadOp>(def))
        return;
      auto loaded = llvm::find_if(def->getOperands(), [&](Value operand) {
        return isa<RankedTensorType>(operand.getType()) &&
               !isCheap(operand, 0, /*shapes=*/true);
      });
      if (loaded == def->operand_end())
        return;
      v = *loaded;
    }
  }

  /// Whether `load`, a plain load of a tensor of pointers, reads addresses
  /// (and a mask and fall-back) computed as isCheap computes: what can be
  /// loaded again in another layout.
  bool readsCheapAddresses(kiln::LoadOp load) {
    return !load.getBoundaryCheck() && !load.getIsVolatile() &&
           isa<RankedTensorType>(load.getPtr().getType()) &&
           llvm::all_of(load->getOperands(), [&](Value operand) {
             return isCheap(operand, 0, /*shapes=*/true);
           });
  }

  /// Whether `dot`'s b, an 8-bit tile loaded in a loop with its rows (n)
  /// contiguous, is one the pipeliner copies as it is and restages K-major
  /// for wgmma (which reads 8-bit tiles K-major only): its k lines must
  /// fill a swizzle panel.
  static bool restageable(kiln::DotOp dot,
                          const kiln::TensorCoreFlavour &flavour) {
    auto load = dot.getB().getDefiningOp<kiln::LoadOp>();
    return flavour.elementBytes == 1 && load &&
           isa<RankedTensorType>(load.getPtr().getType()) &&
           isa<scf::ForOp>(load->getParentOp()) &&
           kiln::isSwizzlableLine(dot.getB().getType().getDimSize(0));
  }

  /// Operand tiles of tensor-core dots whose addresses run along their
  /// first dimension get a blocked layout with that dimension fastest (so
  /// that they load, and copy to shared memory, 16 bytes at a time).
  /// Operand tiles whose rows are wider than what a warp's lanes cover of a
  /// row in the preferred layout (made for the narrowest tile) get their
  /// own, where that covers less than a 128-byte line: tutorial 03 at
  /// BLOCK_SIZE_K = 32 has 64-byte rows of a, so a warp's load of b's
  /// 512-byte rows touched eight lines by halves, twice the L2 requests
  /// (L2-bound at 0.74 of Triton for 64x256x32).
  void forceOperandLayouts(func::FuncOp func,
                           kiln::AxisInfoAnalysis &axisInfo) {
    forced.clear();
    if (!mmaEncoding)
      return;
    kiln::TargetInfo target =
        kiln::TargetInfo::of(func->getParentOfType<ModuleOp>());
    bool wgmmaTarget = target.hasWgmma();
    func.walk([&](kiln::DotOp dot) {
      if (dot.getType().getRank() != 2)
        return;
      std::optional<kiln::TensorCoreFlavour> flavour = kiln::tensorCoreFlavour(
          dot.getA().getType().getElementType(),
          dot.getB().getType().getElementType(), dot.getType().getElementType(),
          dot.getInputPrecision(), target);
      for (Value operand : {dot.getA(), dot.getB()}) {
        auto load = operand.getDefiningOp<kiln::LoadOp>();
        auto type = dyn_cast<RankedTensorType>(operand.getType());
        if (!load && type) {
          forceComputedOperand(operand, type, axisInfo);
          continue;
        }
        if (!load || !type || !isa<RankedTensorType>(load.getPtr().getType()))
          continue;
        unsigned bits = type.getElementType().getIntOrFloatBitWidth();
        unsigned down =
            axisInfo.vectorWidthAlong(load.getPtr(), Value(), bits, 0);
        unsigned along =
            axisInfo.vectorWidthAlong(load.getPtr(), Value(), bits, 1);
        int64_t share = threadShare(type, numWarps);
        // A gather that runs down its columns but for wrapping (no vector
        // either way): lanes down them, as Triton's coalescing orders
        // them, rather than each lane's elements in as many rows (S-LoRA's
        // LoRA expand: 0.74 of Triton's speed, a warp's loads spread over
        // four times the sectors).
        if (down == 1 && along == 1 &&
            runsAlongButForWrapping(load.getPtr(), 0, axisInfo) &&
            !runsAlongButForWrapping(load.getPtr(), 1, axisInfo)) {
          forceLoad(load, columnsFirst(type, 1));
          continue;
        }
        if (down <= along) {
          // An 8-bit b to be restaged K-major (restageable): four rows a
          // thread, so that it writes 4-byte chunks down each column.
          if (operand == dot.getB() && wgmmaTarget && down == 1 && along >= 4 &&
              share >= 16 && type.getDimSize(0) % 4 == 0 && flavour &&
              restageable(dot, *flavour)) {
            unsigned vec =
                unsigned(std::min<int64_t>({int64_t(along), share / 4, 16}));
            forceLoad(load, blockedWith(&getContext(), type.getShape(),
                                        {4, vec}, numWarps));
            continue;
          }
          // Rows contiguous but not known aligned (a jagged tensor's rows
          // from a loaded offset) copy 4 bytes or less at a time: one
          // element a thread, lanes along the row, so a warp's copy covers
          // whole sectors. With the rank's several a thread, each copy
          // wrote a piece of every sector across four rows (FBGEMM's jagged
          // flash attention, its transposed k: 16 times Triton's excess
          // sectors).
          if (Attribute encoding =
                  unalignedRowLayout(load, type, along, axisInfo))
            forceLoad(load, encoding);
          else if (Attribute encoding = ownRowLayout(type, along, share))
            forceLoad(load, encoding);
          else if (Attribute own = preferred(type);
                   own != encodingOfRank.lookup(2))
            // A tile too small for the rank's layout (M = 16 rows under
            // 32 lanes and warps) has its own; its pointers, carried
            // through the loop, follow it rather than converting each
            // iteration (64-bit pointers through shared memory and two
            // barriers: a decode-shape GEMM's loop).
            forceLoad(load, own);
          continue;
        }
        forceLoad(load, columnsFirst(type, down));
      }
    });
  }

  /// Whether the offsets `v` of a gather run contiguous along `dim`
  /// but for wrapping: contiguous (axis info's contiguity) once each
  /// remainder by a uniform bound (`(n * rank + d) % 4096`, S-LoRA's LoRA
  /// weights) is looked through, as its runs wrap at most once. A load of
  /// such addresses allows no vector, but lanes along `dim` still read
  /// whole sectors.
  bool runsAlongButForWrapping(Value v, unsigned dim,
                               kiln::AxisInfoAnalysis &axisInfo,
                               unsigned depth = 0) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || depth > 8)
      return false;
    const kiln::AxisInfo &info = axisInfo.get(v);
    if (info.contiguity[dim] > 1)
      return true;
    Operation *def = v.getDefiningOp();
    if (!def)
      return false;
    auto uniformAlong = [&](Value x) {
      return axisInfo.get(x).constancy[dim] == type.getDimSize(dim);
    };
    if (isa<arith::RemSIOp, arith::RemUIOp>(def))
      return uniformAlong(def->getOperand(1)) &&
             runsAlongButForWrapping(def->getOperand(0), dim, axisInfo,
                                     depth + 1);
    if (isa<arith::AddIOp, kiln::AddPtrOp>(def)) {
      Value a = def->getOperand(0), b = def->getOperand(1);
      if (uniformAlong(a))
        return runsAlongButForWrapping(b, dim, axisInfo, depth + 1);
      if (uniformAlong(b))
        return runsAlongButForWrapping(a, dim, axisInfo, depth + 1);
      return false;
    }
    if (isa<arith::MulIOp>(def))
      for (unsigned i = 0; i < 2; ++i)
        if (axisInfo.get(def->getOperand(i)).constantValue == 1)
          return runsAlongButForWrapping(def->getOperand(1 - i), dim, axisInfo,
                                         depth + 1);
    if (isa<arith::ExtSIOp, arith::ExtUIOp, kiln::BroadcastOp>(def))
      return runsAlongButForWrapping(def->getOperand(0), dim, axisInfo,
                                     depth + 1);
    if (auto expand = dyn_cast<kiln::ExpandDimsOp>(def)) {
      unsigned axis = unsigned(expand.getAxis());
      return dim != axis && runsAlongButForWrapping(expand.getSrc(),
                                                    dim > axis ? dim - 1 : dim,
                                                    axisInfo, depth + 1);
    }
    return false;
  }

  /// An operand computed element-wise from one load of its shape (a weight
  /// converted, or shifted and scaled, before the dot): the load gets its
  /// own row layout where ownRowLayout would give it one as an operand, and
  /// the computation follows. An int8 weight beside fp16 tiles of 64-byte
  /// rows was otherwise copied 8 bytes at a time, through L1. An operand
  /// computed from loads (one or several) whose addresses all run down its
  /// columns gets, with them, a layout with that dimension fastest, as a
  /// loaded operand does: GLA's k scaled by its decays (FLA's chunk_h, k
  /// and gk contiguous along K, the dot's M) was read a 2- or 4-byte
  /// element at a time across 2 KB rows.
  void forceComputedOperand(Value operand, RankedTensorType type,
                            kiln::AxisInfoAnalysis &axisInfo) {
    SmallVector<kiln::LoadOp> found;
    SmallVector<Value> work{operand};
    llvm::DenseSet<Value> seen;
    while (!work.empty()) {
      Value value = work.pop_back_val();
      Operation *def = value.getDefiningOp();
      if (!def || !seen.insert(value).second)
        continue;
      if (auto load = dyn_cast<kiln::LoadOp>(def)) {
        if (!isa<RankedTensorType>(load.getPtr().getType()))
          return;
        found.push_back(load);
        continue;
      }
      // Through an `if` to what its branches yield (GGUF's Q6_K picks a
      // packed byte's low or high nibble by the sub-block).
      if (auto ifOp = dyn_cast<scf::IfOp>(def)) {
        unsigned i = cast<OpResult>(value).getResultNumber();
        work.push_back(ifOp.thenYield().getOperand(i));
        if (!ifOp.getElseRegion().empty())
          work.push_back(ifOp.elseYield().getOperand(i));
        continue;
      }
      if (!isElementwise(def) || def->getNumResults() != 1)
        continue;
      for (Value v : def->getOperands())
        if (auto t = dyn_cast<RankedTensorType>(v.getType());
            t && t.getShape() == type.getShape())
          work.push_back(v);
    }
    if (found.empty())
      return;
    // Per load: how wide a vector its addresses allow down the columns and
    // along the rows.
    SmallVector<std::pair<unsigned, unsigned>> widths;
    for (kiln::LoadOp load : found) {
      unsigned bits =
          cast<RankedTensorType>(load.getType()).getElementTypeBitWidth();
      widths.push_back(
          {axisInfo.vectorWidthAlong(load.getPtr(), Value(), bits, 0),
           axisInfo.vectorWidthAlong(load.getPtr(), Value(), bits, 1)});
    }
    // The loads have the operand's shape (the walk follows only that).
    int64_t share = threadShare(type, numWarps);
    if (llvm::all_of(widths, [](auto w) { return w.first > w.second; })) {
      unsigned vec = 1;
      for (auto [down, along] : widths)
        vec = std::max(vec, down);
      Attribute encoding = columnsFirst(type, vec);
      for (kiln::LoadOp load : found)
        forceLoad(load, encoding);
      force(operand, encoding);
      return;
    }
    // Otherwise one load along its rows decides, or several alike (one
    // element width, one vector width along the rows: Q6_K's low and high
    // bits, each packed in bytes) decide together; others do not.
    kiln::LoadOp load = found.front();
    auto loaded = cast<RankedTensorType>(load.getType());
    unsigned along = widths.front().second;
    for (auto [other, width] : llvm::zip_equal(found, widths))
      if (width != widths.front() ||
          cast<RankedTensorType>(other.getType()).getElementType() !=
              loaded.getElementType())
        return;
    Attribute encoding = found.size() == 1
                             ? runLayout(load, along, share, axisInfo)
                             : Attribute();
    if (!encoding)
      encoding = ownRowLayout(loaded, along, share, /*computed=*/true);
    if (encoding) {
      for (kiln::LoadOp each : found)
        forceLoad(each, encoding);
      force(operand, encoding);
    }
  }

  /// The layout of a row-contiguous tile whose pointers repeat down its
  /// columns in runs (a packed int4 weight, `(k // 8) * stride`: eight rows
  /// of k read one row of words): each thread holds whole runs (up to
  /// eight rows) of `along` columns, rows fastest. It then reads each word
  /// once, and what it computes from them is a chunk of a column, staged
  /// 16 bytes at a time with lines along k (kiln-pipeline-dots). Null
  /// where the pointers do not repeat.
  Attribute runLayout(kiln::LoadOp load, unsigned along, int64_t share,
                      kiln::AxisInfoAnalysis &axisInfo) {
    auto type = cast<RankedTensorType>(load.getType());
    int64_t run = std::gcd(
        axisInfo.loadedRuns(load.getPtr(), load.getMask(), load.getOther())[0],
        type.getDimSize(0));
    run = std::min<int64_t>(8, int64_t(llvm::bit_floor(uint64_t(run))));
    if (run < 2 || share < run)
      return {};
    unsigned vec =
        unsigned(std::min<int64_t>({int64_t(along), share / run, 4}));
    return blockedWith(&getContext(), type.getShape(),
                       {unsigned(run), std::max(1u, vec)}, numWarps, {0, 1});
  }

  /// The layout of a row-contiguous operand tile of `type` (`along`
  /// elements a vector) when the preferred one gives its threads narrower
  /// vectors (an fp8 tile beside a 16-bit one that is narrower), or covers
  /// less than a 128-byte line of its rows per warp where they are wider
  /// than that; else null. With `computed` (a tile an operand is computed
  /// from, read back into registers), also when the preferred layout gives
  /// its threads wider runs than one access takes: an fp32 tile beside
  /// 16-bit ones, each of a warp's 16-byte copies reading half of every
  /// sector it touches (Mamba-2's chunk scan). A tile the dot reads from
  /// its ring keeps such runs: its copies then need half the pointers (an
  /// fp16 v beside int8 q and k, SageAttention: 2% slower at 16 bytes a
  /// thread).
  Attribute ownRowLayout(RankedTensorType type, unsigned along, int64_t share,
                         bool computed = false) {
    auto preferredRows =
        dyn_cast_or_null<BlockedEncodingAttr>(encodingOfRank.lookup(2));
    unsigned bytes = type.getElementType().getIntOrFloatBitWidth() / 8;
    if (!preferredRows || bytes == 0 || along <= 1 ||
        preferredRows.getOrder().front() != 1)
      return {};
    int64_t covered = int64_t(preferredRows.getThreadsPerWarp()[1]) *
                      preferredRows.getSizePerThread()[1] * bytes;
    // A tile of fewer than 4 bytes a thread (8 x 32 halves at 8 warps)
    // takes 16-byte runs on fewer threads, the rest holding copies: cp.async
    // moves 4 bytes at least.
    int64_t most = share * bytes < 4 ? int64_t(16 / bytes) : share;
    unsigned vec = unsigned(std::min<int64_t>(along, most));
    bool narrower = preferredRows.getSizePerThread()[1] < vec;
    bool wider = computed && preferredRows.getSizePerThread()[1] > vec;
    if (!narrower && !wider &&
        (covered >= 128 || type.getDimSize(1) * bytes <= covered))
      return {};
    auto own = blockedWith(&getContext(), type.getShape(), {1, vec}, numWarps);
    return own == preferredRows ? Attribute() : Attribute(own);
  }

  /// For a load whose rows are contiguous but allow no vector (`along` is
  /// 1), the layout of one element a thread with lanes along the rows,
  /// where the rank's layout gives each thread several; else null.
  Attribute unalignedRowLayout(kiln::LoadOp load, RankedTensorType type,
                               unsigned along,
                               kiln::AxisInfoAnalysis &axisInfo) {
    auto preferredRows =
        dyn_cast_or_null<BlockedEncodingAttr>(encodingOfRank.lookup(2));
    if (along != 1 || !preferredRows || preferredRows.getOrder().front() != 1 ||
        preferredRows.getSizePerThread()[1] == 1 ||
        axisInfo.get(load.getPtr()).contiguity[1] <= 1)
      return {};
    return blockedWith(&getContext(), type.getShape(), {1, 1}, numWarps);
  }

  /// For a 2-D access whose addresses run down its columns and not along
  /// its rows (torchao's fp8 quantization writing a column-major output, a
  /// transposed tile read), the layout with the columns fastest, as many
  /// elements a thread as one vector access takes; else null.
  Attribute columnAccessLayout(Value ptr, RankedTensorType type,
                               kiln::AxisInfoAnalysis &axisInfo) {
    // A vector smaller than the threads (a column of scales) is left where
    // it is: its copies are not stored twice anyway.
    if (!type || type.getRank() != 2 || !isa<RankedTensorType>(ptr.getType()) ||
        type.getNumElements() < int64_t(numWarps * kThreadsPerWarp))
      return {};
    // An address repeated along the rows (`s_ptr + rows[:, None] +
    // cols[None, :] * 0`, a broadcast) is read once a run in any layout.
    const kiln::AxisInfo &info = axisInfo.get(ptr);
    if (info.contiguity[0] <= 1 || info.contiguity[1] != 1 ||
        info.constancy[1] != 1)
      return {};
    unsigned bits = type.getElementTypeBitWidth();
    return columnsFirst(type, axisInfo.vectorWidthAlong(ptr, Value(), bits, 0));
  }

  /// The 2-D layout with the columns fastest, `perThread` elements a
  /// thread down them (at least one, at most its share).
  BlockedEncodingAttr columnsFirst(RankedTensorType type, unsigned perThread) {
    unsigned vec = unsigned(std::min<int64_t>(std::max(1u, perThread),
                                              threadShare(type, numWarps)));
    return blockedWith(&getContext(), type.getShape(), {vec, 1}, numWarps,
                       {0, 1});
  }

  /// Whether `v` reaches a kiln.dot through element-wise ops and
  /// transpositions (a few deep).
  bool feedsDot(Value v, unsigned depth = 0) {
    for (Operation *user : v.getUsers()) {
      if (isa<kiln::DotOp>(user))
        return true;
      if (depth < 3 && user->getNumResults() == 1 &&
          (isa<kiln::TransOp>(user) || isElementwise(user)) &&
          feedsDot(user->getResult(0), depth + 1))
        return true;
    }
    return false;
  }

  /// Loads and stores that run down their columns get such a layout
  /// (loads not already given one for a dot), as Triton's coalescing does:
  /// in the rows' layout each thread's elements are a column's stride
  /// apart and a warp's accesses scatter over as many rows.
  void forceColumnAccesses(func::FuncOp func,
                           kiln::AxisInfoAnalysis &axisInfo) {
    func.walk([&](Operation *op) {
      if (auto load = dyn_cast<kiln::LoadOp>(op)) {
        // A dot's operand tiles are forceOperandLayouts' to decide. A
        // column [N, 1] is laid out as its rank is where that runs down
        // the columns too (scattermoe's GEMV: x beside its weight tiles).
        if (forced.count(load.getResult()) || feedsDot(load.getResult()) ||
            (columnsFirstRank2() && isColumnVector(load.getType())))
          return;
        if (Attribute column = columnAccessLayout(
                load.getPtr(), dyn_cast<RankedTensorType>(load.getType()),
                axisInfo))
          forceLoad(load, column);
      } else if (auto store = dyn_cast<kiln::StoreOp>(op)) {
        if (Attribute column = columnAccessLayout(
                store.getPtr(),
                dyn_cast<RankedTensorType>(store.getValue().getType()),
                axisInfo))
          columnStores[op] = column;
      }
    });
  }

  /// Whether the 2-D default layout runs down the columns (its anchor
  /// does, choosePreferred).
  bool columnsFirstRank2() const {
    auto blocked =
        dyn_cast_or_null<BlockedEncodingAttr>(encodingOfRank.lookup(2));
    return blocked && blocked.getOrder()[0] == 0;
  }

  static bool isColumnVector(Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && tensor.getRank() == 2 && tensor.getDimSize(1) == 1;
  }

  void forceLoad(kiln::LoadOp load, Attribute encoding) {
    for (Value v : load->getOperands())
      force(v, encoding);
    force(load.getResult(), encoding);
  }

  void force(Value v, Attribute encoding) {
    if (!isa<RankedTensorType>(v.getType()) ||
        !forced.try_emplace(v, encoding).second)
      return;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      if (loop && arg.getArgNumber() > 0) {
        unsigned i = arg.getArgNumber() - 1;
        force(loop.getInitArgs()[i], encoding);
        force(loop.getBody()->getTerminator()->getOperand(i), encoding);
      }
      return;
    }
    Operation *def = v.getDefiningOp();
    if (def && (isa<kiln::BroadcastOp>(def) ||
                (isElementwise(def) && def->getNumResults() == 1)))
      for (Value operand : def->getOperands())
        force(operand, encoding);
    // make_range, splat, constants and expand_dims read `forced` when they
    // are laid out.
  }

  /// The layout a loop-carried value keeps across its loop: that of the
  /// value the body yields for it, where a tensor-core dot decides it (the
  /// accumulator, a reduction of it, elementwise math over those: the
  /// running max and sum of an online softmax), or in a kernel without
  /// them, a load. Carried in any other layout,
  /// such a value would be converted twice per iteration. Found by forward
  /// propagation over the loop bodies to a fixed point; a value's layout is
  /// set once, so it terminates.
  void inferCarriedLayouts(func::FuncOp func) {
    carried.clear();
    llvm::DenseMap<Value, Attribute> layout;
    auto follow = [&](Operation *op) -> Attribute {
      if (auto dot = dyn_cast<kiln::DotOp>(op))
        return dot.getType().getRank() == 2 ? accumulatorEncoding(dot)
                                            : Attribute();
      // Without tensor-core dots, loads decide: a decode kernel's output row,
      // `acc += tl.sum(p[:, None] * v, 0)`, lives in a slice of v's layout.
      if (auto load = dyn_cast<kiln::LoadOp>(op); load && !mmaEncoding) {
        auto type = dyn_cast<RankedTensorType>(load.getType());
        if (!type)
          return {};
        Attribute f = forced.lookup(load.getResult());
        return f ? f : preferred(type);
      }
      if (auto reduce = dyn_cast<kiln::ReduceOp>(op)) {
        Attribute e = layout.lookup(reduce->getOperand(0));
        if (Attribute copy = e ? scannedCopy(reduce, e) : Attribute())
          e = copy;
        return e && reduce->getNumResults() >= 1 &&
                       isa<RankedTensorType>(reduce->getResult(0).getType())
                   ? SliceEncodingAttr::get(&getContext(), reduce.getAxis(), e)
                   : Attribute();
      }
      if (auto expand = dyn_cast<kiln::ExpandDimsOp>(op)) {
        auto slice =
            dyn_cast_or_null<SliceEncodingAttr>(layout.lookup(expand.getSrc()));
        return slice && slice.getDim() == expand.getAxis() ? slice.getParent()
                                                           : Attribute();
      }
      if (isa<kiln::BroadcastOp>(op))
        return layout.lookup(op->getOperand(0));
      // As the propagation below decides: the first operand that is not
      // cheap to recompute.
      if (isElementwise(op) && op->getNumResults() == 1)
        for (Value operand : op->getOperands())
          if (isa<RankedTensorType>(operand.getType()) &&
              !isCheap(operand, 0, /*shapes=*/true))
            if (Attribute e = layout.lookup(operand))
              return e;
      return {};
    };
    bool changed = true;
    for (unsigned round = 0; changed && round < 64; ++round) {
      changed = false;
      auto set = [&](Value v, Attribute e) {
        if (e && layout.try_emplace(v, e).second)
          changed = true;
      };
      func.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (auto forOp = dyn_cast<scf::ForOp>(op)) {
          Operation *yield = forOp.getBody()->getTerminator();
          for (unsigned i = 0; i < forOp.getNumRegionIterArgs(); ++i) {
            Attribute e = layout.lookup(yield->getOperand(i));
            set(forOp.getRegionIterArgs()[i], e);
            set(forOp.getResult(i), e);
          }
          return;
        }
        // An scf.if's results take what its branches yield, as propagate
        // lays them out (the then branch first): vLLM's LoRA expand
        // accumulates its dot under run-time `if`s inside the loop, and its
        // accumulator was carried in a blocked layout, converted to and
        // from the mma layout through shared memory.
        if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
          for (unsigned i = 0; i < ifOp.getNumResults(); ++i) {
            Attribute e = layout.lookup(ifOp.thenYield().getOperand(i));
            if (!e && !ifOp.getElseRegion().empty())
              e = layout.lookup(ifOp.elseYield().getOperand(i));
            set(ifOp.getResult(i), e);
          }
          return;
        }
        if (op->getNumResults() == 1)
          set(op->getResult(0), follow(op));
        else if (isa<kiln::ReduceOp>(op))
          for (Value result : op->getResults())
            set(result, follow(op));
      });
    }
    func.walk([&](scf::ForOp forOp) {
      for (unsigned i = 0; i < forOp.getNumRegionIterArgs(); ++i)
        if (Attribute e = layout.lookup(forOp.getRegionIterArgs()[i]))
          carried[{forOp, i}] = e;
    });
  }

  LogicalResult propagate(func::FuncOp func) {
    inferCarriedLayouts(func);
    LogicalResult status = success();
    func.walk<WalkOrder::PreOrder>([&](Operation *op) -> WalkResult {
      // Scalar regions (combine functions) have nothing to lay out.
      if (isa<kiln::ReduceOp, kiln::ScanOp>(op)) {
        visitReduceOrScan(op);
        return WalkResult::skip();
      }
      if (auto forOp = dyn_cast<scf::ForOp>(op)) {
        for (unsigned i = 0; i < forOp.getNumRegionIterArgs(); ++i)
          if (Attribute e = carried.lookup({op, i}))
            requireOperand(op, forOp.getNumControlOperands() + i, e);
        for (auto [init, arg, result] :
             llvm::zip_equal(forOp.getInitArgs(), forOp.getRegionIterArgs(),
                             forOp.getResults()))
          if (Attribute e = encodingOf(init)) {
            arg.setType(init.getType());
            result.setType(init.getType());
          }
        return WalkResult::advance();
      }
      if (auto whileOp = dyn_cast<scf::WhileOp>(op)) {
        for (auto [init, arg] :
             llvm::zip_equal(whileOp.getInits(), whileOp.getBeforeArguments()))
          arg.setType(init.getType());
        return WalkResult::advance();
      }
      if (isa<scf::IfOp>(op))
        return WalkResult::advance(); // results decided at the yields
      if (auto yield = dyn_cast<scf::YieldOp>(op)) {
        visitYield(yield);
        return WalkResult::advance();
      }
      if (auto condition = dyn_cast<scf::ConditionOp>(op)) {
        auto whileOp = cast<scf::WhileOp>(op->getParentOp());
        for (auto [i, v] : llvm::enumerate(condition.getArgs())) {
          whileOp.getAfterArguments()[i].setType(v.getType());
          whileOp.getResult(i).setType(v.getType());
        }
        return WalkResult::advance();
      }
      if (failed(visit(op)))
        status = failure();
      return WalkResult::advance();
    });
    return status;
  }

  void visitYield(scf::YieldOp yield) {
    Operation *parent = yield->getParentOp();
    if (auto ifOp = dyn_cast<scf::IfOp>(parent)) {
      bool isThen = yield->getParentRegion() == &ifOp.getThenRegion();
      for (auto [i, v] : llvm::enumerate(yield.getOperands())) {
        if (!isa<RankedTensorType>(v.getType()))
          continue;
        if (isThen)
          ifOp.getResult(i).setType(v.getType());
        else
          requireOperand(yield, unsigned(i), encodingOf(ifOp.getResult(i)));
      }
      return;
    }
    // Loops: back to the carried layout.
    ValueRange targets;
    if (auto forOp = dyn_cast<scf::ForOp>(parent))
      targets = forOp.getRegionIterArgs();
    else if (auto whileOp = dyn_cast<scf::WhileOp>(parent))
      targets = whileOp.getBeforeArguments();
    for (auto [i, target] : llvm::enumerate(targets))
      if (Attribute e = encodingOf(target))
        requireOperand(yield, unsigned(i), e);
  }

  /// The layout `scan` reads its operand in when that operand's layout `e`
  /// does not serve it, else null. A scan along the mma layout's M with
  /// warps along it (wgmma's [n, 1]) would cross lanes, a register and warps
  /// in an order the scan does not walk: it scans a coalesced copy instead.
  /// So for a slice of one (the scan of a row sum of a dot's result), along
  /// its parent's axis.
  Attribute scanCopyLayout(kiln::ScanOp scan, Attribute e) {
    Attribute parent = e;
    int64_t axis = scan.getAxis();
    while (auto slice = dyn_cast_or_null<SliceEncodingAttr>(parent)) {
      if (axis >= int64_t(slice.getDim()))
        ++axis;
      parent = slice.getParent();
    }
    auto mma = dyn_cast_or_null<kiln::gpu::MmaEncodingAttr>(parent);
    if (!mma || mma.getWarpsPerCTA()[axis] == 1)
      return {};
    return preferred(cast<RankedTensorType>(scan.getOperand(0).getType()));
  }

  /// Warps along `axis` of a blocked or mma layout (0 for others).
  static unsigned warpsAlong(Attribute e, int64_t axis) {
    if (auto blocked = dyn_cast_or_null<BlockedEncodingAttr>(e))
      return blocked.getWarpsPerCTA()[axis];
    if (auto mma = dyn_cast_or_null<kiln::gpu::MmaEncodingAttr>(e))
      return mma.getWarpsPerCTA()[axis];
    return 0;
  }

  /// The layout a scan copies `reduce`'s operand (in `e`) to, where fewer
  /// warps share the reduced axis there; else null. Such a tile is reduced
  /// in the copy (Mamba-2's ddA_cumsum sums the rows of the tile it scans:
  /// in the accumulator layout the sum crossed warps through shared memory,
  /// and the running sum went back to the scanned tile's layout through it
  /// again, as upstream's layouts avoid).
  Attribute scannedCopy(kiln::ReduceOp reduce, Attribute e) {
    if (reduce->getNumOperands() != 1)
      return {};
    for (Operation *user : reduce->getOperand(0).getUsers())
      if (auto scan = dyn_cast<kiln::ScanOp>(user))
        if (Attribute copy = scanCopyLayout(scan, e);
            copy && warpsAlong(copy, reduce.getAxis()) <
                        warpsAlong(e, reduce.getAxis()))
          return copy;
    return {};
  }

  void visitReduceOrScan(Operation *op) {
    // All operands share the first one's layout.
    Attribute e = encodingOf(op->getOperand(0));
    unsigned first = 1;
    if (auto scan = dyn_cast<kiln::ScanOp>(op))
      if (Attribute copy = scanCopyLayout(scan, e)) {
        e = copy;
        first = 0;
      }
    if (auto reduce = dyn_cast<kiln::ReduceOp>(op))
      if (Attribute copy = scannedCopy(reduce, e)) {
        e = copy;
        first = 0;
      }
    for (unsigned i = first; i < op->getNumOperands(); ++i)
      requireOperand(op, i, e);
    auto srcType = cast<RankedTensorType>(op->getOperand(0).getType());
    for (Value result : op->getResults()) {
      if (!isa<RankedTensorType>(result.getType()))
        continue; // a full reduction gives scalars
      if (auto reduce = dyn_cast<kiln::ReduceOp>(op))
        setResult(result,
                  SliceEncodingAttr::get(&getContext(), reduce.getAxis(), e));
      else
        setResult(result, e);
    }
    (void)srcType;
  }

  LogicalResult visit(Operation *op) {
    auto tensorResult = [&]() -> RankedTensorType {
      return op->getNumResults() == 1
                 ? dyn_cast<RankedTensorType>(op->getResult(0).getType())
                 : RankedTensorType();
    };
    if (isa<kiln::MakeRangeOp, kiln::SplatOp, arith::ConstantOp>(op)) {
      if (RankedTensorType t = tensorResult()) {
        Attribute f = forced.lookup(op->getResult(0));
        setResult(op->getResult(0), f ? f : preferred(t));
      }
      return success();
    }
    if (auto expand = dyn_cast<kiln::ExpandDimsOp>(op)) {
      Attribute src = encodingOf(expand.getSrc());
      auto slice = dyn_cast_or_null<SliceEncodingAttr>(src);
      Attribute parent = forced.lookup(expand.getResult());
      if (parent)
        ;
      else if (slice && slice.getDim() == expand.getAxis())
        parent = slice.getParent();
      else
        parent = preferred(expand.getType());
      requireOperand(
          op, 0,
          SliceEncodingAttr::get(&getContext(), expand.getAxis(), parent));
      setResult(expand.getResult(), parent);
      return success();
    }
    if (auto broadcast = dyn_cast<kiln::BroadcastOp>(op)) {
      setResult(broadcast.getResult(), encodingOf(broadcast.getSrc()));
      return success();
    }
    if (auto trans = dyn_cast<kiln::TransOp>(op)) {
      Attribute src = encodingOf(trans.getSrc());
      Attribute result = permuted(src, trans.getOrder());
      if (!result) {
        Attribute blocked = preferred(trans.getSrc().getType());
        if (!permuted(blocked, trans.getOrder())) // an mma layout
          blocked = defaultBlocked(
              &getContext(), trans.getSrc().getType().getShape(), 1, numWarps);
        requireOperand(op, 0, blocked);
        result = permuted(blocked, trans.getOrder());
      }
      setResult(trans.getResult(), result);
      return success();
    }
    if (auto extract = dyn_cast<kiln::ExtractOp>(op)) {
      // A piece keeps its operand's layout where that layout holds the
      // piece's elements in the threads that hold the piece at offset 0
      // (then the lowering renames registers: an accumulator's halves).
      // Otherwise both take a blocked layout that tiles the piece.
      Attribute src = encodingOf(extract.getSrc());
      Attribute layout =
          src && kiln::keepsPieces(src, extract.getSrc().getType().getShape(),
                                   extract.getType().getShape())
              ? src
              : Attribute();
      if (!layout) {
        layout = defaultBlocked(&getContext(), extract.getType().getShape(), 1,
                                numWarps);
        requireOperand(op, 0, layout);
      }
      setResult(extract.getResult(), layout);
      return success();
    }
    if (auto dot = dyn_cast<kiln::DotOp>(op)) {
      // The result and accumulator in the blocked layout of their rank; the
      // operands stay where they are (the lowering stages them in shared
      // memory, whatever their layout).
      Attribute parent = preferred(dot.getType());
      if (mmaEncoding && dot.getType().getRank() == 2)
        parent = accumulatorEncoding(dot);
      requireOperand(op, 2, parent);
      setResult(dot.getD(), parent);
      return success();
    }
    if (auto store = dyn_cast<kiln::StoreOp>(op)) {
      // A value computed in another layout (a reduction's slice, say) is
      // stored where it is: its pointers are cheap to recompute, the value
      // is not.
      // Except a tile whose threads run down its columns while the
      // addresses run along its rows (a transposed tile): storing it there
      // would scatter every warp's stores, so it is converted (through
      // shared memory) to the coalesced layout instead.
      Value value = store.getValue();
      Attribute e = encodingOf(value);
      auto blocked = dyn_cast_or_null<BlockedEncodingAttr>(e);
      // A store down its columns from a layout whose threads do not run
      // down them is converted to its own (columnAccessLayout).
      if (Attribute column = columnStores.lookup(op);
          column && !(blocked && blocked.getOrder().front() == 0)) {
        requireAllOperands(op, column);
        return success();
      }
      bool scattered =
          blocked && rowContiguousStores.contains(op) &&
          blocked.getOrder().front() + 1 != blocked.getOrder().size();
      // And when the pointers cannot be recomputed either (they come
      // through expand_dims and broadcast), the value moves: it is never
      // wider than its 8-byte pointer, which would move otherwise (a
      // tensor-core accumulator stored through 2-D pointers; a row of a
      // tile's column sums stored through pointers carried by the loop,
      // Mamba-2's ddA_cumsum backward).
      bool pointersMove =
          !isCheap(store.getPtr()) &&
          (isa_and_nonnull<kiln::gpu::MmaEncodingAttr>(e) ||
           (isa_and_nonnull<SliceEncodingAttr>(e) &&
            cast<RankedTensorType>(value.getType()).getRank() == 1));
      // A store kiln-tma-stores may make a TMA store goes through shared
      // memory anyway, written from the value's layout.
      bool tma = store.getTensorMap() && tmaStores;
      // A store whose addresses let one instruction take fewer elements
      // than the value's layout gives each thread (a scatter into a paged
      // KV cache, a pointer not known aligned) would write a piece of
      // every sector it touches per warp store, and the next piece with the
      // next store: it gets a layout of that many a thread, so a warp's
      // lanes write neighbouring elements (vLLM's reshape_and_cache from a
      // 16-byte-a-thread load: 0.42x Triton before).
      if (!tma && !scattered && !pointersMove)
        if (Attribute narrow = narrowStoreLayout(store, blocked)) {
          requireAllOperands(op, narrow);
          return success();
        }
      if (e && !isCheap(value) && (tma || (!scattered && !pointersMove))) {
        requireAllOperands(op, e);
        return success();
      }
      // A tensor-core result moves anyway. Where the preferred layout (made
      // for the narrowest tile, fp8 operands say) gives each thread more
      // than 16 bytes of the stored type along its rows, each of a warp's
      // 16-byte stores would write half of every sector it touches: the
      // store then gets a layout of 16 bytes per thread, its pointers and
      // mask recomputed in it. (An fp8 matmul's fp16 C, 256x128x128 w8:
      // 0.69x Triton at K = 128 before, 0.99x after.)
      if (pointersMove)
        if (Attribute own = ownStoreLayout(store)) {
          requireAllOperands(op, own);
          return success();
        }
    }
    // A reduction kiln-tma-stores may make a TMA reduction goes through
    // shared memory, written from the value's layout, as such a store.
    if (auto rmw = dyn_cast<kiln::AtomicRMWOp>(op);
        rmw && rmw.getTensorMap() && tmaStores) {
      Attribute e = encodingOf(rmw.getVal());
      if (e && !isCheap(rmw.getVal())) {
        requireAllOperands(op, e);
        setResult(rmw.getResult(), e);
        return success();
      }
    }
    // A tensor-core result added atomically moves anyway: to a layout
    // whose atomics fill the sectors they touch (ownAtomicLayout).
    if (auto rmw = dyn_cast<kiln::AtomicRMWOp>(op);
        rmw &&
        isa_and_nonnull<kiln::gpu::MmaEncodingAttr>(encodingOf(rmw.getVal())))
      if (Attribute own = ownAtomicLayout(rmw)) {
        requireAllOperands(op, own);
        setResult(rmw.getResult(), own);
        return success();
      }
    // A join keeps its operands where they are, side by side in each
    // thread's registers (the new dimension innermost), and a reshape that
    // merges a dimension its threads hold whole into the one before keeps
    // its operand's threads: both rename registers (an int4 weight's
    // halves joined, transposed and merged into rows, HQQ's; they went
    // through shared memory three times an iteration).
    if (auto join = dyn_cast<kiln::JoinOp>(op))
      if (Attribute joined = joinedLayout(encodingOf(join.getLhs()))) {
        requireOperand(op, 1, encodingOf(join.getLhs()));
        setResult(join.getResult(), joined);
        return success();
      }
    if (auto split = dyn_cast<kiln::SplitOp>(op))
      if (Attribute halves = splitLayout(encodingOf(split.getSrc()))) {
        setResult(split.getLhs(), halves);
        setResult(split.getRhs(), halves);
        return success();
      }
    // A flattening free to reorder (tl.sum(x) of a whole tile) keeps each
    // thread's elements: the result's registers are the operand's, in
    // their order (a column-major product of FLA's states went through
    // shared memory to be summed).
    if (auto reshape = dyn_cast<kiln::ReshapeOp>(op))
      if (reshape.flattensForReduction())
        if (Attribute flat = reorderedFlatLayout(reshape.getSrc())) {
          setResult(reshape.getResult(), flat);
          return success();
        }
    if (auto reshape = dyn_cast<kiln::ReshapeOp>(op))
      if (Attribute reshaped =
              reshapedLayout(encodingOf(reshape.getSrc()),
                             reshape.getSrc().getType().getShape(),
                             reshape.getType().getShape())) {
        setResult(reshape.getResult(), reshaped);
        return success();
      }
    if (auto reshape = dyn_cast<kiln::ReshapeOp>(op))
      if (Attribute relaid = relaidReshapeLayout(reshape)) {
        setResult(reshape.getResult(), relaid);
        return success();
      }
    // A gather goes through shared memory whatever its operands' layouts:
    // each keeps its own, and the result takes the index's.
    if (auto gather = dyn_cast<kiln::GatherOp>(op)) {
      Attribute src = encodingOf(gather.getSrc());
      Attribute index = encodingOf(gather.getIndex());
      if (!index)
        index = preferred(gather.getIndex().getType());
      requireOperand(op, 0, src ? src : preferred(gather.getSrc().getType()));
      requireOperand(op, 1, index);
      setResult(gather.getResult(), index);
      return success();
    }
    // A histogram counts from wherever its input is (the mask beside it)
    // into shared memory, read back in the result's preferred layout.
    if (auto histogram = dyn_cast<kiln::HistogramOp>(op)) {
      Attribute input = encodingOf(histogram.getInput());
      if (!input)
        input = preferred(histogram.getInput().getType());
      requireOperand(op, 0, input);
      if (histogram.getMask())
        requireOperand(op, 1, input);
      setResult(histogram.getResult(),
                preferred(histogram.getResult().getType()));
      return success();
    }
    if (isa<kiln::LoadOp, kiln::StoreOp, kiln::AtomicRMWOp, kiln::AtomicCASOp,
            kiln::ReshapeOp, kiln::JoinOp, kiln::SplitOp, kiln::CatOp>(op) ||
        !isElementwise(op)) {
      // Memory ops use the coalesced preferred layout (or the one decided
      // backwards for a column operand tile); ops that reorganize elements
      // start from it too.
      Attribute f =
          isa<kiln::LoadOp>(op) ? forced.lookup(op->getResult(0)) : Attribute();
      for (OpOperand &operand : op->getOpOperands())
        if (auto t = dyn_cast<RankedTensorType>(operand.get().getType()))
          requireOperand(op, operand.getOperandNumber(), f ? f : preferred(t));
      for (Value result : op->getResults())
        if (auto t = dyn_cast<RankedTensorType>(result.getType()))
          setResult(result, f ? f : preferred(t));
      return success();
    }
    // Elementwise: the layout of the first operand that is not cheap to
    // recompute, else the preferred one. In a loop that holds a dot, an
    // operand in the dot's accumulator layout comes first: the iteration's
    // softmax then stays where the dot left it, instead of converting its
    // result out (NSA's attention, whose mask comes from a run-time `if`).
    RankedTensorType resultType = tensorResult();
    Attribute chosen = op->getNumResults() == 1
                           ? forced.lookup(op->getResult(0))
                           : Attribute();
    // Of several such layouts (p @ v's beside the scores' when the two
    // differ), that of an operand of the result's shape (the accumulator,
    // not a row statistic broadcast into it).
    // After the loop too, an accumulator of the result's shape keeps its
    // layout (SGLang's and vLLM's scaled GEMM: `scale_b.T * acc` had taken
    // the transposed vector's layout, and the accumulator moved through
    // shared memory there and back for the store).
    if (!chosen && mmaEncoding)
      for (bool sameShape : {true, false}) {
        if (!sameShape && !inLoopWithDot(op))
          break;
        for (Value operand : op->getOperands())
          if (isAccumulatorEncoding(encodingOf(operand)) &&
              (!sameShape ||
               (resultType &&
                cast<RankedTensorType>(operand.getType()).getShape() ==
                    resultType.getShape())) &&
              !isCheap(operand, 0, /*shapes=*/true)) {
            chosen = encodingOf(operand);
            break;
          }
        if (chosen)
          break;
      }
    for (Value operand : chosen ? ValueRange{} : op->getOperands())
      if (Attribute e = encodingOf(operand);
          e && !isCheap(operand, 0, /*shapes=*/true)) {
        chosen = e;
        break;
      }
    if (!chosen) {
      for (Value operand : op->getOperands())
        if (Attribute e = encodingOf(operand)) {
          chosen = e;
          break;
        }
    }
    if (!chosen && resultType)
      chosen = preferred(resultType);
    if (!chosen)
      return success(); // scalars only
    requireAllOperands(op, chosen);
    for (Value result : op->getResults())
      setResult(result, chosen);
    return success();
  }

  //===--------------------------------------------------------------------===//
  // 3. Rematerialization
  //===--------------------------------------------------------------------===//

  /// The layout in which rematerialize recomputes the operands of `def` for
  /// its result in `encoding`; null where it converts the result instead.
  Attribute recomputedOperandLayout(Operation *def, Attribute encoding) {
    // expand_dims reads the slice of the layout it expands into.
    if (auto expand = dyn_cast<kiln::ExpandDimsOp>(def))
      return SliceEncodingAttr::get(&getContext(), expand.getAxis(), encoding);
    // A reshape reads the layout that keeps each element in its thread
    // (AWQ's dequantizer: its shifts, an [8] broadcast to [1024, 8] and
    // reshaped to [32, 256], had taken 256 registers a thread and spilled);
    // where there is none, the reshape stays and its result is converted.
    if (auto reshape = dyn_cast<kiln::ReshapeOp>(def)) {
      auto distributed = dyn_cast<kiln::gpu::DistributedEncodingAttr>(encoding);
      auto type = reshape.getType();
      std::optional<kiln::layout::LinearLayout> layout =
          distributed ? distributed.toLinearLayout(type.getShape())
                      : std::nullopt;
      return layout
                 ? keepingThreadsLayout(*layout, type.getShape(),
                                        reshape.getSrc().getType().getShape())
                 : Attribute();
    }
    // A transpose (a square one passes for elementwise) reads the layout its
    // permutation takes to `encoding`; where no blocked layout does (an mma
    // accumulator's), the transpose stays and its result is converted.
    if (auto trans = dyn_cast<kiln::TransOp>(def)) {
      SmallVector<int32_t> inverse(trans.getOrder().size());
      for (auto [i, d] : llvm::enumerate(trans.getOrder()))
        inverse[d] = int32_t(i);
      return permuted(encoding, inverse);
    }
    return encoding;
  }

  /// `v` recomputed in `encoding` before `before` (memoized per pair).
  Value
  rematerialize(Value v, Attribute encoding, Operation *before,
                llvm::DenseMap<std::pair<Value, Attribute>, Value> &done) {
    if (encodingOf(v) == encoding)
      return v;
    auto key = std::make_pair(v, encoding);
    if (Value known = done.lookup(key))
      return known;
    // `v` itself converted at `b`'s insertion point, where nothing is
    // recomputed.
    auto convertedAt = [&](OpBuilder &b) -> Value {
      Value converted =
          kiln::gpu::ConvertLayoutOp::create(
              b, v.getLoc(), withEncoding(v.getType(), encoding), v)
              .getResult();
      done[key] = converted;
      return converted;
    };
    Operation *def = v.getDefiningOp();
    // A block argument (a loop's carried value) has nothing to recompute:
    // it is converted where its block begins.
    if (!def) {
      auto b = OpBuilder::atBlockBegin(cast<BlockArgument>(v).getOwner());
      return convertedAt(b);
    }
    if (auto convert = dyn_cast<kiln::gpu::ConvertLayoutOp>(def))
      return rematerialize(convert.getSrc(), encoding, before, done);
    OpBuilder b(before);
    // Clone next to the original, so that it dominates every later use.
    b.setInsertionPointAfter(def);
    IRMapping mapping;
    Attribute operandEncoding = recomputedOperandLayout(def, encoding);
    if (!operandEncoding)
      return convertedAt(b);
    for (Value operand : def->getOperands())
      if (isa<RankedTensorType>(operand.getType()))
        mapping.map(operand,
                    rematerialize(operand, operandEncoding, def, done));
    Operation *clone = b.clone(*def, mapping);
    Value result = clone->getResult(0);
    result.setType(withEncoding(result.getType(), encoding));
    if (auto constant = dyn_cast<arith::ConstantOp>(clone))
      if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
        constant.setValueAttr(
            dense.reshape(cast<ShapedType>(result.getType())));
    done[key] = result;
    return result;
  }

  /// Conversions of values defined outside a loop, moved out of it: a
  /// decode kernel's query, loaded once and broadcast against every block
  /// of keys, was converted in every iteration, and so was Mamba-2's chunk
  /// scan's per-row vector beside its dot.
  void hoistInvariantConversions(func::FuncOp func) {
    SmallVector<kiln::gpu::ConvertLayoutOp> converts;
    func.walk([&](kiln::gpu::ConvertLayoutOp c) { converts.push_back(c); });
    for (kiln::gpu::ConvertLayoutOp convert : converts) {
      // Operands of dots stay where the staging of their tiles expects them.
      if (llvm::any_of(convert->getUsers(),
                       [](Operation *user) { return isa<kiln::DotOp>(user); }))
        continue;
      while (auto loop = dyn_cast<scf::ForOp>(convert->getParentOp())) {
        if (!loop.isDefinedOutsideOfLoop(convert.getSrc()))
          break;
        convert->moveBefore(loop);
      }
    }
  }

  /// The loop `op` sits in directly, or under one `if` of (LightX2V's
  /// sparse attention: `if kbid:` around a block's work); null otherwise.
  static scf::ForOp loopThroughIf(Operation *op) {
    Operation *parent = op->getParentOp();
    if (isa<scf::IfOp>(parent))
      parent = parent->getParentOp();
    return dyn_cast<scf::ForOp>(parent);
  }

  /// Whether `op`'s block holds a dot.
  static bool besideDot(Operation *op) {
    return llvm::any_of(op->getBlock()->getOperations(),
                        [](Operation &o) { return isa<kiln::DotOp>(o); });
  }

  /// Whether `op` is in the body of a loop that holds a kiln.dot.
  static bool inLoopWithDot(Operation *op) {
    return isa<scf::ForOp>(op->getParentOp()) && besideDot(op);
  }

  /// Whether `v` is an expand_dims/broadcast of a tensor with fewer
  /// elements (a per-row or per-column vector, `a_s[:, None]`): converting
  /// that smaller tensor and broadcasting it again in the target layout
  /// moves less than converting `v`.
  static bool isBroadcastOfSmaller(Value v) {
    Operation *def = v.getDefiningOp();
    if (!isa_and_nonnull<kiln::ExpandDimsOp, kiln::BroadcastOp>(def))
      return false;
    Value leaf = v;
    while (Operation *d = leaf.getDefiningOp()) {
      if (!isa<kiln::ExpandDimsOp, kiln::BroadcastOp>(d))
        break;
      leaf = d->getOperand(0);
    }
    auto big = cast<RankedTensorType>(v.getType());
    auto small = dyn_cast<RankedTensorType>(leaf.getType());
    return small && small.getNumElements() < big.getNumElements();
  }

  /// `v`, an expand_dims/broadcast chain, rebuilt in `encoding` over its
  /// leaf converted (or rematerialized, when cheap: index math, or a small
  /// load, isCheapLoad) to the matching slice. A leaf load and conversion
  /// left unused go into `dead`.
  Value rebroadcast(Value v, Attribute encoding,
                    llvm::DenseMap<std::pair<Value, Attribute>, Value> &done,
                    llvm::SetVector<Operation *> &dead) {
    if (encodingOf(v) == encoding)
      return v;
    auto key = std::make_pair(v, encoding);
    if (Value known = done.lookup(key))
      return known;
    Operation *def = v.getDefiningOp();
    Value result;
    if (isa_and_nonnull<kiln::ExpandDimsOp, kiln::BroadcastOp>(def)) {
      Attribute operandEncoding = encoding;
      if (auto expand = dyn_cast<kiln::ExpandDimsOp>(def))
        operandEncoding =
            SliceEncodingAttr::get(&getContext(), expand.getAxis(), encoding);
      IRMapping mapping;
      mapping.map(def->getOperand(0),
                  rebroadcast(def->getOperand(0), operandEncoding, done, dead));
      OpBuilder b(def);
      b.setInsertionPointAfter(def);
      Operation *clone = b.clone(*def, mapping);
      result = clone->getResult(0);
      result.setType(withEncoding(result.getType(), encoding));
    } else if (def && isCheap(v, 0, /*shapes=*/true)) {
      result = rematerialize(v, encoding, def, done);
    } else if (Value leaf = isa_and_nonnull<kiln::gpu::ConvertLayoutOp>(def)
                                ? def->getOperand(0)
                                : v;
               isCheapLoad(leaf, encoding) || isSmallLoadOutsideLoops(leaf)) {
      // Loaded (and computed) again in the wanted layout.
      result = rematerialize(leaf, encoding, leaf.getDefiningOp(), done);
      if (def != leaf.getDefiningOp())
        dead.insert(def);
      markLoadChain(leaf, dead);
    } else {
      // One conversion from where the leaf came from, not two in a row.
      Value source = v;
      if (auto convert = dyn_cast_or_null<kiln::gpu::ConvertLayoutOp>(def))
        source = convert.getSrc();
      if (Attribute compact = compactLayoutFor(source)) {
        Value spread =
            rematerialize(source, compact, source.getDefiningOp(), done);
        markLoadChain(source, dead);
        source = spread;
      }
      OpBuilder b(v.getContext());
      if (Operation *sourceDef = source.getDefiningOp())
        b.setInsertionPointAfter(sourceDef);
      else
        b.setInsertionPointToStart(cast<BlockArgument>(source).getOwner());
      result =
          source.getType() == withEncoding(v.getType(), encoding)
              ? source
              : kiln::gpu::ConvertLayoutOp::create(
                    b, v.getLoc(), withEncoding(v.getType(), encoding), source)
                    .getResult();
    }
    done[key] = result;
    return result;
  }

  /// Whether converting `from` to `to` goes through shared memory, between
  /// barriers: its threads' lanes and warps hold different elements, and no
  /// plan of shuffles within warps is cheaper (as the conversion's lowering
  /// decides).
  static bool movesThroughSharedMemory(const kiln::layout::LinearLayout &from,
                                       const kiln::layout::LinearLayout &to,
                                       int32_t elementBits) {
    bool threadsAgree = true;
    for (llvm::StringRef hw : {kiln::layout::kLane, kiln::layout::kWarp})
      for (int32_t i = 0; threadsAgree && i < to.getInDimSizeLog2(hw); ++i)
        threadsAgree = i < from.getInDimSizeLog2(hw) &&
                       from.getBasis(hw, i) == to.getBasis(hw, i);
    threadsAgree &= from.getInDimSizeLog2(kiln::layout::kLane) ==
                        to.getInDimSizeLog2(kiln::layout::kLane) &&
                    from.getInDimSizeLog2(kiln::layout::kWarp) ==
                        to.getInDimSizeLog2(kiln::layout::kWarp);
    return !threadsAgree &&
           !kiln::layout::cheaperWarpShuffle(from, to, elementBits);
  }

  /// The step of the pointers of `load`, a load in a loop that holds a dot,
  /// when the loop carries them and only `load` and that step read them: a
  /// uniform advance (kiln.addptr of a cheap offset) yielded in their place,
  /// the loop's result for them unused. Null otherwise.
  /// The load may sit under an `if` in that loop, beside the dots
  /// (LightX2V's sparse attention backward: lse and delta under `if kbid:`).
  kiln::AddPtrOp carriedPointerStep(kiln::LoadOp load) {
    auto pointers = dyn_cast<BlockArgument>(load.getPtr());
    scf::ForOp loop = loopThroughIf(load);
    if (!pointers || !loop || pointers.getOwner() != loop.getBody() ||
        pointers.getArgNumber() == 0 ||
        !isa<RankedTensorType>(pointers.getType()) || !besideDot(load) ||
        load.getBoundaryCheck() || load.getIsVolatile())
      return {};
    unsigned i = pointers.getArgNumber() - 1;
    auto step = loop.getBody()
                    ->getTerminator()
                    ->getOperand(i)
                    .getDefiningOp<kiln::AddPtrOp>();
    if (!step || step.getPtr() != pointers || !step->hasOneUse() ||
        !isCheap(step.getOffset(), 0, /*shapes=*/true) ||
        !pointers.hasNUses(2) || !loop.getResult(i).use_empty())
      return {};
    for (Value operand : {load.getMask(), load.getOther()})
      if (operand && isa<RankedTensorType>(operand.getType()) &&
          !isCheap(operand, 0, /*shapes=*/true))
        return {};
    return step;
  }

  /// Whether `v`, read once, is a load from carried pointers
  /// (carriedPointerStep) or cheap addresses, or element-wise math over
  /// such loads and cheap values: what retargetCarried can compute in
  /// another layout.
  bool isRetargetable(Value v, unsigned depth = 0) {
    Operation *def = v.getDefiningOp();
    if (!def || !v.hasOneUse() || depth > 8)
      return false;
    if (auto load = dyn_cast<kiln::LoadOp>(def))
      // Cheap addresses: a GPTQ kernel's scales at the iteration's group.
      return carriedPointerStep(load) ||
             (inLoopWithDot(load) && readsCheapAddresses(load));
    if (!isElementwise(def) || def->getNumResults() != 1 ||
        def->getBlock() != v.getParentBlock())
      return false;
    bool anyLoad = false;
    for (Value operand : def->getOperands()) {
      if (!isa<RankedTensorType>(operand.getType()) ||
          isCheap(operand, 0, /*shapes=*/true))
        continue;
      if (!isRetargetable(operand, depth + 1))
        return false;
      anyLoad = true;
    }
    return anyLoad;
  }

  /// A load of `v`'s elements already in `target`: isReloadable's copy of
  /// the load `v` (`reloads`), which retargetCarried reads rather than
  /// retyping `v` into a second copy (S-LoRA's int4 GEMM read its scales
  /// as `scales[None, :]` and in `zeros * scales`: two loads of the row,
  /// two rings, an extra cp.async an iteration).
  static Value reloadedIn(Value v, Attribute target, const ReloadMap &reloads) {
    Operation *def = v.getDefiningOp();
    return def ? reloads.lookup({def, target}) : Value();
  }

  /// Erases `op`, read by nothing now, and the entries of `reloads` it
  /// keys (which must not outlive it).
  static void eraseUnread(Operation *op, ReloadMap &reloads) {
    if (!op->use_empty())
      return;
    reloads.remove_if([&](auto &entry) { return entry.first.first == op; });
    op->erase();
  }

  /// Rewrites `v` (isRetargetable) in place to be computed in `target`:
  /// a load's carried pointers are converted once, before the loop, and
  /// advanced in `target`; cheap operands are rematerialized there.
  /// Where a copy of a load it reads is in `reloads`, it reads the copy.
  void retargetCarried(Value v, Attribute target,
                       llvm::DenseMap<std::pair<Value, Attribute>, Value> &done,
                       ReloadMap &reloads) {
    Operation *def = v.getDefiningOp();
    auto load = dyn_cast<kiln::LoadOp>(def);
    if (kiln::AddPtrOp step = load ? carriedPointerStep(load) : nullptr) {
      auto pointers = cast<BlockArgument>(load.getPtr());
      auto loop = cast<scf::ForOp>(pointers.getOwner()->getParentOp());
      unsigned i = pointers.getArgNumber() - 1;
      Value init = loop.getInitArgs()[i];
      Value moved;
      if (isCheap(init, 0, /*shapes=*/true)) {
        moved = rematerialize(init, target, loop, done);
      } else {
        OpBuilder b(loop);
        moved = kiln::gpu::ConvertLayoutOp::create(
            b, loop.getLoc(), withEncoding(init.getType(), target), init);
      }
      loop.getInitArgsMutable()[i].set(moved);
      Type carried = withEncoding(pointers.getType(), target);
      pointers.setType(carried);
      loop.getResult(i).setType(carried);
      step->setOperand(1, rematerialize(step.getOffset(), target, step, done));
      step.getResult().setType(carried);
    }
    for (OpOperand &operand : def->getOpOperands()) {
      Value value = operand.get();
      if (!isa<RankedTensorType>(value.getType()) ||
          encodingOf(value) == target)
        continue;
      if (isCheap(value, 0, /*shapes=*/true)) {
        operand.set(rematerialize(value, target, def, done));
      } else if (Value again = reloadedIn(value, target, reloads)) {
        operand.set(again);
        eraseUnread(value.getDefiningOp(), reloads);
      } else {
        retargetCarried(value, target, done, reloads);
      }
    }
    v.setType(withEncoding(v.getType(), target));
  }

  /// A conversion of a small 1-D value in a loop that holds a dot, loaded
  /// from pointers the loop carries and advances by a uniform step (per-k
  /// scale and decay vectors: DeepSeek-V3's a_s, Mamba-2's dA_cumsum and
  /// dt) or from cheap addresses, or computed element-wise from such loads,
  /// when the conversion would go through shared memory between barriers:
  /// the value is loaded in the conversion's layout instead (carried
  /// pointers converted once, before the loop), and the iteration converts
  /// nothing. L1 serves the replicated elements, as isCheapLoad's do.
  bool
  retargetCarriedLoads(kiln::gpu::ConvertLayoutOp convert,
                       llvm::DenseMap<std::pair<Value, Attribute>, Value> &done,
                       ReloadMap &reloads, kiln::AxisInfoAnalysis &axisInfo) {
    auto type = dyn_cast<RankedTensorType>(convert.getType());
    Attribute target = encodingOf(convert.getResult());
    auto encoding =
        dyn_cast_or_null<kiln::gpu::DistributedEncodingAttr>(target);
    if (!type || type.getRank() != 1 || !encoding ||
        !type.getElementType().isIntOrFloat())
      return false;
    std::optional<kiln::layout::LinearLayout> layout =
        encoding.toLinearLayout(type.getShape());
    if (!layout)
      return false;
    // Registers a load fills from one address count once (the lowering
    // loads each run of equal addresses once: DeepSeek-V3's per-block
    // column scale, one value for a whole tile).
    unsigned registers = layout->getInDimSize(kiln::layout::kRegister);
    if (auto load = convert.getSrc().getDefiningOp<kiln::LoadOp>())
      registers = kiln::layout::distinctRegisters(
          *layout,
          axisInfo.loadedRuns(load.getPtr(), load.getMask(), load.getOther()));
    if (!loadableInPlace(type, registers))
      return false;
    // A conversion within warps (renamed registers, a few shuffles: a
    // vector every warp holds whole) costs less than loading the replicas.
    auto source = dyn_cast_or_null<kiln::gpu::DistributedEncodingAttr>(
        encodingOf(convert.getSrc()));
    std::optional<kiln::layout::LinearLayout> from =
        source ? source.toLinearLayout(type.getShape()) : std::nullopt;
    if (!from || !movesThroughSharedMemory(*from, *layout,
                                           type.getElementTypeBitWidth()))
      return false;
    if (!isRetargetable(convert.getSrc()))
      return false;
    if (Value again = reloadedIn(convert.getSrc(), target, reloads)) {
      Operation *load = convert.getSrc().getDefiningOp();
      convert.getResult().replaceAllUsesWith(again);
      convert->erase();
      eraseUnread(load, reloads);
      return true;
    }
    retargetCarried(convert.getSrc(), target, done, reloads);
    convert.getResult().replaceAllUsesWith(convert.getSrc());
    convert->erase();
    return true;
  }

  /// A result of an scf.if or scf.for, or a loop's iteration argument,
  /// with the values tied to it (what the ifs yield for it, what the loops
  /// start and continue it with, through any number of ifs and loops) all
  /// either tied values again or cheap to compute, and every other reader a
  /// conversion to `target`: each cheap value is computed in `target`, the
  /// tied values retyped, and the conversions read them as they are. NSA's
  /// attention masks under a run-time `if causal` (a causal mask or a
  /// key-length one); FBGEMM's persistent fp8 GEMM, whose loop carries
  /// offs_am and offs_bn and recomputes them in an `if` when it moves to
  /// the next tile (two conversions through shared memory, four barriers,
  /// every k step; 0.37 of Triton's speed).
  bool
  retypeTiedValues(Value v, Attribute target,
                   llvm::DenseMap<std::pair<Value, Attribute>, Value> &done,
                   llvm::SetVector<Operation *> &replaced) {
    // A loop's iteration argument (not its induction variable), a loop's
    // result, or an if's result.
    auto isTied = [](Value x) {
      if (auto arg = dyn_cast<BlockArgument>(x)) {
        auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
        return loop && loop.getTiedLoopInit(arg);
      }
      auto result = dyn_cast<OpResult>(x);
      return result && isa<scf::IfOp, scf::ForOp>(result.getOwner());
    };
    if (!isTied(v))
      return false;
    llvm::SetVector<Value> tied;
    SmallVector<Value> work;
    auto tie = [&](Value x) {
      if (tied.insert(x))
        work.push_back(x);
    };
    // The operands that give tied values their values and are not tied
    // themselves: each computed again in `target`.
    SmallVector<OpOperand *> leaves;
    auto from = [&](OpOperand *operand) {
      if (isTied(operand->get()))
        tie(operand->get());
      else
        leaves.push_back(operand);
    };
    tie(v);
    while (!work.empty()) {
      Value x = work.pop_back_val();
      // Where its value comes from.
      if (auto arg = dyn_cast<BlockArgument>(x)) {
        auto loop = cast<scf::ForOp>(arg.getOwner()->getParentOp());
        from(loop.getTiedLoopInit(arg));
        from(loop.getTiedLoopYieldedValue(arg));
        tie(loop.getTiedLoopResult(arg));
      } else if (auto ifOp = dyn_cast<scf::IfOp>(x.getDefiningOp())) {
        if (ifOp.getElseRegion().empty())
          return false;
        unsigned n = cast<OpResult>(x).getResultNumber();
        from(&ifOp.thenYield()->getOpOperand(n));
        from(&ifOp.elseYield()->getOpOperand(n));
      } else {
        auto loop = cast<scf::ForOp>(x.getDefiningOp());
        tie(loop.getTiedLoopRegionIterArg(cast<OpResult>(x)));
      }
      // Where it goes: ties, or conversions to `target`.
      for (OpOperand &use : x.getUses()) {
        Operation *user = use.getOwner();
        if (auto convert = dyn_cast<kiln::gpu::ConvertLayoutOp>(user)) {
          if (encodingOf(convert.getResult()) != target)
            return false;
          continue;
        }
        if (auto yield = dyn_cast<scf::YieldOp>(user)) {
          Operation *parent = yield->getParentOp();
          unsigned n = use.getOperandNumber();
          if (auto ifOp = dyn_cast<scf::IfOp>(parent)) {
            tie(ifOp.getResult(n));
            continue;
          }
          if (auto loop = dyn_cast<scf::ForOp>(parent)) {
            tie(loop.getRegionIterArgs()[n]);
            continue;
          }
          return false;
        }
        if (auto loop = dyn_cast<scf::ForOp>(user))
          if (BlockArgument arg = loop.getTiedLoopRegionIterArg(&use)) {
            tie(arg);
            continue;
          }
        return false;
      }
    }
    for (OpOperand *leaf : leaves)
      if (!isCheap(leaf->get(), 0, /*shapes=*/true))
        return false;
    for (OpOperand *leaf : leaves) {
      Value old = leaf->get();
      leaf->set(rematerialize(old, target, leaf->getOwner(), done));
      if (Operation *def = old.getDefiningOp())
        replaced.insert(def);
    }
    for (Value x : tied)
      x.setType(withEncoding(x.getType(), target));
    return true;
  }

  /// Whether `v` is element-wise arithmetic (a few ops deep, each read only
  /// by the next) over index math and broadcasts of smaller tensors, at
  /// least one of those: FLA's decays `exp2(g[:, None] - g[None, :])`.
  /// Computed again in another layout over the vectors converted there, it
  /// moves a vector where converting it moves the tile.
  /// With `widened`, one leaf may also be a widened tile (isWidenedTile:
  /// Mamba-3's `dO.to(tl.float32) * (D + qk[:, None])`), set there: its
  /// narrow tile is what moves then.
  bool isArithmeticOverBroadcasts(Value v, unsigned depth = 0,
                                  Value *widened = nullptr) {
    Operation *def = v.getDefiningOp();
    if (auto convert = dyn_cast_or_null<kiln::gpu::ConvertLayoutOp>(def))
      return isArithmeticOverBroadcasts(convert.getSrc(), depth, widened);
    if (!def || depth > 4 || !isElementwise(def) || def->getNumResults() != 1 ||
        (depth > 0 && !v.hasOneUse()))
      return false;
    bool broadcasts = false;
    for (Value operand : def->getOperands()) {
      if (!isa<RankedTensorType>(operand.getType()) ||
          isCheap(operand, 0, /*shapes=*/true))
        continue;
      Value before = widened ? *widened : Value();
      if (!isBroadcastOfSmaller(operand) &&
          !isArithmeticOverBroadcasts(operand, depth + 1, widened)) {
        if (!widened || before || !isWidenedTile(operand))
          return false;
        *widened = operand;
      }
      broadcasts = true;
    }
    return broadcasts;
  }

  /// Whether another conversion than `convert` takes `wide` (or the tile it
  /// widens) to `target`: converted narrow, once, for both, the vectors
  /// beside it rebroadcast, a tile conversion goes. (Where none does, the
  /// vectors' conversions would only add barriers.)
  static bool convertedElsewhere(Value wide, Attribute target,
                                 kiln::gpu::ConvertLayoutOp convert) {
    for (Value v : {wide, wide.getDefiningOp()->getOperand(0)})
      for (Operation *user : v.getUsers())
        if (auto other = dyn_cast<kiln::gpu::ConvertLayoutOp>(user);
            other && other != convert &&
            encodingOf(other.getResult()) == target)
          return true;
    return false;
  }

  /// Whether `v` is a tile (rank 2 or more) extended to a wider type: its
  /// conversion moves fewer bytes before the extension.
  static bool isWidenedTile(Value v) {
    Operation *extension = v.getDefiningOp();
    return isa_and_nonnull<arith::ExtFOp, arith::ExtSIOp, arith::ExtUIOp>(
               extension) &&
           cast<RankedTensorType>(extension->getOperand(0).getType())
                   .getRank() >= 2;
  }

  /// `v` (isArithmeticOverBroadcasts) computed again in `encoding`; the ops
  /// it replaces go into `dead`. Its `widened` tile, if any, is converted
  /// narrow (widenedIn).
  Value rebuildOverBroadcasts(
      Value v, Attribute encoding,
      llvm::DenseMap<std::pair<Value, Attribute>, Value> &done,
      llvm::SetVector<Operation *> &dead,
      llvm::DenseMap<std::pair<Value, Attribute>, Value> &narrowed,
      Value widened) {
    Operation *def = v.getDefiningOp();
    if (auto convert = dyn_cast<kiln::gpu::ConvertLayoutOp>(def)) {
      dead.insert(def);
      return rebuildOverBroadcasts(convert.getSrc(), encoding, done, dead,
                                   narrowed, widened);
    }
    if (encodingOf(v) == encoding)
      return v;
    if (isCheap(v, 0, /*shapes=*/true))
      return rematerialize(v, encoding, def, done);
    if (isBroadcastOfSmaller(v))
      return rebroadcast(v, encoding, done, dead);
    auto key = std::make_pair(v, encoding);
    if (Value known = done.lookup(key))
      return known;
    IRMapping mapping;
    for (Value operand : def->getOperands())
      if (isa<RankedTensorType>(operand.getType()))
        mapping.map(operand,
                    operand == widened
                        ? widenedIn(operand, encoding, def, narrowed)
                        : rebuildOverBroadcasts(operand, encoding, done, dead,
                                                narrowed, widened));
    OpBuilder b(def);
    b.setInsertionPointAfter(def);
    Operation *clone = b.clone(*def, mapping);
    Value result = clone->getResult(0);
    result.setType(withEncoding(result.getType(), encoding));
    dead.insert(def);
    done[key] = result;
    return result;
  }

  /// A conversion of a widened value (`k.to(tl.float32)` read in the
  /// accumulator's layout) as the narrow value's conversion, widened after:
  /// half the bytes through shared memory for bf16. One such conversion of
  /// a value serves the later ones in its block (`narrowed`, by widened
  /// value and layout), as one convert_layout serves them in Triton. Null
  /// where `convert` does not convert an extension.
  Value convertBeforeWidening(
      kiln::gpu::ConvertLayoutOp convert,
      llvm::DenseMap<std::pair<Value, Attribute>, Value> &narrowed) {
    // Tiles only: a vector's conversion is a few words (Mamba-2's state
    // update lost 4% converting its 128-element bf16 rows before widening).
    Value src = convert.getSrc();
    Operation *extension = src.getDefiningOp();
    if (!isa_and_nonnull<arith::ExtFOp, arith::ExtSIOp, arith::ExtUIOp>(
            extension) ||
        cast<RankedTensorType>(src.getType()).getRank() < 2)
      return {};
    return widenedIn(src, encodingOf(convert.getResult()), convert, narrowed);
  }

  /// `wide` (isWidenedTile) in `target` before `at`: its narrow tile
  /// converted there and extended again, or such a value of `narrowed` from
  /// before `at` in its block.
  Value
  widenedIn(Value wide, Attribute target, Operation *at,
            llvm::DenseMap<std::pair<Value, Attribute>, Value> &narrowed) {
    Value &known = narrowed[{wide, target}];
    if (known && known.getParentBlock() == at->getBlock() &&
        known.getDefiningOp()->isBeforeInBlock(at))
      return known;
    Operation *extension = wide.getDefiningOp();
    OpBuilder b(at);
    Value narrow = extension->getOperand(0);
    auto narrowType = cast<RankedTensorType>(narrow.getType());
    Value converted = kiln::gpu::ConvertLayoutOp::create(
        b, at->getLoc(), withEncoding(narrowType, target), narrow);
    Operation *widened = b.clone(*extension);
    widened->setOperand(0, converted);
    widened->getResult(0).setType(withEncoding(wide.getType(), target));
    known = widened->getResult(0);
    return known;
  }

  /// A loop's carried index vector (`offs_k += BLOCK_K`, with cheap start
  /// and step) from which the iteration computes, cheaply, values it
  /// converts to other layouts (the masks `offs_k < K` of SGLang's and
  /// vLLM's scaled GEMM, in both operands' layouts: two conversions through
  /// shared memory, four barriers, every iteration) gets a carried copy per
  /// layout, and the conversions read values computed from the copy.
  void splitCarriedIndexVectors(func::FuncOp func) {
    SmallVector<scf::ForOp> loops;
    func.walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i)
        while (splitCarriedIndexVector(loop, i)) {
        }
  }

  /// The layout in which rematerializing `v` in `encoding` reads `leaf` (a
  /// carried index vector): null where it does not read it, `conflict` set
  /// where it reads it in more than one (`off[:, None] < off[None, :]`).
  Attribute leafLayout(Value v, Attribute encoding, Value leaf,
                       bool &conflict) {
    if (v == leaf)
      return encoding;
    if (encodingOf(v) == encoding)
      return {};
    Operation *def = v.getDefiningOp();
    if (!def)
      return {};
    if (auto convert = dyn_cast<kiln::gpu::ConvertLayoutOp>(def))
      return leafLayout(convert.getSrc(), encoding, leaf, conflict);
    Attribute operandEncoding = recomputedOperandLayout(def, encoding);
    if (!operandEncoding)
      return {};
    Attribute found;
    for (Value operand : def->getOperands()) {
      if (!isa<RankedTensorType>(operand.getType()))
        continue;
      Attribute layout = leafLayout(operand, operandEncoding, leaf, conflict);
      if (found && layout && layout != found)
        conflict = true;
      if (!found)
        found = layout;
    }
    return found;
  }

  /// One layout of splitCarriedIndexVectors for iter arg `i` of `loop`
  /// (replaced by a new loop); false when there is nothing to do.
  bool splitCarriedIndexVector(scf::ForOp &loop, unsigned i) {
    BlockArgument arg = loop.getRegionIterArgs()[i];
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !isa<IntegerType>(type.getElementType()) ||
        !isCheap(loop.getInitArgs()[i], 0, /*shapes=*/true))
      return false;
    Value next = loop.getBody()->getTerminator()->getOperand(i);
    // The layout a conversion's recomputation reads the vector in: the
    // conversion's own for a vector of the carried one's shape, a slice of
    // it for a tile whose rows or columns the vector indexes (a :16 tile's
    // layout differs from its unaligned neighbours'); null where it reads
    // the vector in several.
    auto copyLayout = [&](kiln::gpu::ConvertLayoutOp convert, Value leaf) {
      bool conflict = false;
      Attribute layout = leafLayout(
          convert.getSrc(), encodingOf(convert.getResult()), leaf, conflict);
      return conflict ? Attribute() : layout;
    };
    Attribute target;
    if (next != arg && isCheap(next, 0, /*shapes=*/true, arg))
      for (Operation &op : loop.getBody()->getOperations())
        if (auto convert = dyn_cast<kiln::gpu::ConvertLayoutOp>(op);
            convert && isCheap(convert.getSrc(), 0, /*shapes=*/true, arg) &&
            !isCheap(convert.getSrc(), 0, /*shapes=*/true))
          if ((target = copyLayout(convert, arg)))
            break;
    if (!target)
      return false;
    llvm::DenseMap<std::pair<Value, Attribute>, Value> before;
    Value start = rematerialize(loop.getInitArgs()[i], target, loop, before);
    IRRewriter rewriter(loop);
    auto newLoop = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
        rewriter, start, /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &, Location, ArrayRef<BlockArgument> args) {
          // Still the old body: the copy's step reads the new argument.
          llvm::DenseMap<std::pair<Value, Attribute>, Value> step;
          step[{arg, target}] = args.front();
          return SmallVector<Value>{
              rematerialize(next, target, next.getDefiningOp(), step)};
        }));
    loop = newLoop;
    BlockArgument carried = loop.getRegionIterArgs()[i];
    llvm::DenseMap<std::pair<Value, Attribute>, Value> inside;
    inside[{carried, target}] = loop.getRegionIterArgs().back();
    SmallVector<kiln::gpu::ConvertLayoutOp> converts;
    for (Operation &op : loop.getBody()->getOperations())
      if (auto convert = dyn_cast<kiln::gpu::ConvertLayoutOp>(op);
          convert && isCheap(convert.getSrc(), 0, /*shapes=*/true, carried) &&
          copyLayout(convert, carried) == target)
        converts.push_back(convert);
    SmallVector<Operation *> stale;
    for (kiln::gpu::ConvertLayoutOp convert : converts) {
      Value src = convert.getSrc();
      convert.getResult().replaceAllUsesWith(
          rematerialize(src, encodingOf(convert.getResult()), convert, inside));
      convert->erase();
      if (Operation *def = src.getDefiningOp())
        stale.push_back(def);
    }
    // What only the conversions read goes.
    llvm::SmallPtrSet<Operation *, 16> erased;
    while (!stale.empty()) {
      Operation *op = stale.pop_back_val();
      if (erased.contains(op) || !op->use_empty() || !isMemoryEffectFree(op))
        continue;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          stale.push_back(def);
      erased.insert(op);
      op->erase();
    }
    return true;
  }

  /// Notes in `reloads` the copy in `target` that rematerialize made of
  /// each load in `v`'s computation (isReloadable's: elementwise ops over
  /// one load). Its originals stay while other readers need them; the
  /// copies are never erased here, so the map stays valid.
  void recordReloads(Value v, Attribute target,
                     llvm::DenseMap<std::pair<Value, Attribute>, Value> &done,
                     ReloadMap &reloads) {
    Operation *def = v.getDefiningOp();
    if (!def || encodingOf(v) == target)
      return;
    if (isa<kiln::LoadOp>(def)) {
      if (Value copy = done.lookup({v, target}))
        reloads[{def, target}] = copy;
      return;
    }
    if (isElementwise(def))
      for (Value operand : def->getOperands())
        if (isa<RankedTensorType>(operand.getType()))
          recordReloads(operand, target, done, reloads);
  }

  void rematerializeConversions(func::FuncOp func,
                                kiln::AxisInfoAnalysis &axisInfo) {
    SmallVector<kiln::gpu::ConvertLayoutOp> converts;
    func.walk([&](kiln::gpu::ConvertLayoutOp c) { converts.push_back(c); });
    llvm::DenseMap<std::pair<Value, Attribute>, Value> done, narrowed;
    llvm::SetVector<Operation *> replaced;
    ReloadMap reloads;
    for (kiln::gpu::ConvertLayoutOp convert : converts) {
      Value src = convert.getSrc();
      Attribute target = encodingOf(convert.getResult());
      if (encodingOf(src) == target) {
        convert.getResult().replaceAllUsesWith(src);
        convert->erase();
        continue;
      }
      // Addresses are computed again, however long their index math
      // (narrowStoreLayout's stores): moving 8-byte pointers through shared
      // memory costs more.
      bool cheap =
          isCheap(src, 0, /*shapes=*/true) ||
          (isa<kiln::PointerType>(
               cast<RankedTensorType>(src.getType()).getElementType()) &&
           isIndexMath(src));
      // In kernels with tensor-core dots, so is a vector read in a slice of
      // a blocked layout: a dequantizer's per-column scale broadcast over
      // the weight tile it scales (GPT-QModel's GGUF GEMM: 16 shuffles a
      // vector an iteration, as the accumulator's slices never were).
      bool blockedSlice = false;
      if (auto slice = dyn_cast<SliceEncodingAttr>(target))
        blockedSlice = isa<BlockedEncodingAttr>(slice.getParent());
      if (!cheap && (!mmaEncoding || blockedSlice) &&
          isCheapLoad(src, target)) {
        // Loaded again in the wanted layout: the original has no other user.
        Operation *load = src.getDefiningOp();
        convert.getResult().replaceAllUsesWith(
            rematerialize(src, target, load, done));
        convert->erase();
        replaced.insert(load);
        continue;
      }
      if (!cheap && isReloadable(src, target)) {
        convert.getResult().replaceAllUsesWith(
            rematerialize(src, target, convert, done));
        recordReloads(src, target, done, reloads);
        convert->erase();
        if (Operation *def = src.getDefiningOp())
          replaced.insert(def);
        continue;
      }
      if (!cheap && isSmallLoadOutsideLoops(src)) {
        convert.getResult().replaceAllUsesWith(
            rematerialize(src, target, convert, done));
        convert->erase();
        markLoadChain(src, replaced);
        continue;
      }
      if (!cheap && retypeTiedValues(src, target, done, replaced)) {
        // src is now computed in the wanted layout.
        convert.getResult().replaceAllUsesWith(src);
        convert->erase();
        continue;
      }
      // (A widened tile moves narrow: the two conversions of Mamba-3's
      // backward's dO, of `dO * (D + qk[:, None])` in fp32 and of dO for
      // `QS * dO`, become one in bf16.)
      Value widened;
      if (!cheap && isArithmeticOverBroadcasts(src, 0, &widened) &&
          (!widened || convertedElsewhere(widened, target, convert))) {
        convert.getResult().replaceAllUsesWith(rebuildOverBroadcasts(
            src, target, done, replaced, narrowed, widened));
        convert->erase();
        continue;
      }
      if (!cheap)
        if (Value narrow = convertBeforeWidening(convert, narrowed)) {
          convert.getResult().replaceAllUsesWith(narrow);
          convert->erase();
          if (Operation *def = src.getDefiningOp())
            replaced.insert(def);
          continue;
        }
      if (!cheap && !isBroadcastOfSmaller(src))
        continue;
      if (Operation *def = src.getDefiningOp())
        replaced.insert(def);
      Value remat = cheap ? rematerialize(src, target, convert, done)
                          : rebroadcast(src, target, done, replaced);
      convert.getResult().replaceAllUsesWith(remat);
      convert->erase();
    }
    // Originals nobody uses any more (and only those: other dead code is
    // not this pass's business).
    bool changed = true;
    while (changed) {
      changed = false;
      for (Operation *op : llvm::make_early_inc_range(replaced)) {
        if (!op->use_empty())
          continue;
        for (Value operand : op->getOperands())
          if (Operation *def = operand.getDefiningOp();
              def && (isCheap(operand, 0, /*shapes=*/true) ||
                      isa<kiln::ExpandDimsOp, kiln::BroadcastOp,
                          kiln::gpu::ConvertLayoutOp>(def)))
            replaced.insert(def);
        replaced.remove(op);
        eraseUnread(op, reloads);
        changed = true;
        break; // the set changed under us
      }
    }
    // Small loads (from carried pointers or cheap addresses) whose only
    // reader is now a conversion: rebroadcast leaves one at the leaf of a
    // per-row scale's broadcast.
    SmallVector<kiln::gpu::ConvertLayoutOp> leaves;
    func.walk([&](kiln::gpu::ConvertLayoutOp c) { leaves.push_back(c); });
    llvm::DenseMap<std::pair<Value, Attribute>, Value> retargeted;
    for (kiln::gpu::ConvertLayoutOp convert : leaves)
      retargetCarriedLoads(convert, retargeted, reloads, axisInfo);
  }

  LogicalResult assignLayouts(func::FuncOp func,
                              kiln::AxisInfoAnalysis &axisInfo) {
    choosePreferred(func, axisInfo);
    forceOperandLayouts(func, axisInfo);
    forceColumnAccesses(func, axisInfo);
    // Shapes must be powers of two (as in Triton): the layouts split them
    // into bit fields.
    Operation *bad = nullptr;
    func.walk([&](Operation *op) {
      for (Value result : op->getResults())
        if (auto t = dyn_cast<RankedTensorType>(result.getType()))
          for (int64_t n : t.getShape())
            if (n <= 0 || !llvm::isPowerOf2_64(uint64_t(n)))
              if (!bad)
                bad = op;
    });
    if (bad) {
      bad->emitError("tensor dimensions must be powers of two, got ")
          << bad->getResult(0).getType();
      return failure();
    }
    if (failed(propagate(func)))
      return failure();
    splitCarriedIndexVectors(func);
    rematerializeConversions(func, axisInfo);
    hoistInvariantConversions(func);

    // Dense constants carry their type in the attribute too.
    func.walk([&](arith::ConstantOp constant) {
      if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
        if (dense.getType() != constant.getType())
          constant.setValueAttr(
              dense.reshape(cast<ShapedType>(constant.getType())));
    });
    // Function types follow their (retyped) entry block arguments.
    if (!func.isExternal()) {
      auto type = func.getFunctionType();
      SmallVector<Type> inputs;
      for (BlockArgument arg : func.getArguments())
        inputs.push_back(arg.getType());
      func.setType(FunctionType::get(&getContext(), inputs, type.getResults()));
    }
    return success();
  }
};

} // namespace
