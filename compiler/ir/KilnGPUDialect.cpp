//===- KilnGPUDialect.cpp - the kiln_gpu layout dialect -------------------===//
#include "compiler/ir/Dialects.h"
#include "compiler/ir/RegisterA.h"
#include "compiler/ir/TileRuns.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

#include "compiler/ir/KilnGPUDialect.cpp.inc"

#include "compiler/ir/KilnGPUAttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "compiler/ir/KilnGPUAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "compiler/ir/KilnGPUTypes.cpp.inc"

#define GET_OP_CLASSES
#include "compiler/ir/KilnGPUOps.cpp.inc"

void kiln::gpu::KilnGPUDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "compiler/ir/KilnGPUAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "compiler/ir/KilnGPUTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "compiler/ir/KilnGPUOps.cpp.inc"
      >();
}

// Syntax: #kiln_gpu.blocked<{sizePerThread = [4], threadsPerWarp = [32],
//                            warpsPerCTA = [4], order = [0]}>
Attribute kiln::gpu::BlockedEncodingAttr::parse(AsmParser &parser, Type) {
  SmallVector<unsigned> fields[4];
  const char *names[4] = {"sizePerThread", "threadsPerWarp", "warpsPerCTA",
                          "order"};
  if (parser.parseLess() || parser.parseLBrace())
    return {};
  for (int i = 0; i < 4; ++i) {
    if (i > 0 && parser.parseComma())
      return {};
    if (parser.parseKeyword(names[i]) || parser.parseEqual())
      return {};
    if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                       [&]() -> ParseResult {
                                         unsigned v;
                                         if (parser.parseInteger(v))
                                           return failure();
                                         fields[i].push_back(v);
                                         return success();
                                       }))
      return {};
  }
  if (parser.parseRBrace() || parser.parseGreater())
    return {};
  return parser.getChecked<BlockedEncodingAttr>(
      parser.getContext(), fields[0], fields[1], fields[2], fields[3]);
}

void kiln::gpu::BlockedEncodingAttr::print(AsmPrinter &printer) const {
  auto list = [&](ArrayRef<unsigned> values) {
    printer << "[";
    llvm::interleaveComma(values, printer);
    printer << "]";
  };
  printer << "<{sizePerThread = ";
  list(getSizePerThread());
  printer << ", threadsPerWarp = ";
  list(getThreadsPerWarp());
  printer << ", warpsPerCTA = ";
  list(getWarpsPerCTA());
  printer << ", order = ";
  list(getOrder());
  printer << "}>";
}

LogicalResult kiln::gpu::BlockedEncodingAttr::verify(
    function_ref<InFlightDiagnostic()> emitError,
    ArrayRef<unsigned> sizePerThread, ArrayRef<unsigned> threadsPerWarp,
    ArrayRef<unsigned> warpsPerCTA, ArrayRef<unsigned> order) {
  size_t rank = sizePerThread.size();
  if (rank == 0 || threadsPerWarp.size() != rank ||
      warpsPerCTA.size() != rank || order.size() != rank)
    return emitError() << "blocked layout fields must all have the same, "
                          "non-zero rank";
  for (unsigned v :
       llvm::concat<const unsigned>(sizePerThread, threadsPerWarp, warpsPerCTA))
    if (v == 0 || !llvm::isPowerOf2_32(v))
      return emitError() << "blocked layout sizes must be powers of two";
  return success();
}

/// The rank of the tensors a layout applies to, or 0 if it is not one of
/// ours.
static unsigned layoutRank(Attribute layout) {
  auto distributed = dyn_cast<kiln::gpu::DistributedEncodingAttr>(layout);
  return distributed ? distributed.getRank() : 0;
}

