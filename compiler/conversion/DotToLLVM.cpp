//===- DotToLLVM.cpp - kiln.dot as multiply-adds over staged operands -----===//
//
// The result of a dot has a blocked layout (kiln-assign-layouts gives each
// thread a nearly square block of it); the operands come in whatever layout
// their producers have. The lowering stages a and b in shared memory, then
// runs a loop over k in which every thread loads the k-th element of each of
// its rows of a and columns of b and takes one fused multiply-add per result
// element it holds, in K order, as upstream Triton's FMA dot does. Only the
// accumulators stay live across the loop, so register use does not grow
// with K.
//
// Products are taken in fp32 (fp64 for fp64) from float operands of any type
// (fp8 is widened before, by the fp8 conversions), which is at least as
// precise as any input_precision asks for; integer operands multiply and add
// in the accumulator's type. Rows of a are padded by one 4-byte word so that
// lanes reading one column of a hit different banks. When a and b do not fit
// in kDotStagingBytes, K is staged in chunks.
//
// A dot in the mma layout whose types have a tensor-core flavour
// (compiler/ir/TensorCoreFlavour.h) and that kiln-pipeline-dots left as it
// was (not in a pipelined loop, or batched: 3-D) stages its operands the
// same way and runs mma.sync over them: lowerOnTensorCores().
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/DistributedLayout.h"
#include "compiler/conversion/LoweringUtils.h"
#include "compiler/conversion/MmaSyncInstructions.h"
#include "compiler/conversion/OpFamilyLowerings.h"
#include "compiler/conversion/Stmatrix.h"
#include "compiler/ir/ElementTypes.h"
#include "compiler/ir/TargetInfo.h"
#include "compiler/ir/TensorCoreFlavour.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <array>
#include <map>
#include <string>

using namespace mlir;
using kiln::i32Constant;
using kiln::layout::LinearLayout;
namespace layout = kiln::layout;

