// AxisInfoAnalysis through loops and branches, for functions of every size
// from a few values to a few hundred. The analysis keeps one fact per value
// in a map that grows as it goes; it used to hold references to facts across
// insertions (loop and if results, operands looked up one after the other),
// which dangle when an insertion moves the map. Which size triggers that
// depends on where the map grows, so the test sweeps sizes; under
// AddressSanitizer (scripts/sanitize.sh) the old code fails it with a
// heap-use-after-free, and without ASan with wrong facts or a crash, as the
// attention kernel of issue 14 did in kilnc.

#include "compiler/ir/Dialects.h"
#include "compiler/transforms/AxisInfo.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

namespace {

/// The facts about the values the first function of `source` returns, in
/// order; empty when `source` does not parse.
std::vector<kiln::AxisInfo> returnedFacts(mlir::MLIRContext &context,
                                          const std::string &source) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  if (!module)
    return {};
  auto func = *module->getOps<mlir::func::FuncOp>().begin();
  kiln::AxisInfoAnalysis analysis(func);
  auto ret =
      llvm::cast<mlir::func::ReturnOp>(func.getBody().front().getTerminator());
  std::vector<kiln::AxisInfo> facts;
  for (mlir::Value value : ret.getOperands())
    facts.push_back(analysis.get(value));
  return facts;
}

// A function with `padding` unrelated constants, then a for loop carrying a
// multiple of 16 and a counter, a while loop carrying a multiple of 8, and
// an if choosing between multiples of 32 and 64. Its results are returned
// in that order.
std::string program(int padding) {
  std::string s = "func.func @f(%n: i32) -> (i32, i32, i32, i32) {\n";
  for (int i = 0; i < padding; ++i)
    s += "  %p" + std::to_string(i) + " = arith.constant " +
         std::to_string(3 * i + 1) + " : i32\n";
  s += R"(  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c8 = arith.constant 8 : i32
  %c16 = arith.constant 16 : i32
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant 64 : i32
  %r:2 = scf.for %iv = %c0 to %n step %c1 iter_args(%a = %c16, %k = %c0) -> (i32, i32) : i32 {
    %a2 = arith.addi %a, %c32 : i32
    %k2 = arith.addi %k, %c1 : i32
    scf.yield %a2, %k2 : i32, i32
  }
  %w = scf.while (%b = %c8) : (i32) -> i32 {
    %lt = arith.cmpi slt, %b, %n : i32
    scf.condition(%lt) %b : i32
  } do {
  ^bb0(%b1: i32):
    %b2 = arith.addi %b1, %c16 : i32
    scf.yield %b2 : i32
  }
  %cond = arith.cmpi slt, %r#1, %n : i32
  %s = scf.if %cond -> (i32) {
    %x = arith.muli %r#0, %c32 : i32
    scf.yield %c32 : i32
  } else {
    %y = arith.addi %c64, %c64 : i32
    scf.yield %y : i32
  }
  return %r#0, %w, %s, %r#1 : i32, i32, i32, i32
}
)";
  return s;
}

TEST(AxisInfoAnalysis, LoopAndIfResultsAtEveryMapSize) {
  mlir::MLIRContext context;
  context.loadDialect<mlir::func::FuncDialect, mlir::arith::ArithDialect,
                      mlir::scf::SCFDialect>();
  for (int padding = 0; padding < 300; ++padding) {
    SCOPED_TRACE("padding " + std::to_string(padding));
    std::vector<kiln::AxisInfo> facts =
        returnedFacts(context, program(padding));
    ASSERT_EQ(facts.size(), 4u);
    // 16, 48, 80, ...: divisible by 16.
    EXPECT_EQ(facts[0].divisibility, llvm::SmallVector<int64_t>{16});
    // 8, 24, 40, ...: by 8.
    EXPECT_EQ(facts[1].divisibility, llvm::SmallVector<int64_t>{8});
    // 32 or 128: by 32.
    EXPECT_EQ(facts[2].divisibility, llvm::SmallVector<int64_t>{32});
    // A counter from 0 by 1.
    EXPECT_EQ(facts[3].divisibility, llvm::SmallVector<int64_t>{1});
  }
}

} // namespace

