//===- AtomicsToLLVM.cpp - atomic read-modify-write and compare-and-swap --===//
//
// Each element of kiln.atomic_rmw / kiln.atomic_cas is one
// `atom.global.<sem>.<scope>.<op>.<type>` in inline PTX, predicated on its
// mask, as upstream Triton emits them. An element is updated once: threads
// and registers holding a copy of it (where a lane, warp or register bit of
// the layout moves nothing) are left out, and a scalar atomic runs in thread
// 0 only, which then hands the old value to every thread through shared
// memory when the result is used.
//
// Floats have no atom.max/min: like upstream Triton they use integer
// atomics on the bits, signed max (min) where the value is non-negative and
// unsigned min (max) where its sign bit is set, which orders -0.0 below
// +0.0. bf16 addition is native from sm_90; before that it is a 16-bit
// compare-and-swap loop.
//
// A float addition over elements a thread holds side by side in memory (axis
// info's vector width, as for stores) goes as one vector atomic: f32 pairs
// and quads (`.v2.f32`, `.v4.f32`, sm_90), f16 and bf16 pairs packed in 32
// bits (`.f16x2`; `.bf16x2` from sm_90) and, from sm_90, up to four such
// words (`.v4.f16x2`: 16 bytes, as upstream Triton's F16x8 atomics).
// Split-K's partial tiles add four to eight times fewer atomics.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/DistributedLayout.h"
#include "compiler/conversion/OpFamilyLowerings.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using kiln::i32Constant;
using kiln::layout::LinearLayout;
namespace layout = kiln::layout;

namespace {

/// `.acq_rel.gpu` and the like.
std::string orderingSuffix(kiln::MemSemantic sem, kiln::MemScope scope) {
  return "." + kiln::stringifyMemSemantic(sem).str() + "." +
         kiln::stringifyMemScope(scope).str();
}

/// The inline-asm constraint of an integer register of `bits`.
const char *registerConstraint(unsigned bits) {
  return bits == 16 ? "h" : bits == 32 ? "r" : "l";
}

/// Builds the inline PTX of one element. Operands: $0 the old value, $1 the
/// address, then the values, then (if any) the predicate; the old value
/// falls back to zero where the predicate is false.
Value emitAtomicAsm(OpBuilder &b, Location loc, StringRef instruction,
                    Value ptr, ValueRange values, Value pred, unsigned bits,
                    bool instructionReadsPredicate = false) {
  Type word = b.getIntegerType(bits);
  std::string constraints = std::string("=") + registerConstraint(bits) + ",l";
  for (size_t i = 0; i < values.size(); ++i)
    constraints += std::string(",") + registerConstraint(bits);
  SmallVector<Value> operands{ptr};
  llvm::append_range(operands, values);
  std::string text = instruction.str();
  if (pred) {
    unsigned predIndex = 2 + values.size();
    if (!instructionReadsPredicate)
      text = "@$" + std::to_string(predIndex) + " " + text;
    constraints += ",b,0";
    operands.push_back(pred);
    operands.push_back(LLVM::ZeroOp::create(b, loc, word));
  }
  return kiln::inlinePtxEffect(b, loc, word, text, constraints, operands)
      .getResult(0);
}

/// One vector atomic over 32-bit lanes: $0 .. $n-1 the old values, $n the
/// address, then the n values, then (if any) the predicate; the old values
/// fall back to zero where the predicate is false.
SmallVector<Value> emitVectorAtomicAsm(OpBuilder &b, Location loc,
                                       StringRef instruction, Value ptr,
                                       ValueRange values, Value pred) {
  size_t n = values.size();
  Type word = b.getI32Type();
  auto list = [](size_t first, size_t count) {
    std::string text = "{";
    for (size_t i = 0; i < count; ++i)
      text += (i ? ", $" : "$") + std::to_string(first + i);
    return text + "}";
  };
  std::string text = instruction.str() + " " + list(0, n) + ", [ $" +
                     std::to_string(n) + " + 0 ], " + list(n + 1, n) + ";";
  std::string constraints;
  for (size_t i = 0; i < n; ++i)
    constraints += "=r,";
  constraints += "l";
  for (size_t i = 0; i < n; ++i)
    constraints += ",r";
  SmallVector<Value> operands{ptr};
  llvm::append_range(operands, values);
  if (pred) {
    text = "@$" + std::to_string(2 * n + 1) + " " + text;
    constraints += ",b";
    operands.push_back(pred);
    for (size_t i = 0; i < n; ++i) {
      constraints += "," + std::to_string(i);
      operands.push_back(LLVM::ZeroOp::create(b, loc, word));
    }
  }
  auto resultType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(n, word));
  Value result =
      kiln::inlinePtxEffect(b, loc, resultType, text, constraints, operands)
          .getResult(0);
  SmallVector<Value> olds;
  for (size_t i = 0; i < n; ++i)
    olds.push_back(LLVM::ExtractValueOp::create(b, loc, result, int64_t(i)));
  return olds;
}

