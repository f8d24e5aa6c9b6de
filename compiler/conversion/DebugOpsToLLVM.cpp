//===- DebugOpsToLLVM.cpp - device printf and assert
//------------------------===//
//
// kiln.print and kiln.assert call the CUDA driver's two device-side system
// calls, which PTX declares as extern functions:
//   - vprintf(format, args): one call per element a thread holds (threads
//     and registers holding copies stay silent: each element once), with a
//     format string in global memory and the arguments in a local struct
//     (floats widened to double, small integers to 32 bits, as C varargs);
//     the line reads "pid (x, y, z) idx (i, j) <prefix> <value>", as
//     upstream's device_print prints it;
//   - __assertfail(message, file, line, function, charSize): called by a
//     thread when any element of the condition it holds is false.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/DistributedLayout.h"
#include "compiler/conversion/OpFamilyLowerings.h"

#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;

namespace {

/// The address of a NUL-terminated copy of `text` in a module-level
/// constant, shared by equal strings.
Value globalString(OpBuilder &b, Location loc, ModuleOp module,
                   StringRef text) {
  std::string name = "kiln_str_" + llvm::utohexstr(llvm::xxh3_64bits(text));
  std::string bytes = text.str();
  bytes.push_back('\0');
  auto arrayType = LLVM::LLVMArrayType::get(b.getI8Type(), bytes.size());
  if (!module.lookupSymbol<LLVM::GlobalOp>(name)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    LLVM::GlobalOp::create(b, loc, arrayType, /*isConstant=*/true,
                           LLVM::Linkage::Internal, name,
                           b.getStringAttr(bytes));
  }
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
  Value address = LLVM::AddressOfOp::create(b, loc, ptrType, name);
  return LLVM::GEPOp::create(b, loc, ptrType, arrayType, address,
                             ArrayRef<LLVM::GEPArg>{0, 0});
}

/// One value as vprintf takes it, and its conversion.
std::pair<Value, std::string> printable(OpBuilder &b, Location loc, Value v,
                                        bool isSigned, bool hex) {
  Type type = v.getType();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  if (isa<LLVM::LLVMPointerType>(type))
    return {LLVM::PtrToIntOp::create(b, loc, i64, v), "0x%llx"};
  if (isa<FloatType>(type)) {
    unsigned bits = type.getIntOrFloatBitWidth();
    if (hex) {
      Value asInt = LLVM::BitcastOp::create(b, loc, b.getIntegerType(bits), v);
      if (bits == 64)
        return {asInt, "0x%llx"};
      return {LLVM::ZExtOp::create(b, loc, i32, asInt), "0x%x"};
    }
    if (!type.isF64())
      v = LLVM::FPExtOp::create(b, loc, b.getF64Type(), v);
    return {v, "%f"};
  }
  unsigned bits = type.getIntOrFloatBitWidth();
  if (bits == 64)
    return {v, hex ? "0x%llx" : isSigned ? "%lld" : "%llu"};
  if (bits < 32)
    v = isSigned && !hex ? Value(LLVM::SExtOp::create(b, loc, i32, v))
                         : Value(LLVM::ZExtOp::create(b, loc, i32, v));
  return {v, hex ? "0x%x" : isSigned ? "%d" : "%u"};
}

struct PrintLowering : OpConversionPattern<kiln::PrintOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::PrintOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto module = op->getParentOfType<ModuleOp>();
    MLIRContext *ctx = rewriter.getContext();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    Type i32 = rewriter.getI32Type();
    FailureOr<LLVM::LLVMFuncOp> vprintf = LLVM::lookupOrCreateFn(
        rewriter, module, "vprintf", {ptrType, ptrType}, i32);
    if (failed(vprintf))
      return op.emitOpError("vprintf is declared with another type");
    Value pid[3] = {NVVM::BlockIdXOp::create(rewriter, loc, i32),
                    NVVM::BlockIdYOp::create(rewriter, loc, i32),
                    NVVM::BlockIdZOp::create(rewriter, loc, i32)};

    // One vprintf of `fields` (after the program id) with `format`.
    auto print = [&](StringRef format, ArrayRef<Value> fields) {
      SmallVector<Value> all(pid, pid + 3);
      llvm::append_range(all, fields);
      SmallVector<Type> types;
      for (Value v : all)
        types.push_back(v.getType());
      auto structType = LLVM::LLVMStructType::getLiteral(ctx, types);
      Value one = LLVM::ConstantOp::create(rewriter, loc, rewriter.getI64Type(),
                                           rewriter.getI64IntegerAttr(1));
      Value buffer =
          LLVM::AllocaOp::create(rewriter, loc, ptrType, structType, one);
      for (auto [i, v] : llvm::enumerate(all)) {
        Value slot =
            LLVM::GEPOp::create(rewriter, loc, ptrType, structType, buffer,
                                ArrayRef<LLVM::GEPArg>{0, int32_t(i)});
        LLVM::StoreOp::create(rewriter, loc, v, slot);
      }
      Value text = globalString(rewriter, loc, module, format);
      LLVM::CallOp::create(rewriter, loc, *vprintf, ValueRange{text, buffer});
    };