namespace {

using kiln::kDotStagingBytes;
/// k steps per loop iteration.
constexpr int64_t kUnroll = 4;

int64_t byteSize(Type type) {
  if (isa<LLVM::LLVMPointerType>(type))
    return 8;
  return std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
}

/// Threads of the CTA (kiln_gpu.num_warps warps of 32).
int64_t threadsOf(Operation *op) {
  auto warps = op->getParentOfType<ModuleOp>()->getAttrOfType<IntegerAttr>(
      kiln::gpu::KilnGPUDialect::kNumWarpsAttrName);
  return (warps ? warps.getInt() : 4) * 32;
}

/// This thread's spare slot of `width` elements after `size` elements.
Value spareSlot(OpBuilder &b, Location loc, int64_t size, int64_t width = 1) {
  Value tid = kiln::threadIdX(b, loc);
  if (width > 1)
    tid = LLVM::MulOp::create(b, loc, tid, i32Constant(b, loc, width));
  return LLVM::AddOp::create(b, loc, tid, i32Constant(b, loc, size));
}

/// Linearizes the dimensions before the last two (the batch) with the
/// `rows` coordinate: batch-major, as the staged arrays are laid out.
Value batchRow(OpBuilder &b, Location loc, ArrayRef<Value> coords,
               ArrayRef<int64_t> shape, unsigned rowDim) {
  Value index = coords[0];
  for (unsigned d = 1; d <= rowDim; ++d)
    index = LLVM::AddOp::create(
        b, loc,
        LLVM::MulOp::create(b, loc, index, i32Constant(b, loc, shape[d])),
        coords[d]);
  return index;
}

/// Where a staged element of k-coordinate `k` goes when K is staged in
/// chunks of `chunk` (a power of two): its k within the chunk, and whether
/// it belongs to the chunk that starts at `first` (null when K is one chunk).
std::pair<Value, Value> chunkPosition(OpBuilder &b, Location loc, Value k,
                                      int64_t chunk, int64_t kSize,
                                      int64_t first) {
  if (chunk == kSize)
    return {k, Value()};
  int64_t bits = llvm::Log2_64(uint64_t(chunk));
  Value inChunk = LLVM::ICmpOp::create(
      b, loc, LLVM::ICmpPredicate::eq,
      LLVM::LShrOp::create(b, loc, k, i32Constant(b, loc, bits)),
      i32Constant(b, loc, first >> bits));
  return {LLVM::AndOp::create(b, loc, k, i32Constant(b, loc, chunk - 1)),
          inChunk};
}

/// Stores one chunk of a dot operand into its staging array: each element
/// this thread holds once (copies are skipped) goes to `offsetOf(coords, k
/// within the chunk)`, or, when it belongs to another chunk, to the spare
/// slot at index `spare` (one per thread, so that threads never write one
/// address together). Lanes and warps holding copies of other threads'
/// elements (attention's p in the scores' layout, whose second warpgroup
/// holds the first one's rows) write their spare slot too. With `vector`
/// over 1, registers j..j+vector-1 (j a multiple of it) are consecutive
/// elements of one chunk at aligned offsets (stagedOperand checked it), and
/// each such run is one store; the spare slot then holds `vector` elements.
void stageChunk(
    OpBuilder &b, Location loc, ArrayRef<Value> elements,
    ArrayRef<kiln::Coordinates> coords, const LinearLayout &layout,
    unsigned kDim, int64_t chunk, int64_t kSize, int64_t first, Value base,
    Type element, Value spare,
    llvm::function_ref<Value(const kiln::Coordinates &, Value)> offsetOf,
    int64_t vector = 1) {
  Value owner = kiln::ownerPredicate(b, loc, layout);
  for (unsigned j = 0; j < elements.size(); j += vector) {
    if (!kiln::isRepresentativeRegister(layout, j))
      continue;
    auto [kk, inChunk] =
        chunkPosition(b, loc, coords[j][kDim], chunk, kSize, first);
    Value offset = offsetOf(coords[j], kk);
    if (inChunk)
      offset = LLVM::SelectOp::create(b, loc, inChunk, offset, spare);
    if (owner)
      offset = LLVM::SelectOp::create(b, loc, owner, offset, spare);
    Value address = LLVM::GEPOp::create(b, loc, base.getType(), element, base,
                                        ValueRange{offset});
    if (vector == 1) {
      LLVM::StoreOp::create(b, loc, elements[j], address);
      continue;
    }
    auto vectorType = VectorType::get({vector}, element);
    Value run = LLVM::PoisonOp::create(b, loc, vectorType);
    for (int64_t i = 0; i < vector; ++i)
      run = LLVM::InsertElementOp::create(b, loc, run, elements[j + i],
                                          i32Constant(b, loc, i));
    LLVM::StoreOp::create(b, loc, run, address,
                          /*alignment=*/unsigned(vector * byteSize(element)));
  }
}

/// `for (kk = 0; kk < trip; kk += step)` carrying `carried` in the loop
/// header's block arguments: `body(kk, values)` gives the next values. The
/// insertion point ends after the loop; returns the values there.
SmallVector<Value> emitCountedLoop(
    ConversionPatternRewriter &rewriter, Location loc, int64_t trip,
    int64_t step, ArrayRef<Value> carried,
    llvm::function_ref<SmallVector<Value>(Value, ArrayRef<Value>)> body) {
  SmallVector<Type> argTypes{rewriter.getI32Type()};
  SmallVector<Location> argLocs{loc};
  for (Value v : carried) {
    argTypes.push_back(v.getType());
    argLocs.push_back(loc);
  }
  Block *before = rewriter.getInsertionBlock();
  Block *after = rewriter.splitBlock(before, rewriter.getInsertionPoint());
  Block *header = rewriter.createBlock(after, argTypes, argLocs);
  Block *bodyBlock = rewriter.createBlock(after);
  rewriter.setInsertionPointToEnd(before);
  SmallVector<Value> initial{i32Constant(rewriter, loc, 0)};
  llvm::append_range(initial, carried);
  LLVM::BrOp::create(rewriter, loc, initial, header);

  rewriter.setInsertionPointToStart(header);
  Value kk = header->getArgument(0);
  LLVM::CondBrOp::create(rewriter, loc,
                         LLVM::ICmpOp::create(rewriter, loc,
                                              LLVM::ICmpPredicate::slt, kk,
                                              i32Constant(rewriter, loc, trip)),
                         bodyBlock, after);

  rewriter.setInsertionPointToStart(bodyBlock);
  SmallVector<Value> next{
      LLVM::AddOp::create(rewriter, loc, kk, i32Constant(rewriter, loc, step))};
  SmallVector<Value> values(header->getArguments().drop_front());
  llvm::append_range(next, body(kk, values));
  LLVM::BrOp::create(rewriter, loc, next, header);
  rewriter.setInsertionPointToStart(after);
  return SmallVector<Value>(header->getArguments().drop_front());
}

/// The run of registers from register 0 along `dim`: 2 or 4 where register
/// bits 0 (and 1) step `dim` by 1 (and 2) and every other basis of
/// `layout` keeps `dim` a multiple of the run, so that each of a thread's
/// runs starts aligned; else 1.
int64_t alignedRun(const LinearLayout &layout, unsigned dim) {
  int32_t registerBits = layout.getInDimSizeLog2(layout::kRegister);
  int64_t run = 1;
  auto stepsByRun = [&](int32_t bit) {
    ArrayRef<int32_t> basis = layout.getBasis(layout::kRegister, bit);
    for (unsigned d = 0; d < basis.size(); ++d)
      if (basis[d] != (d == dim ? int32_t(run) : 0))
        return false;
    return true;
  };
  for (int32_t bit = 0; bit < std::min<int32_t>(registerBits, 2); ++bit) {
    if (!stepsByRun(bit))
      break;
    run *= 2;
  }
  if (run == 1)
    return 1;
  for (const LinearLayout::InDim &in : layout.getInDims())
    for (int32_t bit = 0; bit < layout.getInDimSizeLog2(in.name); ++bit)
      if (!(in.name == layout::kRegister && (int64_t(1) << bit) < run) &&
          layout.getBasis(in.name, bit)[dim] % run != 0)
        return 1;
  return run;
}

/// Where the staged tensor-core lowering puts one operand. 8- and 16-bit
/// operands: rows along M (a) or N (b), each row's K contiguous and padded
/// by one 32-bit word, as their fragments hold two or four K to a word.
/// 32-bit operands (tf32) hold one element a word, so their rows may run
/// either way: along whichever dimension the thread's registers run, so
/// that each run of up to four is one store (v of a p @ v, loaded with N
/// contiguous, took four scalar stores per run along K-contiguous rows).
/// Rows along M or N are then padded by 4 words, rows along K by 8 or 16:
/// either way the 32 lanes reading one fragment word hit 32 banks.
struct StagedOperand {
  bool kContiguous = true; // rows along M or N (else along K)
  int64_t rowLength = 0;   // elements from one row to the next
  int64_t size = 0;        // elements, spare slots not included
  int64_t vector = 1;      // elements a thread stores at once
  int64_t spareWidth = 1;  // elements of each thread's spare slot