/// bf16 addition before sm_90: load, add in f32, round, compare-and-swap,
/// until no other thread got in between. $2 is the addend as f32 bits.
std::string bf16AddLoop(StringRef ordering, bool predicated) {
  std::string skip = predicated ? "@!$3 bra kiln_atom_done_${:uid};\n" : "";
  return "{\n"
         ".reg .pred %kiln_retry;\n"
         ".reg .b16 %kiln_seen, %kiln_new;\n"
         ".reg .b32 %kiln_wide;\n"
         ".reg .f32 %kiln_sum;\n" +
         skip +
         "ld.global.b16 %kiln_seen, [ $1 + 0 ];\n"
         "kiln_atom_retry_${:uid}:\n"
         "cvt.u32.u16 %kiln_wide, %kiln_seen;\n"
         "shl.b32 %kiln_wide, %kiln_wide, 16;\n"
         "mov.b32 %kiln_sum, %kiln_wide;\n"
         "add.rn.f32 %kiln_sum, %kiln_sum, $2;\n"
         "cvt.rn.bf16.f32 %kiln_new, %kiln_sum;\n"
         "atom.global" +
         ordering.str() +
         ".cas.b16 $0, [ $1 + 0 ], %kiln_seen, %kiln_new;\n"
         "setp.ne.b16 %kiln_retry, $0, %kiln_seen;\n"
         "mov.b16 %kiln_seen, $0;\n"
         "@%kiln_retry bra kiln_atom_retry_${:uid};\n"
         "kiln_atom_done_${:uid}:\n"
         "}";
}

/// For each of `count` registers of a tensor of `ptrType`, the register
/// whose element it copies (itself when it is no copy): copies take the
/// old value of the original instead of updating the element again.
SmallVector<unsigned> originalRegisters(Type ptrType, unsigned count) {
  uint64_t copies = 0;
  if (auto tensor = dyn_cast<RankedTensorType>(ptrType)) {
    LinearLayout layout = *kiln::getLinearLayout(tensor);
    copies =
        layout.getZeroBasisMasks()[layout.getInDimIndex(layout::kRegister)];
  }
  SmallVector<unsigned> originals;
  for (unsigned k = 0; k < count; ++k)
    originals.push_back(unsigned(k & ~copies));
  return originals;
}

Value andPredicates(OpBuilder &b, Location loc, Value x, Value y) {
  if (!x)
    return y;
  if (!y)
    return x;
  return LLVM::AndOp::create(b, loc, x, y);
}

/// The old value of a scalar atomic, which only thread 0 holds, in every
/// thread: through a shared slot, between barriers (the slot may be
/// written again by a later iteration).
Value broadcastFromThreadZero(OpBuilder &b, Operation *op, Value value) {
  Location loc = op->getLoc();
  Type type = value.getType();
  unsigned bits = type.getIntOrFloatBitWidth();
  Value slot = kiln::allocateSharedArray(b, op, type, 1);
  Value isFirst =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq,
                           kiln::threadIdX(b, loc), i32Constant(b, loc, 0));
  std::string store =
      "@$0 st.shared.b" + std::to_string(bits) + " [ $1 + 0 ], $2;";
  kiln::inlinePtxEffect(b, loc, /*result=*/Type(), store,
                        std::string("b,l,") + registerConstraint(bits),
                        ValueRange{isFirst, slot, value});
  NVVM::Barrier0Op::create(b, loc);
  Value loaded = LLVM::LoadOp::create(b, loc, type, slot);
  NVVM::Barrier0Op::create(b, loc);
  return loaded;
}

/// Shared by both ops: element types, predicates, packing, broadcast.
template <typename AtomicOp>
struct AtomicLoweringBase : OpConversionPattern<AtomicOp> {
  AtomicLoweringBase(kiln::KilnTypeConverter &converter, MLIRContext *ctx,
                     unsigned computeCapability,
                     const kiln::AccessWidths &widths)
      : OpConversionPattern<AtomicOp>(converter, ctx),
        computeCapability(computeCapability), widths(widths) {}

