// Unit tests of the exchange-array planner (compiler/layout/SharedSwizzle.h).
//
// The rank formula for wavefronts is checked against a simulation of the
// banks, lane by lane, on random and blocked layouts; every plan is checked
// by enumeration (a bijection, register vectors contiguous and aligned); a
// few conversions have their costs spelled out; and on random conversions
// the plan never costs more than the row-major array.

#include "compiler/layout/SharedSwizzle.h"

#include "compiler/layout/BlockedLayouts.h"
#include "compiler/layout/LinearLayout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace kiln::layout {
namespace {

using InDim = LinearLayout::InDim;

/// A distributed layout of a tensor as an access of its row-major array:
/// output "offset" = the row-major index (last dimension fastest).
LinearLayout rowMajor(const LinearLayout &tensorLayout) {
  llvm::SmallVector<std::string> names = tensorLayout.getOutDimNames();
  std::reverse(names.begin(), names.end());
  return tensorLayout.transposeOuts(names).reshapeOuts(
      {{std::string(kOffset), int32_t(tensorLayout.getTotalOutDimSize())}});
}

SharedAccess blockedAccess(llvm::ArrayRef<int64_t> shape,
                           llvm::ArrayRef<unsigned> sizePerThread,
                           llvm::ArrayRef<unsigned> threadsPerWarp,
                           llvm::ArrayRef<unsigned> warpsPerCTA,
                           llvm::ArrayRef<unsigned> order) {
  return {rowMajor(
      blocked(shape, sizePerThread, threadsPerWarp, warpsPerCTA, order))};
}

int32_t dimSize(const LinearLayout &layout, llvm::StringRef name) {
  return layout.hasInDim(name) ? layout.getInDimSize(name) : 1;
}

/// The "offset" a layout gives register `reg` of lane `lane` of warp `warp`
/// (block 0, any other dimension 0).
uint64_t offsetAt(const LinearLayout &layout, int32_t reg, int32_t lane,
                  int32_t warp) {
  std::vector<int32_t> in;
  for (const InDim &dim : layout.getInDims())
    in.push_back(dim.name == kRegister ? reg
                 : dim.name == kLane   ? lane
                 : dim.name == kWarp   ? warp
                                       : 0);
  return uint64_t(layout.apply(llvm::ArrayRef<int32_t>(in))[0]);
}

/// Physical index of an access's element under a plan, by the definition.
uint64_t physicalAt(const SharedAccess &access, const SharedSwizzle &plan,
                    int32_t reg, int32_t lane, int32_t warp) {
  uint64_t logical = offsetAt(access.layout, reg, lane, warp);
  return plan.swizzle.applyFlat(logical ^ access.xorOffset);
}

/// Wavefronts of one warp instruction (register group `group`, warp `warp`)
/// by simulating the banks: every byte every lane touches, per phase the
/// most distinct U-byte units that share a position in the 128-byte row.
int64_t simulatedWavefronts(const LinearLayout &physical, int32_t vector,
                            int32_t elementBytes, int32_t group, int32_t warp) {
  int32_t accessBytes = vector * elementBytes;
  int32_t unitBytes = std::max(accessBytes, 4);
  int32_t lanesPerPhase = accessBytes == 16 ? 8 : accessBytes == 8 ? 16 : 32;
  int32_t lanes = dimSize(physical, kLane);
  lanesPerPhase = std::min(lanesPerPhase, lanes);
  int64_t wavefronts = 0;
  for (int32_t first = 0; first < lanes; first += lanesPerPhase) {
    std::map<uint64_t, std::set<uint64_t>> unitsByRowPosition;
    for (int32_t lane = first; lane < first + lanesPerPhase; ++lane) {
      for (int32_t i = 0; i < vector; ++i) {
        uint64_t element = offsetAt(physical, group * vector + i, lane, warp);
        for (int32_t b = 0; b < elementBytes; ++b) {
          uint64_t unit = (element * elementBytes + b) / unitBytes;
          unitsByRowPosition[unit % (128 / unitBytes)].insert(unit);
        }
      }
    }
    size_t most = 0;
    for (auto &[position, units] : unitsByRowPosition)
      most = std::max(most, units.size());
    wavefronts += int64_t(most);
  }
  return wavefronts;
}

/// Checks sharedWavefronts against the simulation for every register group
/// and warp of `physical`.
void expectWavefrontsMatchSimulation(const LinearLayout &physical,
                                     int32_t vector, int32_t elementBytes) {
  int64_t formula = sharedWavefronts(physical, vector, elementBytes);
  int32_t groups = dimSize(physical, kRegister) / vector;
  for (int32_t group = 0; group < groups; ++group)
    for (int32_t warp = 0; warp < dimSize(physical, kWarp); ++warp)
      ASSERT_EQ(formula, simulatedWavefronts(physical, vector, elementBytes,
                                             group, warp))
          << "group " << group << " warp " << warp << " vector " << vector
          << " elementBytes " << elementBytes << "\n"
          << physical.toString();
}

/// Checks by enumeration that the plan's swizzle is a bijection of the
/// array and that every access's register groups (of its own vector) are
/// contiguous, in register order, and aligned, within the 16-byte limit.
void expectValidPlan(llvm::ArrayRef<SharedAccess> accesses,
                     const SharedSwizzle &plan, int32_t elementBytes) {
  const LinearLayout &swizzle = plan.swizzle;
  ASSERT_EQ(swizzle.getInDimNames(),
            llvm::SmallVector<std::string>{std::string(kOffset)});
  ASSERT_EQ(swizzle.getOutDimNames(),
            llvm::SmallVector<std::string>{std::string(kOffset)});
  uint64_t size = uint64_t(swizzle.getOutDimSize(kOffset));
  ASSERT_EQ(uint64_t(swizzle.getInDimSize(kOffset)), size);
  std::vector<bool> seen(size, false);
  for (uint64_t logical = 0; logical < size; ++logical) {
    uint64_t physical = swizzle.applyFlat(logical);
    ASSERT_LT(physical, size);
    ASSERT_FALSE(seen[physical]) << "two logical indices at " << physical;
    seen[physical] = true;
  }

  ASSERT_TRUE(plan.accessVectors.empty() ||
              plan.accessVectors.size() == accesses.size());
  for (auto [index, access] : llvm::enumerate(accesses)) {
    // Each access's own vector, at least the shared one.
    int32_t vector = plan.vectorOf(index);
    ASSERT_GE(vector, plan.vectorElements);
    ASSERT_GE(vector, 1);
    ASSERT_EQ(vector & (vector - 1), 0);
    ASSERT_LE(vector * elementBytes, 16);
    const LinearLayout &layout = access.layout;
    ASSERT_EQ(dimSize(layout, kRegister) % vector, 0);
    for (int32_t warp = 0; warp < dimSize(layout, kWarp); ++warp)
      for (int32_t lane = 0; lane < dimSize(layout, kLane); ++lane)
        for (int32_t reg = 0; reg < dimSize(layout, kRegister); ++reg) {
          uint64_t base =
              physicalAt(access, plan, reg - reg % vector, lane, warp);
          ASSERT_EQ(base % uint64_t(vector), 0u) << "misaligned vector";
          ASSERT_EQ(physicalAt(access, plan, reg, lane, warp),
                    base + uint64_t(reg % vector))
              << "register " << reg << " is not in its vector's place";
        }
  }
}

SharedSwizzle rowMajorPlan(int32_t size, int32_t vector = 1) {
  return {LinearLayout::identity1D(size, kOffset, kOffset), vector};
}

int64_t wavefrontsUnder(const SharedAccess &access, const SharedSwizzle &plan,
                        int32_t elementBytes) {
  return sharedWavefronts(access.layout.compose(plan.swizzle),
                          plan.vectorElements, elementBytes);
}

/// A random access layout whose first log2(vector) register bits are the
/// unit offsets 1, 2, ... and whose other bases are multiples of `vector`.
LinearLayout randomPhysicalAccess(std::mt19937 &rng, int32_t indexBits,
                                  int32_t vector) {
  int32_t vectorBits = __builtin_ctz(uint32_t(vector));
  auto aligned = [&] {
    return int32_t(rng() % (uint32_t(1) << (indexBits - vectorBits)))
           << vectorBits;
  };
  InDim registers{std::string(kRegister), {}};
  for (int32_t bit = 0; bit < vectorBits; ++bit)
    registers.bases.push_back({int32_t(1) << bit});
  for (uint32_t extra = rng() % 3; extra > 0; --extra)
    registers.bases.push_back({aligned()});
  InDim lanes{std::string(kLane), {}};
  for (int32_t bit = 0; bit < 5; ++bit)
    lanes.bases.push_back({rng() % 4 == 0 ? 0 : aligned()});
  InDim warps{std::string(kWarp), {}};
  for (uint32_t bit = rng() % 3; bit > 0; --bit)
    warps.bases.push_back({aligned()});
  return LinearLayout({registers, lanes, warps},
                      {{std::string(kOffset), int32_t(1) << indexBits}});
}

//===----------------------------------------------------------------------===//
// The cost model
//===----------------------------------------------------------------------===//

TEST(SharedWavefronts, MatchesSimulationOnRandomLayouts) {
  std::mt19937 rng(1234);
  for (int iter = 0; iter < 600; ++iter) {
    int32_t elementBytes = 1 << (rng() % 4);
    int32_t vector = 1 << (rng() % (5 - __builtin_ctz(elementBytes)));
    int32_t indexBits =
        __builtin_ctz(uint32_t(vector)) + 1 + int32_t(rng() % 12);
    LinearLayout physical = randomPhysicalAccess(rng, indexBits, vector);
    expectWavefrontsMatchSimulation(physical, vector, elementBytes);
  }
}

TEST(SharedWavefronts, MatchesSimulationOnBlockedLayouts) {
  std::mt19937 rng(99);
  for (int iter = 0; iter < 150; ++iter) {
    int32_t elementBytes = 1 << (rng() % 4);
    int64_t rows = int64_t(1) << (rng() % 7), cols = int64_t(1) << (rng() % 7);
    unsigned sptCols = 1u << (rng() % 4);
    unsigned lanesCols = 1u << (rng() % 6);
    unsigned warpsCols = 1u << (rng() % 3);
    unsigned order0 = rng() % 2;
    SharedAccess access = blockedAccess(
        {rows, cols}, {1u << (rng() % 2), sptCols}, {32 / lanesCols, lanesCols},
        {4 / warpsCols, warpsCols}, {order0, 1 - order0});
    // Under the row-major array and under the array planned for it alone.
    expectWavefrontsMatchSimulation(access.layout, 1, elementBytes);
    SharedSwizzle plan = chooseSharedSwizzle({access}, {}, elementBytes);
    expectWavefrontsMatchSimulation(access.layout.compose(plan.swizzle),
                                    plan.vectorElements, elementBytes);
  }
}

TEST(SharedWavefronts, PhasesOfWideAccesses) {
  // 32 lanes, each 16 consecutive bytes: 512 bytes, 4 rows, 4 wavefronts.
  LinearLayout contiguous = LinearLayout::identity1D(4, kRegister, kOffset) *
                            LinearLayout::identity1D(32, kLane, kOffset);
  EXPECT_EQ(sharedWavefronts(contiguous, 4, 4), 4);
  // 8 of those bytes per lane: 16-lane phases over 256 bytes, 2 each.
  EXPECT_EQ(sharedWavefronts(contiguous, 2, 4), 2 * 2);
  // Every lane the same address: one wavefront per phase.
  LinearLayout broadcast = LinearLayout::identity1D(4, kRegister, kOffset) *
                           LinearLayout::zeros1D(32, kLane, kOffset);
  EXPECT_EQ(sharedWavefronts(broadcast, 4, 4), 4);
  EXPECT_EQ(sharedWavefronts(broadcast, 1, 4), 1);
  // Two bytes per lane, lanes 2 bytes apart: 16 words, one wavefront.
  EXPECT_EQ(
      sharedWavefronts(LinearLayout::identity1D(32, kLane, kOffset), 1, 2), 1);
}

TEST(SharedAccessCost, CountsOnlyRepresentativeRegisters) {
  // 8 registers, but register bit 2 repeats nothing new (zero): 4 distinct.
  // Lanes 2 elements apart: 32-lane phases of 4 bytes meet 2-way conflicts,
  // 16-lane phases of 8 bytes none.
  LinearLayout layout({{std::string(kRegister), {{1}, {64}, {0}}},
                       {std::string(kLane), {{2}, {4}, {8}, {16}, {32}}}},
                      {{std::string(kOffset), 128}});
  EXPECT_EQ(sharedAccessCost(layout, 1, 4), 4 * 2);
  EXPECT_EQ(sharedAccessCost(layout, 2, 4), 2 * 2);
}

//===----------------------------------------------------------------------===//
// Named conversions
//===----------------------------------------------------------------------===//

TEST(ChooseSharedSwizzle, Fp32TransposeIsConflictFree) {
  // Writer lanes along columns, reader lanes along rows, 4 warps.
  SharedAccess writer =
      blockedAccess({32, 32}, {1, 1}, {1, 32}, {4, 1}, {1, 0});
  SharedAccess reader =
      blockedAccess({32, 32}, {1, 1}, {32, 1}, {1, 4}, {0, 1});
  SharedSwizzle plan = chooseSharedSwizzle({writer}, {reader}, 4);
  expectValidPlan({writer, reader}, plan, 4);
  EXPECT_EQ(plan.vectorElements, 1);

  SharedSwizzle plain = rowMajorPlan(1024);
  EXPECT_EQ(wavefrontsUnder(writer, plain, 4), 1);
  EXPECT_EQ(wavefrontsUnder(reader, plain, 4), 32);
  EXPECT_EQ(wavefrontsUnder(writer, plan, 4), 1);
  EXPECT_EQ(wavefrontsUnder(reader, plan, 4), 1);
  // 8 instructions each: 8 + 256 wavefronts before, 8 + 8 after.
  EXPECT_EQ(sharedExchangeCost({writer}, {reader}, plain, 4), 8 + 8 * 32);
  EXPECT_EQ(sharedExchangeCost({writer}, {reader}, plan, 4), 8 + 8);
}

TEST(ChooseSharedSwizzle, Fp16SixteenByteVectorsAcrossThreadOrders) {
  // Both sides hold 8 consecutive halves; the reader's lanes go down rows.
  SharedAccess writer = blockedAccess({64, 64}, {1, 8}, {4, 8}, {4, 1}, {1, 0});
  SharedAccess reader = blockedAccess({64, 64}, {1, 8}, {8, 4}, {4, 1}, {0, 1});
  SharedSwizzle plan = chooseSharedSwizzle({writer}, {reader}, 2);
  expectValidPlan({writer, reader}, plan, 2);
  EXPECT_EQ(plan.vectorElements, 8);

  // 16-byte accesses: four phases of 8 lanes, at best one wavefront each.
  SharedSwizzle plain = rowMajorPlan(4096, 8);
  EXPECT_EQ(wavefrontsUnder(writer, plain, 2), 4);
  EXPECT_EQ(wavefrontsUnder(reader, plain, 2), 32);
  EXPECT_EQ(wavefrontsUnder(writer, plan, 2), 4);
  EXPECT_EQ(wavefrontsUnder(reader, plan, 2), 4);
  EXPECT_EQ(sharedExchangeCost({writer}, {reader}, plain, 2), 4 * 4 + 4 * 32);
  EXPECT_EQ(sharedExchangeCost({writer}, {reader}, plan, 2), 4 * 4 + 4 * 4);
}

TEST(ChooseSharedSwizzle, ConflictFreeRowMajorStaysRowMajor) {
  // Lanes along rows on both sides; warps and registers differ.
  SharedAccess writer =
      blockedAccess({32, 32}, {1, 1}, {1, 32}, {4, 1}, {1, 0});
  SharedAccess reader =
      blockedAccess({32, 32}, {2, 1}, {1, 32}, {4, 1}, {1, 0});
  SharedSwizzle plan = chooseSharedSwizzle({writer}, {reader}, 4);
  expectValidPlan({writer, reader}, plan, 4);
  EXPECT_EQ(plan.swizzle, LinearLayout::identity1D(1024, kOffset, kOffset));
  EXPECT_EQ(plan.vectorElements, 1);
  EXPECT_EQ(wavefrontsUnder(writer, plan, 4), 1);
  EXPECT_EQ(wavefrontsUnder(reader, plan, 4), 1);
}

TEST(ChooseSharedSwizzle, OneDimensionalFourPerThreadToOnePerThread) {
  // 1024 elements, 128 threads: 4 then 1 consecutive per thread. The
  // reader's register 0 is 128 elements from its register 1, so the two
  // share no vector; row-major, the writer stores its 4 as one 16-byte
  // vector (4 wavefronts, the minimum for 512 bytes), the reader loads one
  // element per lane without conflicts.
  SharedAccess writer = blockedAccess({1024}, {4}, {32}, {4}, {0});
  SharedAccess reader = blockedAccess({1024}, {1}, {32}, {4}, {0});
  SharedSwizzle plan = chooseSharedSwizzle({writer}, {reader}, 4);
  expectValidPlan({writer, reader}, plan, 4);
  EXPECT_EQ(plan.vectorElements, 1);
  EXPECT_EQ(plan.accessVectors, (llvm::SmallVector<int32_t, 4>{4, 1}));
  SharedSwizzle plain = rowMajorPlan(1024);
  EXPECT_EQ(wavefrontsUnder(writer, plain, 4), 4);
  EXPECT_EQ(wavefrontsUnder(reader, plain, 4), 1);
  EXPECT_EQ(sharedAccessCost(writer.layout.compose(plan.swizzle), 4, 4), 2 * 4);
  EXPECT_EQ(wavefrontsUnder(reader, plan, 4), 1);
  EXPECT_EQ(sharedExchangeCost({writer}, {reader}, plain, 4), 8 * 4 + 8);
  EXPECT_EQ(sharedExchangeCost({writer}, {reader}, plan, 4), 8 + 8);
}

TEST(ChooseSharedSwizzle, OneDimensionalSharedVectorIsCappedBySixteenBytes) {
  // Writer 4 and reader 8 consecutive per thread share registers 0-1.
  SharedAccess writer = blockedAccess({1024}, {4}, {32}, {4}, {0});
  SharedAccess reader = blockedAccess({1024}, {8}, {32}, {4}, {0});
  for (int32_t elementBytes : {1, 2, 4, 8, 16}) {
    SharedSwizzle plan = chooseSharedSwizzle({writer}, {reader}, elementBytes);
    expectValidPlan({writer, reader}, plan, elementBytes);
    EXPECT_EQ(plan.vectorElements, std::min(4, 16 / elementBytes))
        << elementBytes << "-byte elements";
  }
  // fp32: the reader's lanes are 32 bytes apart, a 2-way conflict per phase
  // of 16-byte loads that the swizzle removes.
  SharedSwizzle plan = chooseSharedSwizzle({writer}, {reader}, 4);
  EXPECT_EQ(wavefrontsUnder(reader, rowMajorPlan(1024, 4), 4), 8);
  EXPECT_EQ(wavefrontsUnder(reader, plan, 4), 4);
  EXPECT_EQ(wavefrontsUnder(writer, plan, 4), 4);
}

TEST(ChooseSharedSwizzle, LargestArrayByteTranspose) {
  // 2^20 one-byte elements: the planner only ever looks at bases.
  SharedAccess writer =
      blockedAccess({1024, 1024}, {1, 1}, {1, 32}, {8, 1}, {1, 0});
  SharedAccess reader =
      blockedAccess({1024, 1024}, {1, 1}, {32, 1}, {1, 8}, {0, 1});
  SharedSwizzle plan = chooseSharedSwizzle({writer}, {reader}, 1);
  EXPECT_EQ(plan.vectorElements, 1);
  EXPECT_TRUE(plan.swizzle.isInvertible());
  SharedSwizzle plain = rowMajorPlan(1 << 20);
  EXPECT_EQ(wavefrontsUnder(writer, plain, 1), 1);
  EXPECT_EQ(wavefrontsUnder(reader, plain, 1), 32);
  EXPECT_EQ(wavefrontsUnder(writer, plan, 1), 1);
  EXPECT_EQ(wavefrontsUnder(reader, plan, 1), 1);
}

TEST(ChooseSharedSwizzle, VectorShrinksUntilAligned) {
  // Registers 0-1 are elements 1 and 2 in both, but lane 1 starts at
  // element 2: only pairs stay aligned.
  LinearLayout layout({{std::string(kRegister), {{1}, {2}, {16}}},
                       {std::string(kLane), {{2}, {4}, {8}}}},
                      {{std::string(kOffset), 32}});
  SharedAccess access{layout};
  SharedSwizzle plan = chooseSharedSwizzle({access}, {access}, 4);
  expectValidPlan({access, access}, plan, 4);
  EXPECT_EQ(plan.vectorElements, 2);

  // An offset of 1 (join's rhs) leaves no room for vectors at all.
  SharedAccess lhs{
      rowMajor(blocked({64}, {2}, {32}, {1}, {0}))
          .compose(LinearLayout(
              {{std::string(kOffset), {{2}, {4}, {8}, {16}, {32}, {64}}}},
              {{std::string(kOffset), 128}}))};
  SharedAccess rhs{lhs.layout, 1};
  SharedAccess joined = blockedAccess({64, 2}, {1, 2}, {32, 1}, {1, 1}, {1, 0});
  plan = chooseSharedSwizzle({lhs, rhs}, {joined}, 4);
  expectValidPlan({lhs, rhs, joined}, plan, 4);
  EXPECT_EQ(plan.vectorElements, 1);
}

TEST(ChooseSharedSwizzle, VectorBasesMoveToTheBottom) {
  // Both sides hold 4 consecutive rows of one column: the vector runs down
  // a column, so the array is no longer row-major at all.
  SharedAccess writer =
      blockedAccess({64, 32}, {4, 1}, {1, 32}, {4, 1}, {1, 0});
  SharedAccess reader = blockedAccess({64, 32}, {4, 1}, {4, 8}, {2, 2}, {0, 1});
  SharedSwizzle plan = chooseSharedSwizzle({writer}, {reader}, 4);
  expectValidPlan({writer, reader}, plan, 4);
  EXPECT_EQ(plan.vectorElements, 4);
  EXPECT_LE(sharedExchangeCost({writer}, {reader}, plan, 4),
            sharedExchangeCost({writer}, {reader}, rowMajorPlan(2048), 4));
}

//===----------------------------------------------------------------------===//
// Properties on random conversions
//===----------------------------------------------------------------------===//

/// A random blocked layout of `shape` with `warps` warps.
SharedAccess randomBlocked(std::mt19937 &rng, llvm::ArrayRef<int64_t> shape,
                           unsigned warps) {
  size_t rank = shape.size();
  std::vector<unsigned> spt(rank), tpw(rank, 1), wpc(rank, 1), order(rank);
  for (size_t d = 0; d < rank; ++d) {
    spt[d] = 1u << (rng() % 4);
    order[d] = unsigned(d);
  }
  for (unsigned t = 1; t < 32; t *= 2)
    tpw[rng() % rank] *= 2;
  for (unsigned w = 1; w < warps; w *= 2)
    wpc[rng() % rank] *= 2;
  std::shuffle(order.begin(), order.end(), rng);
  return blockedAccess(shape, spt, tpw, wpc, order);
}

TEST(ChooseSharedSwizzle, WideReaderBesideNarrowWriter) {
  // A matmul epilogue's shape: the writer holds 2 consecutive fp16 per
  // register pair (mma-like: register 0 along columns, register 1 eight
  // rows down), the reader 8 consecutive (a 16-byte global store). They
  // share 2 elements; the reader's run at the bottom lets it load 16 bytes
  // while the writer still stores 4.
  SharedAccess writer = blockedAccess({64, 64}, {2, 2}, {8, 4}, {4, 1}, {1, 0});
  SharedAccess reader = blockedAccess({64, 64}, {1, 8}, {4, 8}, {4, 1}, {1, 0});
  SharedSwizzle plan = chooseSharedSwizzle({writer}, {reader}, 2);
  expectValidPlan({writer, reader}, plan, 2);
  EXPECT_EQ(plan.vectorElements, 2);
  EXPECT_EQ(plan.accessVectors, (llvm::SmallVector<int32_t, 4>{2, 8}));
  EXPECT_LT(
      sharedExchangeCost({writer}, {reader}, plan, 2),
      sharedExchangeCost({writer}, {reader}, rowMajorPlan(64 * 64, 2), 2));
}

TEST(ChooseSharedSwizzle, RandomConversionsAreValidAndNoWorseThanRowMajor) {
  std::mt19937 rng(7);
  for (int iter = 0; iter < 300; ++iter) {
    size_t rank = 1 + rng() % 3;
    std::vector<int64_t> shape;
    for (size_t d = 0; d < rank; ++d)
      shape.push_back(int64_t(1) << (rng() % (rank == 1   ? 12
                                              : rank == 2 ? 7
                                                          : 5)));
    unsigned warps = 1u << (rng() % 4);
    int32_t elementBytes = 1 << (rng() % 5);
    SharedAccess writer = randomBlocked(rng, shape, warps);
    SharedAccess reader = randomBlocked(rng, shape, warps);
    SharedSwizzle plan = chooseSharedSwizzle({writer}, {reader}, elementBytes);
    SCOPED_TRACE(writer.layout.toString() + reader.layout.toString());
    expectValidPlan({writer, reader}, plan, elementBytes);
    int64_t size = writer.layout.getOutDimSize(kOffset);
    int64_t planned =
        sharedExchangeCost({writer}, {reader}, plan, elementBytes);
    EXPECT_LE(planned,
              sharedExchangeCost({writer}, {reader},
                                 rowMajorPlan(int32_t(size)), elementBytes));
    // Where the plan's vector sits at the bottom of the row-major array,
    // the unswizzled array with the same vector is also a candidate.
    SharedSwizzle plainVector =
        rowMajorPlan(int32_t(size), plan.vectorElements);
    bool rowMajorVector = true;
    for (int32_t bit = 0; (1 << bit) < plan.vectorElements; ++bit)
      rowMajorVector &= plan.swizzle.getBasis(kOffset, bit)[0] == 1 << bit;
    if (rowMajorVector)
      EXPECT_LE(planned, sharedExchangeCost({writer}, {reader}, plainVector,
                                            elementBytes));
  }
}

} // namespace
} // namespace kiln::layout
