// TensorCoreFlavour decides which tensor-core instruction a dot takes; one
// test per rule the passes and lowerings ask it about: which flavours wgmma
// reads a from registers for, which need K-contiguous tiles, and where only
// mma.sync (or nothing) is left.
#include "compiler/ir/TensorCoreFlavour.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

namespace {

using kiln::InputPrecision;
using kiln::TargetInfo;
using kiln::TensorCoreFlavour;

class TensorCoreFlavourTest : public ::testing::Test {
protected:
  std::optional<TensorCoreFlavour>
  flavour(mlir::Type operand, mlir::Type acc, const char *arch,
          InputPrecision precision = InputPrecision::TF32) {
    return kiln::tensorCoreFlavour(operand, operand, acc, precision,
                                   target(arch));
  }
  static TargetInfo target(const char *arch) {
    return *TargetInfo::parse(arch);
  }
  // fitsWgmma for a 128 x 64 accumulator of 4 warps, all along M.
  static bool wgmma(const TensorCoreFlavour &f, const char *arch,
                    bool aKContiguous, bool bKContiguous, bool aInRegisters) {
    return f.fitsWgmma(target(arch), 128, 64, 4, 4, 64, aKContiguous,
                       bKContiguous, aInRegisters);
  }

  mlir::MLIRContext context;
  mlir::Builder b{&context};
};

TEST_F(TensorCoreFlavourTest, SixteenBitTakesEveryOperandForm) {
  std::optional<TensorCoreFlavour> f =
      flavour(b.getF16Type(), b.getF32Type(), "sm_90a");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->kStep(), 16);
  EXPECT_TRUE(f->transposable());
  EXPECT_TRUE(f->registerA());
  EXPECT_TRUE(wgmma(*f, "sm_90a", false, false, false));
  EXPECT_TRUE(wgmma(*f, "sm_90a", true, true, true));
}

TEST_F(TensorCoreFlavourTest, WarpgroupsSplitNWhereMIsOneTile) {
  std::optional<TensorCoreFlavour> f16 =
      flavour(b.getF16Type(), b.getF32Type(), "sm_90a");
  std::optional<TensorCoreFlavour> i8 =
      flavour(b.getIntegerType(8), b.getIntegerType(32), "sm_90a");
  ASSERT_TRUE(f16 && i8);
  // 64 x 256 at 8 warps: two warpgroups of 128 columns each.
  EXPECT_EQ(f16->columnsSplittingN(64, 256, 8), 128);
  EXPECT_TRUE(
      f16->fitsWgmma(target("sm_90a"), 64, 256, 8, 4, 128, true, false, false));
  // 16-bit a from registers too (its layout is the callers' to check:
  // layout::holdsAFragments); 8-bit a from registers only with all warps
  // along M. Not with the warps' columns interleaved.
  EXPECT_TRUE(
      f16->fitsWgmma(target("sm_90a"), 64, 256, 8, 4, 128, true, false, true));
  EXPECT_FALSE(
      i8->fitsWgmma(target("sm_90a"), 64, 256, 8, 4, 128, true, true, true));
  EXPECT_FALSE(
      f16->fitsWgmma(target("sm_90a"), 64, 256, 8, 4, 256, true, false, false));
  // 128 rows at 8 warps go along M; 64 fp16 columns split in two would not
  // start on a 128-byte panel of an N-major b; 8-bit b is K-major, whole
  // 8-line atoms (DeepSeek-V3's fp8 64 x 128 at 8 warps).
  EXPECT_EQ(f16->columnsSplittingN(128, 256, 8), 0);
  EXPECT_EQ(f16->columnsSplittingN(64, 64, 8), 0);
  EXPECT_EQ(i8->columnsSplittingN(64, 256, 8), 128);
  EXPECT_EQ(i8->columnsSplittingN(64, 128, 8), 64);
  EXPECT_EQ(i8->columnsSplittingN(64, 32, 8), 16);
  // 16 warps on 64 rows: four warpgroups along N.
  EXPECT_EQ(f16->columnsSplittingN(64, 256, 16), 64);
}