  /// Checks the layout; the element type and its width.
  LogicalResult checkOperands(AtomicOp op, ConversionPatternRewriter &rewriter,
                              Type &element, unsigned &bits) const {
    if (auto tensor = dyn_cast<RankedTensorType>(op.getPtr().getType()))
      if (!kiln::getLinearLayout(tensor))
        return rewriter.notifyMatchFailure(op, "tensor without a layout");
    element = this->getTypeConverter()->convertType(
        kiln::getElementTypeOrSelf(op.getResult().getType()));
    if (!element || !element.isIntOrFloat())
      return rewriter.notifyMatchFailure(op, "element type not convertible");
    bits = element.getIntOrFloatBitWidth();
    return success();
  }

  /// Integer bits of a scalar, and back.
  static Value toBits(OpBuilder &b, Location loc, Value v) {
    Type bitsType = b.getIntegerType(v.getType().getIntOrFloatBitWidth());
    return v.getType() == bitsType
               ? v
               : LLVM::BitcastOp::create(b, loc, bitsType, v);
  }
  static Value fromBits(OpBuilder &b, Location loc, Value v, Type type) {
    return v.getType() == type ? v : LLVM::BitcastOp::create(b, loc, type, v);
  }

  /// Replaces `op` by the old values, broadcast when scalar and used.
  void replaceWithOldValues(AtomicOp op, ConversionPatternRewriter &rewriter,
                            SmallVector<Value> &olds) const {
    Location loc = op.getLoc();
    Type resultType = this->getTypeConverter()->convertType(op.getType());
    if (!isa<RankedTensorType>(op.getType()) && !op.getResult().use_empty())
      olds[0] = broadcastFromThreadZero(rewriter, op, olds[0]);
    rewriter.replaceOp(op, kiln::packElements(rewriter, loc, resultType, olds));
  }

  unsigned computeCapability;
  const kiln::AccessWidths &widths;
};

struct AtomicRMWLowering : AtomicLoweringBase<kiln::AtomicRMWOp> {
  using AtomicLoweringBase::AtomicLoweringBase;

