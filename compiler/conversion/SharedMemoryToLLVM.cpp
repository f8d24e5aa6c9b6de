//===- SharedMemoryToLLVM.cpp - buffers, cp.async, waits and barriers -----===//
//
// A kiln_gpu.memdesc value is the shared address of its first byte. Buffers
// sit in the kernel's dynamic shared memory at the offset
// kiln-allocate-shared gave them; a tile of a ring is tileBytes further per
// index. Async copies write each thread's chunks of contiguous elements
// with one `cp.async` each, at the nvmma_shared address of the chunk
// (SharedTileAddress.h), zero-filling masked chunks (src-size 0); stores of
// registers to a tile write the same chunks with st.shared. TMA copies and
// stores and mbarriers are issued by thread 0 (mbarrier waits by all; a
// consumer thread of a warp-specialized kernel arrives on its own).
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/DistributedLayout.h"
#include "compiler/conversion/LoweringUtils.h"
#include "compiler/conversion/OpFamilyLowerings.h"
#include "compiler/conversion/SharedTileAddress.h"
#include "compiler/conversion/Stmatrix.h"
#include "compiler/ir/TargetInfo.h"
#include "compiler/ir/TileRuns.h"
#include "compiler/layout/MatrixRows.h"
#include "compiler/transforms/AsyncCopies.h"

using namespace mlir;
using kiln::i32Constant;

namespace {

struct LocalAllocLowering : OpConversionPattern<kiln::gpu::LocalAllocOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::LocalAllocOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<uint64_t> offset = op.getOffset();
    if (!offset)
      return op.emitOpError("has no offset: run kiln-allocate-shared first");
    Location loc = op.getLoc();
    Value base = kiln::sharedPoolBase(rewriter, loc);
    if (*offset != 0)
      base = LLVM::GEPOp::create(rewriter, loc, base.getType(),
                                 rewriter.getI8Type(), base,
                                 ArrayRef<LLVM::GEPArg>{int32_t(*offset)});
    rewriter.replaceOp(op, base);
    return success();
  }
};

struct MemDescIndexLowering : OpConversionPattern<kiln::gpu::MemDescIndexOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::MemDescIndexOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto tile = cast<kiln::gpu::MemDescType>(op.getType());
    Value bytes =
        LLVM::MulOp::create(rewriter, loc, adaptor.getIndex(),
                            i32Constant(rewriter, loc, tile.getSizeInBytes()));
    rewriter.replaceOp(
        op, LLVM::GEPOp::create(rewriter, loc, adaptor.getSrc().getType(),
                                rewriter.getI8Type(), adaptor.getSrc(),
                                ValueRange{bytes}));
    return success();
  }
};

/// A transposed view is the same bytes: the address passes through.
struct MemDescTransLowering : OpConversionPattern<kiln::gpu::MemDescTransOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::MemDescTransOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getSrc());
    return success();
  }
};

/// A shared address as the 32-bit operand `.shared::cta` instructions take.
Value sharedAddress(OpBuilder &b, Location loc, Value pointer) {
  return LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), pointer);
}

