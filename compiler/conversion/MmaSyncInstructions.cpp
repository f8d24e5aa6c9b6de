//===- MmaSyncInstructions.cpp - mma.sync over operand fragments ----------===//
#include "compiler/conversion/MmaSyncInstructions.h"

#include "compiler/conversion/LoweringUtils.h"
#include "compiler/ir/TargetInfo.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;
using Split = kiln::TensorCoreFlavour::Split;

// Off only to compare code with and without it.
static llvm::cl::opt<bool> widenFp8Flag(
    "kiln-widen-fp8-mma-sync", llvm::cl::init(true), llvm::cl::Hidden,
    llvm::cl::desc("On sm_90, multiply fp8 mma.sync fragments as fp16"));

namespace {

/// The largest finite tf32 and bf16 values, as fp32 bits.
constexpr uint32_t kLargestTF32 = 0x7F7FE000;
constexpr uint32_t kLargestBF16 = 0x7F7F0000;

/// The products of an emulation, as (part of a, part of b), small ones
/// first. Parts: 0 high, 1 high clamped to finite, 2.. the low parts.
ArrayRef<std::pair<unsigned, unsigned>> productsOf(Split split) {
  static const std::pair<unsigned, unsigned> kNative[] = {{0, 0}};
  static const std::pair<unsigned, unsigned> kThree[] = {
      {2, 1}, {1, 2}, {0, 0}};
  static const std::pair<unsigned, unsigned> kSix[] = {{3, 1}, {1, 3}, {2, 2},
                                                       {2, 1}, {1, 2}, {0, 0}};
  switch (split) {
  case Split::None:
    return kNative;
  case Split::TF32x3:
  case Split::BF16x3:
    return kThree;
  case Split::BF16x6:
    return kSix;
  }
  return kNative;
}

std::string mmaText(int64_t k, const std::string &acc, const std::string &a,
                    const std::string &b) {
  std::string head = "mma.sync.aligned.m16n8k" + std::to_string(k) +
                     ".row.col." + acc + "." + a + "." + b + "." + acc;
  // An f16 accumulator tile is two registers of two elements each.
  if (acc == "f16")
    return head + " {$0, $1}, {$2, $3, $4, $5}, {$6, $7}, {$8, $9};";
  return head + " {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, "
                "$12, $13};";
}

} // namespace

kiln::MmaSyncInstructions::MmaSyncInstructions(OpBuilder &b, Location loc,
                                               const TargetInfo &target,
                                               const TensorCoreFlavour &flavour,
                                               Type aElement, Type bElement,
                                               Type accElement)
    : b_(b), loc_(loc), flavour_(flavour), accElement_(accElement),
      aElement_(aElement), bElement_(bElement) {
  widenedFp8_ = widenFp8Flag && flavour.fp8 && flavour.split == Split::None &&
                !target.hasNativeFp8MmaSync();
  if (widenedFp8_) {
    text_ = mmaText(16, flavour.accumulatorType(), "f16", "f16");
    return;
  }
  switch (flavour.split) {
  case Split::None:
    text_ = mmaText(flavour.kStep(), flavour.accumulatorType(),
                    TensorCoreFlavour::ptxType(aElement),
                    TensorCoreFlavour::ptxType(bElement));
    break;
  case Split::TF32x3:
    text_ = mmaText(8, "f32", "tf32", "tf32");
    break;
  case Split::BF16x3:
  case Split::BF16x6:
    text_ = mmaText(16, "f32", "bf16", "bf16");
    break;
  }
}

