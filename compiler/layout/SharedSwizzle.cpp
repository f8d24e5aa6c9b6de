//===- SharedSwizzle.cpp - bank-conflict-aware exchange arrays ------------===//
//
// Everything here works on flat indices: an access is its bases (one
// uint64_t per hardware bit), a swizzle the physical images of the logical
// bits. The planner evaluates its cost with ranks, never by simulating lanes,
// since it runs for every conversion the compiler lowers.
//
//===----------------------------------------------------------------------===//
#include "compiler/layout/SharedSwizzle.h"

#include "compiler/layout/Echelon.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

namespace kiln::layout {

using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::Twine;

namespace {

[[noreturn]] void fail(const Twine &message) {
  llvm::report_fatal_error("SharedSwizzle: " + message);
}

/// The shared-memory row the bank model is built on: 32 banks of 4 bytes.
constexpr int32_t kRowBytes = 128;
constexpr int32_t kBankBytes = 4;
constexpr int32_t kMaxVectorBytes = 16;

/// An access's bases as flat indices into "offset", by role.
struct AccessBases {
  SmallVector<uint64_t, 8> registers;
  SmallVector<uint64_t, 8> lanes;
  /// Warp, block and any other dimension: they only need to be aligned.
  SmallVector<uint64_t, 8> others;
};

AccessBases basesOf(const LinearLayout &layout) {
  if (layout.getOutDims().size() != 1 || layout.getOutDims()[0].name != kOffset)
    fail("an access must map to the single output dimension 'offset', not " +
         layout.toString());
  AccessBases bases;
  for (const LinearLayout::InDim &in : layout.getInDims()) {
    SmallVector<uint64_t, 8> &target = in.name == kRegister ? bases.registers
                                       : in.name == kLane   ? bases.lanes
                                                            : bases.others;
    for (const LinearLayout::Vector &basis : in.bases)
      target.push_back(uint64_t(basis[0]));
  }
  return bases;
}

/// Where the bank model cuts a physical element index, for one vector width.
struct BankGeometry {
  /// Physical bits within one U-byte unit, U = max(A, 4).
  int32_t unitShift;
  /// Unit bits that pick the unit's position within a 128-byte row.
  int32_t rowPositionBits;
  /// log2 of the lanes served in one phase.
  int32_t phaseLaneBits;
};

void checkElementBytes(int32_t elementBytes) {
  if (!llvm::isPowerOf2_32(uint32_t(elementBytes)) ||
      elementBytes > kMaxVectorBytes)
    fail("element size " + Twine(elementBytes) +
         " is not a power of two of at most 16 bytes");
}

BankGeometry geometryOf(int32_t vectorElements, int32_t elementBytes) {
  checkElementBytes(elementBytes);
  if (!llvm::isPowerOf2_32(uint32_t(vectorElements)) ||
      vectorElements * elementBytes > kMaxVectorBytes)
    fail("a vector of " + Twine(vectorElements) + " elements of " +
         Twine(elementBytes) + " bytes is not a power of two of at most 16");
  int32_t accessBytes = vectorElements * elementBytes;
  int32_t unitBytes = std::max(accessBytes, kBankBytes);
  BankGeometry geometry;
  geometry.unitShift = llvm::Log2_32(uint32_t(unitBytes / elementBytes));
  geometry.rowPositionBits = llvm::Log2_32(uint32_t(kRowBytes / unitBytes));
  // 16-byte accesses go 8 lanes at a time, 8-byte ones 16, others all 32.
  geometry.phaseLaneBits = accessBytes == 16 ? 3 : accessBytes == 8 ? 4 : 5;
  return geometry;
}

/// Wavefronts of one warp instruction whose lanes have physical bases
/// `lanes`: per phase, the units touched over their row positions.
int64_t wavefrontsOf(ArrayRef<uint64_t> lanes, const BankGeometry &geometry) {
  int32_t phaseBits = std::min(int32_t(lanes.size()), geometry.phaseLaneBits);
  uint64_t rowMask = (uint64_t(1) << geometry.rowPositionBits) - 1;
  Echelon units, rowPositions;
  for (int32_t i = 0; i < phaseBits; ++i) {
    uint64_t unit = lanes[i] >> geometry.unitShift;
    units.add(unit, unsigned(i));
    rowPositions.add(unit & rowMask, unsigned(i));
  }
  int32_t phasesLog2 = int32_t(lanes.size()) - phaseBits;
  return int64_t(1) << (phasesLog2 + units.rank() - rowPositions.rank());
}

/// Instructions per thread: representative registers over the vector width.
/// Independence does not depend on an invertible swizzle, so logical and
/// physical bases give the same count.
int64_t instructionsOf(ArrayRef<uint64_t> registers, int32_t vectorElements) {
  Echelon echelon;
  int64_t representatives = 1;
  for (auto [bit, basis] : llvm::enumerate(registers))
    if (echelon.add(basis, unsigned(bit)))
      representatives *= 2;
  return std::max<int64_t>(1, representatives / vectorElements);
}

/// The base arrangement of step 2 as images of the logical bits: physical
/// bits 0..w-1 hold `vector`, the higher ones the logical bits independent
/// of it, in increasing order.
SmallVector<uint64_t> baseArrangement(ArrayRef<uint64_t> vector,
                                      int32_t indexBits) {
  Echelon physicalToLogical;
  unsigned physicalBit = 0;
  for (uint64_t basis : vector)
    physicalToLogical.add(basis, physicalBit++);
  for (int32_t bit = 0; bit < indexBits; ++bit)
    if (physicalToLogical.add(uint64_t(1) << bit, physicalBit))
      ++physicalBit;
  SmallVector<uint64_t> columns;
  for (int32_t bit = 0; bit < indexBits; ++bit)
    columns.push_back(*physicalToLogical.solve(uint64_t(1) << bit));
  return columns;
}

/// Whether, under `columns`, every basis of every access but its first
/// `vectorBits` register bits, and its xorOffset, is aligned to the vector.
bool isAligned(ArrayRef<AccessBases> accesses, ArrayRef<uint64_t> xorOffsets,
               ArrayRef<uint64_t> columns, int32_t vectorBits) {
  uint64_t lowMask = (uint64_t(1) << vectorBits) - 1;
  auto aligned = [&](uint64_t logical) {
    return (xorOfColumns<uint64_t>(columns, logical) & lowMask) == 0;
  };
  for (auto [access, xorOffset] : llvm::zip_equal(accesses, xorOffsets)) {
    if (!aligned(xorOffset) ||
        !llvm::all_of(ArrayRef(access.registers).drop_front(vectorBits),
                      aligned) ||
        !llvm::all_of(access.lanes, aligned) ||
        !llvm::all_of(access.others, aligned))
      return false;
  }
  return true;
}

/// The vector bases of step 1 before alignment: the longest run of leading
/// register bases shared by all accesses, nonzero, independent, and at most
/// `maxBits` long.
SmallVector<uint64_t> sharedVectorBases(ArrayRef<AccessBases> accesses,
                                        int32_t maxBits) {
  SmallVector<uint64_t> vector;
  if (accesses.empty())
    return vector;
  Echelon echelon;
  for (int32_t bit = 0; bit < maxBits; ++bit) {
    if (size_t(bit) >= accesses.front().registers.size())
      break;
    uint64_t basis = accesses.front().registers[bit];
    bool shared = llvm::all_of(accesses, [&](const AccessBases &access) {
      return size_t(bit) < access.registers.size() &&
             access.registers[bit] == basis;
    });
    if (!shared || !echelon.add(basis, unsigned(bit)))
      break;
    vector.push_back(basis);
  }
  return vector;
}

/// The longest run of `access`'s leading register bases that is nonzero,
/// independent and at most `maxBits` long: the widest vector it could move
/// if the array put these bases at the bottom.
SmallVector<uint64_t> leadingRun(const AccessBases &access, int32_t maxBits) {
  SmallVector<uint64_t> run;
  Echelon echelon;
  for (int32_t bit = 0; bit < maxBits && size_t(bit) < access.registers.size();
       ++bit) {
    if (!echelon.add(access.registers[bit], unsigned(bit)))
      break;
    run.push_back(access.registers[bit]);
  }
  return run;
}

/// The vector bits `access` gets under `columns`: its leading register bits
/// that land on physical bits 0, 1, ... in order, shortened until every
/// other basis and its xorOffset leave those bits clear.
int32_t ownVectorBits(const AccessBases &access, uint64_t xorOffset,
                      ArrayRef<uint64_t> columns, int32_t maxBits) {
  int32_t bits = 0;
  while (bits < maxBits && size_t(bits) < access.registers.size() &&
         xorOfColumns<uint64_t>(columns, access.registers[bits]) == uint64_t(1)
                                                                        << bits)
    ++bits;
  for (; bits > 0; --bits) {
    uint64_t lowMask = (uint64_t(1) << bits) - 1;
    auto aligned = [&](uint64_t logical) {
      return (xorOfColumns<uint64_t>(columns, logical) & lowMask) == 0;
    };
    if (aligned(xorOffset) &&
        llvm::all_of(ArrayRef(access.registers).drop_front(bits), aligned) &&
        llvm::all_of(access.lanes, aligned) &&
        llvm::all_of(access.others, aligned))
      break;
  }
  return bits;
}

} // namespace

int64_t sharedWavefronts(const LinearLayout &physicalAccess,
                         int32_t vectorElements, int32_t elementBytes) {
  return wavefrontsOf(basesOf(physicalAccess).lanes,
                      geometryOf(vectorElements, elementBytes));
}

int64_t sharedAccessCost(const LinearLayout &physicalAccess,
                         int32_t vectorElements, int32_t elementBytes) {
  AccessBases bases = basesOf(physicalAccess);
  return instructionsOf(bases.registers, vectorElements) *
         wavefrontsOf(bases.lanes, geometryOf(vectorElements, elementBytes));
}

int64_t sharedExchangeCost(ArrayRef<SharedAccess> writers,
                           ArrayRef<SharedAccess> readers,
                           const SharedSwizzle &swizzle, int32_t elementBytes) {
  int64_t cost = 0;
  size_t index = 0;
  for (ArrayRef<SharedAccess> accesses : {writers, readers})
    for (const SharedAccess &access : accesses)
      cost += sharedAccessCost(access.layout.compose(swizzle.swizzle),
                               swizzle.vectorOf(index++), elementBytes);
  return cost;
}

SharedSwizzle chooseSharedSwizzle(ArrayRef<SharedAccess> writers,
                                  ArrayRef<SharedAccess> readers,
                                  int32_t elementBytes) {
  SmallVector<AccessBases> accesses;
  SmallVector<uint64_t> xorOffsets;
  int32_t size = 0;
  for (ArrayRef<SharedAccess> group : {writers, readers}) {
    for (const SharedAccess &access : group) {
      accesses.push_back(basesOf(access.layout));
      int32_t accessSize = access.layout.getOutDimSize(kOffset);
      if (size != 0 && accessSize != size)
        fail("accesses of one array disagree on its size: " + Twine(size) +
             " and " + Twine(accessSize));
      size = accessSize;
      if (access.xorOffset >= uint64_t(accessSize))
        fail("xorOffset " + Twine(access.xorOffset) + " is outside the array");
      xorOffsets.push_back(access.xorOffset);
    }
  }
  if (accesses.empty())
    return {LinearLayout::identity1D(1, kOffset, kOffset), 1, {}};
  int32_t indexBits = llvm::Log2_32(uint32_t(size));

  // Steps 1 and 2: the widest vector every access shares and its base
  // arrangement; then, per access, the arrangement with that access's own
  // leading run at the bottom, where the others move what vectors they can.
  checkElementBytes(elementBytes);
  int32_t maxVectorBits =
      llvm::Log2_32(uint32_t(kMaxVectorBytes / elementBytes));
  SmallVector<uint64_t> vector = sharedVectorBases(accesses, maxVectorBits);
  SmallVector<uint64_t> base;
  for (;; vector.pop_back()) {
    base = baseArrangement(vector, indexBits);
    if (isAligned(accesses, xorOffsets, base, int32_t(vector.size())))
      break;
  }
  auto vectorsUnder = [&](ArrayRef<uint64_t> columns) {
    SmallVector<int32_t> bits;
    for (auto [access, xorOffset] : llvm::zip_equal(accesses, xorOffsets))
      bits.push_back(ownVectorBits(access, xorOffset, columns, maxVectorBits));
    return bits;
  };

  // Step 3, for one arrangement: per access, what the swizzle cannot change
  // (instructions) and the lanes' physical bases before the XOR masks; then
  // the masks. Returns the swizzled columns and their total cost.
  auto swizzle =
      [&](ArrayRef<uint64_t> columns,
          ArrayRef<int32_t> bits) -> std::pair<SmallVector<uint64_t>, int64_t> {
    SmallVector<int64_t> instructions;
    SmallVector<BankGeometry> geometries;
    SmallVector<SmallVector<uint64_t, 8>> baseLanes;
    int32_t rowLow = 0, rowHigh = 0;
    for (auto [access, vectorBits] : llvm::zip_equal(accesses, bits)) {
      int32_t elements = int32_t(1) << vectorBits;
      instructions.push_back(instructionsOf(access.registers, elements));
      geometries.push_back(geometryOf(elements, elementBytes));
      rowLow = std::max(rowLow, geometries.back().unitShift);
      rowHigh = geometries.back().unitShift + geometries.back().rowPositionBits;
      SmallVector<uint64_t, 8> lanes;
      for (uint64_t lane : access.lanes)
        lanes.push_back(xorOfColumns<uint64_t>(columns, lane));
      baseLanes.push_back(lanes);
    }
    // masks[h] is XORed into the physical index wherever its bit h is set;
    // it only covers row-position bits above every access's vector, all
    // below h, so the map stays triangular (invertible) and never splits a
    // vector.
    SmallVector<uint64_t> masks(indexBits, 0);
    auto swizzled = [&](uint64_t physical) {
      uint64_t result = physical;
      for (int32_t bit = rowHigh; bit < indexBits; ++bit)
        if ((physical >> bit) & 1)
          result ^= masks[bit];
      return result;
    };
    auto totalCost = [&] {
      int64_t cost = 0;
      SmallVector<uint64_t, 8> lanes;
      for (auto [count, geometry, laneBases] :
           llvm::zip_equal(instructions, geometries, baseLanes)) {
        lanes.clear();
        for (uint64_t lane : laneBases)
          lanes.push_back(swizzled(lane));
        cost += count * wavefrontsOf(lanes, geometry);
      }
      return cost;
    };
    for (int32_t bit = rowHigh; bit < indexBits; ++bit) {
      uint64_t bestMask = 0;
      int64_t bestCost = totalCost();
      for (uint64_t choice = 1; choice < (uint64_t(1) << (rowHigh - rowLow));
           ++choice) {
        masks[bit] = choice << rowLow;
        int64_t cost = totalCost();
        if (cost < bestCost) {
          bestCost = cost;
          bestMask = masks[bit];
        }
      }
      masks[bit] = bestMask;
    }
    SmallVector<uint64_t> result;
    for (uint64_t column : columns)
      result.push_back(swizzled(column));
    return {result, totalCost()};
  };

  SmallVector<int32_t> vectorBits = vectorsUnder(base);
  auto [best, bestCost] = swizzle(base, vectorBits);
  for (const AccessBases &leader : accesses) {
    SmallVector<uint64_t> run = leadingRun(leader, maxVectorBits);
    if (run.size() <= vector.size())
      continue;
    SmallVector<uint64_t> columns = baseArrangement(run, indexBits);
    SmallVector<int32_t> bits = vectorsUnder(columns);
    auto [swizzled, cost] = swizzle(columns, bits);
    if (cost < bestCost) {
      bestCost = cost;
      best = std::move(swizzled);
      vectorBits = std::move(bits);
    }
  }

  LinearLayout::InDim in{std::string(kOffset), {}};
  for (uint64_t column : best)
    in.bases.push_back({int32_t(column)});
  SharedSwizzle plan;
  plan.swizzle = LinearLayout({in}, {{std::string(kOffset), size}});
  plan.vectorElements = int32_t(1) << *llvm::min_element(vectorBits);
  for (int32_t bits : vectorBits)
    plan.accessVectors.push_back(int32_t(1) << bits);
  return plan;
}

} // namespace kiln::layout