struct AsyncCopyLowering : OpConversionPattern<kiln::gpu::AsyncCopyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::AsyncCopyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto tile = cast<kiln::gpu::MemDescType>(op.getDst().getType());
    std::optional<kiln::layout::LinearLayout> layout =
        kiln::getLinearLayout(op.getPtrs().getType());
    if (!layout)
      return rewriter.notifyMatchFailure(op, "pointers without a layout");
    // A tile of runs: one thread copies each run's element. A layout whose
    // registers or threads copy each other (a row of scales in its
    // weight's layout, broadcast down the rows) likewise copies each
    // element once, in chunks of the registers that differ, from the
    // threads that own them.
    SmallVector<int64_t> runs =
        kiln::tileRuns(op, unsigned(op.getPtrs().getType().getRank()));
    // Register i of `layout` is ptrs[original[i]].
    SmallVector<unsigned> original;
    bool copiedRegisters = layout->getZeroBasisMasks()[layout->getInDimIndex(
                               kiln::layout::kRegister)] != 0;
    if (kiln::anyRun(runs) || copiedRegisters) {
      kiln::DistinctRegisters distinct = kiln::withoutCopiedRegisters(
          kiln::anyRun(runs) ? kiln::layoutOverRuns(*layout, runs) : *layout);
      layout = std::move(distinct.layout);
      original = std::move(distinct.original);
    }
    Value owner = kiln::ownerPredicate(rewriter, loc, *layout);
    unsigned elementBytes = tile.getElementType().getIntOrFloatBitWidth() / 8;
    unsigned vec = 1;
    if (auto attr = op->getAttrOfType<IntegerAttr>(kiln::kCopyVecAttr))
      vec = unsigned(attr.getInt());
    kiln::SharedTileAddress address(tile);
    // Chunks run along the tile's contiguous dimension.
    unsigned dim = address.shape().transposed ? 0 : 1;
    vec = std::min(
        {vec, kiln::contiguousRegistersAlong(*layout, dim), 16 / elementBytes});
    unsigned bytes = vec * elementBytes;
    if (bytes < 4)
      return op.emitOpError("cp.async needs chunks of 4, 8 or 16 bytes; "
                            "these are ")
             << bytes;

    SmallVector<Value> ptrs =
        kiln::unpackElements(rewriter, loc, adaptor.getPtrs());
    SmallVector<Value> mask;
    if (adaptor.getMask())
      mask = kiln::unpackElements(rewriter, loc, adaptor.getMask());
    if (!original.empty()) {
      auto pick = [&](SmallVector<Value> &values) {
        if (values.empty())
          return;
        SmallVector<Value> picked;
        for (unsigned r : original)
          picked.push_back(values[r]);
        values = std::move(picked);
      };
      pick(ptrs);
      pick(mask);
    }
    SmallVector<kiln::Coordinates> coords =
        kiln::emitCoordinates(rewriter, loc, *layout);
    Value base = sharedAddress(rewriter, loc, adaptor.getDst());
    // cg (L2 only) exists for 16-byte copies; smaller ones go through L1.
    std::string text = std::string("cp.async.") + (bytes == 16 ? "cg" : "ca") +
                       ".shared.global [ $0 ], [ $1 ], " +
                       std::to_string(bytes) + ", $2;";
    if (owner)
      text = "{ .reg .pred p; setp.ne.b32 p, $3, 0; @p " + text + " }";
    Value ownerBit = owner ? Value(LLVM::ZExtOp::create(
                                 rewriter, loc, rewriter.getI32Type(), owner))
                           : Value();
    Value full = i32Constant(rewriter, loc, bytes);
    Value none = i32Constant(rewriter, loc, 0);
    // One address per thread plus constants where the layout allows (the
    // usual case): no swizzle arithmetic per chunk.
    std::optional<SmallVector<int64_t>> constants =
        address.registerOffsets(*layout);
    Value threadBase =
        constants
            ? Value(LLVM::AddOp::create(
                  rewriter, loc, base,
                  address.emit(rewriter, loc, coords[0][0], coords[0][1])))
            : Value();
    for (unsigned r = 0; r < ptrs.size(); r += vec) {
      if (!kiln::isRepresentativeRegister(*layout, r))
        continue;
      Value dst =
          constants
              ? Value(LLVM::AddOp::create(
                    rewriter, loc, threadBase,
                    i32Constant(rewriter, loc, (*constants)[r])))
              : Value(LLVM::AddOp::create(
                    rewriter, loc, base,
                    address.emit(rewriter, loc, coords[r][0], coords[r][1])));
      Value size = mask.empty() ? full
                                : Value(LLVM::SelectOp::create(
                                      rewriter, loc, mask[r], full, none));
      SmallVector<Value, 4> operands{dst, ptrs[r], size};
      if (ownerBit)
        operands.push_back(ownerBit);
      kiln::inlinePtxEffect(rewriter, loc, Type(), text,
                            ownerBit ? "r,l,r,r" : "r,l,r", operands);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// 1 in thread 0 of the CTA (and where `pred`, when given, holds), else 0:
/// the thread that initializes mbarriers and issues TMA copies.
Value firstThreadOnly(OpBuilder &b, Location loc, Value pred = Value()) {
  Value first =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq,
                           kiln::threadIdX(b, loc), i32Constant(b, loc, 0));
  if (pred)
    first = LLVM::AndOp::create(b, loc, first, pred);
  return LLVM::ZExtOp::create(b, loc, b.getI32Type(), first);
}

