// Unit tests of the warp-shuffle conversion planner
// (compiler/layout/WarpShuffle.h): every plan is executed on a simulated
// CTA — each thread's source registers hold the tensor index of their
// element, each step's providers send, readers read and keep — and every
// destination register of every thread must end up holding its element.

#include "compiler/layout/BlockedLayouts.h"
#include "compiler/layout/WarpShuffle.h"

#include <gtest/gtest.h>

#include <random>

namespace kiln::layout {
namespace {

using InDim = LinearLayout::InDim;
using OutDim = LinearLayout::OutDim;

/// Runs `plan` on every warp and checks each destination register holds
/// dst's element. Returns the number of steps that exchanged data.
void simulate(const LinearLayout &src, const LinearLayout &dst,
              const WarpShufflePlan &plan) {
  int32_t srcRegs = src.getInDimSize(kRegister);
  int32_t dstRegs = dst.getInDimSize(kRegister);
  int32_t warps = int32_t(1) << plan.warpBits;
  int32_t lanes = int32_t(1) << plan.laneBits;
  auto element = [](const LinearLayout &l, int32_t reg, int32_t tid) {
    int32_t lane = tid % 32, warp = tid / 32;
    if (lane >= l.getInDimSize(kLane))
      lane %= l.getInDimSize(kLane); // lanes a layout lacks hold copies
    llvm::SmallVector<std::pair<llvm::StringRef, int32_t>> in = {
        {kRegister, reg}, {kLane, lane}, {kWarp, warp}};
    if (l.hasInDim(kBlock))
      in.push_back({kBlock, 0});
    return l.apply(in);
  };
  for (int32_t warp = 0; warp < warps; ++warp) {
    std::vector<std::vector<int64_t>> result(lanes,
                                             std::vector<int64_t>(dstRegs, -1));
    for (const ShuffleStep &step : plan.steps) {
      std::vector<int32_t> sent(lanes);
      for (int32_t lane = 0; lane < lanes; ++lane) {
        int32_t reg = step.send(uint32_t(warp * 32 + lane));
        ASSERT_GE(reg, 0);
        ASSERT_LT(reg, srcRegs);
        sent[lane] = reg;
      }
      for (int32_t lane = 0; lane < lanes; ++lane) {
        uint32_t tid = uint32_t(warp * 32 + lane);
        if (plan.selector(tid) != step.selectorValue)
          continue;
        int32_t from = step.readLane(tid);
        ASSERT_GE(from, 0);
        ASSERT_LT(from, lanes);
        auto value =
            element(src, sent[from], warp * 32 + from); // provider's register
        for (int32_t r : step.destinations) {
          ASSERT_EQ(value, element(dst, r, int32_t(tid)))
              << "warp " << warp << " lane " << lane << " register " << r;
          result[lane][r] = 1;
        }
      }
    }
    for (int32_t lane = 0; lane < lanes; ++lane)
      for (int32_t r = 0; r < dstRegs; ++r)
        ASSERT_EQ(result[lane][r], 1) << "warp " << warp << " lane " << lane
                                      << " register " << r << " never written";
  }
}

/// A layout over a 1-D tensor of 2^(regBits + 5 + warpBits) elements whose
/// input bits map to the columns in `columns` (registers, lanes, warps).
LinearLayout fromColumns(const std::vector<int32_t> &columns, int32_t regBits,
                         int32_t warpBits, int32_t tensorBits) {
  auto dim = [&](llvm::StringRef name, int32_t first, int32_t count) {
    InDim in{name.str(), {}};
    for (int32_t i = 0; i < count; ++i)
      in.bases.push_back({columns[first + i]});
    return in;
  };
  std::vector<InDim> ins = {dim(kRegister, 0, regBits), dim(kLane, regBits, 5),
                            dim(kWarp, regBits + 5, warpBits)};
  std::vector<OutDim> outs = {{tensorDimName(0), int32_t(1) << tensorBits}};
  return LinearLayout(ins, outs);
}

/// A random invertible n x n matrix over GF(2), as columns.
std::vector<int32_t> randomInvertible(std::mt19937 &rng, int32_t n) {
  std::vector<int32_t> columns(n);
  for (int32_t i = 0; i < n; ++i)
    columns[i] = int32_t(1) << i;
  for (int round = 0; round < 4 * n * n; ++round) {
    int32_t i = int32_t(rng() % n), j = int32_t(rng() % n);
    if (i != j)
      columns[i] ^= columns[j];
  }
  std::shuffle(columns.begin(), columns.end(), rng);
  return columns;
}

/// Random pairs whose data stays in each warp: dst's registers and lanes are
/// an invertible mix of src's (some zeroed: copies), dst's warps are src's
/// plus register/lane terms.
TEST(WarpShuffleTest, RandomConversionsWithinWarps) {
  std::mt19937 rng(20261123);
  int planned = 0, providerSide = 0;
  for (int trial = 0; trial < 400; ++trial) {
    int32_t regBits = int32_t(rng() % 4), warpBits = int32_t(rng() % 3);
    int32_t n = regBits + 5 + warpBits;
    std::vector<int32_t> srcColumns = randomInvertible(rng, n);
    // src copies: zero one register or lane basis now and then (dst may
    // then only need elements that remain).
    LinearLayout src = fromColumns(srcColumns, regBits, warpBits, n);
    std::vector<int32_t> mix = randomInvertible(rng, regBits + 5);
    std::vector<int32_t> dstColumns(n);
    auto srcOf = [&](int32_t combination) {
      int32_t value = 0;
      for (int32_t k = 0; k < regBits + 5; ++k)
        if ((combination >> k) & 1)
          value ^= srcColumns[k];
      return value;
    };
    for (int32_t k = 0; k < regBits + 5; ++k)
      dstColumns[k] = srcOf(mix[k]);
    for (int32_t j = 0; j < warpBits; ++j)
      dstColumns[regBits + 5 + j] =
          srcColumns[regBits + 5 + j] ^
          (rng() % 2 ? srcOf(int32_t(rng() % (1u << (regBits + 5)))) : 0);
    if (trial % 3 == 0 && regBits + 5 > 0) // dst holds copies
      dstColumns[rng() % (regBits + 5)] = 0;
    LinearLayout dst = fromColumns(dstColumns, regBits, warpBits, n);
    SCOPED_TRACE("trial " + std::to_string(trial) + "\nsrc " + src.toString() +
                 "\ndst " + dst.toString());
    std::optional<ConversionPlan> conversion = planConversion(src, dst);
    ASSERT_TRUE(conversion.has_value());
    std::optional<WarpShufflePlan> plan = planWarpShuffle(src, dst);
    if (conversion->kind != ConversionKind::WarpShuffle) {
      EXPECT_FALSE(plan.has_value());
      continue;
    }
    ASSERT_TRUE(plan.has_value());
    ++planned;
    providerSide += plan->selector.isConstant();
    simulate(src, dst, *plan);
    // Steps are shared by registers that read the same source.
    EXPECT_LE(plan->steps.size(), size_t(1) << regBits << 5);
  }
  EXPECT_GT(planned, 300);
  // Both ways of choosing registers are exercised.
  EXPECT_GT(providerSide, 0);
  EXPECT_LT(providerSide, planned);
}

/// The 2-D cases the compiler meets: blocked layouts of one tile that
/// differ in how a warp's lanes and registers cover it.
TEST(WarpShuffleTest, BlockedLayoutsWithinAWarp) {
  struct Case {
    std::vector<int64_t> shape;
    std::vector<unsigned> srcSpt, srcTpw, dstSpt, dstTpw, warps;
    int64_t steps; // expected
  };
  std::vector<Case> cases = {
      // Row-wise vs column-wise 32x32 in one warp: every reader needs a
      // different register of one provider, so readers select among 32
      // shuffles per register (the lowering prefers shared memory here).
      {{32, 32}, {1, 1}, {1, 32}, {1, 1}, {32, 1}, {1, 1}, 1024},
      // 4x1 vs 1x4 chunks: the same, worse.
      {{64, 32}, {1, 4}, {4, 8}, {4, 1}, {8, 4}, {1, 1}, 2048},
      // 4 consecutive columns per lane vs one column every 32: the register
      // a reader needs depends on its lane bits 0-1, which no provider sees.
      {{8, 128}, {1, 4}, {1, 32}, {1, 1}, {1, 32}, {8, 1}, 16},
      // 8 consecutive vs 2 consecutive: the register depends on lane bits
      // 0-1 of the reader, which are bits 1-2 of the provider it reads: one
      // shuffle per destination register, providers select what to send.
      {{16, 64}, {1, 8}, {1, 32}, {1, 2}, {1, 32}, {16, 1}, 2},
  };
  for (const Case &c : cases) {
    LinearLayout src = blocked(c.shape, c.srcSpt, c.srcTpw, c.warps, {1, 0});
    LinearLayout dst = blocked(c.shape, c.dstSpt, c.dstTpw, c.warps, {1, 0});
    SCOPED_TRACE("src " + src.toString() + "\ndst " + dst.toString());
    std::optional<WarpShufflePlan> plan = planWarpShuffle(src, dst);
    ASSERT_TRUE(plan.has_value());
    simulate(src, dst, *plan);
    EXPECT_FALSE(plan->readsOwnLane());
    EXPECT_EQ(int64_t(plan->steps.size()), c.steps);
  }
}

/// A slice (reduced) layout broadcast back in another arrangement: copies in
/// the source, so readers pick among providers.
TEST(WarpShuffleTest, SliceToBlocked) {
  LinearLayout parent = blocked({32, 32}, {1, 1}, {4, 8}, {1, 1}, {1, 0});
  LinearLayout src = slice(parent, 1); // 32 rows over 4 lane bits...
  LinearLayout dst = blocked({32}, {1}, {32}, {1}, {0});
  SCOPED_TRACE("src " + src.toString() + "\ndst " + dst.toString());
  std::optional<WarpShufflePlan> plan = planWarpShuffle(src, dst);
  ASSERT_TRUE(plan.has_value());
  simulate(src, dst, *plan);
}

/// Registers that differ per lane but never leave the thread: selects only.
TEST(WarpShuffleTest, LaneDependentRegistersNeedNoShuffle) {
  // src: register bit 0 -> element 1, lane bit 0 -> element 2.
  // dst: register bit 0 -> element 1 ^ 2... keeps each thread's elements.
  auto oneDim = [](std::vector<int32_t> laneBases) {
    InDim lanes{kLane.str(), {}};
    for (int32_t v : laneBases)
      lanes.bases.push_back({v});
    std::vector<InDim> ins = {InDim{kRegister.str(), {{1}}}, lanes,
                              InDim{kWarp.str(), {}}};
    std::vector<OutDim> outs = {{tensorDimName(0), 64}};
    return LinearLayout(ins, outs);
  };
  LinearLayout src = oneDim({2, 4, 8, 16, 32});
  LinearLayout dst = oneDim({3, 4, 8, 16, 32});
  std::optional<WarpShufflePlan> plan = planWarpShuffle(src, dst);
  ASSERT_TRUE(plan.has_value());
  EXPECT_TRUE(plan->readsOwnLane());
  simulate(src, dst, *plan);
  EXPECT_EQ(plan->estimatedInstructions(32), 2); // a select per register
}

TEST(WarpShuffleTest, NotWithinAWarp) {
  LinearLayout src = blocked({64, 64}, {1, 4}, {4, 8}, {4, 1}, {1, 0});
  LinearLayout dst = blocked({64, 64}, {1, 4}, {4, 8}, {1, 4}, {1, 0});
  EXPECT_FALSE(planWarpShuffle(src, dst).has_value());
  EXPECT_FALSE(planWarpShuffle(src, src).has_value()); // no-op
}

} // namespace
} // namespace kiln::layout
