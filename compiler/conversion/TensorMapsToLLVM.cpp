//===- TensorMapsToLLVM.cpp - tensor maps the kernel encodes --------------===//
//
// kiln.make_tensor_map (sm_90a): the program encodes a CUDA tensor map in
// its share of the global scratch buffer, as the PTX ISA describes for maps
// made on the device:
// - warp 0 zeroes a 128-byte-aligned staging map in shared memory (a zeroed
//   map is a valid template on sm_90a);
// - thread 0 sets every field with `tensormap.replace.tile` (address, rank,
//   box, extents, byte strides, element strides, element type, swizzle,
//   zero fill, no interleave);
// - warp 0 copies it to global memory with `tensormap.cp_fenceproxy`, which
//   releases it to the tensor-map proxy at GPU scope;
// - a map encoded past the entry block (in a loop, under an if) may replace
//   one that thread 0's bulk stores still read: thread 0 waits for them
//   (`cp.async.bulk.wait_group 0`) first;
// - thread 0, which issues every TMA instruction, acquires it with
//   `fence.proxy.tensormap` (in the same warp as the release: no CTA
//   barrier between them); a CTA barrier after the last of consecutive maps
//   frees the staging array, which warp 0 alone uses.
// A map whose alignment was assumed (`assumes_alignment`) is checked first:
// every thread traps when the base or a stride breaks it.
// The value is the map's generic address, as for a kernel argument's map.
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/LoweringUtils.h"
#include "compiler/conversion/OpFamilyLowerings.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {

/// The PTX `elemtype` code of `element` (CUtensorMapDataType's numbering),
/// or none when TMA has no type of its width.
std::optional<unsigned> elementTypeCode(Type element) {
  if (element.isF16())
    return 6;
  if (element.isBF16())
    return 10;
  if (element.isF32())
    return 7;
  if (element.isF64())
    return 9;
  switch (element.getIntOrFloatBitWidth()) {
  case 8: // i8 and the fp8 formats move as bytes
    return 0;
  case 16:
    return 1;
  case 32:
    return 3;
  case 64:
    return 5;
  default:
    return std::nullopt;
  }
}

/// The PTX `swizzle_mode` code of a swizzle of `bytes`.
unsigned swizzleCode(unsigned bytes) {
  switch (bytes) {
  case 32:
    return 1;
  case 64:
    return 2;
  case 128:
    return 3;
  default:
    return 0;
  }
}

/// The program's linear id: ctaid.x + nctaid.x * (ctaid.y + nctaid.y *
/// ctaid.z), as the runtime numbers the scratch buffer's shares.
Value linearProgramId(OpBuilder &b, Location loc) {
  Type i64 = b.getI64Type();
  auto wide = [&](Value v) { return LLVM::ZExtOp::create(b, loc, i64, v); };
  Type i32 = b.getI32Type();
  Value x = wide(NVVM::BlockIdXOp::create(b, loc, i32));
  Value y = wide(NVVM::BlockIdYOp::create(b, loc, i32));
  Value z = wide(NVVM::BlockIdZOp::create(b, loc, i32));
  Value nx = wide(NVVM::GridDimXOp::create(b, loc, i32));
  Value ny = wide(NVVM::GridDimYOp::create(b, loc, i32));
  Value yz = LLVM::AddOp::create(b, loc, y, LLVM::MulOp::create(b, loc, ny, z));
  return LLVM::AddOp::create(b, loc, x, LLVM::MulOp::create(b, loc, nx, yz));
}

/// Whether the next op after `op` that may touch memory is another tensor
/// map of the same block.
bool anotherMapFollows(Operation *op) {
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode()) {
    if (isa<kiln::MakeTensorMapOp>(next))
      return true;
    if (!isPure(next))
      return false;
  }
  return false;
}

