//===- DistributedLayout.h - kiln_gpu encodings as linear layouts -*- C++
//-*-===//
//
// Every lowering that needs to know which thread holds which element asks
// here: a tensor type's kiln_gpu encoding becomes, through its
// DistributedEncodingAttr interface (compiler/ir/DistributedEncodings.cpp),
// a layout::LinearLayout from (register, lane, warp, block) to the tensor's
// coordinates. Register k of a thread is element k of the LLVM struct the
// type converter gives the tensor.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CONVERSION_DISTRIBUTEDLAYOUT_H
#define KILN_CONVERSION_DISTRIBUTEDLAYOUT_H

#include "compiler/layout/LinearLayout.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <map>
#include <optional>

namespace kiln {

/// The linear layout of `type`'s encoding over its shape, or std::nullopt
/// when it has none we know (or its shape is not made of powers of two).
std::optional<layout::LinearLayout>
getLinearLayout(mlir::RankedTensorType type);

/// The coordinates of a register's element, as i32 values: one per tensor
/// dimension.
using Coordinates = llvm::SmallVector<mlir::Value, 4>;

/// The coordinates of every element this thread holds under `layout`, in
/// register order. Lane and warp contributions are computed once from
/// tid.x; a register adds a constant.
llvm::SmallVector<Coordinates>
emitCoordinates(mlir::OpBuilder &b, mlir::Location loc,
                const layout::LinearLayout &layout);

/// Maps coordinates of one tensor to those of another (a projection such as
/// dropping or zeroing dimensions). Must be linear over XOR.
using CoordinateMap =
    llvm::function_ref<llvm::SmallVector<int32_t>(llvm::ArrayRef<int32_t>)>;

/// For each register of `to`, the register of `from` holding the element at
/// `project(coordinates)`, when lanes and warps already agree (every lane
/// and warp basis of `to`, projected, is the one of `from`): then the
/// conversion needs no data movement between threads. std::nullopt
/// otherwise.
std::optional<llvm::SmallVector<unsigned>>
registerMapping(const layout::LinearLayout &from,
                const layout::LinearLayout &to, CoordinateMap project);

/// The coordinates of register `k` alone (lane = warp = 0).
llvm::SmallVector<int32_t>
registerCoordinates(const layout::LinearLayout &layout, unsigned k);

/// Each register of `layout` by its coordinates (registerCoordinates); of
/// registers holding copies, the lowest.
std::map<llvm::SmallVector<int32_t>, unsigned>
registersByCoordinates(const layout::LinearLayout &layout);

/// Registers that are copies of lower ones (their index has a bit whose
/// basis is zero) are not representatives; the others are.
bool isRepresentativeRegister(const layout::LinearLayout &layout, unsigned k);

/// Which threads write when each element is to be written once: for a
/// tensor of `type`, those whose lane and warp bits include no free bit of
/// its layout (the canonical owners of docs/layouts.md); for a scalar,
/// thread 0. Null when every thread does. Stores and atomics predicate on
/// it, as upstream Triton's redundant-data mask does.
mlir::Value ownerPredicate(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Type type);

/// The same for the elements of `layout` (null when every thread writes).
mlir::Value ownerPredicate(mlir::OpBuilder &b, mlir::Location loc,
                           const layout::LinearLayout &layout);

/// `layout` onto a tile that keeps one copy of each run of elements
/// (compiler/ir/TileRuns.h): coordinate x along dimension d becomes
/// x / runs[d] (a shift, since runs are powers of two), so the elements of
/// a run land on one place. Registers and threads that then hold copies
/// are found as for any layout (isRepresentativeRegister, ownerPredicate).
layout::LinearLayout layoutOverRuns(const layout::LinearLayout &layout,
                                    llvm::ArrayRef<int64_t> runs);

/// A layout's registers less those that copy lower ones (zero bases: a
/// tile of runs, layoutOverRuns).
struct DistinctRegisters {
  layout::LinearLayout layout;
  /// For each register of `layout`, its index in the original one.
  llvm::SmallVector<unsigned> original;
  /// The original's register bits whose basis is zero: register r copies
  /// register r & ~copies.
  uint64_t copies = 0;
};
DistinctRegisters withoutCopiedRegisters(const layout::LinearLayout &layout);

/// How many leading registers of a thread step along dimension `dim` one
/// element at a time (1 when the first does not).
unsigned contiguousRegistersAlong(const layout::LinearLayout &layout,
                                  unsigned dim);
/// The dimension a thread's vector accesses run along: the one its first
/// register steps along by one element (dimension 0 for a tile laid out
/// down its columns), else the last.
unsigned vectorDimension(const layout::LinearLayout &layout);

} // namespace kiln

#endif // KILN_CONVERSION_DISTRIBUTEDLAYOUT_H