  LogicalResult
  matchAndRewrite(kiln::AtomicRMWOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type element;
    unsigned bits;
    if (failed(checkOperands(op, rewriter, element, bits)))
      return failure();
    Location loc = op.getLoc();
    kiln::RMWOp kind = op.getRmwOp();
    bool isFloat = isa<FloatType>(element);
    std::string ordering = orderingSuffix(op.getSem(), op.getScope());
    std::string atom = "atom.global" + ordering;
    std::string b = std::to_string(bits);

    // The instruction for values of each sign (floats' max/min split).
    std::string forAll, forNonNegative, forNegative;
    bool bf16Loop = false;
    switch (kind) {
    case kiln::RMWOp::Add:
    case kiln::RMWOp::FAdd:
      if (!isFloat)
        forAll = atom + ".add.u" + b;
      else if (element.isF32() || element.isF64())
        forAll = atom + ".add.f" + b;
      else if (element.isF16())
        forAll = atom + ".add.noftz.f16";
      else if (element.isBF16() && computeCapability >= 90)
        forAll = atom + ".add.noftz.bf16";
      else if (element.isBF16())
        bf16Loop = true;
      break;
    case kiln::RMWOp::Max:
    case kiln::RMWOp::Min: {
      bool max = kind == kiln::RMWOp::Max;
      if (!isFloat) {
        forAll = atom + (max ? ".max.s" : ".min.s") + b;
      } else if (bits >= 32) {
        forNonNegative = atom + (max ? ".max.s" : ".min.s") + b;
        forNegative = atom + (max ? ".min.u" : ".max.u") + b;
      }
      break;
    }
    case kiln::RMWOp::UMax:
      forAll = atom + ".max.u" + b;
      break;
    case kiln::RMWOp::UMin:
      forAll = atom + ".min.u" + b;
      break;
    case kiln::RMWOp::And:
      forAll = atom + ".and.b" + b;
      break;
    case kiln::RMWOp::Or:
      forAll = atom + ".or.b" + b;
      break;
    case kiln::RMWOp::Xor:
      forAll = atom + ".xor.b" + b;
      break;
    case kiln::RMWOp::Xchg:
      forAll = atom + ".exch.b" + b;
      break;
    }
    bool supported = bf16Loop || !forNegative.empty() ||
                     (!forAll.empty() && (bits != 16 || isFloat) && bits >= 16);
    if (!supported || bits < 16 || (bits == 16 && !isFloat))
      return op.emitOpError("no ")
             << kiln::stringifyRMWOp(kind) << " atomic on " << element;
    const char *operandsText = " $0, [ $1 + 0 ], $2;";
    // Float additions of neighbouring elements go as one vector atomic.
    unsigned vec = 1;
    std::string vectorAtom;
    if ((kind == kiln::RMWOp::Add || kind == kiln::RMWOp::FAdd) && isFloat &&
        !bf16Loop) {
      unsigned width = kiln::accessWidth(op, widths, op.getPtr().getType());
      if (element.isF32() && computeCapability >= 90 && width >= 2) {
        vec = std::min(width, 4u);
        vectorAtom = atom + ".add.v" + std::to_string(vec) + ".f32";
      } else if ((element.isF16() ||
                  (element.isBF16() && computeCapability >= 90)) &&
                 width >= 2) {
        // Pairs in 32-bit words; from sm_90 up to four words (16 bytes,
        // `.v4.f16x2`) an instruction.
        vec = computeCapability >= 90 ? std::min(width, 8u) : 2;
        vectorAtom = atom + ".add.noftz" +
                     (vec > 2 ? ".v" + std::to_string(vec / 2) : "") +
                     (element.isF16() ? ".f16x2" : ".bf16x2");
      }
    }

    SmallVector<Value> ptrs =
        kiln::unpackElements(rewriter, loc, adaptor.getPtr());
    SmallVector<Value> vals =
        kiln::unpackElements(rewriter, loc, adaptor.getVal());
    SmallVector<Value> masks;
    if (adaptor.getMask())
      masks = kiln::unpackElements(rewriter, loc, adaptor.getMask());
    Value owner = kiln::ownerPredicate(rewriter, loc, op.getPtr().getType());
    SmallVector<unsigned> originals =
        originalRegisters(op.getPtr().getType(), ptrs.size());

    SmallVector<Value> olds;
    for (size_t k = 0; k < ptrs.size(); ++k) {
      if (originals[k] != k) {
        olds.push_back(olds[originals[k]]);
        continue;
      }
      Value pred = andPredicates(rewriter, loc,
                                 masks.empty() ? Value() : masks[k], owner);
      // A vector atomic over registers k .. k + vec - 1 (none a copy).
      if (vec > 1 && k % vec == 0 && k + vec <= ptrs.size() &&
          llvm::all_of(llvm::seq<size_t>(k, k + vec),
                       [&](size_t r) { return originals[r] == r; })) {
        if (element.isF32()) {
          SmallVector<Value> words;
          for (size_t r = k; r < k + vec; ++r)
            words.push_back(toBits(rewriter, loc, vals[r]));
          for (Value old : emitVectorAtomicAsm(rewriter, loc, vectorAtom,
                                               ptrs[k], words, pred))
            olds.push_back(fromBits(rewriter, loc, old, element));
        } else {
          // Two halves packed in each 32-bit word, low half first.
          auto pair = VectorType::get({2}, element);
          SmallVector<Value> words;
          for (size_t r = k; r < k + vec; r += 2) {
            Value packed = LLVM::PoisonOp::create(rewriter, loc, pair);
            for (unsigned i = 0; i < 2; ++i)
              packed = LLVM::InsertElementOp::create(
                  rewriter, loc, packed, vals[r + i],
                  i32Constant(rewriter, loc, i));
            words.push_back(LLVM::BitcastOp::create(
                rewriter, loc, rewriter.getI32Type(), packed));
          }
          SmallVector<Value> oldWords =
              vec == 2 ? SmallVector<Value>{emitAtomicAsm(
                             rewriter, loc, vectorAtom + operandsText, ptrs[k],
                             words.front(), pred, 32)}
                       : emitVectorAtomicAsm(rewriter, loc, vectorAtom, ptrs[k],
                                             words, pred);
          for (Value old : oldWords) {
            Value halves = LLVM::BitcastOp::create(rewriter, loc, pair, old);
            for (unsigned i = 0; i < 2; ++i)
              olds.push_back(LLVM::ExtractElementOp::create(
                  rewriter, loc, halves, i32Constant(rewriter, loc, i)));
          }
        }
        k += vec - 1;
        continue;
      }
      Value old;
      if (bf16Loop) {
        Value addend = LLVM::BitcastOp::create(
            rewriter, loc, rewriter.getI32Type(),
            LLVM::FPExtOp::create(rewriter, loc, rewriter.getF32Type(),
                                  vals[k]));
        // The addend travels as 32 bits, the old value as 16.
        SmallVector<Value> operands{ptrs[k], addend};
        std::string constraints = "=h,l,r";
        if (pred) {
          operands.push_back(pred);
          operands.push_back(
              LLVM::ZeroOp::create(rewriter, loc, rewriter.getI16Type()));
          constraints += ",b,0";
        }
        old = kiln::inlinePtxEffect(rewriter, loc, rewriter.getI16Type(),
                                    bf16AddLoop(ordering, bool(pred)),
                                    constraints, operands)
                  .getResult(0);
      } else if (!forAll.empty()) {
        old = emitAtomicAsm(rewriter, loc, forAll + operandsText, ptrs[k],
                            toBits(rewriter, loc, vals[k]), pred, bits);
      } else {
        Value valBits = toBits(rewriter, loc, vals[k]);
        Value negative = LLVM::ICmpOp::create(
            rewriter, loc, LLVM::ICmpPredicate::slt, valBits,
            LLVM::ZeroOp::create(rewriter, loc, valBits.getType()));
        Value nonNegative = LLVM::XOrOp::create(
            rewriter, loc, negative,
            LLVM::ConstantOp::create(rewriter, loc, rewriter.getI1Type(),
                                     rewriter.getBoolAttr(true)));
        Value oldIfNonNegative = emitAtomicAsm(
            rewriter, loc, forNonNegative + operandsText, ptrs[k], valBits,
            andPredicates(rewriter, loc, pred, nonNegative), bits);
        Value oldIfNegative = emitAtomicAsm(
            rewriter, loc, forNegative + operandsText, ptrs[k], valBits,
            andPredicates(rewriter, loc, pred, negative), bits);
        old = LLVM::SelectOp::create(rewriter, loc, negative, oldIfNegative,
                                     oldIfNonNegative);
      }
      olds.push_back(fromBits(rewriter, loc, old, element));
    }
    replaceWithOldValues(op, rewriter, olds);
    return success();
  }
};

