//===- ReduceToLLVM.cpp - reductions of 1-D blocked tensors ---------------===//
//
// A reduction runs in three steps, each applying the op's combine region to
// scalars: over the elements a thread holds, across the lanes of a warp with
// butterfly shuffles, and across warps through shared memory (one slot per
// warp, read back by every thread, so every thread ends with the result).
// Threads that hold copies of elements (tensors smaller than the CTA) take
// no part in the combining, so nothing is counted twice.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/LoweringUtils.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace {

/// Applies the combine region to (acc..., next...) and returns its results.
SmallVector<Value> combine(ConversionPatternRewriter &rewriter, Region &region,
                           ValueRange acc, ValueRange next) {
  Block &block = region.front();
  IRMapping mapping;
  for (auto [i, v] : llvm::enumerate(acc))
    mapping.map(block.getArgument(i), v);
  for (auto [i, v] : llvm::enumerate(next))
    mapping.map(block.getArgument(i + acc.size()), v);
  for (Operation &op : block.without_terminator())
    rewriter.clone(op, mapping);
  SmallVector<Value> results;
  for (Value v : block.getTerminator()->getOperands())
    results.push_back(mapping.lookupOrDefault(v));
  return results;
}

Value i32Constant(OpBuilder &b, Location loc, int32_t v) {
  return LLVM::ConstantOp::create(b, loc, b.getI32Type(), b.getI32IntegerAttr(v));
}

/// `shfl.sync.bfly` of any scalar of up to 64 bits.
Value shuffleXor(OpBuilder &b, Location loc, Value v, int32_t offset) {
  Type type = v.getType();
  unsigned bits = type.getIntOrFloatBitWidth();
  Type i32 = b.getI32Type();
  auto shfl = [&](Value word) {
    return NVVM::ShflOp::create(
        b, loc, i32, i32Constant(b, loc, -1), word, i32Constant(b, loc, offset),
        i32Constant(b, loc, 0x1f),
        NVVM::ShflKindAttr::get(b.getContext(), NVVM::ShflKind::bfly),
        UnitAttr());
  };
  if (bits == 64) {
    Type i64 = b.getI64Type();
    Value whole = type == i64 ? v : Value(LLVM::BitcastOp::create(b, loc, i64, v));
    Value lo = LLVM::TruncOp::create(b, loc, i32, whole);
    Value hi = LLVM::TruncOp::create(
        b, loc, i32,
        LLVM::LShrOp::create(b, loc, whole,
                             LLVM::ConstantOp::create(b, loc, i64,
                                                      b.getI64IntegerAttr(32))));
    Value lo2 = LLVM::ZExtOp::create(b, loc, i64, shfl(lo));
    Value hi2 = LLVM::ShlOp::create(
        b, loc, LLVM::ZExtOp::create(b, loc, i64, shfl(hi)),
        LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(32)));
    Value joined = LLVM::OrOp::create(b, loc, lo2, hi2);
    return type == i64 ? joined : Value(LLVM::BitcastOp::create(b, loc, type, joined));
  }
  Type intType = b.getIntegerType(bits);
  Value asInt = type == intType ? v : Value(LLVM::BitcastOp::create(b, loc, intType, v));
  Value word = bits == 32 ? asInt : Value(LLVM::ZExtOp::create(b, loc, i32, asInt));
  Value out = shfl(word);
  if (bits != 32)
    out = LLVM::TruncOp::create(b, loc, intType, out);
  return type == intType ? out : Value(LLVM::BitcastOp::create(b, loc, type, out));
}