/// 1 (i32) in lane 0 of each warp where `pred` (i1, optional) holds, else 0.
Value firstLaneOnly(OpBuilder &b, Location loc, Value pred) {
  Value lane = LLVM::AndOp::create(b, loc, kiln::threadIdX(b, loc),
                                   i32Constant(b, loc, 31));
  Value first = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, lane,
                                     i32Constant(b, loc, 0));
  if (pred)
    first = LLVM::AndOp::create(b, loc, first, pred);
  return LLVM::ZExtOp::create(b, loc, b.getI32Type(), first);
}

/// `instruction` (reading the mbarrier as $1) by thread 0 alone.
template <typename Op>
struct OneThreadBarrierLowering : OpConversionPattern<Op> {
  OneThreadBarrierLowering(TypeConverter &converter, MLIRContext *ctx,
                           std::function<std::string(Op)> instruction)
      : OpConversionPattern<Op>(converter, ctx),
        instruction(std::move(instruction)) {}
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    std::string text =
        "{ .reg .pred p; setp.ne.b32 p, $0, 0; @p " + instruction(op) + " }";
    kiln::inlinePtxEffect(
        rewriter, loc, Type(), text, "r,r",
        ValueRange{firstThreadOnly(rewriter, loc),
                   sharedAddress(rewriter, loc, adaptor.getBarrier())});
    rewriter.eraseOp(op);
    return success();
  }
  std::function<std::string(Op)> instruction;
};

/// Every thread spins until the phase of the given parity has completed.
struct WaitBarrierLowering : OpConversionPattern<kiln::gpu::WaitBarrierOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::WaitBarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // Labels are local to the braces, so the block may repeat.
    kiln::inlinePtxEffect(
        rewriter, loc, Type(),
        "{ .reg .pred done; wait: mbarrier.try_wait.parity.shared::cta.b64 "
        "done, [$0], $1; @!done bra.uni wait; }",
        "r,r",
        ValueRange{sharedAddress(rewriter, loc, adaptor.getBarrier()),
                   adaptor.getPhase()});
    rewriter.eraseOp(op);
    return success();
  }
};

/// Every executing thread arrives once on the barrier (a consumer thread
/// releasing a ring slot, compiler/transforms/WarpSpecialize.cpp).
struct ArriveBarrierLowering : OpConversionPattern<kiln::gpu::ArriveBarrierOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::ArriveBarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    kiln::inlinePtxEffect(
        rewriter, loc, Type(), "mbarrier.arrive.shared::cta.b64 _, [$0];", "r",
        ValueRange{sharedAddress(rewriter, loc, adaptor.getBarrier())});
    rewriter.eraseOp(op);
    return success();
  }
};

/// The panels TMA moves `tile` in, one box each: panel p's bytes start
/// p * rows * swizzle bytes past `shared` (the tile's 32-bit shared
/// address), and its box starts p * (swizzle bytes / element bytes) columns
/// past `column`. Appends, per panel, those two values to `operands`.
void appendTmaPanels(OpBuilder &b, Location loc, kiln::gpu::MemDescType tile,
                     Value shared, Value column,
                     SmallVectorImpl<Value> &operands) {
  unsigned swizzle =
      cast<kiln::gpu::NVMMASharedEncodingAttr>(tile.getEncoding()).getSwizzle();
  SmallVector<int64_t, 2> box = kiln::gpu::AsyncTmaCopyOp::boxShape(tile);
  int64_t rows = box[0], panelColumns = box[1];
  for (int64_t p = 0; p < tile.getShape()[1] / panelColumns; ++p) {
    operands.push_back(LLVM::AddOp::create(
        b, loc, shared, i32Constant(b, loc, p * rows * swizzle)));
    operands.push_back(LLVM::AddOp::create(
        b, loc, column, i32Constant(b, loc, p * panelColumns)));
  }
}

