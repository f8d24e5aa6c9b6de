//===- LoweringUtils.cpp - shared pieces of the kiln_gpu → LLVM lowering --===//
#include "compiler/conversion/LoweringUtils.h"
#include "compiler/conversion/DistributedLayout.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;

unsigned kiln::elementsPerThread(RankedTensorType type) {
  std::optional<layout::LinearLayout> layout = getLinearLayout(type);
  return layout ? unsigned(layout->getInDimSize(layout::kRegister)) : 0;
}

kiln::KilnTypeConverter::KilnTypeConverter(MLIRContext *context)
    : LLVMTypeConverter(context) {
  addConversion([context](kiln::PointerType) -> Type {
    return LLVM::LLVMPointerType::get(context, /*addressSpace=*/1);
  });
  // A tensor map is the generic address of the by-value kernel parameter
  // that holds it (kiln-to-llvm marks the parameter byval, grid_constant).
  addConversion([context](kiln::TensorMapType) -> Type {
    return LLVM::LLVMPointerType::get(context, /*addressSpace=*/0);
  });
  // A shared buffer is its base address; shape and layout stay in the type
  // the lowerings read.
  addConversion([context](kiln::gpu::MemDescType) -> Type {
    return LLVM::LLVMPointerType::get(context, /*addressSpace=*/3);
  });
  addConversion([this](RankedTensorType type) -> std::optional<Type> {
    unsigned n = elementsPerThread(type);
    if (n == 0)
      return std::nullopt;
    Type element = convertType(type.getElementType());
    if (!element)
      return std::nullopt;
    if (n == 1)
      return element;
    return LLVM::LLVMStructType::getLiteral(type.getContext(),
                                            SmallVector<Type>(n, element));
  });
}

SmallVector<Value> kiln::unpackElements(OpBuilder &b, Location loc,
                                        Value value) {
  auto structType = dyn_cast<LLVM::LLVMStructType>(value.getType());
  if (!structType)
    return {value};
  SmallVector<Value> elements;
  for (unsigned i = 0, e = structType.getBody().size(); i < e; ++i)
    elements.push_back(LLVM::ExtractValueOp::create(b, loc, value, i));
  return elements;
}

Value kiln::packElements(OpBuilder &b, Location loc, Type type,
                         ValueRange elements) {
  if (!isa<LLVM::LLVMStructType>(type)) {
    assert(elements.size() == 1 && "a scalar packs one element");
    return elements.front();
  }
  Value result = LLVM::UndefOp::create(b, loc, type);
  for (auto [i, element] : llvm::enumerate(elements))
    result = LLVM::InsertValueOp::create(b, loc, result, element, i);
  return result;
}

Value kiln::packHalves(OpBuilder &b, Location loc, Value low, Value high) {
  auto pair = VectorType::get({2}, low.getType());
  Value v = LLVM::UndefOp::create(b, loc, pair);
  v = LLVM::InsertElementOp::create(b, loc, v, low, i32Constant(b, loc, 0));
  v = LLVM::InsertElementOp::create(b, loc, v, high, i32Constant(b, loc, 1));
  return LLVM::BitcastOp::create(b, loc, b.getI32Type(), v);
}

std::pair<Value, Value> kiln::unpackHalves(OpBuilder &b, Location loc,
                                           Value word, Type element) {
  Value v =
      LLVM::BitcastOp::create(b, loc, VectorType::get({2}, element), word);
  return {LLVM::ExtractElementOp::create(b, loc, v, i32Constant(b, loc, 0)),
          LLVM::ExtractElementOp::create(b, loc, v, i32Constant(b, loc, 1))};
}

Value kiln::inlinePtx(OpBuilder &b, Location loc, Type result, StringRef text,
                      StringRef constraints, ValueRange operands) {
  MLIRContext *ctx = b.getContext();
  return LLVM::InlineAsmOp::create(
             b, loc, result, operands, b.getStringAttr(text),
             b.getStringAttr(constraints), /*has_side_effects=*/UnitAttr(),
             /*is_align_stack=*/UnitAttr(),
             LLVM::TailCallKindAttr::get(
                 ctx, LLVM::tailcallkind::TailCallKind::None),
             LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT),
             /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}

