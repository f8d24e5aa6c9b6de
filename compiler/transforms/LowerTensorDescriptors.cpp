//===- LowerTensorDescriptors.cpp - descriptors as masked pointer access --===//
//
// Upstream Triton's fallback semantics of tensor descriptors, valid on every
// arch: a descriptor is only its base pointer, shape (i32) and strides (i64),
// and a block access through it is an ordinary masked one.
//
// - kiln.make_tensor_desc disappears (its tensor map, if any, is not read);
// - kiln.descriptor_load at offsets o becomes a kiln.load of the tensor of
//   pointers base + sum_d (o_d + arange(0, B_d)) * stride_d, masked by
//   0 <= o_d + i_d < shape_d in every dimension, out-of-bounds elements
//   reading as the descriptor's padding (zero or NaN);
// - kiln.descriptor_store becomes the kiln.store with that mask, so that
//   nothing outside the tensor is written;
// - kiln.descriptor_reduce becomes a relaxed, GPU-scope kiln.atomic_rmw with
//   that mask;
// - scf.for, scf.while and scf.if that carry descriptors carry their parts.
//
// On targets with TMA, a load through a kernel argument's descriptor (zero
// padding) keeps the tensor map and the box offsets on its kiln.load, so
// that kiln-pipeline-dots may stage it with TMA copies instead of cp.async;
// a store keeps them on its kiln.store, and a reduction TMA can do on its
// kiln.atomic_rmw, for kiln-tma-stores (when the innermost extent fills
// whole 16-byte chunks, which is what TMA writes; a store whose extent is
// not known to becomes an scf.if on it, the masked store in its else).
//
// A descriptor the kernel makes (tl.make_tensor_descriptor) has no map from
// the launcher. On TMA targets, when its base and strides are what tensor
// maps require (16-byte aligned base, strides multiples of 16 bytes),
// provably or, for values loaded from memory, by the op's contract, each
// access TMA may serve gets its own kiln.make_tensor_map where the
// descriptor is made, for the pass that adopts it to shape
// (kiln-place-tensor-maps drops and merges the rest). A
// kernel that makes descriptors takes a hidden last parameter on every
// arch, the global scratch buffer those maps are encoded in, so that its
// entry point has one signature for all of them.
//
//===----------------------------------------------------------------------===//
#include "compiler/ir/TargetInfo.h"
#include "compiler/transforms/AxisInfo.h"
#include "compiler/transforms/BlockAccess.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

namespace kiln {
#define GEN_PASS_DEF_KILNLOWERTENSORDESCRIPTORS
#include "compiler/transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Descriptors become base, shape... (i32), strides... (i64); every other
/// type stays.
class DescriptorTypeConverter : public TypeConverter {
public:
  DescriptorTypeConverter() {
    addConversion([](Type type) { return type; });
    addConversion([](kiln::TensorDescType type,
                     SmallVectorImpl<Type> &parts) -> LogicalResult {
      RankedTensorType block = type.getBlockType();
      MLIRContext *ctx = type.getContext();
      parts.push_back(kiln::PointerType::get(block.getElementType()));
      parts.append(block.getRank(), IntegerType::get(ctx, 32));
      parts.append(block.getRank(), IntegerType::get(ctx, 64));
      return success();
    });
  }
};

/// The access at `offsets` through a descriptor whose parts are `flat`.
kiln::BlockPointerParts accessParts(OpBuilder &b, Location loc, ValueRange flat,
                                    ValueRange offsets) {
  size_t rank = (flat.size() - 1) / 2;
  kiln::BlockPointerParts parts;
  parts.base = flat[0];
  for (Value extent : flat.slice(1, rank))
    parts.shape.push_back(
        arith::ExtSIOp::create(b, loc, b.getI64Type(), extent));
  parts.strides.assign(flat.begin() + 1 + rank, flat.end());
  parts.offsets.assign(offsets.begin(), offsets.end());
  return parts;
}

SmallVector<int32_t> allDims(RankedTensorType block) {
  return llvm::to_vector(llvm::seq<int32_t>(0, int32_t(block.getRank())));
}

SmallVector<Value> firsts(ArrayRef<ValueRange> ranges) {
  SmallVector<Value> values;
  for (ValueRange r : ranges)
    values.push_back(r.front());
  return values;
}

/// The padding of the descriptor `desc`, when its make_tensor_desc is in
/// sight; zero otherwise (a descriptor carried through a loop).
kiln::PaddingOption paddingOf(Value desc) {
  while (true) {
    if (auto make = desc.getDefiningOp<kiln::MakeTensorDescOp>())
      return make.getPadding();
    auto arg = dyn_cast<BlockArgument>(desc);
    auto loop =
        arg ? dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()) : nullptr;
    if (!loop || arg.getArgNumber() == 0)
      return kiln::PaddingOption::Zero;
    desc = loop.getInitArgs()[arg.getArgNumber() - 1];
  }
}