/// Thread 0 arms the mbarrier with the tile's bytes and copies the box one
/// panel at a time (appendTmaPanels). TMA coordinates run innermost first.
struct AsyncTmaCopyLowering : OpConversionPattern<kiln::gpu::AsyncTmaCopyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::AsyncTmaCopyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto tile = cast<kiln::gpu::MemDescType>(op.getDst().getType());
    std::string text = "{ .reg .pred p; setp.ne.b32 p, $0, 0; @p "
                       "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$1], " +
                       std::to_string(tile.getSizeInBytes()) + ";";
    // A warp-specialized kernel's producer warp issues its copies from its
    // first lane; otherwise thread 0 of the program does.
    Value issuer = op->hasAttr(kiln::gpu::AsyncTmaCopyOp::kWarpIssuedAttr)
                       ? firstLaneOnly(rewriter, loc, adaptor.getPred())
                       : firstThreadOnly(rewriter, loc, adaptor.getPred());
    SmallVector<Value> operands{
        issuer, sharedAddress(rewriter, loc, adaptor.getBarrier()),
        LLVM::PtrToIntOp::create(rewriter, loc, rewriter.getI64Type(),
                                 adaptor.getTensorMap()),
        adaptor.getOffsets()[0]};
    std::string constraints = "r,r,l,r";
    unsigned firstPanel = unsigned(operands.size());
    appendTmaPanels(rewriter, loc, tile,
                    sharedAddress(rewriter, loc, adaptor.getDst()),
                    adaptor.getOffsets()[1], operands);
    for (unsigned at = firstPanel; at < operands.size(); at += 2) {
      constraints += ",r,r";
      text += " @p cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
              "complete_tx::bytes [$" +
              std::to_string(at) + "], [$2, {$" + std::to_string(at + 1) +
              ", $3}], [$1];";
    }
    text += " }";
    kiln::inlinePtxEffect(rewriter, loc, Type(), text, constraints, operands);
    rewriter.eraseOp(op);
    return success();
  }
};

/// A thread's chunks of contiguous elements of a tile in `layout` (up to
/// 16 bytes, within one swizzle chunk: `vec` registers each) and the byte
/// offset of each in the nvmma_shared tile: local_store writes them,
/// local_load reads them. Immediate offsets where the register bits are
/// apart from the thread's (added to one offset per thread), XORed
/// constants otherwise, else computed per chunk. A chunk's registers are
/// those that differ in the register bits stepping along the tile's lines
/// one element at a time, wherever those bits are: a thread holding 4 x 16
/// bytes of a tile whose lines run down its columns (an int8 tile staged
/// K-major) writes 4-byte chunks, one per column.
class TileChunks {
public:
  TileChunks(OpBuilder &b, Location loc, const kiln::SharedTileAddress &address,
             const kiln::layout::LinearLayout &layout, unsigned elementBytes,
             std::optional<SmallVector<int64_t>> xors)
      : address(address), xors(std::move(xors)) {
    unsigned dim = address.shape().transposed ? 0 : 1;
    // The register bit that steps 2^j along the line, for j = 0, 1, ...
    int32_t bits = layout.getInDimSizeLog2(kiln::layout::kRegister);
    unsigned most = std::max(1u, 16 / elementBytes);
    for (int32_t j = 0; (1u << (j + 1)) <= most; ++j) {
      int32_t found = -1;
      for (int32_t i = 0; i < bits && found < 0; ++i) {
        ArrayRef<int32_t> basis = layout.getBasis(kiln::layout::kRegister, i);
        bool step = true;
        for (auto [d, c] : llvm::enumerate(basis))
          step &= c == (d == dim ? (int32_t(1) << j) : 0);
        if (step)
          found = i;
      }
      if (found < 0)
        break;
      chunkBits.push_back(unsigned(found));
    }
    vec = 1u << chunkBits.size();
    unsigned chunkMask = 0;
    for (unsigned bit : chunkBits)
      chunkMask |= 1u << bit;
    for (unsigned r = 0,
                  n = unsigned(layout.getInDimSize(kiln::layout::kRegister));
         r < n; ++r)
      if ((r & chunkMask) == 0)
        starts.push_back(r);
    coords = kiln::emitCoordinates(b, loc, layout);
    constants = address.registerOffsets(layout);
    if (constants || this->xors)
      threadOffset = address.emit(b, loc, coords[0][0], coords[0][1]);
    if (this->xors)
      threadBits = address.threadBits(layout);
  }

  /// Registers a chunk holds.
  unsigned vec;
  /// The first register of each chunk, in order.
  SmallVector<unsigned> starts;

  /// The register of element `e` of the chunk starting at `start`.
  unsigned element(unsigned start, unsigned e) const {
    for (auto [j, bit] : llvm::enumerate(chunkBits))
      if (e & (1u << j))
        start |= 1u << bit;
    return start;
  }