TEST_F(TensorCoreFlavourTest, WarpgroupsBeyondTheRowsComputeCopies) {
  std::optional<TensorCoreFlavour> f16 =
      flavour(b.getF16Type(), b.getF32Type(), "sm_90a");
  ASSERT_TRUE(f16);
  // 64 rows with all 8 (or 16) warps along M: each warpgroup computes the
  // one m64 tile (attention's scores beside p @ v's warpgroups along N).
  EXPECT_TRUE(
      f16->fitsWgmma(target("sm_90a"), 64, 64, 8, 8, 64, true, false, false));
  EXPECT_TRUE(
      f16->fitsWgmma(target("sm_90a"), 64, 64, 16, 16, 64, true, false, false));
  // Not rows that the warpgroups neither tile nor repeat.
  EXPECT_FALSE(
      f16->fitsWgmma(target("sm_90a"), 192, 64, 8, 8, 64, true, false, false));
  EXPECT_FALSE(
      f16->fitsWgmma(target("sm_90a"), 32, 64, 8, 8, 64, true, false, false));
}

TEST_F(TensorCoreFlavourTest, EightBitAFromRegistersWithKContiguousB) {
  for (mlir::Type fp8 : {mlir::Type(b.getType<mlir::Float8E5M2Type>()),
                         mlir::Type(b.getType<mlir::Float8E4M3FNType>())}) {
    std::optional<TensorCoreFlavour> f = flavour(fp8, b.getF32Type(), "sm_90a");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->kStep(), 32);
    EXPECT_FALSE(f->transposable());
    EXPECT_TRUE(f->registerA());
    // Attention's p @ v: p in registers, v's tile K-contiguous.
    EXPECT_TRUE(wgmma(*f, "sm_90a", true, true, true));
    // wgmma transposes no 8-bit tile: b must run along K.
    EXPECT_FALSE(wgmma(*f, "sm_90a", true, false, true));
    EXPECT_FALSE(wgmma(*f, "sm_90a", false, true, false));
  }
  std::optional<TensorCoreFlavour> s8 =
      flavour(b.getIntegerType(8), b.getIntegerType(32), "sm_90a");
  ASSERT_TRUE(s8);
  EXPECT_TRUE(s8->integer);
  EXPECT_TRUE(s8->registerA());
}

TEST_F(TensorCoreFlavourTest, Tf32ReadsAFromSharedMemoryOnly) {
  std::optional<TensorCoreFlavour> f =
      flavour(b.getF32Type(), b.getF32Type(), "sm_90a");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->kStep(), 8);
  EXPECT_FALSE(f->registerA());
  EXPECT_TRUE(wgmma(*f, "sm_90a", true, true, false));
  EXPECT_FALSE(wgmma(*f, "sm_90a", true, true, true));
  // ieee precision: no tensor cores at all.
  EXPECT_FALSE(
      flavour(b.getF32Type(), b.getF32Type(), "sm_90a", InputPrecision::IEEE));
}

TEST_F(TensorCoreFlavourTest, Fp8OnlyWhereAnInstructionTakesIt) {
  mlir::Type fp8 = b.getType<mlir::Float8E5M2Type>();
  // Plain sm_90 and sm_89: mma.sync (m16n8k32), no wgmma.
  for (const char *arch : {"sm_90", "sm_89"}) {
    std::optional<TensorCoreFlavour> f = flavour(fp8, b.getF32Type(), arch);
    ASSERT_TRUE(f) << arch;
    EXPECT_TRUE(f->hasMmaSync(target(arch))) << arch;
    EXPECT_FALSE(wgmma(*f, arch, true, true, true)) << arch;
  }
  // sm_80 has no fp8 instruction: the multiply-add loop.
  EXPECT_FALSE(flavour(fp8, b.getF32Type(), "sm_80"));
}

} // namespace