SmallVector<Value, 4> kiln::MmaSyncInstructions::splitElement(Value word) {
  Type f32 = b_.getF32Type(), i32 = b_.getI32Type();
  Value x = LLVM::BitcastOp::create(b_, loc_, f32, word);
  auto f32Constant = [&](float v) -> Value {
    return LLVM::ConstantOp::create(b_, loc_, f32, b_.getF32FloatAttr(v));
  };
  // Non-finite x: x - high is NaN; its low parts are zero instead.
  auto finiteOrZero = [&](Value v) -> Value {
    Value ordered =
        LLVM::FCmpOp::create(b_, loc_, LLVM::FCmpPredicate::ord, v, v);
    return LLVM::SelectOp::create(b_, loc_, ordered, v, f32Constant(0.0f));
  };
  auto clamp = [&](Value v, float limit) -> Value {
    return LLVM::MinNumOp::create(
        b_, loc_, LLVM::MaxNumOp::create(b_, loc_, v, f32Constant(-limit)),
        f32Constant(limit));
  };
  if (flavour_.split == Split::TF32x3) {
    auto toTF32 = [&](Value v) {
      return inlinePtx(b_, loc_, i32, "cvt.rna.tf32.f32 $0, $1;", "=r,f",
                       ValueRange{v});
    };
    Value high = toTF32(x);
    Value highF = LLVM::BitcastOp::create(b_, loc_, f32, high);
    Value low = finiteOrZero(LLVM::FSubOp::create(b_, loc_, x, highF));
    Value clamped = LLVM::BitcastOp::create(
        b_, loc_, i32, clamp(highF, llvm::bit_cast<float>(kLargestTF32)));
    return {high, clamped, toTF32(low)};
  }
  Type bf16 = b_.getBF16Type();
  auto toBF16 = [&](Value v) -> Value {
    return LLVM::FPTruncOp::create(b_, loc_, bf16, v);
  };
  auto toF32 = [&](Value v) -> Value {
    return LLVM::FPExtOp::create(b_, loc_, f32, v);
  };
  Value high = toBF16(x);
  Value highF = toF32(high);
  Value clamped = toBF16(clamp(highF, llvm::bit_cast<float>(kLargestBF16)));
  Value rest = finiteOrZero(LLVM::FSubOp::create(b_, loc_, x, highF));
  Value low = toBF16(rest);
  if (flavour_.split == Split::BF16x3)
    return {high, clamped, low};
  Value lower = toBF16(LLVM::FSubOp::create(b_, loc_, rest, toF32(low)));
  return {high, clamped, low, lower};
}

Value kiln::MmaSyncInstructions::packBF16(Value low, Value high) {
  Type i16 = b_.getI16Type(), i32 = b_.getI32Type();
  auto bits = [&](Value v) -> Value {
    return LLVM::ZExtOp::create(b_, loc_, i32,
                                LLVM::BitcastOp::create(b_, loc_, i16, v));
  };
  return LLVM::OrOp::create(
      b_, loc_, bits(low),
      LLVM::ShlOp::create(b_, loc_, bits(high), i32Constant(b_, loc_, 16)));
}

std::pair<Value, Value> kiln::MmaSyncInstructions::widenFp8(Value word,
                                                            Type t) {
  Type i32 = b_.getI32Type();
  std::string cvt = "cvt.rn.f16x2." + TensorCoreFlavour::ptxType(t) + "x2 ";
  Type pair = LLVM::LLVMStructType::getLiteral(b_.getContext(), {i32, i32});
  Value d = inlinePtx(b_, loc_, pair,
                      "{ .reg .b16 lo, hi; mov.b32 {lo, hi}, $2; " + cvt +
                          "$0, lo; " + cvt + "$1, hi; }",
                      "=r,=r,r", ValueRange{word});
  return {LLVM::ExtractValueOp::create(b_, loc_, d, int64_t(0)),
          LLVM::ExtractValueOp::create(b_, loc_, d, int64_t(1))};
}