namespace {

// x / c keeps what of x's divisibility c leaves when c divides it: a packed
// int4 weight's pointer advances by `BLOCK_K * stride // 2` bytes a step
// (torchao's HQQ GEMM), which must stay 16-byte aligned for cp.async.
TEST(AxisInfoAnalysis, ExactQuotientsKeepTheirDivisibility) {
  mlir::MLIRContext context;
  context.loadDialect<mlir::func::FuncDialect, mlir::arith::ArithDialect>();
  const char *source = R"(
func.func @f(%s: i32) -> (i32, i32, i32, i32, i32) {
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant 64 : i32
  %c512 = arith.constant 512 : i32
  %m = arith.muli %s, %c32 : i32
  %half = arith.divsi %m, %c2 : i32
  %over = arith.divsi %c32, %c64 : i32
  %third = arith.divui %m, %c3 : i32
  %folded = arith.divsi %c512, %c32 : i32
  %bys = arith.divsi %m, %s : i32
  return %half, %over, %third, %folded, %bys : i32, i32, i32, i32, i32
}
)";
  std::vector<kiln::AxisInfo> facts = returnedFacts(context, source);
  ASSERT_EQ(facts.size(), 5u);
  EXPECT_EQ(facts[0].divisibility[0], 16); // (s * 32) / 2
  EXPECT_EQ(facts[1].divisibility[0], 1);  // 32 / 64 = 0, 64 does not divide 32
  EXPECT_EQ(facts[2].divisibility[0], 1);  // by 3: nothing known
  EXPECT_EQ(facts[3].constantValue, std::optional<int64_t>(16));
  EXPECT_EQ(facts[4].divisibility[0], 1); // by a run-time value
}

// x / c is constant over aligned runs of gcd(contiguity, divisibility, c)
// only when x >= 0: signed division truncates toward zero, so the run
// -128 .. -65 divided by 64 gives -2 then -1.
TEST(AxisInfoAnalysis, QuotientsOfNonNegativeRunsRepeat) {
  mlir::MLIRContext context;
  context.loadDialect<mlir::func::FuncDialect, mlir::arith::ArithDialect,
                      kiln::KilnDialect>();
  const char *source = R"(
func.func @f(%n: i32) -> (tensor<256xi32>, tensor<256xi32>, tensor<256xi32>,
                          tensor<256xi32>, tensor<256xi32>) {
  %pid = kiln.program_id 0 : i32
  %c256 = arith.constant 256 : i32
  %b = arith.muli %pid, %c256 : i32
  %bs = kiln.splat %b : i32 -> tensor<256xi32>
  %r = kiln.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  %offs = arith.addi %bs, %r : tensor<256xi32>
  %c64 = arith.constant dense<64> : tensor<256xi32>
  %c6 = arith.constant dense<6> : tensor<256xi32>
  %blocks = arith.divsi %offs, %c64 : tensor<256xi32>
  %sixes = arith.divsi %offs, %c6 : tensor<256xi32>
  %ns = kiln.splat %n : i32 -> tensor<256xi32>
  %n256 = arith.muli %n, %c256 : i32
  %n256s = kiln.splat %n256 : i32 -> tensor<256xi32>
  %shifted = arith.addi %offs, %n256s : tensor<256xi32>
  %unknown = arith.divsi %shifted, %c64 : tensor<256xi32>
  %wrapped = arith.remsi %offs, %ns : tensor<256xi32>
  %wrappedBlocks = arith.divsi %wrapped, %c64 : tensor<256xi32>
  %unsigned = arith.divui %shifted, %c64 : tensor<256xi32>
  return %blocks, %sixes, %unknown, %wrappedBlocks, %unsigned
      : tensor<256xi32>, tensor<256xi32>, tensor<256xi32>, tensor<256xi32>,
        tensor<256xi32>
}
)";
  std::vector<kiln::AxisInfo> facts = returnedFacts(context, source);
  ASSERT_EQ(facts.size(), 5u);
  EXPECT_EQ(facts[0].constancy[0], 64); // (pid * 256 + r) / 64
  EXPECT_EQ(facts[1].constancy[0], 2);  // by 6: runs of gcd(256, 256, 6) = 2
  EXPECT_EQ(facts[2].constancy[0], 1);  // offs + n * 256: sign unknown
  EXPECT_EQ(facts[3].constancy[0], 1);  // offs % n: n's divisibility unknown
  EXPECT_EQ(facts[4].constancy[0], 64); // unsigned: no sign to care about
}

} // namespace