/// Bytes of one element of the tensor `make` describes (0 below a byte).
int64_t elementBytesOf(kiln::MakeTensorDescOp make) {
  return cast<kiln::TensorDescType>(make.getType())
             .getBlockType()
             .getElementTypeBitWidth() /
         8;
}

/// Whether `make`'s innermost extent is known to be a whole number of
/// 16-byte chunks (a constant, or the aligned variant's `:16` hint).
bool innerExtentFillsChunks(kiln::MakeTensorDescOp make,
                            kiln::AxisInfoAnalysis &axisInfo) {
  int64_t elementBytes = elementBytesOf(make);
  return elementBytes > 0 &&
         (axisInfo.get(make.getShape().back()).divisibility.front() *
          elementBytes) %
                 16 ==
             0;
}

/// Whether TMA reduces `element`s with `kind` as the atomic does: adds of
/// f32, f16, bf16 and 32-bit integers, and bitwise and/or/xor of 32-bit
/// integers.
bool tmaCanReduce(kiln::RMWOp kind, Type element) {
  switch (kind) {
  case kiln::RMWOp::FAdd:
    return element.isF32() || element.isF16() || element.isBF16();
  case kiln::RMWOp::Add:
  case kiln::RMWOp::And:
  case kiln::RMWOp::Or:
  case kiln::RMWOp::Xor:
    return element.isInteger(32);
  default:
    return false;
  }
}

struct MakeTensorDescToParts
    : public OpConversionPattern<kiln::MakeTensorDescOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kiln::MakeTensorDescOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> flat{adaptor.getBase().front()};
    llvm::append_range(flat, firsts(adaptor.getShape()));
    llvm::append_range(flat, firsts(adaptor.getStrides()));
    rewriter.replaceOpWithMultiple(op, {flat});
    return success();
  }
};

/// What the conversion must know of each load's (or store's) descriptor,
/// found before it replaces the descriptors it traces: the padding, and the
/// tensor map a TMA copy may use (a kernel argument's, zero padding, on a
/// TMA target).
struct LoadSource {
  kiln::PaddingOption padding = kiln::PaddingOption::Zero;
  Value tensorMap;
  /// A store whose innermost extent is not known to fill whole 16-byte
  /// chunks: it uses the map only when, at run time, it does.
  bool checkChunks = false;
};
using SourceByLoad = llvm::DenseMap<Operation *, LoadSource>;