struct MakeTensorMapLowering : OpConversionPattern<kiln::MakeTensorMapOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::MakeTensorMapOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    std::optional<ArrayRef<int64_t>> box = op.getBox();
    std::optional<uint64_t> offset = op.getScratchOffset();
    auto perProgram =
        op->getParentOfType<ModuleOp>()->getAttrOfType<IntegerAttr>(
            kiln::kGlobalScratchBytesAttr);
    Type element =
        cast<kiln::PointerType>(op.getBase().getType()).getPointeeType();
    std::optional<unsigned> elemtype = elementTypeCode(element);
    if (!box || !offset || !perProgram || !elemtype)
      return rewriter.notifyMatchFailure(
          op, "a tensor map nobody shaped or placed (kiln-place-tensor-maps)");
    Type i32 = rewriter.getI32Type(), i64 = rewriter.getI64Type();
    auto i64Constant = [&](int64_t v) -> Value {
      return LLVM::ConstantOp::create(rewriter, loc, i64,
                                      rewriter.getI64IntegerAttr(v));
    };
    size_t rank = box->size();
    unsigned elementBytes = element.getIntOrFloatBitWidth() / 8;

    // The program's map in global memory.
    Value share =
        LLVM::MulOp::create(rewriter, loc, linearProgramId(rewriter, loc),
                            i64Constant(perProgram.getInt()));
    Value at = LLVM::AddOp::create(rewriter, loc, share,
                                   i64Constant(int64_t(*offset)));
    auto globalPtr = LLVM::LLVMPointerType::get(rewriter.getContext(), 1);
    Value map =
        LLVM::GEPOp::create(rewriter, loc, globalPtr, rewriter.getI8Type(),
                            adaptor.getScratch(), ValueRange{at});
    Value mapAddress = LLVM::PtrToIntOp::create(rewriter, loc, i64, map);

    // The staging copy, 128-byte aligned inside a 256-byte array.
    Value array =
        kiln::allocateSharedArray(rewriter, op, rewriter.getI8Type(), 256);
    Value raw = LLVM::PtrToIntOp::create(rewriter, loc, i32, array);
    Value staging = LLVM::AndOp::create(
        rewriter, loc,
        LLVM::AddOp::create(rewriter, loc, raw,
                            kiln::i32Constant(rewriter, loc, 127)),
        kiln::i32Constant(rewriter, loc, ~127));

    // Alignment taken from tl.make_tensor_descriptor's contract, not
    // proved: a base or stride that breaks it traps here rather than at the
    // first copy. A trap, not __assertfail: a call in the kernel serializes
    // every wgmma in it (ptxas C7510).
    if (op.getAssumesAlignment()) {
      Value bits =
          LLVM::PtrToIntOp::create(rewriter, loc, i64, adaptor.getBase());
      for (Value stride : adaptor.getStrides().drop_back())
        bits =
            LLVM::OrOp::create(rewriter, loc, bits,
                               LLVM::MulOp::create(rewriter, loc, stride,
                                                   i64Constant(elementBytes)));
      Value low = LLVM::AndOp::create(rewriter, loc, bits, i64Constant(15));
      kiln::inlinePtxEffect(
          rewriter, loc, Type(),
          "{ .reg .pred misaligned; setp.ne.b64 misaligned, $0, 0; "
          "@misaligned trap; }",
          "l", ValueRange{low});
    }

    Value generic = LLVM::AddrSpaceCastOp::create(
        rewriter, loc, LLVM::LLVMPointerType::get(rewriter.getContext(), 0),
        map);
    Value tid = kiln::threadIdX(rewriter, loc);
    Value inWarp0 =
        LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::ult, tid,
                             kiln::i32Constant(rewriter, loc, 32));
    kiln::emitIf(rewriter, loc, inWarp0, [&] {
      SmallVector<Value> operands{
          staging,
          LLVM::AddOp::create(
              rewriter, loc, staging,
              LLVM::ShlOp::create(rewriter, loc, tid,
                                  kiln::i32Constant(rewriter, loc, 2))),
          tid,
          LLVM::PtrToIntOp::create(rewriter, loc, i64, adaptor.getBase()),
          mapAddress,
          kiln::i32Constant(rewriter, loc, int32_t(rank - 1)),
          kiln::i32Constant(rewriter, loc, 1),
          LLVM::PtrToIntOp::create(rewriter, loc, i64, generic)};
      std::string constraints = "r,r,r,l,l,r,r,l";
      std::string text =
          "{ .reg .pred first; st.shared.b32 [$1], 0; bar.warp.sync -1; "
          "setp.eq.u32 first, $2, 0; ";
      // Encoded again (in a loop, or after other TMA work): thread 0's bulk
      // stores may still read the map this one replaces.
      if (!op->getBlock()->isEntryBlock())
        text += "@first cp.async.bulk.wait_group 0; ";
      text +=
          "@first tensormap.replace.tile.global_address.shared::cta.b1024.b64 "
          "[$0], $3; "
          "@first tensormap.replace.tile.rank.shared::cta.b1024.b32 [$0], $5; ";
      // The map numbers dimensions innermost first; the op, outermost first.
      for (size_t ord = 0; ord < rank; ++ord) {
        size_t dim = rank - 1 - ord;
        std::string boxOperand = std::to_string(operands.size());
        operands.push_back(
            kiln::i32Constant(rewriter, loc, int32_t((*box)[dim])));
        std::string extentOperand = std::to_string(operands.size());
        operands.push_back(adaptor.getShape()[dim]);
        constraints += ",r,r";
        std::string o = std::to_string(ord);
        text += "@first tensormap.replace.tile.box_dim.shared::cta.b1024.b32 "
                "[$0], " +
                o + ", $" + boxOperand + "; ";
        text += "@first tensormap.replace.tile.global_dim.shared::cta.b1024."
                "b32 [$0], " +
                o + ", $" + extentOperand + "; ";
        text += "@first tensormap.replace.tile.element_stride.shared::cta."
                "b1024.b32 [$0], " +
                o + ", $6; ";
        // Strides of the outer dimensions, in bytes (the innermost is one
        // element).
        if (ord + 1 < rank) {
          Value stride = adaptor.getStrides()[rank - 2 - ord];
          std::string strideOperand = std::to_string(operands.size());
          operands.push_back(LLVM::MulOp::create(rewriter, loc, stride,
                                                 i64Constant(elementBytes)));
          constraints += ",l";
          text += "@first tensormap.replace.tile.global_stride.shared::cta."
                  "b1024.b64 [$0], " +
                  o + ", $" + strideOperand + "; ";
        }
      }
      text += "@first tensormap.replace.tile.elemtype.shared::cta.b1024.b32 "
              "[$0], " +
              std::to_string(*elemtype) + "; ";
      text += "@first tensormap.replace.tile.interleave_layout.shared::cta."
              "b1024.b32 [$0], 0; ";
      text += "@first tensormap.replace.tile.swizzle_mode.shared::cta.b1024."
              "b32 [$0], " +
              std::to_string(swizzleCode(op.getSwizzle().value_or(0))) + "; ";
      text += "@first tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 "
              "[$0], 0; ";
      // Thread 0, which issues every TMA instruction, acquires the map; the
      // release and the acquire are in one warp, so no CTA barrier orders
      // them.
      text += "bar.warp.sync -1; tensormap.cp_fenceproxy.global.shared::cta."
              "tensormap::generic.release.gpu.sync.aligned [$4], [$0], 128; "
              "fence.proxy.tensormap::generic.acquire.gpu [$7], 128; }";
      kiln::inlinePtxEffect(rewriter, loc, Type(), text, constraints, operands);
    });
    // The staging array is free again once warp 0 is done with it: a
    // barrier, unless the next op that can touch shared memory is the next
    // map (which warp 0 builds next, in the same array).
    if (!anotherMapFollows(op))
      NVVM::Barrier0Op::create(rewriter, loc);
    rewriter.replaceOp(op, generic);
    return success();
  }
};

} // namespace

void kiln::populateTensorMapsToLLVMPatterns(KilnTypeConverter &converter,
                                            RewritePatternSet &patterns) {
  patterns.add<MakeTensorMapLowering>(converter, patterns.getContext());
}
