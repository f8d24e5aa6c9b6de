//===- DistributedLayout.cpp - kiln_gpu encodings as linear layouts -------===//
#include "compiler/conversion/DistributedLayout.h"
#include "compiler/conversion/LoweringUtils.h"

#include "compiler/ir/Dialects.h"
#include "compiler/ir/TargetInfo.h"
#include "compiler/layout/BlockedLayouts.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <map>

using namespace mlir;
using kiln::i32Constant;
using kiln::layout::LinearLayout;

namespace {

// tid.x: the lane in its low bits, the warp above.
constexpr int32_t kLaneBits =
    llvm::ConstantLog2<kiln::TargetInfo::kThreadsPerWarp>();

} // namespace

std::optional<LinearLayout> kiln::getLinearLayout(RankedTensorType type) {
  auto encoding =
      dyn_cast_or_null<kiln::gpu::DistributedEncodingAttr>(type.getEncoding());
  if (!encoding)
    return std::nullopt;
  return encoding.toLinearLayout(type.getShape());
}

SmallVector<int32_t> kiln::registerCoordinates(const LinearLayout &layout,
                                               unsigned k) {
  SmallVector<std::pair<StringRef, int32_t>> inputs;
  for (const LinearLayout::InDim &in : layout.getInDims())
    inputs.push_back({in.name, in.name == layout::kRegister ? int32_t(k) : 0});
  SmallVector<int32_t> coords;
  for (auto &[name, value] : layout.apply(inputs))
    coords.push_back(value);
  return coords;
}

bool kiln::isRepresentativeRegister(const LinearLayout &layout, unsigned k) {
  unsigned r = layout.getInDimIndex(layout::kRegister);
  return (layout.getZeroBasisMasks()[r] & k) == 0;
}

Value kiln::ownerPredicate(OpBuilder &b, Location loc, Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq,
                                kiln::threadIdX(b, loc),
                                i32Constant(b, loc, 0));
  std::optional<LinearLayout> linear = getLinearLayout(tensor);
  if (!linear)
    return Value();
  return ownerPredicate(b, loc, *linear);
}

Value kiln::ownerPredicate(OpBuilder &b, Location loc,
                           const LinearLayout &linear) {
  // A lane or warp bit is a copy where it is free (docs/layouts.md): its
  // basis is zero or repeats earlier ones, registers coming first.
  SmallVector<uint64_t> free = linear.getFreeVariableMasks();
  auto copyBits = [&](StringRef hw) -> uint64_t {
    return linear.hasInDim(hw) ? free[linear.getInDimIndex(hw)] : 0;
  };
  // tid.x: lanes in the low five bits, warps above.
  uint64_t copies = copyBits(layout::kLane) | copyBits(layout::kWarp)
                                                  << kLaneBits;
  if (copies == 0)
    return Value();
  return LLVM::ICmpOp::create(
      b, loc, LLVM::ICmpPredicate::eq,
      LLVM::AndOp::create(b, loc, kiln::threadIdX(b, loc),
                          i32Constant(b, loc, int32_t(copies))),
      i32Constant(b, loc, 0));
}

LinearLayout kiln::layoutOverRuns(const LinearLayout &layout,
                                  ArrayRef<int64_t> runs) {
  SmallVector<LinearLayout::InDim, 4> ins(layout.getInDims());
  SmallVector<LinearLayout::OutDim, 4> outs(layout.getOutDims());
  for (auto [d, run] : llvm::enumerate(runs)) {
    int32_t shift = int32_t(llvm::Log2_64(uint64_t(run)));
    for (LinearLayout::InDim &in : ins)
      for (LinearLayout::Vector &basis : in.bases)
        basis[d] >>= shift;
    outs[d].size = std::max<int32_t>(1, outs[d].size >> shift);
  }
  return LinearLayout(ins, outs);
}

kiln::DistinctRegisters
kiln::withoutCopiedRegisters(const LinearLayout &layout) {
  DistinctRegisters distinct{
      layout.removeZeroBases(layout::kRegister),
      {},
      layout.getZeroBasisMasks()[layout.getInDimIndex(layout::kRegister)]};
  for (unsigned r = 0, n = unsigned(layout.getInDimSize(layout::kRegister));
       r < n; ++r)
    if ((r & distinct.copies) == 0)
      distinct.original.push_back(r);
  return distinct;
}