struct DescriptorLoadToLoad
    : public OpConversionPattern<kiln::DescriptorLoadOp> {
  DescriptorLoadToLoad(const TypeConverter &converter, MLIRContext *ctx,
                       const SourceByLoad &sources)
      : OpConversionPattern(converter, ctx), sources(sources) {}
  LogicalResult
  matchAndRewrite(kiln::DescriptorLoadOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType block = op.getType();
    kiln::BlockPointerParts parts = accessParts(
        rewriter, op.getLoc(), adaptor.getDesc(), firsts(adaptor.getOffsets()));
    kiln::BlockAccessBuilder access(rewriter, op.getLoc(), parts, block);
    Value ptrs = access.pointers();
    Value mask = access.inBounds(allDims(block));
    LoadSource source = sources.lookup(op);
    Value other = access.padValue(source.padding);
    SmallVector<Value> boxOffsets;
    if (source.tensorMap)
      boxOffsets = firsts(adaptor.getOffsets());
    rewriter.replaceOpWithNewOp<kiln::LoadOp>(
        op, block, ptrs, mask, other, source.tensorMap, boxOffsets,
        DenseI32ArrayAttr(), kiln::PaddingOptionAttr(), op.getCache(),
        op.getEvict(), /*is_volatile=*/false);
    return success();
  }
  const SourceByLoad &sources;
};

struct DescriptorStoreToStore
    : public OpConversionPattern<kiln::DescriptorStoreOp> {
  DescriptorStoreToStore(const TypeConverter &converter, MLIRContext *ctx,
                         const SourceByLoad &sources)
      : OpConversionPattern(converter, ctx), sources(sources) {}
  LogicalResult
  matchAndRewrite(kiln::DescriptorStoreOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto block = cast<RankedTensorType>(op.getValue().getType());
    LoadSource source = sources.lookup(op);
    // The masked store, or the one a TMA store may replace.
    auto store = [&](Value tensorMap) {
      kiln::BlockPointerParts parts = accessParts(
          rewriter, loc, adaptor.getDesc(), firsts(adaptor.getOffsets()));
      kiln::BlockAccessBuilder access(rewriter, loc, parts, block);
      SmallVector<Value> boxOffsets;
      if (tensorMap)
        boxOffsets = firsts(adaptor.getOffsets());
      kiln::StoreOp::create(
          rewriter, loc, access.pointers(), adaptor.getValue().front(),
          access.inBounds(allDims(block)), tensorMap, boxOffsets,
          DenseI32ArrayAttr(), kiln::CacheModifier::None,
          kiln::EvictionPolicy::Normal);
    };
    if (!source.tensorMap || !source.checkChunks) {
      store(source.tensorMap);
      rewriter.eraseOp(op);
      return success();
    }
    // TMA writes whole 16-byte chunks: the map only where the innermost
    // extent ends on one (tutorial 08's C, whose extent the kernel loads).
    ValueRange flat = adaptor.getDesc();
    size_t rank = (flat.size() - 1) / 2;
    int64_t chunk = 16 / (block.getElementTypeBitWidth() / 8);
    Value inner = flat[rank];
    Value rest = arith::AndIOp::create(
        rewriter, loc, inner,
        arith::ConstantIntOp::create(rewriter, loc, chunk - 1, 32));
    Value whole = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq, rest,
        arith::ConstantIntOp::create(rewriter, loc, 0, 32));
    auto branch = scf::IfOp::create(rewriter, loc, whole, /*withElse=*/true);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(&branch.getThenRegion().front());
    store(source.tensorMap);
    rewriter.setInsertionPointToStart(&branch.getElseRegion().front());
    store(Value());
    rewriter.eraseOp(op);
    return success();
  }
  const SourceByLoad &sources;
};