LLVM::InlineAsmOp kiln::inlinePtxEffect(OpBuilder &b, Location loc, Type result,
                                        StringRef text, StringRef constraints,
                                        ValueRange operands) {
  MLIRContext *ctx = b.getContext();
  return LLVM::InlineAsmOp::create(
      b, loc, result ? TypeRange{result} : TypeRange{}, operands,
      b.getStringAttr(text), b.getStringAttr(constraints),
      /*has_side_effects=*/b.getUnitAttr(),
      /*is_align_stack=*/UnitAttr(),
      LLVM::TailCallKindAttr::get(ctx, LLVM::tailcallkind::TailCallKind::None),
      LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
}

Value kiln::i32Constant(OpBuilder &b, Location loc, int64_t v) {
  return LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                  b.getI32IntegerAttr(int32_t(v)));
}

Value kiln::xorOutsideBits(OpBuilder &b, Location loc, Value v, int64_t c,
                           uint64_t vBits) {
  uint64_t inside = uint64_t(c) & vBits, outside = uint64_t(c) & ~vBits;
  if (inside != 0)
    v = LLVM::XOrOp::create(b, loc, v, i32Constant(b, loc, int64_t(inside)));
  if (uint32_t(outside) != 0)
    v = LLVM::AddOp::create(b, loc, v, i32Constant(b, loc, int64_t(outside)));
  return v;
}

Value kiln::threadIdX(OpBuilder &b, Location loc) {
  return NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
}

namespace {

Value shuffleWord(OpBuilder &b, Location loc, Value word, Value lane,
                  NVVM::ShflKind kind) {
  Type i32 = b.getI32Type();
  // The `c` operand: lanes clamp at 0 going up, at 31 otherwise.
  int32_t clamp = kind == NVVM::ShflKind::up ? 0 : 0x1f;
  return NVVM::ShflOp::create(b, loc, i32, kiln::i32Constant(b, loc, -1), word,
                              lane, kiln::i32Constant(b, loc, clamp),
                              NVVM::ShflKindAttr::get(b.getContext(), kind),
                              UnitAttr());
}

} // namespace

Value kiln::shuffle(OpBuilder &b, Location loc, Value value, Value lane,
                    NVVM::ShflKind kind) {
  Type type = value.getType();
  if (isa<LLVM::LLVMPointerType>(type)) {
    Type i64 = b.getI64Type();
    Value asInt = LLVM::PtrToIntOp::create(b, loc, i64, value);
    return LLVM::IntToPtrOp::create(b, loc, type,
                                    shuffle(b, loc, asInt, lane, kind));
  }
  unsigned bits = type.getIntOrFloatBitWidth();
  Type i32 = b.getI32Type();
  Type intType = b.getIntegerType(bits);
  Value asInt = type == intType
                    ? value
                    : Value(LLVM::BitcastOp::create(b, loc, intType, value));
  Value out;
  if (bits == 64) {
    Value shift =
        LLVM::ConstantOp::create(b, loc, intType, b.getI64IntegerAttr(32));
    Value lo = LLVM::TruncOp::create(b, loc, i32, asInt);
    Value hi = LLVM::TruncOp::create(
        b, loc, i32, LLVM::LShrOp::create(b, loc, asInt, shift));
    lo = LLVM::ZExtOp::create(b, loc, intType,
                              shuffleWord(b, loc, lo, lane, kind));
    hi = LLVM::ZExtOp::create(b, loc, intType,
                              shuffleWord(b, loc, hi, lane, kind));
    out =
        LLVM::OrOp::create(b, loc, lo, LLVM::ShlOp::create(b, loc, hi, shift));
  } else {
    Value word =
        bits == 32 ? asInt : Value(LLVM::ZExtOp::create(b, loc, i32, asInt));
    out = shuffleWord(b, loc, word, lane, kind);
    if (bits != 32)
      out = LLVM::TruncOp::create(b, loc, intType, out);
  }
  return type == intType ? out
                         : Value(LLVM::BitcastOp::create(b, loc, type, out));
}

Value kiln::allocateSharedArray(OpBuilder &b, Operation *op, Type elementType,
                                int64_t count) {
  auto module = op->getParentOfType<ModuleOp>();
  Location loc = op->getLoc();
  std::string name;
  unsigned id = 0;
  do {
    name = "kiln_smem_" + std::to_string(id++);
  } while (module.lookupSymbol(name));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto global = LLVM::GlobalOp::create(
        b, loc, LLVM::LLVMArrayType::get(elementType, count),
        /*isConstant=*/false, LLVM::Linkage::Internal, name, Attribute(),
        /*alignment=*/16, /*addrSpace=*/3);
    // Ops stay alive (and distinct) until the conversion ends.
    global->setAttr(kSharedOwnerAttr, b.getI64IntegerAttr(int64_t(
                                          reinterpret_cast<intptr_t>(op))));
    if (auto base = op->getAttrOfType<IntegerAttr>(kScratchBaseAttr))
      global->setAttr(kScratchBaseAttr, base);
  }
  return LLVM::AddressOfOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), name);
}