kiln::MmaSyncInstructions::Operand
kiln::MmaSyncInstructions::prepare(ArrayRef<SmallVector<Value>> steps,
                                   bool isA) {
  Operand parts;
  if (widenedFp8_) {
    // m16n8k32's word of k 4t..4t+3 (and 16 more) widens into k 4t, 4t+1
    // and 4t+2, 4t+3; the first m16n8k16 takes k 0-15 with those pairs in
    // its slots 2t, 2t+1 and 2t+8, 2t+9 (a0: a0's low pair, a1: a1's, a2
    // and a3 their high pairs; b0, b1: b0's pairs), the second k 16-31
    // from a2, a3 and b1 alike. a and b permute K alike.
    const SmallVector<Value> &words = steps.front();
    Type t = isA ? aElement_ : bElement_;
    if (isA) {
      for (unsigned first : {0u, 2u}) {
        auto [low0, high0] = widenFp8(words[first], t);
        auto [low1, high1] = widenFp8(words[first + 1], t);
        parts.push_back({low0, low1, high0, high1});
      }
    } else {
      for (unsigned w : {0u, 1u}) {
        auto [low, high] = widenFp8(words[w], t);
        parts.push_back({low, high});
      }
    }
    return parts;
  }
  if (flavour_.split == Split::None) {
    parts.emplace_back(steps.front().begin(), steps.front().end());
    return parts;
  }
  if (flavour_.split == Split::TF32x3) {
    for (Value word : steps.front()) {
      SmallVector<Value, 4> split = splitElement(word);
      parts.resize(split.size());
      for (auto [p, v] : llvm::enumerate(split))
        parts[p].push_back(v);
    }
    return parts;
  }
  // bf16: the m16n8k16 register holding k slots 2t, 2t+1 (and 2t+8, 2t+9)
  // takes the tf32 words of k t, t+4 (and t+8, t+12): a0 pairs the first
  // step's a0 and a2, a1 its a1 and a3, a2 and a3 the same of the second
  // step; b0 pairs the first step's b0 and b1, b1 the second's. a and b
  // permute K alike, so the products sum to the same dot.
  SmallVector<std::pair<Value, Value>> pairs;
  for (const SmallVector<Value> &step : steps) {
    if (isA) {
      pairs.push_back({step[0], step[2]});
      pairs.push_back({step[1], step[3]});
    } else {
      pairs.push_back({step[0], step[1]});
    }
  }
  for (auto [lowK, highK] : pairs) {
    SmallVector<Value, 4> low = splitElement(lowK), high = splitElement(highK);
    parts.resize(low.size());
    for (size_t p = 0; p < low.size(); ++p)
      parts[p].push_back(packBF16(low[p], high[p]));
  }
  return parts;
}

void kiln::MmaSyncInstructions::emitOne(const std::string &text,
                                        ArrayRef<Value> a, ArrayRef<Value> b,
                                        MutableArrayRef<Value> acc) {
  if (flavour_.halfAccumulator) {
    // c0, c1 and c2, c3 each share a register, first in its low half.
    SmallVector<Value> operands(a.begin(), a.end());
    llvm::append_range(operands, b);
    operands.push_back(packHalves(b_, loc_, acc[0], acc[1]));
    operands.push_back(packHalves(b_, loc_, acc[2], acc[3]));
    Type i32 = b_.getI32Type();
    Type pair = LLVM::LLVMStructType::getLiteral(b_.getContext(), {i32, i32});
    Value d =
        inlinePtx(b_, loc_, pair, text, "=r,=r,r,r,r,r,r,r,0,1", operands);
    for (unsigned i = 0; i < 2; ++i) {
      auto [low, high] = unpackHalves(
          b_, loc_, LLVM::ExtractValueOp::create(b_, loc_, d, int64_t(i)),
          accElement_);
      acc[2 * i] = low;
      acc[2 * i + 1] = high;
    }
    return;
  }
  std::string c = flavour_.integer ? "=r" : "=f";
  std::string constraints =
      c + "," + c + "," + c + "," + c + ",r,r,r,r,r,r,0,1,2,3";
  SmallVector<Value> operands(a.begin(), a.end());
  llvm::append_range(operands, b);
  llvm::append_range(operands, acc);
  Type quad = LLVM::LLVMStructType::getLiteral(
      b_.getContext(), {accElement_, accElement_, accElement_, accElement_});
  Value d = inlinePtx(b_, loc_, quad, text, constraints, operands);
  for (unsigned i = 0; i < 4; ++i)
    acc[i] = LLVM::ExtractValueOp::create(b_, loc_, d, int64_t(i));
}

void kiln::MmaSyncInstructions::multiply(const Operand &a, const Operand &b,
                                         MutableArrayRef<Value> acc) {
  if (widenedFp8_) {
    emitOne(text_, a[0], b[0], acc);
    emitOne(text_, a[1], b[1], acc);
    return;
  }
  for (auto [pa, pb] : productsOf(flavour_.split))
    emitOne(text_, a[pa], b[pb], acc);
}