struct AtomicCASLowering : AtomicLoweringBase<kiln::AtomicCASOp> {
  using AtomicLoweringBase::AtomicLoweringBase;

  LogicalResult
  matchAndRewrite(kiln::AtomicCASOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type element;
    unsigned bits;
    if (failed(checkOperands(op, rewriter, element, bits)))
      return failure();
    if (bits < 16)
      return op.emitOpError("no compare-and-swap on ") << element;
    Location loc = op.getLoc();
    std::string instruction =
        "atom.global" + orderingSuffix(op.getSem(), op.getScope()) + ".cas.b" +
        std::to_string(bits) + " $0, [ $1 + 0 ], $2, $3;";
    SmallVector<Value> ptrs =
        kiln::unpackElements(rewriter, loc, adaptor.getPtr());
    SmallVector<Value> cmps =
        kiln::unpackElements(rewriter, loc, adaptor.getCmp());
    SmallVector<Value> vals =
        kiln::unpackElements(rewriter, loc, adaptor.getVal());
    Value owner = kiln::ownerPredicate(rewriter, loc, op.getPtr().getType());
    SmallVector<unsigned> originals =
        originalRegisters(op.getPtr().getType(), ptrs.size());
    SmallVector<Value> olds;
    for (size_t k = 0; k < ptrs.size(); ++k) {
      if (originals[k] != k) {
        olds.push_back(olds[originals[k]]);
        continue;
      }
      Value old = emitAtomicAsm(rewriter, loc, instruction, ptrs[k],
                                ValueRange{toBits(rewriter, loc, cmps[k]),
                                           toBits(rewriter, loc, vals[k])},
                                owner, bits);
      olds.push_back(fromBits(rewriter, loc, old, element));
    }
    replaceWithOldValues(op, rewriter, olds);
    return success();
  }
};

} // namespace

void kiln::populateAtomicsToLLVMPatterns(KilnTypeConverter &converter,
                                         unsigned computeCapability,
                                         const AccessWidths &widths,
                                         RewritePatternSet &patterns) {
  patterns.add<AtomicRMWLowering, AtomicCASLowering>(
      converter, patterns.getContext(), computeCapability, widths);
}
