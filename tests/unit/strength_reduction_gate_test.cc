// StrengthReductionGate skips LLVM's straight-line strength reduction (SLSR)
// on functions with a huge basic block, where it would take seconds, and on
// no other: run here through the legacy pass manager, as the NVPTX backend
// runs it.
#include "compiler/target/StrengthReductionGate.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Pass.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Transforms/Scalar.h"
#include "gtest/gtest.h"

#include <optional>
#include <string>

namespace {

using namespace llvm;

/// A function whose `(b + 1) * s` SLSR rewrites as `b * s + s`, after
/// `padding` further candidates (adds) in the same block.
std::string kernel(unsigned padding) {
  std::string ir = "declare void @use(i32)\n"
                   "define void @k(i32 %b, i32 %s) {\n"
                   "  %x = mul i32 %b, %s\n"
                   "  call void @use(i32 %x)\n"
                   "  %b1 = add i32 %b, 1\n"
                   "  %y = mul i32 %b1, %s\n"
                   "  call void @use(i32 %y)\n";
  std::string previous = "%s";
  for (unsigned i = 0; i < padding; ++i) {
    std::string name = "%p" + std::to_string(i);
    ir += "  " + name + " = add i32 " + previous + ", %b\n";
    previous = name;
  }
  ir += "  call void @use(i32 " + previous + ")\n  ret void\n}\n";
  return ir;
}

std::unique_ptr<Module> parse(LLVMContext &context, const std::string &ir) {
  SMDiagnostic error;
  std::unique_ptr<Module> module = parseAssemblyString(ir, error, context);
  EXPECT_TRUE(module) << error.getMessage().str();
  return module;
}

/// Runs SLSR on `module`, with a StrengthReductionGate alive if `gated`, and
/// returns whether the second product is still a multiplication.
bool productSurvives(LLVMContext &context, Module &module, bool gated = true) {
  std::optional<kiln::StrengthReductionGate> gate;
  if (gated)
    gate.emplace(context, module);
  legacy::PassManager passes;
  passes.add(createStraightLineStrengthReducePass());
  passes.run(module);
  for (Instruction &inst : module.getFunction("k")->getEntryBlock())
    if (auto *call = dyn_cast<CallInst>(&inst))
      if (auto *product = dyn_cast<Instruction>(call->getArgOperand(0)))
        if (product->getName() == "y")
          return product->getOpcode() == Instruction::Mul;
  return false;
}

TEST(StrengthReductionGate, CountsCandidatesPerBlock) {
  LLVMContext context;
  // 3 candidates before the padding: %x, %b1 and %y.
  auto small =
      parse(context, kernel(kiln::kMaxStrengthReductionCandidates - 3));
  auto large =
      parse(context, kernel(kiln::kMaxStrengthReductionCandidates - 2));
  EXPECT_FALSE(kiln::tooLargeForStrengthReduction(*small->getFunction("k")));
  EXPECT_TRUE(kiln::tooLargeForStrengthReduction(*large->getFunction("k")));
}

TEST(StrengthReductionGate, RunsOnSmallFunctions) {
  LLVMContext context;
  auto module = parse(context, kernel(16));
  EXPECT_FALSE(productSurvives(context, *module));
}

TEST(StrengthReductionGate, SkipsHugeBlocks) {
  LLVMContext context;
  auto module = parse(context, kernel(kiln::kMaxStrengthReductionCandidates));
  EXPECT_TRUE(productSurvives(context, *module));
  // Only the gate keeps it: SLSR alone rewrites it in the same block.
  auto ungated = parse(context, kernel(kiln::kMaxStrengthReductionCandidates));
  EXPECT_FALSE(productSurvives(context, *ungated, /*gated=*/false));
}

TEST(StrengthReductionGate, RestoresThePreviousGate) {
  LLVMContext context;
  auto module = parse(context, kernel(kiln::kMaxStrengthReductionCandidates));
  OptPassGate &before = context.getOptPassGate();
  {
    kiln::StrengthReductionGate gate(context, *module);
    EXPECT_EQ(&context.getOptPassGate(), &gate);
    EXPECT_TRUE(gate.isEnabled());
    EXPECT_FALSE(gate.shouldRunPass("slsr", "function (k)"));
    EXPECT_TRUE(gate.shouldRunPass("slsr", "function (other)"));
    EXPECT_TRUE(gate.shouldRunPass("gvn", "function (k)"));
  }
  EXPECT_EQ(&context.getOptPassGate(), &before);
}

} // namespace
