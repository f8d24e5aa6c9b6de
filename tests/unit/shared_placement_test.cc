// kiln::SharedPlacement with planned buffers, as kiln-stage-dots asks it
// before allocating a dot's tiles: a buffer planned in a second loop takes
// the bytes of buffers that died in the first, one planned across both
// goes above them, and the existing buffers' offsets are kiln-allocate-
// shared's (first fit in order of definition).

#include "compiler/ir/Dialects.h"
#include "compiler/transforms/SharedBudget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

namespace {

// %q lives through both loops; %k lives in the first only. 32 KiB each.
constexpr const char *kTwoLoops = R"(
#S = #kiln_gpu.nvmma_shared<swizzle = 128>
func.func @f(%n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %q = kiln_gpu.local_alloc : !kiln_gpu.memdesc<128x128xf16, #S>
  scf.for %i = %c0 to %n step %c1 : i32 {
    %k = kiln_gpu.local_alloc : !kiln_gpu.memdesc<128x128xf16, #S>
    %kt = kiln_gpu.memdesc_trans %k : !kiln_gpu.memdesc<128x128xf16, #S> -> !kiln_gpu.memdesc<128x128xf16, #kiln_gpu.nvmma_shared<swizzle = 128, transposed = true>>
    %qt = kiln_gpu.memdesc_trans %q : !kiln_gpu.memdesc<128x128xf16, #S> -> !kiln_gpu.memdesc<128x128xf16, #kiln_gpu.nvmma_shared<swizzle = 128, transposed = true>>
    kiln_gpu.barrier
  }
  scf.for %j = %c0 to %n step %c1 : i32 {
    %qt = kiln_gpu.memdesc_trans %q : !kiln_gpu.memdesc<128x128xf16, #S> -> !kiln_gpu.memdesc<128x128xf16, #kiln_gpu.nvmma_shared<swizzle = 128, transposed = true>>
    kiln_gpu.barrier
  }
  return
}
)";

class SharedPlacementTest : public ::testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<mlir::func::FuncDialect, mlir::arith::ArithDialect,
                        mlir::scf::SCFDialect, kiln::gpu::KilnGPUDialect>();
    module = mlir::parseSourceString<mlir::ModuleOp>(kTwoLoops, &context);
    ASSERT_TRUE(module);
    func = *module->getOps<mlir::func::FuncOp>().begin();
    func.walk([&](mlir::scf::ForOp loop) { loops.push_back(loop); });
    ASSERT_EQ(loops.size(), 2u);
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp func;
  llvm::SmallVector<mlir::Operation *> loops;
};

constexpr int64_t kTile = 128 * 128 * 2;

TEST_F(SharedPlacementTest, ExistingBuffersAsTheAllocatorPlacesThem) {
  kiln::SharedPlacement placement(func);
  EXPECT_EQ(placement.place(), 2 * kTile);
  ASSERT_EQ(placement.buffers().size(), 2u);
  EXPECT_EQ(placement.buffers()[0].offset, 0);
  EXPECT_EQ(placement.buffers()[1].offset, kTile);
}

TEST_F(SharedPlacementTest, PlannedInTheSecondLoopReusesTheFirstLoopsBytes) {
  kiln::SharedPlacement placement(func);
  placement.plan(loops[1], loops[1], kTile);
  // Beside %q only: in %k's bytes.
  EXPECT_EQ(placement.place(), 2 * kTile);
  // Every buffer summed, as kiln::bufferBytes bounds them.
  EXPECT_EQ(kiln::bufferBytes(func) + kTile, 3 * kTile);
}

TEST_F(SharedPlacementTest, PlannedAcrossBothLoopsGoesAboveThem) {
  kiln::SharedPlacement placement(func);
  placement.plan(loops[0], loops[1], kTile);
  EXPECT_EQ(placement.place(), 3 * kTile);
}

TEST_F(SharedPlacementTest, PlannedSmallBuffersTakeSixteenByteAlignment) {
  kiln::SharedPlacement placement(func);
  placement.plan(loops[1], loops[1], 8);
  placement.plan(loops[1], loops[1], 8);
  // Both in %k's dead bytes, one after the other.
  EXPECT_EQ(placement.place(), 2 * kTile);
  int64_t offsets[2];
  int found = 0;
  for (const kiln::SharedPlacement::Buffer &buffer : placement.buffers())
    if (!buffer.alloc)
      offsets[found++] = buffer.offset;
  ASSERT_EQ(found, 2);
  EXPECT_EQ(offsets[0], kTile);
  EXPECT_EQ(offsets[1], kTile + 16);
}

} // namespace