// Syntax: #kiln_gpu.slice<{dim = 1, parent = #kiln_gpu.blocked<...>}>
Attribute kiln::gpu::SliceEncodingAttr::parse(AsmParser &parser, Type) {
  unsigned dim;
  Attribute parent;
  if (parser.parseLess() || parser.parseLBrace() ||
      parser.parseKeyword("dim") || parser.parseEqual() ||
      parser.parseInteger(dim) || parser.parseComma() ||
      parser.parseKeyword("parent") || parser.parseEqual() ||
      parser.parseAttribute(parent) || parser.parseRBrace() ||
      parser.parseGreater())
    return {};
  return parser.getChecked<SliceEncodingAttr>(parser.getContext(), dim, parent);
}

void kiln::gpu::SliceEncodingAttr::print(AsmPrinter &printer) const {
  printer << "<{dim = " << getDim() << ", parent = " << getParent() << "}>";
}

LogicalResult kiln::gpu::SliceEncodingAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, unsigned dim,
    Attribute parent) {
  unsigned parentRank = layoutRank(parent);
  if (parentRank < 2)
    return emitError() << "the parent of a slice layout must be a blocked or "
                          "slice layout of rank 2 or more";
  if (dim >= parentRank)
    return emitError() << "slice dimension " << dim
                       << " is out of range for a parent of rank "
                       << parentRank;
  return success();
}

// Syntax: #kiln_gpu.mma<{warpsPerCTA = [4, 2]}>, or with warpgroups along
// N: #kiln_gpu.mma<{warpsPerCTA = [4, 2], instrN = 128}>
Attribute kiln::gpu::MmaEncodingAttr::parse(AsmParser &parser, Type) {
  SmallVector<unsigned> warps;
  unsigned instrN = 0;
  auto parseWarp = [&]() -> ParseResult {
    unsigned w;
    if (parser.parseInteger(w))
      return failure();
    warps.push_back(w);
    return success();
  };
  if (parser.parseLess() || parser.parseLBrace() ||
      parser.parseKeyword("warpsPerCTA") || parser.parseEqual() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseWarp))
    return {};
  if (succeeded(parser.parseOptionalComma()) &&
      (parser.parseKeyword("instrN") || parser.parseEqual() ||
       parser.parseInteger(instrN)))
    return {};
  if (parser.parseRBrace() || parser.parseGreater())
    return {};
  return parser.getChecked<MmaEncodingAttr>(parser.getContext(), warps, instrN);
}

void kiln::gpu::MmaEncodingAttr::print(AsmPrinter &printer) const {
  printer << "<{warpsPerCTA = [";
  llvm::interleaveComma(getWarpsPerCTA(), printer);
  printer << "]";
  if (getInstrN())
    printer << ", instrN = " << getInstrN();
  printer << "}>";
}

LogicalResult
kiln::gpu::MmaEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   ArrayRef<unsigned> warpsPerCTA,
                                   unsigned instrN) {
  if (warpsPerCTA.size() != 2 && warpsPerCTA.size() != 3)
    return emitError() << "an mma layout has warpsPerCTA for 2 dimensions "
                          "(M, N) or 3 (batch, M, N)";
  for (unsigned w : warpsPerCTA)
    if (w == 0 || !llvm::isPowerOf2_32(w))
      return emitError() << "mma warpsPerCTA must be powers of two";
  if (instrN != 0 && (warpsPerCTA.size() != 2 || warpsPerCTA[0] % 4 != 0 ||
                      instrN < 8 || !llvm::isPowerOf2_32(instrN)))
    return emitError() << "an mma layout with instrN (warpgroups along N) is "
                          "2-D, has a multiple of 4 warps along M and a "
                          "power of two of at least 8 columns a warpgroup";
  return success();
}

LogicalResult kiln::gpu::ConvertLayoutOp::verify() {
  auto src = getSrc().getType(), result = getResult().getType();
  if (src.getShape() != result.getShape() ||
      src.getElementType() != result.getElementType())
    return emitOpError("changes only the layout: shape and element type must "
                       "stay, got ")
           << src << " -> " << result;
  for (RankedTensorType type : {src, result})
    if (type.getEncoding() &&
        layoutRank(type.getEncoding()) != unsigned(type.getRank()))
      return emitOpError("layout of rank ")
             << layoutRank(type.getEncoding()) << " on a tensor of rank "
             << type.getRank();
  return success();
}

