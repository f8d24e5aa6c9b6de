//===- BlockedLayouts.cpp - named constructors of linear layouts ----------===//
#include "compiler/layout/BlockedLayouts.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MathExtras.h"

#include <set>

using namespace llvm;

namespace kiln::layout {
namespace {

[[noreturn]] void fail(const Twine &message) {
  report_fatal_error("kiln::layout: " + message);
}

void checkPowerOf2(int64_t value, const Twine &what) {
  if (value <= 0 || !isPowerOf2_64(uint64_t(value)))
    fail(what + " = " + Twine(value) + " is not a power of two");
}

void checkPowersOf2(ArrayRef<unsigned> values, size_t rank, StringRef what) {
  if (values.size() != rank)
    fail(Twine(what) + " has " + Twine(values.size()) + " entries, expected " +
         Twine(rank));
  for (unsigned v : values)
    checkPowerOf2(v, what);
}

void checkShape(ArrayRef<int64_t> shape) {
  if (shape.empty())
    fail("a layout needs a tensor of rank 1 or more");
  for (int64_t size : shape)
    checkPowerOf2(size, "tensor dimension");
}

void checkOrder(ArrayRef<unsigned> order, size_t rank) {
  SmallVector<bool> seen(rank, false);
  if (order.size() != rank)
    fail("order has " + Twine(order.size()) + " entries, expected " +
         Twine(rank));
  for (unsigned d : order) {
    if (d >= rank || seen[d])
      fail("order is not a permutation of the tensor dimensions");
    seen[d] = true;
  }
}

LinearLayout identity(int64_t size, StringRef in, unsigned dim) {
  return LinearLayout::identity1D(int32_t(size), in, tensorDimName(dim));
}

LinearLayout zeros(int64_t size, StringRef in, unsigned dim) {
  return LinearLayout::zeros1D(int32_t(size), in, tensorDimName(dim));
}

} // namespace

LinearLayout tileOverShape(const LinearLayout &tile, ArrayRef<int64_t> shape,
                           ArrayRef<unsigned> repOrder) {
  checkShape(shape);
  checkOrder(repOrder, shape.size());
  LinearLayout result = tile;
  for (unsigned d = 0; d < shape.size(); ++d)
    if (!result.hasOutDim(tensorDimName(d)))
      result *= identity(1, kRegister, d);
  for (const LinearLayout::OutDim &out : result.getOutDims())
    if (!llvm::any_of(llvm::seq<unsigned>(0, shape.size()),
                      [&](unsigned d) { return out.name == tensorDimName(d); }))
      fail("tileOverShape: the tile has output dimension '" + out.name +
           "' beyond the tensor's rank");
  for (unsigned d : repOrder) {
    int64_t extent = result.getOutDimSize(tensorDimName(d));
    if (shape[d] > extent)
      result *= identity(shape[d] / extent, kRegister, d);
  }
  for (unsigned d = 0; d < shape.size(); ++d)
    if (shape[d] < result.getOutDimSize(tensorDimName(d)))
      result = result.resizeOutDim(tensorDimName(d), int32_t(shape[d]));
  for (StringRef hw : {kRegister, kLane, kWarp, kBlock})
    if (!result.hasInDim(hw))
      result *= LinearLayout::identity1D(1, hw, tensorDimName(0));
  if (result.getInDims().size() != 4)
    fail("tileOverShape: the tile has input dimensions other than register, "
         "lane, warp and block");
  SmallVector<std::string> outNames;
  for (unsigned d = 0; d < shape.size(); ++d)
    outNames.push_back(tensorDimName(d));
  return result
      .transposeIns({kRegister.str(), kLane.str(), kWarp.str(), kBlock.str()})
      .transposeOuts(outNames);
}

LinearLayout blocked(ArrayRef<int64_t> shape, ArrayRef<unsigned> sizePerThread,
                     ArrayRef<unsigned> threadsPerWarp,
                     ArrayRef<unsigned> warpsPerCTA, ArrayRef<unsigned> order) {
  checkShape(shape);
  size_t rank = shape.size();
  checkPowersOf2(sizePerThread, rank, "sizePerThread");
  checkPowersOf2(threadsPerWarp, rank, "threadsPerWarp");
  checkPowersOf2(warpsPerCTA, rank, "warpsPerCTA");
  checkOrder(order, rank);
  // Products append bits: per dimension, the lane bits land above the
  // register bits of a chunk, and the warp bits above the lane bits.
  LinearLayout tile;
  for (unsigned d : order)
    tile *= identity(sizePerThread[d], kRegister, d);
  for (unsigned d : order)
    tile *= identity(threadsPerWarp[d], kLane, d);
  for (unsigned d : order)
    tile *= identity(warpsPerCTA[d], kWarp, d);
  return tileOverShape(tile, shape, order);
}

LinearLayout slice(const LinearLayout &parent, unsigned dim) {
  int32_t rank = int32_t(parent.getOutDims().size());
  if (int32_t(dim) >= rank)
    fail("slice: dimension " + Twine(dim) + " of a rank-" + Twine(rank) +
         " layout");
  std::string sliced = tensorDimName(dim);
  SmallVector<std::string> keptOuts;
  for (const LinearLayout::OutDim &out : parent.getOutDims())
    if (out.name != sliced)
      keptOuts.push_back(out.name);
  LinearLayout projected = parent.sublayout(parent.getInDimNames(), keptOuts);

  // Drop the register bits that only moved along `dim`.
  SmallVector<LinearLayout::InDim, 4> ins(projected.getInDims().begin(),
                                          projected.getInDims().end());
  if (parent.hasInDim(kRegister)) {
    unsigned r = parent.getInDimIndex(kRegister);
    uint64_t wasZero = parent.getZeroBasisMasks()[r];
    uint64_t isZero = projected.getZeroBasisMasks()[r];
    SmallVector<LinearLayout::Vector, 8> kept;
    for (auto [bit, basis] : llvm::enumerate(ins[r].bases))
      if (!((isZero & ~wasZero) >> bit & 1))
        kept.push_back(basis);
    ins[r].bases = std::move(kept);
  }
  LinearLayout result(ins, projected.getOutDims());
  for (int32_t d = int32_t(dim) + 1; d < rank; ++d)
    result = result.renameOutDim(tensorDimName(d), tensorDimName(d - 1));
  return result;
}

LinearLayout mmaV2(ArrayRef<int64_t> shape, ArrayRef<unsigned> warpsPerCTA) {
  if (shape.size() != 2 && shape.size() != 3)
    fail("mmaV2: the accumulator must be 2-D or 3-D");
  checkShape(shape);
  size_t rank = shape.size();
  checkPowersOf2(warpsPerCTA, rank, "warpsPerCTA");
  unsigned m = unsigned(rank) - 2, n = unsigned(rank) - 1;
  // One warp's 16x8 tile: register bit 0 -> column +1, lane bits 0-1 ->
  // columns +2, +4, lane bits 2-4 -> rows +1, +2, +4, register bit 1 -> row
  // +8.
  LinearLayout tile = identity(2, kRegister, n) * identity(4, kLane, n) *
                      identity(8, kLane, m) * identity(2, kRegister, m);
  tile *=
      identity(warpsPerCTA[n], kWarp, n) * identity(warpsPerCTA[m], kWarp, m);
  if (rank == 3)
    tile *= identity(warpsPerCTA[0], kWarp, 0);
  return rank == 3 ? tileOverShape(tile, shape, {2, 1, 0})
                   : tileOverShape(tile, shape, {1, 0});
}

LinearLayout wgmmaSplitN(ArrayRef<int64_t> shape,
                         ArrayRef<unsigned> warpsPerCTA, unsigned columns) {
  if (shape.size() != 2)
    fail("wgmmaSplitN: the accumulator must be 2-D");
  checkShape(shape);
  checkPowersOf2(warpsPerCTA, 2, "warpsPerCTA");
  checkPowerOf2(columns, "columns");
  if (columns < 8)
    fail("wgmmaSplitN: a warpgroup takes at least 8 columns");
  // The 16x8 fragment (as mmaV2), repeated over the warpgroup's columns;
  // warps along M first (a warpgroup's four), then along N.
  LinearLayout tile = identity(2, kRegister, 1) * identity(4, kLane, 1) *
                      identity(8, kLane, 0) * identity(2, kRegister, 0) *
                      identity(columns / 8, kRegister, 1);
  tile *=
      identity(warpsPerCTA[0], kWarp, 0) * identity(warpsPerCTA[1], kWarp, 1);
  return tileOverShape(tile, shape, {1, 0});
}

LinearLayout dotOperandMmaV2(ArrayRef<int64_t> shape, unsigned opIdx,
                             ArrayRef<unsigned> warpsPerCTA, unsigned kWidth) {
  if (shape.size() != 2)
    fail("dotOperandMmaV2: the operand must be 2-D");
  if (opIdx > 1)
    fail("dotOperandMmaV2: opIdx must be 0 (A) or 1 (B)");
  checkShape(shape);
  checkPowersOf2(warpsPerCTA, 2, "warpsPerCTA");
  checkPowerOf2(kWidth, "kWidth");
  if (opIdx == 0) {
    // A, M x K: kWidth consecutive K per register group, lane bits 0-1 -> K,
    // lane bits 2-4 -> M, then M +8, then K +4*kWidth.
    LinearLayout tile = identity(kWidth, kRegister, 1) * identity(4, kLane, 1) *
                        identity(8, kLane, 0) * identity(2, kRegister, 0) *
                        identity(2, kRegister, 1);
    tile *=
        zeros(warpsPerCTA[1], kWarp, 1) * identity(warpsPerCTA[0], kWarp, 0);
    return tileOverShape(tile, shape, {1, 0});
  }
  // B, K x N: kWidth consecutive K, lane bits 0-1 -> K, lane bits 2-4 -> N,
  // then K +4*kWidth.
  LinearLayout tile = identity(kWidth, kRegister, 0) * identity(4, kLane, 0) *
                      identity(8, kLane, 1) * identity(2, kRegister, 0);
  tile *= identity(warpsPerCTA[1], kWarp, 1) * zeros(warpsPerCTA[0], kWarp, 1);
  return tileOverShape(tile, shape, {0, 1});
}

bool holdsAFragments(const LinearLayout &a, const LinearLayout &acc) {
  if (a.getOutDims().size() != 2 || acc.getOutDims().size() != 2)
    return false;
  for (StringRef hw : {kLane, kWarp, kBlock})
    if (!a.hasInDim(hw) || !acc.hasInDim(hw) ||
        a.getInDimSizeLog2(hw) != acc.getInDimSizeLog2(hw))
      return false;
  // Lanes as the accumulator's; warps on its rows, not its columns.
  for (StringRef hw : {kLane, kWarp, kBlock})
    for (int32_t bit = 0; bit < a.getInDimSizeLog2(hw); ++bit) {
      ArrayRef<int32_t> mine = a.getBasis(hw, bit);
      ArrayRef<int32_t> theirs = acc.getBasis(hw, bit);
      int32_t column = hw == kLane ? theirs[1] : 0;
      if (mine[0] != theirs[0] || mine[1] != column)
        return false;
    }
  // The fragment's lanes are mma's: columns 2 and 4, rows 1, 2 and 4.
  static constexpr int32_t kLaneBases[5][2] = {
      {0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};
  if (a.getInDimSizeLog2(kLane) != 5)
    return false;
  for (int32_t bit = 0; bit < 5; ++bit)
    if (a.getBasis(kLane, bit)[0] != kLaneBases[bit][0] ||
        a.getBasis(kLane, bit)[1] != kLaneBases[bit][1])
      return false;
  // Registers: every (row, k) of the fragments of the accumulator's rows.
  auto coordinates = [](const LinearLayout &layout, int32_t r) {
    SmallVector<std::pair<StringRef, int32_t>> in;
    for (const LinearLayout::InDim &dim : layout.getInDims())
      in.push_back({dim.name, dim.name == kRegister ? r : 0});
    auto at = layout.apply(in);
    return std::pair<int32_t, int32_t>{at[0].second, at[1].second};
  };
  std::set<std::pair<int32_t, int32_t>> held;
  for (int32_t r = 0; r < a.getInDimSize(kRegister); ++r)
    held.insert(coordinates(a, r));
  int32_t k = a.getOutDimSize(tensorDimName(1));
  if (k % 16 != 0)
    return false;
  for (int32_t r = 0; r < acc.getInDimSize(kRegister); ++r) {
    int32_t row = coordinates(acc, r).first;
    for (int32_t k0 = 0; k0 < k; k0 += 16)
      for (int32_t dk : {0, 1, 8, 9})
        if (!held.count({row, k0 + dk}))
          return false;
  }
  return true;
}

LinearLayout swizzledShared(ArrayRef<int64_t> shape, unsigned vec,
                            unsigned perPhase, unsigned maxPhase,
                            ArrayRef<unsigned> order) {
  checkShape(shape);
  checkOrder(order, shape.size());
  checkPowerOf2(vec, "vec");
  checkPowerOf2(perPhase, "perPhase");
  checkPowerOf2(maxPhase, "maxPhase");
  size_t rank = shape.size();
  SmallVector<LinearLayout::OutDim> outs;
  for (unsigned d = 0; d < rank; ++d)
    outs.push_back({tensorDimName(d), int32_t(shape[d])});
  auto unit = [&](unsigned d, int64_t value) {
    LinearLayout::Vector basis(rank, 0);
    basis[d] = int32_t(value);
    return basis;
  };
  LinearLayout::InDim offset{kOffset.str(), {}};
  int64_t cols = shape[order[0]];
  for (int64_t c = 1; c < cols; c *= 2)
    offset.bases.push_back(unit(order[0], c));
  if (rank > 1)
    for (int64_t r = 1; r < shape[order[1]]; r *= 2) {
      LinearLayout::Vector basis = unit(order[1], r);
      basis[order[0]] =
          int32_t((((r / perPhase) % maxPhase) * vec) % uint64_t(cols));
      offset.bases.push_back(std::move(basis));
    }
  for (size_t i = 2; i < rank; ++i)
    for (int64_t x = 1; x < shape[order[i]]; x *= 2)
      offset.bases.push_back(unit(order[i], x));
  return LinearLayout({offset}, outs);
}

LinearLayout nvmmaShared(ArrayRef<int64_t> shape, unsigned swizzleBytes,
                         unsigned elementBitWidth, ArrayRef<unsigned> order) {
  if (shape.size() != 2)
    fail("nvmmaShared: the tensor must be 2-D");
  checkShape(shape);
  checkOrder(order, 2);
  if (elementBitWidth != 8 && elementBitWidth != 16 && elementBitWidth != 32 &&
      elementBitWidth != 64)
    fail("nvmmaShared: elementBitWidth must be 8, 16, 32 or 64");
  if (swizzleBytes == 0)
    return swizzledShared(shape, 1, 1, 1, order);
  if (swizzleBytes != 32 && swizzleBytes != 64 && swizzleBytes != 128)
    fail("nvmmaShared: swizzleBytes must be 0, 32, 64 or 128");
  uint64_t elementBytes = elementBitWidth / 8;
  uint64_t cols = uint64_t(shape[order[0]]), rows = uint64_t(shape[order[1]]);
  uint64_t blockCols = swizzleBytes / elementBytes;
  if (cols < blockCols)
    fail("nvmmaShared: " + Twine(cols) + " elements of " +
         Twine(elementBitWidth) + " bits do not fill a " + Twine(swizzleBytes) +
         "-byte swizzle row");
  uint64_t blockBytes = rows * swizzleBytes;
  uint64_t phaseMask = swizzleBytes / 16 - 1;

  LinearLayout::InDim offset{kOffset.str(), {}};
  for (uint64_t element = 1; element < cols * rows; element *= 2) {
    // The byte address of this offset, unswizzled (the swizzle is its own
    // inverse: it only reads address bits 7-9, which it leaves alone).
    uint64_t address = element * elementBytes;
    address ^= ((address >> 7) & phaseMask) << 4;
    uint64_t block = address / blockBytes, inBlock = address % blockBytes;
    LinearLayout::Vector basis(2, 0);
    basis[order[1]] = int32_t(inBlock / swizzleBytes);
    basis[order[0]] =
        int32_t(block * blockCols + (inBlock % swizzleBytes) / elementBytes);
    offset.bases.push_back(std::move(basis));
  }
  return LinearLayout({offset}, {{tensorDimName(0), int32_t(shape[0])},
                                 {tensorDimName(1), int32_t(shape[1])}});
}

} // namespace kiln::layout
