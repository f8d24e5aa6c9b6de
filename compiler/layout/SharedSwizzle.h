//===- SharedSwizzle.h - bank-conflict-aware exchange arrays ----*- C++ -*-===//
//
// A layout conversion through shared memory stores a tensor from some
// distributed layouts (the *writers*) into an array, synchronizes, and loads
// it back in others (the *readers*). Stored row-major, such an *exchange
// array* serializes a transpose up to 32-fold on bank conflicts. This file
// plans a better arrangement: a linear, invertible map from the logical
// (row-major) element index to the physical one, plus how many consecutive
// registers every access moves as one vector.
//
// The cost model is NVIDIA's shared memory: 32 banks of 4 bytes, so a row of
// 128 bytes. One warp instruction moves A = vectorElements * elementBytes
// bytes per lane, its lanes split in phases (A = 16: four phases of 8 lanes;
// A = 8: two of 16; A <= 4: one of 32). Within a phase, lanes touching the
// same U = max(A, 4)-byte unit are served together, and units at the same
// position in a 128-byte row conflict. An access is linear over GF(2), so
// the units a phase touches form a coset, and its wavefronts are
//
//     2^(rank of the lanes' unit images - rank of their row-position images)
//
// whatever the register, warp or constant offset. The planner puts the
// shared vector at the bottom of the physical index, keeps the rest
// row-major, then XORs row-position bits with higher bits (greedily, low bit
// first) wherever that lowers the summed cost of all accesses.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LAYOUT_SHAREDSWIZZLE_H
#define KILN_LAYOUT_SHAREDSWIZZLE_H

#include "compiler/layout/LinearLayout.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace kiln::layout {

/// One writer or reader of an exchange array.
struct SharedAccess {
  /// From hardware dimensions (some of "register", "lane", "warp", "block")
  /// to the single output dimension "offset" of size N (a power of two): the
  /// element's index in the logical, row-major array.
  LinearLayout layout;
  /// XORed into every logical index of this access, so that several tensors
  /// can share one array (join writes lhs at even, rhs at odd indices).
  uint64_t xorOffset = 0;
};

/// How an exchange array is laid out in shared memory.
struct SharedSwizzle {
  /// An invertible map from "offset" (logical index, size N) to "offset"
  /// (physical element index, size N). An access's element at hardware index
  /// hw lives at swizzle(layout(hw) ^ xorOffset), i.e. at
  /// layout.compose(swizzle)(hw) ^ swizzle(xorOffset).
  LinearLayout swizzle;
  /// How many consecutive registers every access stores or loads as one
  /// vector (a power of two, at least 1). For every access, register
  /// r * vectorElements + i is at physical index base(r) + i, and base(r),
  /// like the physical images of all other hardware bits and of xorOffset,
  /// is a multiple of vectorElements. vectorElements * elementBytes <= 16.
  int32_t vectorElements = 1;
  /// Per access (the writers, then the readers, as given to
  /// chooseSharedSwizzle), the consecutive registers it moves as one vector:
  /// vectorElements or more, with the same guarantees for that access. An
  /// access may move more than the others where the array puts its run of
  /// registers at the bottom (a wide reader beside a narrow writer).
  llvm::SmallVector<int32_t, 4> accessVectors;

  /// accessVectors[index], or vectorElements where it is not given.
  int32_t vectorOf(size_t index) const {
    return index < accessVectors.size() ? accessVectors[index] : vectorElements;
  }
};

/// Wavefronts one warp instruction of `physicalAccess` takes: the access is
/// a layout from hardware dimensions to the physical "offset" (in elements of
/// `elementBytes` bytes), moving `vectorElements` registers per lane. Only
/// the lane bases matter; a missing lane dimension is a single lane. The
/// result is phases * 2^(unit rank - row-position rank) per phase (see the
/// file comment), at least 1.
int64_t sharedWavefronts(const LinearLayout &physicalAccess,
                         int32_t vectorElements, int32_t elementBytes);

/// The cost of one access, in wavefronts per warp: instructions per thread
/// times sharedWavefronts. Instructions count only representative registers
/// (register bits whose physical image is independent of the lower ones'):
/// a register that repeats another's element is neither stored nor loaded
/// again. So the count is 2^(independent register bits) / vectorElements.
int64_t sharedAccessCost(const LinearLayout &physicalAccess,
                         int32_t vectorElements, int32_t elementBytes);

/// The summed sharedAccessCost of every writer and reader under `swizzle`,
/// each moving its own vector (SharedSwizzle::vectorOf).
int64_t sharedExchangeCost(llvm::ArrayRef<SharedAccess> writers,
                           llvm::ArrayRef<SharedAccess> readers,
                           const SharedSwizzle &swizzle, int32_t elementBytes);

/// Plans the exchange array of writers and readers of one array of N
/// elements of `elementBytes` bytes (a power of two, at most 16):
///
///  1. The vector: the longest run of leading register bases, as logical
///     indices, that every access shares, that are nonzero and independent,
///     and whose elements fit in 16 bytes; shortened until every other basis
///     and every xorOffset is aligned to it (after step 2).
///  2. The base arrangement: physical bits 0..w-1 are the vector's bases,
///     the higher ones the remaining logical bits in increasing order
///     (row-major otherwise).
///     Then, for each access whose own leading run of register bases is
///     longer, the arrangement with that run at the bottom is tried, every
///     access moving the vector it can there (accessVectors); the cheapest
///     (unswizzled) arrangement wins, the shared one on ties.
///  3. The swizzle: each physical bit above the row-position bits (those
///     that pick a U-byte unit within a 128-byte row, above every access's
///     vector) XORs a mask into the row-position bits, chosen greedily from
///     the lowest such bit: every mask is tried and the cheapest total cost
///     (sharedExchangeCost) kept, the smallest mask on ties, so nothing is
///     swizzled that need not be.
///
/// The result never costs more than the base arrangement. Every access must
/// map into the same "offset" of size N; misuse aborts.
SharedSwizzle chooseSharedSwizzle(llvm::ArrayRef<SharedAccess> writers,
                                  llvm::ArrayRef<SharedAccess> readers,
                                  int32_t elementBytes);

} // namespace kiln::layout

#endif // KILN_LAYOUT_SHAREDSWIZZLE_H
