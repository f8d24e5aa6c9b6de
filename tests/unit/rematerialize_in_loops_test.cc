// rematerializeInLoops on small LLVM IR functions: per-thread trees LICM
// hoisted to the entry are recomputed where a loop uses them between its
// inner loops, and left alone where an inner loop (or the entry) uses them
// or where they are uniform.
#include "compiler/target/RematerializeInLoops.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"
#include "gtest/gtest.h"

namespace {

using namespace llvm;

// An outer loop over tiles holding an inner loop; after the inner loop, the
// tile's epilogue stores at %row (per thread), adds %uniform, and %hot is
// read inside the inner loop as well.
constexpr const char *kTiles = R"(
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

define void @k(ptr addrspace(1) %out, i32 %n, i32 %m) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %shifted = lshr i32 %tid, 5
  %row = xor i32 %shifted, 24
  %hot = shl i32 %tid, 3
  %uniform = mul i32 %n, 3
  br label %tile
tile:
  %t = phi i32 [ 0, %entry ], [ %t.next, %epilogue ]
  br label %inner
inner:
  %i = phi i32 [ 0, %tile ], [ %i.next, %inner ]
  %acc = phi i32 [ 0, %tile ], [ %acc.next, %inner ]
  %acc.next = add i32 %acc, %hot
  %i.next = add i32 %i, 1
  %c = icmp slt i32 %i.next, %m
  br i1 %c, label %inner, label %epilogue
epilogue:
  %at = add i32 %row, %t
  %v = add i32 %acc.next, %uniform
  %v2 = add i32 %v, %hot
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %at
  store i32 %v2, ptr addrspace(1) %p
  %t.next = add i32 %t, 1
  %ct = icmp slt i32 %t.next, %n
  br i1 %ct, label %tile, label %exit
exit:
  ret void
}
)";

struct Parsed {
  LLVMContext context;
  std::unique_ptr<Module> module;
  Function *function = nullptr;
};

void parse(Parsed &parsed, const char *text) {
  SMDiagnostic error;
  parsed.module = parseAssemblyString(text, error, parsed.context);
  ASSERT_TRUE(parsed.module) << error.getMessage().str();
  parsed.function = parsed.module->getFunction("k");
  ASSERT_NE(parsed.function, nullptr);
}

bool run(Function &function) {
  DominatorTree dominators(function);
  LoopInfo loops(dominators);
  return kiln::rematerializeInLoops(function, loops);
}

Instruction *named(Function &function, StringRef name) {
  for (Instruction &inst : instructions(function))
    if (inst.getName() == name)
      return &inst;
  return nullptr;
}

bool isSideEffectingAsm(const Value *value) {
  const auto *call = dyn_cast<CallInst>(value);
  const auto *asmCall =
      call ? dyn_cast<InlineAsm>(call->getCalledOperand()) : nullptr;
  return asmCall && asmCall->hasSideEffects() &&
         StringRef(asmCall->getAsmString()).contains("%tid.x");
}

TEST(RematerializeInLoops, RecomputesPerThreadTreesBetweenInnerLoops) {
  Parsed parsed;
  parse(parsed, kTiles);
  Function &f = *parsed.function;
  ASSERT_TRUE(run(f));
  ASSERT_FALSE(verifyFunction(f, &errs()));
  // %at now reads a copy of %row made in the epilogue from an opaque read
  // of %tid.x; the copies before the loops are gone.
  Instruction *at = named(f, "at");
  auto *row = dyn_cast<Instruction>(at->getOperand(0));
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->getParent(), at->getParent());
  EXPECT_EQ(row->getName(), "row.remat");
  auto *shifted = cast<Instruction>(row->getOperand(0));
  EXPECT_EQ(shifted->getParent(), at->getParent());
  EXPECT_TRUE(isSideEffectingAsm(shifted->getOperand(0)));
  EXPECT_EQ(named(f, "row"), nullptr);
  EXPECT_EQ(named(f, "shifted"), nullptr);
  // %hot, read in the inner loop too, stays where it is and so does the
  // uniform %uniform; the entry's %tid remains for %hot.
  EXPECT_EQ(named(f, "v2")->getOperand(1), named(f, "hot"));
  EXPECT_EQ(named(f, "v")->getOperand(1), named(f, "uniform"));
  EXPECT_EQ(named(f, "hot")->getParent()->getName(), "entry");
}

// Without an inner loop every use is in an innermost loop: nothing moves.
constexpr const char *kFlat = R"(
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

define void @k(ptr addrspace(1) %out, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %row = xor i32 %tid, 24
  br label %loop
loop:
  %t = phi i32 [ 0, %entry ], [ %t.next, %loop ]
  %at = add i32 %row, %t
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %at
  store i32 %t, ptr addrspace(1) %p
  %t.next = add i32 %t, 1
  %c = icmp slt i32 %t.next, %n
  br i1 %c, label %loop, label %exit
exit:
  ret void
}
)";

TEST(RematerializeInLoops, LeavesInnermostLoopsAlone) {
  Parsed parsed;
  parse(parsed, kFlat);
  EXPECT_FALSE(run(*parsed.function));
  EXPECT_EQ(named(*parsed.function, "at")->getOperand(0),
            named(*parsed.function, "row"));
}

} // namespace
