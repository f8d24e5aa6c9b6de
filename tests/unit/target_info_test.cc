// TargetInfo answers every feature and limit question per architecture; one
// test per listed arch pins what a pass or lowering will be told.
#include "compiler/ir/Occupancy.h"
#include "compiler/ir/TargetInfo.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

namespace {

using kiln::TargetInfo;

TargetInfo target(const char *name) {
  std::optional<TargetInfo> t = TargetInfo::parse(name);
  EXPECT_TRUE(t.has_value()) << name;
  return t.value_or(*TargetInfo::parse("sm_80"));
}

TEST(TargetInfo, Sm80) {
  TargetInfo t = target("sm_80");
  EXPECT_EQ(t.computeCapability(), 80u);
  EXPECT_TRUE(t.hasMmaSync());
  EXPECT_FALSE(t.hasFp8MmaSync());
  EXPECT_FALSE(t.hasWgmma());
  EXPECT_TRUE(t.hasCpAsync());
  EXPECT_TRUE(t.hasLdmatrix());
  EXPECT_FALSE(t.hasTma());
  EXPECT_FALSE(t.hasClusters());
  EXPECT_EQ(t.maxSharedBytes(), 163 * 1024);
}

TEST(TargetInfo, Sm86AndSm89) {
  for (const char *name : {"sm_86", "sm_89"}) {
    TargetInfo t = target(name);
    EXPECT_TRUE(t.hasMmaSync()) << name;
    EXPECT_FALSE(t.hasWgmma()) << name;
    EXPECT_FALSE(t.hasTma()) << name;
    EXPECT_EQ(t.maxSharedBytes(), 99 * 1024) << name;
  }
  EXPECT_FALSE(target("sm_86").hasFp8MmaSync());
  EXPECT_TRUE(target("sm_89").hasFp8MmaSync());
}

TEST(TargetInfo, Sm90TakesTheMmaSyncPath) {
  // wgmma needs the arch-specific sm_90a; plain sm_90 gets mma.sync.
  TargetInfo t = target("sm_90");
  EXPECT_EQ(t.computeCapability(), 90u);
  EXPECT_TRUE(t.hasMmaSync());
  EXPECT_FALSE(t.hasWgmma());
  EXPECT_TRUE(t.hasTma());
  EXPECT_TRUE(t.hasClusters());
  EXPECT_EQ(t.maxSharedBytes(), 227 * 1024);
}

TEST(TargetInfo, Sm90a) {
  TargetInfo t = target("sm_90a");
  EXPECT_EQ(t.computeCapability(), 90u);
  EXPECT_TRUE(t.hasWgmma());
  EXPECT_TRUE(t.hasFp8MmaSync());
  EXPECT_TRUE(t.hasCpAsync());
  EXPECT_TRUE(t.hasTma());
  EXPECT_EQ(t.maxSharedBytes(), 227 * 1024);
  EXPECT_EQ(t.name(), "sm_90a");
}

TEST(TargetInfo, Sm100aAndSm120a) {
  EXPECT_EQ(target("sm_100a").computeCapability(), 100u);
  EXPECT_FALSE(target("sm_100a").hasWgmma()); // wgmma is sm_90a's alone
  EXPECT_EQ(target("sm_100a").maxSharedBytes(), 227 * 1024);
  EXPECT_EQ(target("sm_120a").computeCapability(), 120u);
  EXPECT_EQ(target("sm_120a").maxSharedBytes(), 99 * 1024);
}

TEST(TargetInfo, ArchsWithoutSuffixAndFamilies) {
  // sm_100 and sm_120 (no suffix) and the `f` families have the features of
  // their compute capability; none is arch-specific, so none gets wgmma.
  for (const char *name :
       {"sm_100", "sm_100f", "sm_103a", "sm_110", "sm_121f"}) {
    TargetInfo t = target(name);
    EXPECT_FALSE(t.hasWgmma()) << name;
    EXPECT_TRUE(t.hasTma()) << name;
  }
  EXPECT_EQ(target("sm_100f").computeCapability(), 100u);
  EXPECT_EQ(target("sm_100f").maxSharedBytes(), 227 * 1024);
  EXPECT_EQ(target("sm_120").maxSharedBytes(), 99 * 1024);
  EXPECT_EQ(target("sm_121f").computeCapability(), 121u);
  EXPECT_EQ(target("sm_87").maxSharedBytes(), 163 * 1024);
  EXPECT_EQ(target("sm_88").maxSharedBytes(), 99 * 1024);
}

TEST(TargetInfo, UnknownNamesAreRejected) {
  for (const char *name :
       {"sm_91", "sm_90b", "sm_75", "", "sm90a", "gfx90a", "sm_90f", "sm_80a"})
    EXPECT_FALSE(TargetInfo::parse(name).has_value()) << name;
}

TEST(TargetInfo, ReadFromTheModule) {
  mlir::MLIRContext context;
  mlir::OpBuilder b(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(b.getUnknownLoc());
  // No attribute: sm_80 (kiln-opt on a hand-written test).
  EXPECT_EQ(TargetInfo::of(*module).name(), "sm_80");
  (*module)->setAttr(TargetInfo::kAttrName, b.getStringAttr("sm_90a"));
  EXPECT_TRUE(TargetInfo::of(*module).hasWgmma());
}

} // namespace

// The occupancy arithmetic (compiler/ir/Occupancy.h) against the CUDA
// occupancy calculator's figures.
TEST(Occupancy, BlocksAndRegisterBudgets) {
  TargetInfo sm90 = target("sm_90a");
  // Causal attention, d64: 4 warps, 64 KB of shared memory: 3 blocks fit
  // the shared memory (228 KB per SM, 1 KB reserved per block); 230
  // registers allow 2, 168 allow 3.
  EXPECT_EQ(kiln::blocksPerSMBeforeRegisters(sm90, 128, 65536), 3u);
  EXPECT_EQ(kiln::blocksPerSMByRegisters(128, 230), 2u);
  EXPECT_EQ(kiln::blocksPerSMByRegisters(128, 168), 3u);
  EXPECT_EQ(kiln::registerBudget(128, 3), 168u);
  EXPECT_EQ(kiln::registerBudget(128, 1), 255u);
  // Without shared memory, threads and the block limit decide.
  EXPECT_EQ(kiln::blocksPerSMBeforeRegisters(sm90, 128, 0), 16u);
  EXPECT_EQ(kiln::blocksPerSMBeforeRegisters(sm90, 32, 0), 32u);
  EXPECT_EQ(kiln::blocksPerSMBeforeRegisters(target("sm_86"), 128, 0), 12u);
  // Registers are allocated per warp in units of 256: 33 registers take 40.
  EXPECT_EQ(kiln::blocksPerSMByRegisters(256, 33), 6u);
  EXPECT_EQ(kiln::registerBudget(256, 6), 40u);
  // A block larger than the SM's shared memory does not fit at all.
  EXPECT_EQ(kiln::blocksPerSMBeforeRegisters(sm90, 128, 300 * 1024), 0u);
}

// Warp-specialized kernels: the producer warpgroup keeps 40 registers per
// thread, the consumers take the rest of the block's share, and as many
// blocks share an SM as the shared memory allows while the consumers keep
// 168 or more.
TEST(Occupancy, WarpSpecializedBlocksAndRegisters) {
  TargetInfo sm90 = target("sm_90a");
  // 8 consumer warps alone on the SM: 384 threads start with 168, the
  // consumers take 232.
  EXPECT_EQ(kiln::warpSpecializedStartRegisters(384), 168u);
  EXPECT_EQ(kiln::consumerRegisters(8), 232u);
  // 4 consumer warps alone keep the 248 they start with.
  EXPECT_EQ(kiln::consumerRegisters(4), 248u);
  // Two blocks of 4 consumer warps: 128 to start, 216 for the consumers
  // ((32768 - 128 * 40) / 128, a multiple of 8).
  EXPECT_EQ(kiln::warpSpecializedStartRegisters(256, 2), 128u);
  EXPECT_EQ(kiln::consumerRegisters(4, 2), 216u);
  // Tutorial 06 at HEAD_DIM 64 (83 KB): two blocks fit the shared memory
  // and leave the consumers 216; three would leave them 128.
  EXPECT_EQ(kiln::warpSpecializedBlocks(sm90, 4, 82944), 2u);
  EXPECT_EQ(kiln::consumerRegisters(4, 3), 128u);
  // With 48 KB, three fit the shared memory, but the registers say two.
  EXPECT_EQ(kiln::warpSpecializedBlocks(sm90, 4, 48 * 1024), 2u);
  // 8 consumer warps: two blocks would leave the consumers 104.
  EXPECT_EQ(kiln::warpSpecializedBlocks(sm90, 8, 48 * 1024), 1u);
  EXPECT_EQ(kiln::warpSpecializedBlocks(sm90, 8, 164864), 1u);
}
