//===- KilnGPUDialect.cpp - the kiln_gpu layout dialect -------------------===//
#include "compiler/ir/Dialects.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

#include "compiler/ir/KilnGPUDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "compiler/ir/KilnGPUAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "compiler/ir/KilnGPUOps.cpp.inc"

void kiln::gpu::KilnGPUDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "compiler/ir/KilnGPUAttrs.cpp.inc"
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
  if (auto blocked = dyn_cast<kiln::gpu::BlockedEncodingAttr>(layout))
    return blocked.getOrder().size();
  if (auto slice = dyn_cast<kiln::gpu::SliceEncodingAttr>(layout)) {
    unsigned parentRank = layoutRank(slice.getParent());
    return parentRank > 1 ? parentRank - 1 : 0;
  }
  if (isa<kiln::gpu::MmaEncodingAttr>(layout))
    return 2;
  return 0;
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

// Syntax: #kiln_gpu.mma<{warpsPerCTA = [4, 2]}>
Attribute kiln::gpu::MmaEncodingAttr::parse(AsmParser &parser, Type) {
  SmallVector<unsigned> warps;
  auto parseWarp = [&]() -> ParseResult {
    unsigned w;
    if (parser.parseInteger(w))
      return failure();
    warps.push_back(w);
    return success();
  };
  if (parser.parseLess() || parser.parseLBrace() ||
      parser.parseKeyword("warpsPerCTA") || parser.parseEqual() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseWarp) ||
      parser.parseRBrace() || parser.parseGreater())
    return {};
  return parser.getChecked<MmaEncodingAttr>(parser.getContext(), warps);
}

void kiln::gpu::MmaEncodingAttr::print(AsmPrinter &printer) const {
  printer << "<{warpsPerCTA = [";
  llvm::interleaveComma(getWarpsPerCTA(), printer);
  printer << "]}>";
}

LogicalResult
kiln::gpu::MmaEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   ArrayRef<unsigned> warpsPerCTA) {
  if (warpsPerCTA.size() != 2)
    return emitError() << "an mma layout has warpsPerCTA for 2 dimensions";
  for (unsigned w : warpsPerCTA)
    if (w == 0 || !llvm::isPowerOf2_32(w))
      return emitError() << "mma warpsPerCTA must be powers of two";
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