  /// Whether ldmatrix reads the fragments: 32-bit elements in K-contiguous
  /// rows of whole 16-byte words (only the 32-bit layout pads by 4).
  bool readByMatrix(int64_t bytes) const {
    return bytes == 4 && kContiguous && rowLength % 4 == 0;
  }
};

/// `extent` is the operand's M (a) or N (b) of one batch; `tf32Rows`
/// false keeps every operand as 8- and 16-bit ones are (when the 32-bit
/// layout does not fit the staging budget).
StagedOperand stagedOperand(const LinearLayout &layout, unsigned kDim,
                            unsigned xDim, int64_t batch, int64_t extent,
                            int64_t chunk, int64_t bytes, bool tf32Rows) {
  StagedOperand staged;
  staged.rowLength = chunk + 4 / bytes;
  staged.size = batch * extent * staged.rowLength;
  if (bytes != 4 || !tf32Rows)
    return staged;
  staged.spareWidth = 4;
  int64_t alongX = extent % 8 == 0 ? alignedRun(layout, xDim) : 1;
  int64_t alongK = alignedRun(layout, kDim);
  if (alongX > alongK) {
    staged.kContiguous = false;
    staged.rowLength = extent + (extent % 16 == 0 ? 8 : 16);
    staged.size = batch * chunk * staged.rowLength;
    staged.vector = alongX;
    return staged;
  }
  staged.rowLength = chunk + 4;
  staged.size = batch * extent * staged.rowLength;
  staged.vector = alongK;
  return staged;
}

struct DotLowering : OpConversionPattern<kiln::DotOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::DotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType aType = op.getA().getType(), bType = op.getB().getType();
    RankedTensorType cType = op.getC().getType();
    std::optional<LinearLayout> aLayout = kiln::getLinearLayout(aType);
    std::optional<LinearLayout> bLayout = kiln::getLinearLayout(bType);
    std::optional<LinearLayout> cLayout = kiln::getLinearLayout(cType);
    Type converted = getTypeConverter()->convertType(op.getType());
    if (!aLayout || !bLayout || !cLayout || !converted)
      return rewriter.notifyMatchFailure(op, "operands without layouts");
    if (kiln::isFp8(aType.getElementType()) ||
        kiln::isFp8(bType.getElementType()))
      return rewriter.notifyMatchFailure(op, "fp8 operands not widened");
    // Operands of a tensor-core flavour in the mma layout: mma.sync. Other
    // dots in that layout (K not a multiple of the instruction's, say) take
    // the multiply-add loop, which works in any layout. fp8 arrives widened
    // to fp32 here, which tf32 holds exactly.
    kiln::TargetInfo target =
        kiln::TargetInfo::of(op->getParentOfType<ModuleOp>());
    std::optional<kiln::TensorCoreFlavour> flavour = kiln::tensorCoreFlavour(
        aType.getElementType(), bType.getElementType(), cType.getElementType(),
        op.getInputPrecision(), target);
    if (isa<kiln::gpu::MmaEncodingAttr>(cType.getEncoding()) && flavour &&
        flavour->hasMmaSync(target) &&
        aType.getDimSize(aType.getRank() - 1) % flavour->kGroup() == 0 &&
        stagingFits(op, *flavour))
      return lowerOnTensorCores(op, adaptor, rewriter, *flavour, *aLayout,
                                *bLayout, *cLayout, converted);
    Location loc = op.getLoc();
    unsigned rank = unsigned(cType.getRank());
    unsigned mDim = rank - 2, nDim = rank - 1;
    int64_t batch = 1;
    for (unsigned d = 0; d + 2 < rank; ++d)
      batch *= cType.getDimSize(d);
    int64_t m = cType.getDimSize(mDim), n = cType.getDimSize(nDim);
    int64_t k = aType.getDimSize(nDim);

    Type cElement = cType.getElementType();
    bool integer = isa<IntegerType>(cElement);
    Type accType =
        integer || cElement.isF64() ? cElement : Type(rewriter.getF32Type());
    auto widen = [&](Value v) -> Value {
      if (v.getType() == accType)
        return v;
      if (integer)
        return LLVM::SExtOp::create(rewriter, loc, accType, v);
      return LLVM::FPExtOp::create(rewriter, loc, accType, v);
    };