    std::string head = "pid (%u, %u, %u)";
    std::string prefix = op.getPrefix().str();
    if (op.getArgs().empty()) {
      print(head + prefix + "\n", {});
      rewriter.eraseOp(op);
      return success();
    }
    ArrayRef<bool> isSigned = op.getIsSigned();
    bool several = op.getArgs().size() > 1;
    for (auto [i, original, converted] :
         llvm::enumerate(op.getArgs(), adaptor.getArgs())) {
      // "x: 1.5", "x 1.5", "x (operand 1) 1.5": one space before the value.
      std::string operand =
          several ? " (operand " + std::to_string(i) + ") " : std::string();
      if (operand.empty() && (prefix.empty() || prefix.back() != ' '))
        operand = " ";
      auto tensorType = dyn_cast<RankedTensorType>(original.getType());
      if (!tensorType) {
        auto [value, format] =
            printable(rewriter, loc, converted, isSigned[i], op.getHex());
        print(head + prefix + operand + format + "\n", {value});
        continue;
      }
      std::optional<kiln::layout::LinearLayout> layout =
          kiln::getLinearLayout(tensorType);
      if (!layout)
        return op.emitOpError("cannot print a tensor without a layout");
      // Threads holding copies (free lane or warp bits set) stay silent, so
      // that each element is printed once.
      uint64_t laneFree = layout->getFreeVariableMask(kiln::layout::kLane);
      uint64_t warpFree = layout->getFreeVariableMask(kiln::layout::kWarp);
      uint64_t freeTid = laneFree | (warpFree << 5);
      // Named copies: lambdas cannot capture structured bindings in C++17.
      Value tensorValue = converted;
      bool isSignedValue = isSigned[i];
      auto printElements = [&] {
        SmallVector<kiln::Coordinates> coords =
            kiln::emitCoordinates(rewriter, loc, *layout);
        SmallVector<Value> elements =
            kiln::unpackElements(rewriter, loc, tensorValue);
        std::string index = " idx (";
        for (int64_t d = 0; d < tensorType.getRank(); ++d)
          index += d ? ", %u" : "%u";
        index += ")";
        for (unsigned k = 0; k < elements.size(); ++k) {
          if (!kiln::isRepresentativeRegister(*layout, k))
            continue;
          auto [value, format] =
              printable(rewriter, loc, elements[k], isSignedValue, op.getHex());
          SmallVector<Value> fields(coords[k].begin(), coords[k].end());
          fields.push_back(value);
          print(head + index + prefix + operand + format + "\n", fields);
        }
      };
      if (!freeTid) {
        printElements();
        continue;
      }
      Value tid = kiln::threadIdX(rewriter, loc);
      Value free = LLVM::AndOp::create(
          rewriter, loc, tid,
          LLVM::ConstantOp::create(
              rewriter, loc, i32,
              rewriter.getI32IntegerAttr(int32_t(freeTid))));
      Value owner = LLVM::ICmpOp::create(
          rewriter, loc, LLVM::ICmpPredicate::eq, free,
          LLVM::ConstantOp::create(rewriter, loc, i32,
                                   rewriter.getI32IntegerAttr(0)));
      kiln::emitIf(rewriter, loc, owner, printElements);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct AssertLowering : OpConversionPattern<kiln::AssertOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::AssertOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto module = op->getParentOfType<ModuleOp>();
    MLIRContext *ctx = rewriter.getContext();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    Type i32 = rewriter.getI32Type(), i64 = rewriter.getI64Type();
    FailureOr<LLVM::LLVMFuncOp> assertfail = LLVM::lookupOrCreateFn(
        rewriter, module, "__assertfail", {ptrType, ptrType, i32, ptrType, i64},
        LLVM::LLVMVoidType::get(ctx));
    if (failed(assertfail))
      return op.emitOpError("__assertfail is declared with another type");

    // Whether every element this thread holds is true.
    Value holds;
    for (Value element :
         kiln::unpackElements(rewriter, loc, adaptor.getCondition()))
      holds = holds ? Value(LLVM::AndOp::create(rewriter, loc, holds, element))
                    : element;

    Value fails = LLVM::XOrOp::create(
        rewriter, loc, holds,
        LLVM::ConstantOp::create(rewriter, loc, holds.getType(),
                                 rewriter.getIntegerAttr(holds.getType(), 1)));
    kiln::emitIf(rewriter, loc, fails, [&] {
      Value message = globalString(rewriter, loc, module, op.getMessage());
      Value file = globalString(rewriter, loc, module, op.getFile());
      Value function = globalString(rewriter, loc, module, op.getFunction());
      Value line = LLVM::ConstantOp::create(
          rewriter, loc, i32, rewriter.getI32IntegerAttr(op.getLine()));
      Value charSize = LLVM::ConstantOp::create(rewriter, loc, i64,
                                                rewriter.getI64IntegerAttr(1));
      LLVM::CallOp::create(rewriter, loc, *assertfail,
                           ValueRange{message, file, line, function, charSize});
    });
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void kiln::populateDebugOpsToLLVMPatterns(KilnTypeConverter &converter,
                                          RewritePatternSet &patterns) {
  patterns.add<PrintLowering, AssertLowering>(converter, patterns.getContext());
}
