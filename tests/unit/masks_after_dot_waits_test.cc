// masksAfterDotWaits on small LLVM IR functions: a scaled dot result plus a
// select of two constants becomes a select of the two fmas, and masks it
// must not touch (shared by several sums, computed from the dot, in a block
// without a wgmma wait, or added to something not a product) stay as they
// are.
#include "compiler/target/MasksAfterDotWaits.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"
#include "gtest/gtest.h"

#include <string>

namespace {

using namespace llvm;

// `BODY` follows a wgmma wait whose results are %acc0 and %acc1; %c and
// %d are predicates computed without it, %s a scale.
std::string kernel(const std::string &body, bool withWait = true) {
  std::string wait =
      withWait ? "  %w = call { float, float } asm sideeffect "
                 "\"wgmma.wait_group.sync.aligned 0;\", \"=f,=f,0,1\"(float "
                 "%x0, float %x1)\n"
                 "  %acc0 = extractvalue { float, float } %w, 0\n"
                 "  %acc1 = extractvalue { float, float } %w, 1\n"
               : "  %acc0 = fadd float %x0, 1.0\n"
                 "  %acc1 = fadd float %x1, 1.0\n";
  return "define void @k(ptr %out, float %x0, float %x1, float %s, i32 %m, "
         "i32 %n) {\n"
         "entry:\n" +
         wait +
         "  %c = icmp sge i32 %m, %n\n"
         "  %d = icmp slt i32 %m, %n\n" +
         body + "  ret void\n}\n";
}

struct Parsed {
  LLVMContext context;
  std::unique_ptr<Module> module;
  Function *function() { return module->getFunction("k"); }
};

std::unique_ptr<Parsed> parse(const std::string &text) {
  auto parsed = std::make_unique<Parsed>();
  SMDiagnostic error;
  parsed->module = parseAssemblyString(text, error, parsed->context);
  EXPECT_TRUE(parsed->module) << error.getMessage().str();
  return parsed;
}

unsigned countOpcode(Function &f, unsigned opcode) {
  unsigned n = 0;
  for (Instruction &inst : instructions(f))
    n += inst.getOpcode() == opcode;
  return n;
}

unsigned fmas(Function &f) {
  unsigned n = 0;
  for (Instruction &inst : instructions(f))
    if (auto *call = dyn_cast<IntrinsicInst>(&inst))
      n += call->getIntrinsicID() == Intrinsic::fma;
  return n;
}

// A causal mask's select of 0 and -inf on %c.
const std::string kMask =
    "  %mask = select i1 %c, float 0.0, float 0xFFF0000000000000\n";

// Whether the rewrite changes the function made of `body`.
bool rewrites(const std::string &body, bool withWait = true) {
  auto parsed = parse(kernel(body, withWait));
  return kiln::masksAfterDotWaits(*parsed->function());
}

TEST(MasksAfterDotWaits, ScaledSumOfAMaskBecomesASelectOfTwoFmas) {
  auto parsed = parse(kernel(kMask + "  %p = fmul float %acc0, %s\n"
                                     "  %q = fadd float %p, %mask\n"
                                     "  store float %q, ptr %out\n"));
  Function &f = *parsed->function();
  ASSERT_TRUE(kiln::masksAfterDotWaits(f));
  EXPECT_FALSE(verifyFunction(f, &errs()));
  EXPECT_EQ(countOpcode(f, Instruction::FAdd), 0u);
  EXPECT_EQ(countOpcode(f, Instruction::FMul), 0u);
  EXPECT_EQ(fmas(f), 2u);
  // The stored value selects between fma(acc0, s, 0) and fma(acc0, s, -inf)
  // on the mask's condition.
  auto *store = cast<StoreInst>(&*std::prev(f.getEntryBlock().end(), 2));
  auto *select = dyn_cast<SelectInst>(store->getValueOperand());
  ASSERT_TRUE(select);
  EXPECT_EQ(select->getCondition()->getName(), "c");
  auto *ifTrue = dyn_cast<IntrinsicInst>(select->getTrueValue());
  auto *ifFalse = dyn_cast<IntrinsicInst>(select->getFalseValue());
  ASSERT_TRUE(ifTrue && ifFalse);
  EXPECT_EQ(ifTrue->getArgOperand(0)->getName(), "acc0");
  EXPECT_TRUE(cast<ConstantFP>(ifTrue->getArgOperand(2))->isZero());
  EXPECT_TRUE(cast<ConstantFP>(ifFalse->getArgOperand(2))->isInfinity());
}

TEST(MasksAfterDotWaits, EitherOperandOrder) {
  auto parsed = parse(kernel("  %mask = select i1 %d, float "
                             "0xFFF0000000000000, float 0.0\n"
                             "  %p = fmul float %s, %acc1\n"
                             "  %q = fadd float %mask, %p\n"
                             "  store float %q, ptr %out\n"));
  Function &f = *parsed->function();
  EXPECT_TRUE(kiln::masksAfterDotWaits(f));
  EXPECT_FALSE(verifyFunction(f, &errs()));
  EXPECT_EQ(fmas(f), 2u);
}

TEST(MasksAfterDotWaits, SharedMaskStays) {
  // One select read by two sums is one register through the wait.
  EXPECT_FALSE(rewrites(kMask + "  %p0 = fmul float %acc0, %s\n"
                                "  %q0 = fadd float %p0, %mask\n"
                                "  %p1 = fmul float %acc1, %s\n"
                                "  %q1 = fadd float %p1, %mask\n"
                                "  store float %q0, ptr %out\n"
                                "  store float %q1, ptr %out\n"));
}

TEST(MasksAfterDotWaits, MaskFromTheDotStays) {
  EXPECT_FALSE(rewrites("  %big = fcmp ogt float %acc1, 0.0\n"
                        "  %mask = select i1 %big, float 0.0, float "
                        "0xFFF0000000000000\n"
                        "  %p = fmul float %acc0, %s\n"
                        "  %q = fadd float %p, %mask\n"
                        "  store float %q, ptr %out\n"));
}

TEST(MasksAfterDotWaits, NoWaitNoChange) {
  EXPECT_FALSE(rewrites(kMask + "  %p = fmul float %acc0, %s\n"
                                "  %q = fadd float %p, %mask\n"
                                "  store float %q, ptr %out\n",
                        /*withWait=*/false));
}

TEST(MasksAfterDotWaits, SumsOfOtherValuesStay) {
  // Not a product: the back end's DAG combiner would fold two fadds of one
  // value back into one fadd of a select.
  EXPECT_FALSE(rewrites(kMask + "  %q = fadd float %acc0, %mask\n"
                                "  store float %q, ptr %out\n"));
}

} // namespace