    SmallVector<Value> a = kiln::unpackElements(rewriter, loc, adaptor.getA());
    SmallVector<Value> b = kiln::unpackElements(rewriter, loc, adaptor.getB());
    SmallVector<Value> c = kiln::unpackElements(rewriter, loc, adaptor.getC());
    Type aStored = a.front().getType(), bStored = b.front().getType();
    int64_t aBytes = byteSize(aStored), bBytes = byteSize(bStored);
    int64_t pad = std::max<int64_t>(1, 4 / aBytes);

    // K in chunks that fit: a is (batch * m) rows of chunk + pad, b is
    // (batch * chunk) rows of n; one extra element per thread each takes
    // the stores of elements outside the chunk being staged.
    int64_t threads = threadsOf(op);
    int64_t chunk = k;
    auto bytesFor = [&](int64_t kc) {
      return (batch * m * (kc + pad) + threads) * aBytes +
             (batch * kc * n + threads) * bBytes;
    };
    while (chunk > 1 && bytesFor(chunk) > kDotStagingBytes)
      chunk /= 2;
    int64_t aSize = batch * m * (chunk + pad), bSize = batch * chunk * n;
    Value aBase =
        kiln::allocateSharedArray(rewriter, op, aStored, aSize + threads);
    Value bBase =
        kiln::allocateSharedArray(rewriter, op, bStored, bSize + threads);
    Value aSpare = spareSlot(rewriter, loc, aSize);
    Value bSpare = spareSlot(rewriter, loc, bSize);
    // Where each thread's elements of a and b go, and which k they hold.
    SmallVector<kiln::Coordinates> aCoords =
        kiln::emitCoordinates(rewriter, loc, *aLayout);
    SmallVector<kiln::Coordinates> bCoords =
        kiln::emitCoordinates(rewriter, loc, *bLayout);
    // The thread's result rows and columns: registers that share their
    // coordinates (in thread 0) share the row's or column's loads.
    SmallVector<kiln::Coordinates> cCoords =
        kiln::emitCoordinates(rewriter, loc, *cLayout);
    std::map<SmallVector<int32_t>, unsigned> rowOf, columnOf;
    SmallVector<Value> rowOffsets, columnOffsets; // into a (k = 0), b (k = 0)
    SmallVector<std::pair<unsigned, unsigned>> sources; // per result register
    for (unsigned r = 0; r < c.size(); ++r) {
      SmallVector<int32_t> coords = kiln::registerCoordinates(*cLayout, r);
      SmallVector<int32_t> rowKey(coords), columnKey(coords);
      rowKey[nDim] = 0;
      columnKey[mDim] = 0;
      auto [row, newRow] = rowOf.insert({rowKey, unsigned(rowOffsets.size())});
      if (newRow)
        rowOffsets.push_back(LLVM::MulOp::create(
            rewriter, loc,
            batchRow(rewriter, loc, cCoords[r], cType.getShape(), mDim),
            i32Constant(rewriter, loc, chunk + pad)));
      auto [column, newColumn] =
          columnOf.insert({columnKey, unsigned(columnOffsets.size())});
      if (newColumn) {
        Value offset = cCoords[r][nDim];
        if (rank > 2) {
          SmallVector<Value> batchOnly(cCoords[r].begin(),
                                       cCoords[r].begin() + mDim);
          batchOnly.push_back(i32Constant(rewriter, loc, 0));
          SmallVector<int64_t> shape(cType.getShape().take_front(mDim));
          shape.push_back(chunk);
          offset = LLVM::AddOp::create(
              rewriter, loc,
              LLVM::MulOp::create(
                  rewriter, loc,
                  batchRow(rewriter, loc, batchOnly, shape, mDim),
                  i32Constant(rewriter, loc, n)),
              offset);
        }
        columnOffsets.push_back(offset);
      }
      sources.push_back({row->second, column->second});
    }

    SmallVector<Value> acc;
    for (Value v : c)
      acc.push_back(widen(v));
    // Nothing another thread wrote or reads where the operands go is left
    // unordered (a tile stored before a loop that ran no iteration);
    // kiln-remove-redundant-barriers drops this where nothing needs it.
    NVVM::Barrier0Op::create(rewriter, loc);
    for (int64_t first = 0; first < k; first += chunk) {
      // Stage this chunk: a[batch][row][kk] at (batch * m + row) * (chunk +
      // pad) + kk, b[batch][kk][col] at (batch * chunk + kk) * n + col.
      stageChunk(rewriter, loc, a, aCoords, *aLayout, nDim, chunk, k, first,
                 aBase, aStored, aSpare,
                 [&](const kiln::Coordinates &at, Value kk) -> Value {
                   return LLVM::AddOp::create(
                       rewriter, loc,
                       LLVM::MulOp::create(
                           rewriter, loc,
                           batchRow(rewriter, loc, at, aType.getShape(), mDim),
                           i32Constant(rewriter, loc, chunk + pad)),
                       kk);
                 });
      stageChunk(
          rewriter, loc, b, bCoords, *bLayout, mDim, chunk, k, first, bBase,
          bStored, bSpare, [&](const kiln::Coordinates &at, Value kk) -> Value {
            SmallVector<Value> rowCoords(at.begin(), at.begin() + mDim);
            rowCoords.push_back(kk);
            SmallVector<int64_t> shape(bType.getShape().take_front(mDim));
            shape.push_back(chunk);
            return LLVM::AddOp::create(
                rewriter, loc,
                LLVM::MulOp::create(
                    rewriter, loc,
                    batchRow(rewriter, loc, rowCoords, shape, mDim),
                    i32Constant(rewriter, loc, n)),
                at[nDim]);
          });
      NVVM::Barrier0Op::create(rewriter, loc);
      acc = multiplyChunk(rewriter, loc, acc, aBase, aStored, bBase, bStored,
                          rowOffsets, columnOffsets, sources, chunk, n, integer,
                          widen);
      NVVM::Barrier0Op::create(rewriter, loc);
    }