//===----------------------------------------------------------------------===//
// Shared memory
//===----------------------------------------------------------------------===//

LogicalResult kiln::gpu::NVMMASharedEncodingAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, unsigned swizzle, bool) {
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    return emitError() << "nvmma_shared swizzle must be 0, 32, 64 or 128 "
                          "bytes, got "
                       << swizzle;
  return success();
}

// Syntax: !kiln_gpu.memdesc<3x128x64xf16, #kiln_gpu.nvmma_shared<...>>
Type kiln::gpu::MemDescType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  Attribute encoding;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elementType) || parser.parseComma() ||
      parser.parseAttribute(encoding) || parser.parseGreater())
    return {};
  return MemDescType::get(parser.getContext(), shape, elementType, encoding);
}

void kiln::gpu::MemDescType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t d : getShape())
    printer << d << "x";
  printer << getElementType() << ", " << getEncoding() << ">";
}

int64_t kiln::gpu::MemDescType::getTileBytes() const {
  ArrayRef<int64_t> shape = getShape();
  int64_t elements = 1;
  for (int64_t d : shape.take_back(std::min<size_t>(2, shape.size())))
    elements *= d;
  return elements *
         std::max<int64_t>(1, getElementType().getIntOrFloatBitWidth() / 8);
}

int64_t kiln::gpu::MemDescType::getSizeInBytes() const {
  int64_t tiles = 1;
  ArrayRef<int64_t> shape = getShape();
  for (size_t d = 0; d + 2 < shape.size(); ++d)
    tiles *= shape[d];
  return tiles * getTileBytes();
}

LogicalResult kiln::gpu::MemDescIndexOp::verify() {
  auto src = cast<MemDescType>(getSrc().getType());
  auto result = cast<MemDescType>(getResult().getType());
  if (src.getShape().size() < 3 ||
      src.getShape().drop_front() != result.getShape() ||
      src.getElementType() != result.getElementType() ||
      src.getEncoding() != result.getEncoding())
    return emitOpError("the result must be one tile of the source: ")
           << src << " -> " << result;
  return success();
}

kiln::gpu::MemDescType
kiln::gpu::MemDescTransOp::transposedType(MemDescType src) {
  auto encoding = cast<NVMMASharedEncodingAttr>(src.getEncoding());
  SmallVector<int64_t> shape(src.getShape());
  std::swap(shape[shape.size() - 2], shape[shape.size() - 1]);
  return MemDescType::get(
      src.getContext(), shape, src.getElementType(),
      NVMMASharedEncodingAttr::get(src.getContext(), encoding.getSwizzle(),
                                   !encoding.getTransposed()));
}

LogicalResult kiln::gpu::MemDescTransOp::verify() {
  auto src = cast<MemDescType>(getSrc().getType());
  if (src.getShape().size() != 2 ||
      !isa<NVMMASharedEncodingAttr>(src.getEncoding()))
    return emitOpError("transposes one nvmma_shared tile, got ") << src;
  if (getResult().getType() != transposedType(src))
    return emitOpError("the result must be ")
           << transposedType(src) << ", got " << getResult().getType();
  return success();
}

LogicalResult kiln::gpu::AsyncCopyOp::verify() {
  auto dst = cast<MemDescType>(getDst().getType());
  auto ptrs = getPtrs().getType();
  if (failed(kiln::verifyTileRuns(*this, ptrs.getShape(), dst.getShape())))
    return failure();
  auto pointer = dyn_cast<kiln::PointerType>(ptrs.getElementType());
  if (!pointer || pointer.getPointeeType() != dst.getElementType())
    return emitOpError("the pointers must point to the tile's element type");
  if (getMask() && getMask().getType().getShape() != ptrs.getShape())
    return emitOpError("the mask must have the pointers' shape");
  return success();
}