SmallVector<kiln::Coordinates>
kiln::emitCoordinates(OpBuilder &b, Location loc, const LinearLayout &layout) {
  size_t rank = layout.getOutDims().size();
  int32_t laneBits = layout.getInDimSizeLog2(layout::kLane);
  int32_t warpBits = layout.getInDimSizeLog2(layout::kWarp);
  int32_t tidBits = kLaneBits + warpBits;
  // Basis of tid.x bit i (lanes are the low five bits, warps the rest).
  auto tidBasis = [&](int32_t i, unsigned d) -> int32_t {
    if (i < kLaneBits)
      return i < laneBits ? layout.getBasis(layout::kLane, i)[d] : 0;
    return layout.getBasis(layout::kWarp, i - kLaneBits)[d];
  };

  Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
  // Per dimension: the thread's part of the coordinate and the bits it may
  // have set. A register's constant is XORed in where it shares those bits
  // and added elsewhere (the same there, and LLVM then folds it into an
  // address): registers whose constants differ only outside the thread's
  // bits share one value (stmatrix's and ldmatrix's row addresses, 4 a
  // thread for 16 instructions where each had its own).
  SmallVector<Value> threadPart(rank);
  SmallVector<uint64_t> threadMasks(rank, 0);
  for (unsigned d = 0; d < rank; ++d) {
    uint64_t &threadMask = threadMasks[d];
    Value part;
    // Terms over disjoint bits combine with `or` (LLVM sees that it is an
    // add), overlapping ones with `xor`, as the algebra says.
    auto accumulate = [&](Value term, uint64_t termMask) {
      if (!part)
        part = term;
      else if ((threadMask & termMask) == 0)
        part = LLVM::OrOp::create(b, loc, part, term);
      else
        part = LLVM::XOrOp::create(b, loc, part, term);
      threadMask |= termMask;
    };
    for (int32_t i = 0; i < tidBits;) {
      int32_t v = tidBasis(i, d);
      if (v == 0) {
        ++i;
        continue;
      }
      if (!llvm::isPowerOf2_32(uint32_t(v))) {
        // A general linear basis: one bit at a time.
        Value bit = LLVM::AndOp::create(
            b, loc, LLVM::LShrOp::create(b, loc, tid, i32Constant(b, loc, i)),
            i32Constant(b, loc, 1));
        accumulate(LLVM::MulOp::create(b, loc, bit, i32Constant(b, loc, v)),
                   uint64_t(uint32_t(v)));
        ++i;
        continue;
      }
      // A run of bits i, i+1, ... mapping to v, 2v, ...: one field.
      int32_t len = 1;
      while (i + len < tidBits && tidBasis(i + len, d) == v << len)
        ++len;
      Value field = i == 0 ? tid
                           : Value(LLVM::LShrOp::create(
                                 b, loc, tid, i32Constant(b, loc, i)));
      // tid.x < 32 * warps, so a run that reaches the top needs no mask.
      if (i + len < tidBits)
        field = LLVM::AndOp::create(
            b, loc, field, i32Constant(b, loc, (int64_t(1) << len) - 1));
      if (v > 1)
        field = LLVM::ShlOp::create(b, loc, field,
                                    i32Constant(b, loc, llvm::Log2_32(v)));
      accumulate(field, ((uint64_t(1) << len) - 1) << llvm::Log2_32(v));
      i += len;
    }
    threadPart[d] = part;
  }

  SmallVector<Coordinates> result;
  unsigned registers = unsigned(layout.getInDimSize(layout::kRegister));
  for (unsigned k = 0; k < registers; ++k) {
    SmallVector<int32_t> regCoords = registerCoordinates(layout, k);
    Coordinates coords;
    for (unsigned d = 0; d < rank; ++d) {
      Value c = threadPart[d];
      if (!c)
        c = i32Constant(b, loc, regCoords[d]);
      else
        c = xorOutsideBits(b, loc, c, regCoords[d], threadMasks[d]);
      coords.push_back(c);
    }
    result.push_back(std::move(coords));
  }
  return result;
}

std::map<SmallVector<int32_t>, unsigned>
kiln::registersByCoordinates(const LinearLayout &layout) {
  std::map<SmallVector<int32_t>, unsigned> byCoordinates;
  for (unsigned k = unsigned(layout.getInDimSize(layout::kRegister)); k-- > 0;)
    byCoordinates[registerCoordinates(layout, k)] = k; // lowest index wins
  return byCoordinates;
}

std::optional<SmallVector<unsigned>>
kiln::registerMapping(const LinearLayout &from, const LinearLayout &to,
                      CoordinateMap project) {
  for (StringRef hw : {layout::kLane, layout::kWarp, layout::kBlock}) {
    int32_t bits = to.hasInDim(hw) ? to.getInDimSizeLog2(hw) : 0;
    int32_t fromBits = from.hasInDim(hw) ? from.getInDimSizeLog2(hw) : 0;
    if (bits != fromBits)
      return std::nullopt;
    for (int32_t i = 0; i < bits; ++i) {
      ArrayRef<int32_t> fromBasis = from.getBasis(hw, i);
      if (ArrayRef<int32_t>(project(to.getBasis(hw, i))) != fromBasis)
        return std::nullopt;
    }
  }
  std::map<SmallVector<int32_t>, unsigned> byCoordinates =
      registersByCoordinates(from);
  SmallVector<unsigned> mapping;
  unsigned toRegisters = unsigned(to.getInDimSize(layout::kRegister));
  for (unsigned k = 0; k < toRegisters; ++k) {
    auto it = byCoordinates.find(project(registerCoordinates(to, k)));
    if (it == byCoordinates.end())
      return std::nullopt;
    mapping.push_back(it->second);
  }
  return mapping;
}

unsigned kiln::vectorDimension(const layout::LinearLayout &layout) {
  unsigned last = unsigned(layout.getOutDims().size() - 1);
  if (layout.getInDimSizeLog2(layout::kRegister) == 0)
    return last;
  llvm::ArrayRef<int32_t> basis = layout.getBasis(layout::kRegister, 0);
  for (auto [d, c] : llvm::enumerate(basis))
    if (c == 1 && llvm::count(basis, 0) + 1 == int64_t(basis.size()))
      return unsigned(d);
  return last;
}

unsigned kiln::contiguousRegistersAlong(const layout::LinearLayout &layout,
                                        unsigned dim) {
  unsigned contiguous = 1;
  for (int32_t i = 0; i < layout.getInDimSizeLog2(layout::kRegister); ++i) {
    llvm::ArrayRef<int32_t> basis = layout.getBasis(layout::kRegister, i);
    for (auto [d, c] : llvm::enumerate(basis))
      if (c != (d == dim ? (int32_t(1) << i) : 0))
        return contiguous;
    contiguous *= 2;
  }
  return contiguous;
}