struct ReduceLowering : OpConversionPattern<kiln::ReduceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(op.getSrcs().front().getType());
    auto layout = kiln::BlockedLayout1D::get(srcType);
    if (!layout)
      return rewriter.notifyMatchFailure(op, "only 1-D blocked reductions");
    Location loc = op.getLoc();
    Region &region = op.getCombineOp();
    size_t numOperands = op.getSrcs().size();

    // 1. Within the thread.
    SmallVector<SmallVector<Value>> elements;
    for (Value src : adaptor.getSrcs())
      elements.push_back(kiln::unpackElements(rewriter, loc, src));
    SmallVector<Value> acc;
    for (auto &e : elements)
      acc.push_back(e[0]);
    for (size_t k = 1; k < elements[0].size(); ++k) {
      SmallVector<Value> next;
      for (auto &e : elements)
        next.push_back(e[k]);
      acc = combine(rewriter, region, acc, next);
    }

    // 2. Across lanes. Threads holding distinct elements: size / sizePerThread.
    int64_t distinctThreads = std::min<int64_t>(
        layout->threadsPerCTA, std::max<int64_t>(1, layout->size / layout->sizePerThread));
    int64_t lanes = std::min<int64_t>(32, distinctThreads);
    for (int64_t offset = lanes / 2; offset >= 1; offset /= 2) {
      SmallVector<Value> next;
      for (Value v : acc)
        next.push_back(shuffleXor(rewriter, loc, v, int32_t(offset)));
      acc = combine(rewriter, region, acc, next);
    }

    // 3. Across warps, through shared memory.
    int64_t warps = std::max<int64_t>(1, distinctThreads / 32);
    if (warps > 1) {
      auto module = op->getParentOfType<ModuleOp>();
      Value tid = kiln::threadIdX(rewriter, loc);
      Value warp = LLVM::URemOp::create(
          rewriter, loc,
          LLVM::UDivOp::create(rewriter, loc, tid, i32Constant(rewriter, loc, 32)),
          i32Constant(rewriter, loc, int32_t(warps)));
      SmallVector<Value> slots;
      for (size_t i = 0; i < numOperands; ++i) {
        Type elementType = acc[i].getType();
        auto arrayType = LLVM::LLVMArrayType::get(elementType, warps);
        // A fresh static shared-memory array for this reduction.
        std::string name;
        unsigned id = 0;
        do {
          name = "kiln_reduce_smem_" + std::to_string(id++);
        } while (module.lookupSymbol(name));
        {
          OpBuilder::InsertionGuard guard(rewriter);
          rewriter.setInsertionPointToStart(module.getBody());
          LLVM::GlobalOp::create(rewriter, loc, arrayType, /*isConstant=*/false,
                                 LLVM::Linkage::Internal, name, Attribute(),
                                 /*alignment=*/16, /*addrSpace=*/3);
        }
        auto sharedPtr = LLVM::LLVMPointerType::get(rewriter.getContext(), 3);
        Value base = LLVM::AddressOfOp::create(rewriter, loc, sharedPtr, name);
        // Every lane of a warp writes the same value: no predicate needed.
        Value slot = LLVM::GEPOp::create(rewriter, loc, sharedPtr, elementType,
                                         base, ValueRange{warp});
        LLVM::StoreOp::create(rewriter, loc, acc[i], slot);
        slots.push_back(base);
      }
      NVVM::Barrier0Op::create(rewriter, loc);
      SmallVector<Value> total;
      for (int64_t w = 0; w < warps; ++w) {
        SmallVector<Value> value;
        for (size_t i = 0; i < numOperands; ++i) {
          Type elementType = acc[i].getType();
          Value slot = LLVM::GEPOp::create(
              rewriter, loc, slots[i].getType(), elementType, slots[i],
              ArrayRef<LLVM::GEPArg>{int32_t(w)});
          value.push_back(LLVM::LoadOp::create(rewriter, loc, elementType, slot));
        }
        total = w == 0 ? value : combine(rewriter, region, total, value);
      }
      // The slots may be written again (a reduction in a loop).
      NVVM::Barrier0Op::create(rewriter, loc);
      acc = total;
    }
    rewriter.replaceOp(op, acc);
    return success();
  }
};

} // namespace

void kiln::populateReduceToLLVMPatterns(KilnTypeConverter &converter,
                                        RewritePatternSet &patterns) {
  patterns.add<ReduceLowering>(converter, patterns.getContext());
}