  /// The byte offset of the chunk that starts at register `r`.
  Value offset(OpBuilder &b, Location loc, unsigned r) const {
    if (constants)
      return LLVM::AddOp::create(b, loc, threadOffset,
                                 i32Constant(b, loc, (*constants)[r]));
    if (xors)
      return kiln::xorOutsideBits(b, loc, threadOffset, (*xors)[r], threadBits);
    return address.emit(b, loc, coords[r][0], coords[r][1]);
  }

private:
  const kiln::SharedTileAddress &address;
  SmallVector<unsigned> chunkBits;
  std::optional<SmallVector<int64_t>> xors, constants;
  SmallVector<kiln::Coordinates> coords;
  Value threadOffset;
  uint64_t threadBits = ~uint64_t(0);
};

/// Whether `writer` (a matrixRowsAccess view of a local_store's layout) gives
/// each lane's eight registers one aligned 16-byte chunk of `address`'s tile,
/// in order: its vector's bases are 2, 4 and 8 bytes and every other basis
/// moves whole chunks (the tile's offset is linear: registerXors).
bool fillsChunks(const kiln::SharedTileAddress &address,
                 const kiln::layout::LinearLayout &writer) {
  for (StringRef dim : writer.getInDimNames())
    for (int32_t bit = 0; bit < writer.getInDimSizeLog2(dim); ++bit) {
      int64_t offset = address.basisOffset(writer, dim, bit);
      bool inVector = dim == kiln::layout::kRegister && bit < 3;
      if (inVector ? offset != (int64_t(2) << bit)
                   : (offset < 0 || offset % 16 != 0))
        return false;
    }
  return true;
}