    SmallVector<Value> d;
    for (Value v : acc)
      d.push_back(v.getType() == cElement ? v
                                          : Value(LLVM::FPTruncOp::create(
                                                rewriter, loc, cElement, v)));
    rewriter.replaceOp(op, kiln::packElements(rewriter, loc, converted, d));
    return success();
  }

  /// Whether a and b of a tensor-core dot fit kDotStagingBytes with K in
  /// chunks of one instruction group (every batch of a 3-D dot at once).
  static bool stagingFits(kiln::DotOp op,
                          const kiln::TensorCoreFlavour &flavour) {
    ArrayRef<int64_t> shape = op.getType().getShape();
    int64_t batch = shape.size() == 3 ? shape[0] : 1;
    int64_t m = shape[shape.size() - 2], n = shape.back();
    return kiln::stagedDotBytes(batch, m, n, flavour.kGroup(),
                                flavour.elementBytes,
                                threadsOf(op)) <= kDotStagingBytes;
  }

  /// Operands of `flavour` into its accumulator in the mma layout
  /// (kiln-assign-layouts chose it): a staged row-major, b staged
  /// transposed (each n's K contiguous), both rows padded by one word; then
  /// a loop over k, 32 bytes of it at a time, in which each warp loads its
  /// A fragments (4 words per 16-row tile) and B fragments (2 words per
  /// 8-column tile) and issues one mma.sync per accumulator tile.
  static LogicalResult
  lowerOnTensorCores(kiln::DotOp op, OpAdaptor adaptor,
                     ConversionPatternRewriter &rewriter,
                     const kiln::TensorCoreFlavour &flavour,
                     const LinearLayout &aLayout, const LinearLayout &bLayout,
                     const LinearLayout &cLayout, Type converted) {
    Location loc = op.getLoc();
    RankedTensorType aType = op.getA().getType();
    // A 3-D dot stacks its batches: a's rows and b's columns batch-major.
    unsigned rank = unsigned(aType.getRank());
    unsigned mDim = rank - 2, nDim = rank - 1;
    int64_t batch = rank == 3 ? aType.getDimSize(0) : 1;
    int64_t m = op.getType().getDimSize(mDim),
            n = op.getType().getDimSize(nDim);
    int64_t k = aType.getDimSize(nDim);
    SmallVector<Value> a = kiln::unpackElements(rewriter, loc, adaptor.getA());
    SmallVector<Value> b = kiln::unpackElements(rewriter, loc, adaptor.getB());
    SmallVector<Value> acc =
        kiln::unpackElements(rewriter, loc, adaptor.getC());
    Type stored = a.front().getType();
    int64_t bytes = flavour.elementBytes;
    int64_t perWord = 4 / bytes;     // elements in a 32-bit register
    int64_t kStep = flavour.kStep(); // K of one instruction
    int64_t kHalf = kStep / 2;       // of its second register pair
    int64_t chunk = k;
    int64_t threads = threadsOf(op);
    while (chunk > flavour.kGroup() &&
           kiln::stagedDotBytes(batch, m, n, chunk, bytes, threads) >
               kDotStagingBytes)
      chunk /= 2;
    // The 32-bit rows where they fit the budget, else rows as for 16 bits.
    auto stage = [&](bool tf32Rows) {
      return std::make_pair(
          stagedOperand(aLayout, nDim, mDim, batch, m, chunk, bytes, tf32Rows),
          stagedOperand(bLayout, mDim, nDim, batch, n, chunk, bytes, tf32Rows));
    };
    auto [aStage, bStage] = stage(true);
    if ((aStage.size + bStage.size +
         threads * (aStage.spareWidth + bStage.spareWidth)) *
            bytes >
        kDotStagingBytes)
      std::tie(aStage, bStage) = stage(false);
    Value aBase = kiln::allocateSharedArray(
        rewriter, op, stored, aStage.size + threads * aStage.spareWidth);
    Value bBase = kiln::allocateSharedArray(
        rewriter, op, stored, bStage.size + threads * bStage.spareWidth);
    Value aSpare = spareSlot(rewriter, loc, aStage.size, aStage.spareWidth);
    Value bSpare = spareSlot(rewriter, loc, bStage.size, bStage.spareWidth);
    auto address = [&](Value base, Value offset) {
      return LLVM::GEPOp::create(rewriter, loc, base.getType(), stored, base,
                                 ValueRange{offset});
    };

    // Accumulator tiles: the four registers (c0..c3) of each 16x8 tile, by
    // the tile's corner in thread 0 (batch, row, column). Register bit 0 is
    // the column + 1, bit 1 the row + 8, as layout::mmaV2 orders them; a
    // batched dot's M under 16 (N under 8) repeats its rows (columns) in
    // the tile, so the coordinates alone need not tell the slots apart.
    using Corner = std::array<int32_t, 3>;
    std::map<Corner, std::array<int, 4>> tiles;
    for (unsigned r = 0; r < acc.size(); ++r) {
      SmallVector<int32_t> at = kiln::registerCoordinates(cLayout, r);
      int32_t atBatch = rank == 3 ? at[0] : 0;
      auto &slots =
          tiles
              .try_emplace(Corner{atBatch, at[mDim] & ~15, at[nDim] & ~7},
                           std::array<int, 4>{-1, -1, -1, -1})
              .first->second;
      int slot = int(r & 3);
      int32_t row = (slot / 2) * 8, column = slot % 2;
      if (slots[slot] >= 0 || (at[mDim] & 15 & (m - 1)) != (row & (m - 1)) ||
          (at[nDim] & 7 & (n - 1)) != (column & (n - 1)))
        return op.emitOpError("the accumulator is not in 16x8 mma tiles");
      slots[slot] = int(r);
    }
    SmallVector<kiln::Coordinates> cCoords =
        kiln::emitCoordinates(rewriter, loc, cLayout);
    Value tid = kiln::threadIdX(rewriter, loc);
    Value t =
        LLVM::AndOp::create(rewriter, loc, tid, i32Constant(rewriter, loc, 3));
    // The accumulator's columns of lane t start at 2t; its operand words at
    // k = perWord * t.
    Value twoT =
        LLVM::ShlOp::create(rewriter, loc, t, i32Constant(rewriter, loc, 1));
    Value kOfLane = LLVM::MulOp::create(rewriter, loc, t,
                                        i32Constant(rewriter, loc, perWord));
    Value g = LLVM::AndOp::create(
        rewriter, loc,
        LLVM::LShrOp::create(rewriter, loc, tid, i32Constant(rewriter, loc, 2)),
        i32Constant(rewriter, loc, 7));
    // Per tile row: where the thread's A fragment rows start (row g of the
    // tile); per tile column: its B column's start (column g). Batch b's
    // rows of a follow b * m earlier rows, its columns of b b * n.
    auto stacked = [&](const kiln::Coordinates &at, Value index,
                       int64_t perBatch) -> Value {
      if (rank != 3)
        return index;
      return LLVM::AddOp::create(
          rewriter, loc,
          LLVM::MulOp::create(rewriter, loc, at[0],
                              i32Constant(rewriter, loc, perBatch)),
          index);
    };
    // Where a staged operand holds its element at row or column `x` (of a
    // batch of perBatch) and k `k`: K-contiguous rows, a[batch][row][k] at
    // (batch * m + row) * rowLength + k and b[batch][k][col] at (batch * n
    // + col) * rowLength + k; rows along K, (batch * chunk + k) * rowLength
    // + row (or col). The stores, the fragments' first words and
    // ldmatrix's rows all address through it.
    auto elementAt = [&](const StagedOperand &staged,
                         const kiln::Coordinates &at, Value x, Value k,
                         int64_t perBatch) -> Value {
      Value row =
          staged.kContiguous ? stacked(at, x, perBatch) : stacked(at, k, chunk);
      return LLVM::AddOp::create(
          rewriter, loc,
          LLVM::MulOp::create(rewriter, loc, row,
                              i32Constant(rewriter, loc, staged.rowLength)),
          staged.kContiguous ? k : x);
    };
    // Operands read by ldmatrix (StagedOperand::readByMatrix) take a 16x8
    // tile of a (four words) in one ldmatrix.x4 and an 8x8 tile of b in one
    // .x2: lane l names row l % 8 of matrix l / 8, and ldmatrix hands thread
    // T word T % 4 of row T / 4 of each, tf32's fragment. a's matrices are
    // rows 0-7 and 8-15 at k, then at k + 4; b's its 8 columns at k, k + 4.
    const bool aByMatrix = aStage.readByMatrix(bytes) && m >= 16;
    const bool bByMatrix = bStage.readByMatrix(bytes) && n >= 8;
    Value lane =
        LLVM::AndOp::create(rewriter, loc, tid, i32Constant(rewriter, loc, 31));
    auto laneBits = [&](int64_t shift, int64_t mask) -> Value {
      return LLVM::AndOp::create(
          rewriter, loc,
          LLVM::LShrOp::create(rewriter, loc, lane,
                               i32Constant(rewriter, loc, shift)),
          i32Constant(rewriter, loc, mask));
    };
    auto times = [&](Value v, int64_t factor) -> Value {
      return LLVM::MulOp::create(rewriter, loc, v,
                                 i32Constant(rewriter, loc, factor));
    };
    auto plus = [&](Value x, Value y) -> Value {
      return LLVM::AddOp::create(rewriter, loc, x, y);
    };
    std::map<std::pair<int32_t, int32_t>, Value> aRows, bColumns;
    for (auto &[corner, slots] : tiles) {
      if (llvm::is_contained(slots, -1))
        return op.emitOpError("an mma tile lacks registers");
      const kiln::Coordinates &at = cCoords[slots[0]];
      std::pair<int32_t, int32_t> rowKey{corner[0], corner[1]},
          columnKey{corner[0], corner[2]};
      if (!aRows.count(rowKey))
        aRows[rowKey] =
            aByMatrix
                ? elementAt(
                      aStage, at,
                      plus(LLVM::SubOp::create(rewriter, loc, at[mDim], g),
                           plus(laneBits(0, 7), times(laneBits(3, 1), 8))),
                      times(laneBits(4, 1), 4), m)
                : elementAt(aStage, at, at[mDim], kOfLane, m);
      if (!bColumns.count(columnKey)) {
        // Column g of the tile; of fewer than 8, column g mod n (one tile,
        // its copies repeated).
        Value column =
            n < 8 ? Value(LLVM::AndOp::create(
                        rewriter, loc, g, i32Constant(rewriter, loc, n - 1)))
                  : Value(LLVM::AddOp::create(
                        rewriter, loc,
                        LLVM::SubOp::create(rewriter, loc, at[nDim], twoT), g));
        bColumns[columnKey] =
            bByMatrix ? elementAt(bStage, at,
                                  plus(LLVM::SubOp::create(rewriter, loc,
                                                           at[nDim], twoT),
                                       laneBits(0, 7)),
                                  times(laneBits(3, 1), 4), n)
                      : elementAt(bStage, at, column, kOfLane, n);
      }
    }

    kiln::MmaSyncInstructions instructions(
        rewriter, loc, kiln::TargetInfo::of(op->getParentOfType<ModuleOp>()),
        flavour, aType.getElementType(), op.getB().getType().getElementType(),
        acc.front().getType());
    const int64_t group = flavour.kGroup();
    // The tile's rows 8-15: 8 rows further, or, for M of 8 or less, rows
    // 0-7 again.
    const int64_t lowerHalf = m >= 16 ? 8 : 0;

    SmallVector<kiln::Coordinates> aCoords =
        kiln::emitCoordinates(rewriter, loc, aLayout);
    SmallVector<kiln::Coordinates> bCoords =
        kiln::emitCoordinates(rewriter, loc, bLayout);
    // As in the multiply-add form: ordered after every earlier access.
    NVVM::Barrier0Op::create(rewriter, loc);
    for (int64_t first = 0; first < k; first += chunk) {
      auto placed = [&](const StagedOperand &staged, unsigned xDim,
                        int64_t perBatch) {
        return [&, xDim, perBatch](const kiln::Coordinates &at,
                                   Value kk) -> Value {
          return elementAt(staged, at, at[xDim], kk, perBatch);
        };
      };
      stageChunk(rewriter, loc, a, aCoords, aLayout, nDim, chunk, k, first,
                 aBase, stored, aSpare, placed(aStage, mDim, m), aStage.vector);
      stageChunk(rewriter, loc, b, bCoords, bLayout, mDim, chunk, k, first,
                 bBase, stored, bSpare, placed(bStage, nDim, n), bStage.vector);
      NVVM::Barrier0Op::create(rewriter, loc);

      // The loop over k, one group of instructions' K at a time, the
      // accumulators carried.
      Type i32 = rewriter.getI32Type();
      acc = emitCountedLoop(
          rewriter, loc, chunk, group, acc,
          [&](Value kk, ArrayRef<Value> carried) -> SmallVector<Value> {
            SmallVector<Value> sums(carried);
            // The word kPlus further along K and xPlus along M or N.
            auto word = [&](Value base, const StagedOperand &staged,
                            Value offset, int64_t kPlus,
                            int64_t xPlus) -> Value {
              int64_t rowLength = staged.rowLength;
              Value at =
                  staged.kContiguous
                      ? LLVM::AddOp::create(
                            rewriter, loc, offset,
                            LLVM::AddOp::create(
                                rewriter, loc, kk,
                                i32Constant(rewriter, loc,
                                            kPlus + xPlus * rowLength)))
                      : LLVM::AddOp::create(
                            rewriter, loc, offset,
                            LLVM::AddOp::create(
                                rewriter, loc,
                                LLVM::MulOp::create(
                                    rewriter, loc, kk,
                                    i32Constant(rewriter, loc, rowLength)),
                                i32Constant(rewriter, loc,
                                            kPlus * rowLength + xPlus)));
              return LLVM::LoadOp::create(rewriter, loc, i32, address(base, at),
                                          /*alignment=*/4);
            };
            // `count` words by one ldmatrix from this lane's row, kPlus on.
            auto matrixWords = [&](Value base, Value offset, int64_t kPlus,
                                   int64_t count) -> SmallVector<Value> {
              Value at =
                  plus(offset, plus(kk, i32Constant(rewriter, loc, kPlus)));
              return SmallVector<Value>(kiln::emitLdmatrixWords(
                  rewriter, loc,
                  LLVM::PtrToIntOp::create(rewriter, loc, i32,
                                           address(base, at)),
                  count, /*transposed=*/false));
            };
            std::map<std::pair<int32_t, int32_t>,
                     kiln::MmaSyncInstructions::Operand>
                aOperands, bOperands;
            for (auto &[row, offset] : aRows) {
              SmallVector<SmallVector<Value>> steps;
              for (int64_t s = 0; s < group; s += kStep)
                if (aByMatrix)
                  steps.push_back(matrixWords(aBase, offset, s, 4));
                else
                  steps.push_back(
                      {word(aBase, aStage, offset, s, 0),
                       word(aBase, aStage, offset, s, lowerHalf),
                       word(aBase, aStage, offset, kHalf + s, 0),
                       word(aBase, aStage, offset, kHalf + s, lowerHalf)});
              aOperands[row] = instructions.prepare(steps, /*isA=*/true);
            }
            for (auto &[column, offset] : bColumns) {
              SmallVector<SmallVector<Value>> steps;
              for (int64_t s = 0; s < group; s += kStep)
                if (bByMatrix)
                  steps.push_back(matrixWords(bBase, offset, s, 2));
                else
                  steps.push_back({word(bBase, bStage, offset, s, 0),
                                   word(bBase, bStage, offset, kHalf + s, 0)});
              bOperands[column] = instructions.prepare(steps, /*isA=*/false);
            }
            for (auto &[corner, slots] : tiles) {
              SmallVector<Value, 4> quad;
              for (int slot : slots)
                quad.push_back(sums[slot]);
              instructions.multiply(aOperands[{corner[0], corner[1]}],
                                    bOperands[{corner[0], corner[2]}], quad);
              for (auto [i, slot] : llvm::enumerate(slots))
                sums[slot] = quad[i];
            }
            return sums;
          });
      NVVM::Barrier0Op::create(rewriter, loc);
    }
    rewriter.replaceOp(op, kiln::packElements(rewriter, loc, converted, acc));
    return success();
  }

  /// The loop over the k of one staged chunk: kUnroll steps per iteration,
  /// the accumulators as the loop's block arguments.
  static SmallVector<Value> multiplyChunk(
      ConversionPatternRewriter &rewriter, Location loc, ArrayRef<Value> acc,
      Value aBase, Type aStored, Value bBase, Type bStored,
      ArrayRef<Value> rowOffsets, ArrayRef<Value> columnOffsets,
      ArrayRef<std::pair<unsigned, unsigned>> sources, int64_t chunk, int64_t n,
      bool integer, llvm::function_ref<Value(Value)> widen) {
    int64_t unroll = std::min(chunk, kUnroll);
    return emitCountedLoop(
        rewriter, loc, chunk, unroll, acc,
        [&](Value kk, ArrayRef<Value> carried) -> SmallVector<Value> {
          SmallVector<Value> sums(carried);
          Value bRow = LLVM::MulOp::create(rewriter, loc, kk,
                                           i32Constant(rewriter, loc, n));
          for (int64_t step = 0; step < unroll; ++step) {
            SmallVector<Value> rows, columns;
            for (Value offset : rowOffsets) {
              Value index = LLVM::AddOp::create(
                  rewriter, loc, offset,
                  LLVM::AddOp::create(rewriter, loc, kk,
                                      i32Constant(rewriter, loc, step)));
              rows.push_back(widen(LLVM::LoadOp::create(
                  rewriter, loc, aStored,
                  LLVM::GEPOp::create(rewriter, loc, aBase.getType(), aStored,
                                      aBase, ValueRange{index}))));
            }
            for (Value offset : columnOffsets) {
              Value index = LLVM::AddOp::create(
                  rewriter, loc, offset,
                  LLVM::AddOp::create(rewriter, loc, bRow,
                                      i32Constant(rewriter, loc, step * n)));
              columns.push_back(widen(LLVM::LoadOp::create(
                  rewriter, loc, bStored,
                  LLVM::GEPOp::create(rewriter, loc, bBase.getType(), bStored,
                                      bBase, ValueRange{index}))));
            }
            for (auto [r, source] : llvm::enumerate(sources)) {
              Value x = rows[source.first], y = columns[source.second];
              sums[r] =
                  integer
                      ? Value(LLVM::AddOp::create(
                            rewriter, loc,
                            LLVM::MulOp::create(rewriter, loc, x, y), sums[r]))
                      : Value(
                            LLVM::FMAOp::create(rewriter, loc, x, y, sums[r]));
            }
          }
          return sums;
        });
  }
};

} // namespace

void kiln::populateDotToLLVMPatterns(KilnTypeConverter &converter,
                                     RewritePatternSet &patterns) {
  patterns.add<DotLowering>(converter, patterns.getContext());
}