struct DescriptorReduceToAtomic
    : public OpConversionPattern<kiln::DescriptorReduceOp> {
  DescriptorReduceToAtomic(const TypeConverter &converter, MLIRContext *ctx,
                           const SourceByLoad &sources)
      : OpConversionPattern(converter, ctx), sources(sources) {}
  LogicalResult
  matchAndRewrite(kiln::DescriptorReduceOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto block = cast<RankedTensorType>(op.getValue().getType());
    kiln::BlockPointerParts parts = accessParts(
        rewriter, op.getLoc(), adaptor.getDesc(), firsts(adaptor.getOffsets()));
    kiln::BlockAccessBuilder access(rewriter, op.getLoc(), parts, block);
    Value ptrs = access.pointers();
    Value mask = access.inBounds(allDims(block));
    Value value = adaptor.getValue().front();
    Value tensorMap = sources.lookup(op).tensorMap;
    SmallVector<Value> boxOffsets;
    if (tensorMap)
      boxOffsets = firsts(adaptor.getOffsets());
    kiln::AtomicRMWOp::create(
        rewriter, op.getLoc(), value.getType(), op.getKind(), ptrs, value, mask,
        tensorMap, boxOffsets, kiln::MemSemantic::Relaxed, kiln::MemScope::GPU);
    rewriter.eraseOp(op);
    return success();
  }
  const SourceByLoad &sources;
};

bool isDescriptor(Type type) { return isa<kiln::TensorDescType>(type); }

/// Whether `v` depends on what memory holds (a scalar kiln.load, through
/// ops without effects): no variant of the kernel knows its divisibility.
bool comesFromMemory(Value v) {
  SmallVector<Value> work{v};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || !seen.insert(def).second)
      continue;
    if (isa<kiln::LoadOp>(def))
      return true;
    if (def->getNumRegions() == 0 && isMemoryEffectFree(def))
      llvm::append_range(work, def->getOperands());
  }
  return false;
}

/// How TMA may read and write the tensor of `make`, a descriptor the kernel
/// makes, through a map the program encodes where `make` is (once, or in
/// every iteration of the loops around it).
enum class MapEncoding {
  None,
  /// The base is known 16-byte aligned and the strides (but the innermost,
  /// 1) multiples of 16 bytes: the aligned variant's hints, constants.
  Proved,
  /// A base or stride the kernel loaded from memory (upstream's tutorial
  /// 08 loads each group's pointers and leading dimensions): no variant
  /// can know it, and tl.make_tensor_descriptor requires it, as upstream
  /// documents, so TMA takes it; the program checks it before encoding.
  Assumed,
};

MapEncoding mapEncodingOf(kiln::MakeTensorDescOp make,
                          kiln::AxisInfoAnalysis &axisInfo) {
  if (make.getTensorMap())
    return MapEncoding::None;
  int64_t elementBytes = elementBytesOf(make);
  if (elementBytes == 0)
    return MapEncoding::None;
  MapEncoding encoding = MapEncoding::Proved;
  auto require = [&](Value v, int64_t bytesPerUnit) {
    if ((axisInfo.get(v).divisibility.front() * bytesPerUnit) % 16 == 0)
      return true;
    if (!comesFromMemory(v))
      return false;
    encoding = MapEncoding::Assumed;
    return true;
  };
  if (!require(make.getBase(), 1))
    return MapEncoding::None;
  for (Value stride : make.getStrides().drop_back())
    if (!require(stride, elementBytes))
      return MapEncoding::None;
  return encoding;
}

/// The hidden last parameter of a kernel that makes descriptors: the global
/// scratch buffer its programs encode tensor maps in. Added once.
Value globalScratch(func::FuncOp func) {
  MLIRContext *ctx = func.getContext();
  if (func->hasAttr(kiln::kGlobalScratchAttr))
    return func.getArguments().back();
  auto type = kiln::PointerType::get(IntegerType::get(ctx, 8));
  (void)func.insertArgument(func.getNumArguments(), type, DictionaryAttr(),
                            func.getLoc());
  func->setAttr(kiln::kGlobalScratchAttr, UnitAttr::get(ctx));
  return func.getArguments().back();
}

