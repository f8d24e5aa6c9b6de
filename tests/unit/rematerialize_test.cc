// Both rematerializers on small LLVM IR functions. After loops: where the
// recomputed copies go (after the loop, or in a later loop's preheader) and
// how they are kept from being folded back into the copies before the loop.
// In loops: per-thread trees LICM hoisted to the entry are recomputed where a
// loop uses them between its inner loops, and left alone where an inner loop
// uses them too or where they are uniform.
#include "compiler/target/RematerializeAfterLoops.h"
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

// Two loops; %late (per thread) is defined before the first and read only
// in the second, %tail only after both.
constexpr const char *kTwoLoops = R"(
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

define void @k(ptr addrspace(1) %out, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %off = shl i32 %tid, 2
  %late = add i32 %off, 2048
  %fromTid = add i32 %tid, 7
  br label %loop1
loop1:
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop1 ]
  %a = phi i32 [ 0, %entry ], [ %a.next, %loop1 ]
  %a.next = add i32 %a, %off
  %i.next = add i32 %i, 1
  %c1 = icmp slt i32 %i.next, %n
  br i1 %c1, label %loop1, label %mid
mid:
  br label %loop2
loop2:
  %j = phi i32 [ 0, %mid ], [ %j.next, %loop2 ]
  %b = phi i32 [ %a.next, %mid ], [ %b.next, %loop2 ]
  %b.late = add i32 %b, %late
  %b.next = mul i32 %b.late, %fromTid
  %j.next = add i32 %j, 1
  %c2 = icmp slt i32 %j.next, %n
  br i1 %c2, label %loop2, label %exit
exit:
  store i32 %b.next, ptr addrspace(1) %out
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
  return kiln::rematerializeAfterLoops(function, dominators, loops);
}

BasicBlock *block(Function &function, StringRef name) {
  for (BasicBlock &b : function)
    if (b.getName() == name)
      return &b;
  return nullptr;
}

/// The inline asm text `v` is a call of, or "".
std::string asmOf(const Value *v) {
  const auto *call = dyn_cast<CallInst>(v);
  const auto *inlineAsm =
      call ? dyn_cast<InlineAsm>(call->getCalledOperand()) : nullptr;
  return inlineAsm ? inlineAsm->getAsmString().str() : "";
}

TEST(RematerializeAfterLoops, LaterLoopReadsCopiesMadeInItsPreheader) {
  Parsed p;
  ASSERT_NO_FATAL_FAILURE(parse(p, kTwoLoops));
  ASSERT_TRUE(run(*p.function));
  EXPECT_FALSE(verifyFunction(*p.function, &errs()));

  BasicBlock *mid = block(*p.function, "mid");
  BasicBlock *loop2 = block(*p.function, "loop2");
  auto *bLate = cast<BinaryOperator>(
      &*std::find_if(loop2->begin(), loop2->end(),
                     [](Instruction &i) { return i.getName() == "b.late"; }));
  // %late is recomputed in %mid, the second loop's preheader, from an opaque
  // copy of %off (which the first loop keeps alive), so that the backend's
  // CSE cannot merge it back into the add before the first loop.
  auto *late = dyn_cast<Instruction>(bLate->getOperand(1));
  ASSERT_NE(late, nullptr);
  EXPECT_EQ(late->getParent(), mid);
  EXPECT_EQ(late->getOpcode(), Instruction::Add);
  EXPECT_EQ(asmOf(late->getOperand(0)), "mov.b32 $0, $1;");
  EXPECT_EQ(cast<CallInst>(late->getOperand(0))->getArgOperand(0)->getName(),
            "off");
  // The copy before the first loop lost its last use and is gone.
  for (Instruction &i : p.function->getEntryBlock())
    EXPECT_NE(i.getName(), "late");
}

TEST(RematerializeAfterLoops, SpecialRegistersAreReadAgain) {
  Parsed p;
  ASSERT_NO_FATAL_FAILURE(parse(p, kTwoLoops));
  ASSERT_TRUE(run(*p.function));
  BasicBlock *loop2 = block(*p.function, "loop2");
  auto *bNext =
      &*std::find_if(loop2->begin(), loop2->end(),
                     [](Instruction &i) { return i.getName() == "b.next"; });
  // %fromTid = %tid + 7 is recomputed from a fresh read of %tid.x.
  auto *fromTid = dyn_cast<Instruction>(bNext->getOperand(1));
  ASSERT_NE(fromTid, nullptr);
  EXPECT_EQ(fromTid->getParent(), block(*p.function, "mid"));
  EXPECT_EQ(asmOf(fromTid->getOperand(0)), "mov.u32 $0, %tid.x;");
}

TEST(RematerializeAfterLoops, UniformValuesStay) {
  // A value of arguments and constants only is uniform: kept, not copied.
  Parsed p;
  ASSERT_NO_FATAL_FAILURE(parse(p, R"(
define void @k(ptr addrspace(1) %out, i32 %n) {
entry:
  %u = mul i32 %n, 3
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  %i.next = add i32 %i, 1
  %c = icmp slt i32 %i.next, %n
  br i1 %c, label %loop, label %exit
exit:
  store i32 %u, ptr addrspace(1) %out
  ret void
}
)"));
  EXPECT_FALSE(run(*p.function));
}

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

Instruction *named(Function &function, StringRef name) {
  for (Instruction &inst : instructions(function))
    if (inst.getName() == name)
      return &inst;
  return nullptr;
}

bool runInLoops(Function &function) {
  DominatorTree dominators(function);
  LoopInfo loops(dominators);
  return kiln::rematerializeInLoops(function, loops);
}

TEST(RematerializeInLoops, RecomputesPerThreadTreesBetweenInnerLoops) {
  Parsed parsed;
  ASSERT_NO_FATAL_FAILURE(parse(parsed, kTiles));
  Function &f = *parsed.function;
  ASSERT_TRUE(runInLoops(f));
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
  EXPECT_EQ(asmOf(shifted->getOperand(0)), "mov.u32 $0, %tid.x;");
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
  ASSERT_NO_FATAL_FAILURE(parse(parsed, kFlat));
  EXPECT_FALSE(runInLoops(*parsed.function));
  EXPECT_EQ(named(*parsed.function, "at")->getOperand(0),
            named(*parsed.function, "row"));
}

} // namespace