/// One 8-byte mbarrier: memdesc<1x1xi64> (a tile of a ring of them).
static LogicalResult verifyMbarrier(Operation *op, Value barrier) {
  auto type = cast<kiln::gpu::MemDescType>(barrier.getType());
  if (!type.getElementType().isInteger(64) ||
      type.getShape() != ArrayRef<int64_t>{1, 1})
    return op->emitOpError("the barrier must be one mbarrier, "
                           "memdesc<1x1xi64>; got ")
           << type;
  return success();
}

LogicalResult kiln::gpu::InitBarrierOp::verify() {
  if (getCount() < 1)
    return emitOpError("the arrival count must be positive");
  return verifyMbarrier(*this, getBarrier());
}

LogicalResult kiln::gpu::InvalBarrierOp::verify() {
  return verifyMbarrier(*this, getBarrier());
}

LogicalResult kiln::gpu::WaitBarrierOp::verify() {
  return verifyMbarrier(*this, getBarrier());
}

LogicalResult kiln::gpu::ArriveBarrierOp::verify() {
  return verifyMbarrier(*this, getBarrier());
}

LogicalResult kiln::gpu::SetMaxRegistersOp::verify() {
  uint32_t count = getCount();
  if (count < 24 || count > 256 || count % 8 != 0)
    return emitOpError("the register count must be a multiple of 8 in "
                       "[24, 256]; got ")
           << count;
  return success();
}

SmallVector<int64_t, 2> kiln::gpu::AsyncTmaCopyOp::boxShape(MemDescType tile) {
  unsigned swizzle =
      cast<NVMMASharedEncodingAttr>(tile.getEncoding()).getSwizzle();
  return {tile.getShape()[0],
          int64_t(swizzle) * 8 / tile.getElementType().getIntOrFloatBitWidth()};
}

/// A tile TMA moves one swizzle panel at a time: one swizzled, row-major
/// nvmma_shared tile of whole panels and at most 256 rows, and one offset
/// per dimension.
static LogicalResult verifyTmaTile(Operation *op, kiln::gpu::MemDescType tile,
                                   size_t offsets, StringRef what) {
  auto encoding =
      dyn_cast<kiln::gpu::NVMMASharedEncodingAttr>(tile.getEncoding());
  if (tile.getShape().size() != 2 || !encoding || encoding.getTransposed() ||
      encoding.getSwizzle() == 0)
    return op->emitOpError()
           << what << " one swizzled, row-major nvmma_shared tile; got "
           << tile;
  if (offsets != 2)
    return op->emitOpError("needs one offset per dimension of the tile");
  int64_t lineBytes =
      tile.getShape()[1] * (tile.getElementType().getIntOrFloatBitWidth() / 8);
  if (lineBytes % encoding.getSwizzle() != 0 || tile.getShape()[0] > 256)
    return op->emitOpError("the tile must be whole panels of at most 256 "
                           "rows; got ")
           << tile;
  return success();
}

LogicalResult kiln::gpu::AsyncTmaCopyOp::verify() {
  if (failed(verifyMbarrier(*this, getBarrier())))
    return failure();
  return verifyTmaTile(*this, cast<MemDescType>(getDst().getType()),
                       getOffsets().size(), "copies into");
}

LogicalResult kiln::gpu::AsyncTmaStoreOp::verify() {
  if (std::optional<StringRef> reduce = getReduce();
      reduce && !llvm::is_contained({"add", "and", "or", "xor"}, *reduce))
    return emitOpError("reduces with add, and, or or xor; got ") << *reduce;
  return verifyTmaTile(*this, cast<MemDescType>(getSrc().getType()),
                       getOffsets().size(), "stores from");
}

