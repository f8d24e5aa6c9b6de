// TargetInfo answers every feature and limit question per architecture; one
// test per listed arch pins what a pass or lowering will be told.
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