Value kiln::sharedPoolBase(OpBuilder &b, Location loc) {
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  if (!module.lookupSymbol(kSharedPoolName)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    // `.extern .shared .align 1024 .b8 kiln_smem[]`: dynamic shared memory,
    // aligned for the 128-byte swizzle's 1024-byte pattern.
    LLVM::GlobalOp::create(b, loc, LLVM::LLVMArrayType::get(b.getI8Type(), 0),
                           /*isConstant=*/false, LLVM::Linkage::External,
                           kSharedPoolName, Attribute(), /*alignment=*/1024,
                           /*addrSpace=*/3);
  }
  return LLVM::AddressOfOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), kSharedPoolName);
}

int64_t kiln::poolSharedMemory(ModuleOp module) {
  int64_t poolBytes = 0;
  if (auto buffers = module->getAttrOfType<IntegerAttr>(kBufferBytesAttr))
    poolBytes = buffers.getInt();
  // Arrays per owning op, in the order they were made.
  llvm::MapVector<int64_t, SmallVector<LLVM::GlobalOp>> owners;
  for (auto global : module.getOps<LLVM::GlobalOp>())
    if (auto owner = global->getAttrOfType<IntegerAttr>(kSharedOwnerAttr))
      owners[owner.getInt()].push_back(global);
  DataLayout layout(module);
  llvm::StringMap<int64_t> offsets;
  for (auto &[owner, globals] : owners) {
    int64_t offset = 0;
    if (auto base =
            globals.front()->getAttrOfType<IntegerAttr>(kScratchBaseAttr))
      offset = base.getInt();
    for (LLVM::GlobalOp global : globals) {
      offset = llvm::alignTo(offset, 16);
      offsets[global.getSymName()] = offset;
      offset += int64_t(layout.getTypeSize(global.getType()));
    }
    poolBytes = std::max(poolBytes, offset);
  }
  OpBuilder b(module.getContext());
  module.walk([&](LLVM::AddressOfOp addressOf) {
    auto it = offsets.find(addressOf.getGlobalName());
    if (it == offsets.end())
      return;
    b.setInsertionPoint(addressOf);
    Location loc = addressOf.getLoc();
    Value pool = sharedPoolBase(b, loc);
    Value address = it->second == 0
                        ? pool
                        : Value(LLVM::GEPOp::create(
                              b, loc, pool.getType(), b.getI8Type(), pool,
                              ArrayRef<LLVM::GEPArg>{int32_t(it->second)}));
    addressOf.getResult().replaceAllUsesWith(address);
    addressOf->erase();
  });
  for (auto &[owner, globals] : owners)
    for (LLVM::GlobalOp global : globals)
      global->erase();
  module->removeAttr(kBufferBytesAttr);
  module.walk([](Operation *op) { op->removeAttr(kScratchBaseAttr); });
  return poolBytes;
}

void kiln::emitIf(ConversionPatternRewriter &rewriter, Location loc,
                  Value condition, llvm::function_ref<void()> body) {
  Block *before = rewriter.getInsertionBlock();
  Block *after = rewriter.splitBlock(before, rewriter.getInsertionPoint());
  Block *then = rewriter.createBlock(after);
  rewriter.setInsertionPointToEnd(before);
  LLVM::CondBrOp::create(rewriter, loc, condition, then, after);
  rewriter.setInsertionPointToStart(then);
  body();
  LLVM::BrOp::create(rewriter, loc, after);
  rewriter.setInsertionPointToStart(after);
}

unsigned kiln::accessWidth(Operation *op, const AccessWidths &widths,
                           Type tensorOrScalar) {
  auto tensor = dyn_cast<RankedTensorType>(tensorOrScalar);
  if (!tensor)
    return 1;
  std::optional<layout::LinearLayout> layout = getLinearLayout(tensor);
  if (!layout)
    return 1;
  // kiln-to-llvm measured the vector with axis info along the layout's
  // vector dimension: the thread's leading registers step along it one
  // element at a time.
  return std::min(std::max(1u, widths.lookup(op)),
                  contiguousRegistersAlong(*layout, vectorDimension(*layout)));
}