/// Each thread writes its chunks of contiguous elements (up to 16 bytes,
/// within one swizzle chunk) with one vector st.shared each, at the
/// nvmma_shared address of the chunk; 16-bit fragments whose rows of eight
/// fill chunks (the mma and wgmma accumulators) go by stmatrix instead,
/// four 8x8 matrices an instruction. Addresses are one per thread plus (or
/// XOR) a constant per register wherever the tile allows.
struct LocalStoreLowering : OpConversionPattern<kiln::gpu::LocalStoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::LocalStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto tile = cast<kiln::gpu::MemDescType>(op.getDst().getType());
    std::optional<kiln::layout::LinearLayout> layout =
        kiln::getLinearLayout(op.getValue().getType());
    if (!layout)
      return rewriter.notifyMatchFailure(op, "value without a layout");
    Type element = tile.getElementType();
    unsigned elementBytes = element.getIntOrFloatBitWidth() / 8;
    kiln::SharedTileAddress address(tile);
    SmallVector<Value> values =
        kiln::unpackElements(rewriter, loc, adaptor.getValue());
    Value base = adaptor.getDst();
    auto at = [&](Value offset) {
      return LLVM::GEPOp::create(rewriter, loc, base.getType(),
                                 rewriter.getI8Type(), base,
                                 ValueRange{offset});
    };
    std::optional<SmallVector<int64_t>> xors = address.registerXors(*layout);
    if (elementBytes == 2 && xors &&
        kiln::TargetInfo::of(op->getParentOfType<ModuleOp>()).hasStmatrix()) {
      for (bool transposed : {false, true}) {
        std::optional<kiln::layout::LinearLayout> writer =
            kiln::layout::matrixRowsAccess(*layout, transposed);
        if (!writer || !fillsChunks(address, *writer))
          continue;
        SmallVector<int64_t> rowXors = *address.registerXors(*writer);
        SmallVector<kiln::Coordinates> coords =
            kiln::emitCoordinates(rewriter, loc, *writer);
        Value row = address.emit(rewriter, loc, coords[0][0], coords[0][1]);
        uint64_t rowBits = address.threadBits(*writer);
        for (size_t k = 0; k < values.size(); k += 8) {
          Value shared = LLVM::PtrToIntOp::create(
              rewriter, loc, rewriter.getI32Type(),
              at(kiln::xorOutsideBits(rewriter, loc, row, rowXors[k],
                                      rowBits)));
          kiln::emitStmatrix(rewriter, loc, shared,
                             ValueRange(values).slice(k, 8), transposed);
        }
        rewriter.eraseOp(op);
        return success();
      }
    }
    TileChunks chunks(rewriter, loc, address, *layout, elementBytes, xors);
    unsigned vec = chunks.vec;
    // In the LLVM types the elements were converted to (fp8 as i8).
    Type chunkType = values.empty() || vec == 1
                         ? Type()
                         : VectorType::get({vec}, values[0].getType());
    for (unsigned r : chunks.starts) {
      if (!kiln::isRepresentativeRegister(*layout, r))
        continue;
      Value dst = at(chunks.offset(rewriter, loc, r));
      Value chunk = values[r];
      if (vec > 1) {
        chunk = LLVM::PoisonOp::create(rewriter, loc, chunkType);
        for (unsigned i = 0; i < vec; ++i)
          chunk = LLVM::InsertElementOp::create(rewriter, loc, chunk,
                                                values[chunks.element(r, i)],
                                                i32Constant(rewriter, loc, i));
      }
      LLVM::StoreOp::create(rewriter, loc, chunk, dst, vec * elementBytes);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// Each thread reads its chunks (TileChunks) with one vector ld.shared
/// each, as LocalStoreLowering writes them.
struct LocalLoadLowering : OpConversionPattern<kiln::gpu::LocalLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::LocalLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto tile = cast<kiln::gpu::MemDescType>(op.getSrc().getType());
    std::optional<kiln::layout::LinearLayout> layout =
        kiln::getLinearLayout(op.getType());
    if (!layout)
      return rewriter.notifyMatchFailure(op, "result without a layout");
    // A tile of runs: registers of one run read one place, once.
    SmallVector<int64_t> runs =
        kiln::tileRuns(op, unsigned(op.getType().getRank()));
    // Register i of `layout` is register original[i] of the result, and
    // result registers that copy others (those of a run) are filled last.
    SmallVector<unsigned> original;
    uint64_t copies = 0;
    unsigned resultRegisters =
        unsigned(layout->getInDimSize(kiln::layout::kRegister));
    if (kiln::anyRun(runs)) {
      kiln::DistinctRegisters distinct =
          kiln::withoutCopiedRegisters(kiln::layoutOverRuns(*layout, runs));
      layout = std::move(distinct.layout);
      original = std::move(distinct.original);
      copies = distinct.copies;
    }
    Type element = getTypeConverter()->convertType(tile.getElementType());
    Type resultType = getTypeConverter()->convertType(op.getType());
    if (!element || !resultType)
      return rewriter.notifyMatchFailure(op, "unconvertible element type");
    unsigned elementBytes = tile.getElementType().getIntOrFloatBitWidth() / 8;
    kiln::SharedTileAddress address(tile);
    // Without local_store's XORed constants: untried for reads (they
    // would change the packed-int4 GEMMs' code, as measured without them).
    TileChunks chunks(rewriter, loc, address, *layout, elementBytes,
                      /*xors=*/std::nullopt);
    unsigned vec = chunks.vec;
    unsigned registers =
        unsigned(layout->getInDimSize(kiln::layout::kRegister));
    Value base = adaptor.getSrc();
    Type chunkType = vec == 1 ? element : VectorType::get({vec}, element);
    SmallVector<Value> values(registers);
    for (unsigned r : chunks.starts) {
      Value src = LLVM::GEPOp::create(
          rewriter, loc, base.getType(), rewriter.getI8Type(), base,
          ValueRange{chunks.offset(rewriter, loc, r)});
      Value chunk = LLVM::LoadOp::create(rewriter, loc, chunkType, src,
                                         vec * elementBytes);
      for (unsigned i = 0; i < vec; ++i)
        values[chunks.element(r, i)] =
            vec == 1
                ? chunk
                : Value(LLVM::ExtractElementOp::create(
                      rewriter, loc, chunk, i32Constant(rewriter, loc, i)));
    }
    if (!original.empty()) {
      SmallVector<Value> all(resultRegisters);
      for (auto [i, r] : llvm::enumerate(original))
        all[r] = values[i];
      for (unsigned r = 0; r < resultRegisters; ++r)
        if (r & copies)
          all[r] = all[r & ~unsigned(copies)];
      values = std::move(all);
    }
    rewriter.replaceOp(op,
                       kiln::packElements(rewriter, loc, resultType, values));
    return success();
  }
};