struct LowerTensorDescriptorsPass
    : public kiln::impl::KilnLowerTensorDescriptorsBase<
          LowerTensorDescriptorsPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    DescriptorTypeConverter converter;
    ConversionTarget target(*ctx);
    target.addIllegalOp<kiln::MakeTensorDescOp, kiln::DescriptorLoadOp,
                        kiln::DescriptorStoreOp, kiln::DescriptorReduceOp>();
    // Any other op that takes or gives a descriptor is an error.
    target.markUnknownOpDynamicallyLegal([](Operation *op) {
      return llvm::none_of(op->getOperandTypes(), isDescriptor) &&
             llvm::none_of(op->getResultTypes(), isDescriptor);
    });
    SourceByLoad sources;
    bool tma = kiln::TargetInfo::of(getOperation()).hasTma();
    // The map an access through `make` may use: the launcher's, or on a
    // TMA target one the program encodes (a map per access, which the pass
    // that adopts it shapes).
    llvm::DenseMap<Operation *, MapEncoding> encodable;
    llvm::SmallPtrSet<Operation *, 4> fillsChunks;
    getOperation()->walk([&](func::FuncOp func) {
      bool makes = false;
      kiln::AxisInfoAnalysis axisInfo(func);
      func.walk([&](kiln::MakeTensorDescOp make) {
        makes |= !make.getTensorMap();
        if (MapEncoding encoding = mapEncodingOf(make, axisInfo);
            tma && encoding != MapEncoding::None)
          encodable[make] = encoding;
        if (innerExtentFillsChunks(make, axisInfo))
          fillsChunks.insert(make);
      });
      if (makes)
        globalScratch(func);
    });
    auto mapFor = [&](kiln::MakeTensorDescOp make) -> Value {
      if (!tma || !make)
        return Value();
      if (make.getTensorMap())
        return make.getTensorMap();
      auto encoding = encodable.find(make);
      if (encoding == encodable.end())
        return Value();
      OpBuilder b(make->getContext());
      b.setInsertionPointAfter(make);
      auto func = make->getParentOfType<func::FuncOp>();
      return kiln::MakeTensorMapOp::create(
          b, make.getLoc(), make.getBase(), make.getShape(), make.getStrides(),
          func.getArguments().back(), DenseI64ArrayAttr(), IntegerAttr(),
          IntegerAttr(), encoding->second == MapEncoding::Assumed);
    };
    getOperation()->walk([&](kiln::DescriptorLoadOp load) {
      LoadSource &source = sources[load];
      source.padding = paddingOf(load.getDesc());
      // Only a map in sight: a descriptor carried through a loop may be
      // another one in later iterations.
      auto make = load.getDesc().getDefiningOp<kiln::MakeTensorDescOp>();
      if (source.padding == kiln::PaddingOption::Zero)
        source.tensorMap = mapFor(make);
    });
    // TMA stores drop what falls outside the tensor, as the mask does, but
    // in whole 16-byte chunks: only when the innermost extent is known to
    // fill them (a constant, the aligned variant's `:16` hint) is nothing
    // past it written. Where it is not known, the store checks it at run
    // time and takes the masked form when it does not.
    getOperation()->walk([&](kiln::DescriptorStoreOp store) {
      auto make = store.getDesc().getDefiningOp<kiln::MakeTensorDescOp>();
      if (!make || elementBytesOf(make) == 0)
        return;
      sources[store].tensorMap = mapFor(make);
      sources[store].checkChunks = !fillsChunks.contains(make);
    });
    // Reductions TMA can do (cp.reduce.async.bulk.tensor) likewise.
    getOperation()->walk([&](kiln::DescriptorReduceOp reduce) {
      auto make = reduce.getDesc().getDefiningOp<kiln::MakeTensorDescOp>();
      Type element =
          cast<RankedTensorType>(reduce.getValue().getType()).getElementType();
      if (make && fillsChunks.contains(make) &&
          tmaCanReduce(reduce.getKind(), element))
        sources[reduce].tensorMap = mapFor(make);
    });
    RewritePatternSet patterns(ctx);
    patterns.add<MakeTensorDescToParts>(converter, ctx);
    patterns.add<DescriptorLoadToLoad, DescriptorStoreToStore,
                 DescriptorReduceToAtomic>(converter, ctx, sources);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