LogicalResult kiln::gpu::LocalStoreOp::verify() {
  auto dst = cast<MemDescType>(getDst().getType());
  RankedTensorType value = getValue().getType();
  if (!isa<NVMMASharedEncodingAttr>(dst.getEncoding()) ||
      dst.getShape() != value.getShape() ||
      dst.getElementType() != value.getElementType())
    return emitOpError("writes into an nvmma_shared tile of the value's "
                       "shape and element type; got ")
           << value << " into " << dst;
  if (!value.getEncoding())
    return emitOpError("needs a value with a distributed layout");
  return success();
}

LogicalResult kiln::gpu::LocalLoadOp::verify() {
  auto src = cast<MemDescType>(getSrc().getType());
  RankedTensorType result = getResult().getType();
  if (!isa<NVMMASharedEncodingAttr>(src.getEncoding()) ||
      src.getElementType() != result.getElementType())
    return emitOpError("reads an nvmma_shared tile of the result's element "
                       "type; got ")
           << src << " into " << result;
  if (failed(kiln::verifyTileRuns(*this, result.getShape(), src.getShape())))
    return failure();
  if (!result.getEncoding())
    return emitOpError("needs a result with a distributed layout");
  return success();
}

LogicalResult kiln::gpu::SharedDotOp::verify() {
  auto b = cast<MemDescType>(getB().getType());
  auto c = getC().getType();
  ArrayRef<int64_t> aShape;
  if (auto tile = dyn_cast<MemDescType>(getA().getType())) {
    aShape = tile.getShape();
  } else if (auto registers = dyn_cast<RankedTensorType>(getA().getType())) {
    auto mma = dyn_cast_or_null<MmaEncodingAttr>(registers.getEncoding());
    auto cMma = dyn_cast_or_null<MmaEncodingAttr>(c.getEncoding());
    // Or every warp holding all of a 16-row a (warps along M wrap around
    // it) beside an accumulator with all warps along N.
    bool whole =
        mma && cMma && registers.getRank() == 2 &&
        registers.getDimSize(0) == 16 && cMma.getWarpsPerCTA().size() == 2 &&
        cMma.getWarpsPerCTA()[0] == 1 && mma.getWarpsPerCTA().size() == 2 &&
        mma.getWarpsPerCTA()[0] == cMma.getWarpsPerCTA()[1];
    // Or a 16-bit a in another mma layout that holds every warp's
    // fragments (p in the scores' layout beside p @ v's warpgroups along
    // N: compiler/ir/RegisterA.h).
    bool fragments = mma && cMma && registers.getElementTypeBitWidth() == 16 &&
                     kiln::holdsAFragments(registers, c);
    if (!fragments &&
        (!mma || (mma != cMma && !whole) || mma.getWarpsPerCTA()[1] != 1))
      return emitOpError("takes a from registers only in the accumulator's "
                         "mma layout with all warps along M (or, 16 rows "
                         "beside warps along N, every warp holding them; "
                         "or, 16-bit, in a layout holding every warp's "
                         "fragments), got ")
             << registers;
    aShape = registers.getShape();
  } else {
    return emitOpError("expects a shared tile or a register tensor for a");
  }
  if (aShape.size() != 2 || b.getShape().size() != 2 || c.getRank() != 2 ||
      aShape[1] != b.getShape()[0] || aShape[0] != c.getShape()[0] ||
      b.getShape()[1] != c.getShape()[1])
    return emitOpError("expects a: M x K, b: K x N and c: M x N, got ")
           << getA().getType() << ", " << b << ", " << c;
  if (c != getD().getType())
    return emitOpError("c and d must have one type");
  if (getAddCAfter() &&
      (getAsync() || getUseC() || !c.getElementType().isF32()))
    return emitOpError("adds c after the product only synchronously, "
                       "without use_c, to an fp32 accumulator");
  return success();
}

LogicalResult kiln::gpu::DotWaitOp::verify() {
  if (getInputs().getTypes() != getOutputs().getTypes())
    return emitOpError("passes its values through: result types must be the "
                       "operand types");
  return success();
}