/// Thread 0 stores (or reduces) the tile one panel at a time (as
/// AsyncTmaCopyLowering copies it) and commits them as one bulk group.
struct AsyncTmaStoreLowering : OpConversionPattern<kiln::gpu::AsyncTmaStoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::AsyncTmaStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto tile = cast<kiln::gpu::MemDescType>(op.getSrc().getType());
    std::string text = "{ .reg .pred p; setp.ne.b32 p, $0, 0;";
    SmallVector<Value> operands{
        firstThreadOnly(rewriter, loc),
        LLVM::PtrToIntOp::create(rewriter, loc, rewriter.getI64Type(),
                                 adaptor.getTensorMap()),
        adaptor.getOffsets()[0]};
    std::string constraints = "r,l,r";
    unsigned firstPanel = unsigned(operands.size());
    appendTmaPanels(rewriter, loc, tile,
                    sharedAddress(rewriter, loc, adaptor.getSrc()),
                    adaptor.getOffsets()[1], operands);
    for (unsigned at = firstPanel; at < operands.size(); at += 2) {
      constraints += ",r,r";
      text +=
          op.getReduce()
              ? " @p cp.reduce.async.bulk.tensor.2d.global.shared::cta." +
                    op.getReduce()->str() + ".tile.bulk_group"
              : std::string(" @p cp.async.bulk.tensor.2d.global.shared::cta."
                            "bulk_group");
      text += " [$1, {$" + std::to_string(at + 1) + ", $2}], [$" +
              std::to_string(at) + "];";
    }
    text += " @p cp.async.bulk.commit_group; }";
    kiln::inlinePtxEffect(rewriter, loc, Type(), text, constraints, operands);
    rewriter.eraseOp(op);
    return success();
  }
};

/// Thread 0 waits until its bulk stores have read their tiles.
struct TmaStoreWaitLowering : OpConversionPattern<kiln::gpu::TmaStoreWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::TmaStoreWaitOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    kiln::inlinePtxEffect(rewriter, loc, Type(),
                          "{ .reg .pred p; setp.ne.b32 p, $0, 0; @p "
                          "cp.async.bulk.wait_group.read 0; }",
                          "r", ValueRange{firstThreadOnly(rewriter, loc)});
    rewriter.eraseOp(op);
    return success();
  }
};

/// Ops that become one side-effecting PTX instruction.
template <typename Op> struct FixedPtxLowering : OpConversionPattern<Op> {
  FixedPtxLowering(TypeConverter &converter, MLIRContext *ctx,
                   std::function<std::string(Op)> text)
      : OpConversionPattern<Op>(converter, ctx), text(std::move(text)) {}
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    kiln::inlinePtxEffect(rewriter, op.getLoc(), Type(), text(op), "",
                          ValueRange{});
    rewriter.eraseOp(op);
    return success();
  }
  std::function<std::string(Op)> text;
};

struct BarrierLowering : OpConversionPattern<kiln::gpu::BarrierOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::gpu::BarrierOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    NVVM::Barrier0Op::create(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void kiln::populateSharedMemoryToLLVMPatterns(KilnTypeConverter &converter,
                                              RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<LocalAllocLowering, MemDescIndexLowering, MemDescTransLowering,
               AsyncCopyLowering, BarrierLowering, WaitBarrierLowering,
               ArriveBarrierLowering, AsyncTmaCopyLowering, LocalStoreLowering,
               LocalLoadLowering, AsyncTmaStoreLowering, TmaStoreWaitLowering>(
      converter, ctx);
  patterns.add<OneThreadBarrierLowering<kiln::gpu::InitBarrierOp>>(
      converter, ctx, [](kiln::gpu::InitBarrierOp op) {
        return "mbarrier.init.shared::cta.b64 [$1], " +
               std::to_string(op.getCount()) + ";";
      });
  patterns.add<OneThreadBarrierLowering<kiln::gpu::InvalBarrierOp>>(
      converter, ctx, [](kiln::gpu::InvalBarrierOp) {
        return std::string("mbarrier.inval.shared::cta.b64 [$1];");
      });
  patterns.add<FixedPtxLowering<kiln::gpu::AsyncCommitGroupOp>>(
      converter, ctx,
      [](kiln::gpu::AsyncCommitGroupOp) { return "cp.async.commit_group;"; });
  patterns.add<FixedPtxLowering<kiln::gpu::AsyncWaitOp>>(
      converter, ctx, [](kiln::gpu::AsyncWaitOp op) {
        return "cp.async.wait_group " + std::to_string(op.getPending()) + ";";
      });
  patterns.add<FixedPtxLowering<kiln::gpu::FenceAsyncSharedOp>>(
      converter, ctx, [](kiln::gpu::FenceAsyncSharedOp) {
        return "fence.proxy.async.shared::cta;";
      });
}
