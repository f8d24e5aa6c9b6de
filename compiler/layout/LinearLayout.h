//===- LinearLayout.h - layouts as linear maps over GF(2) -------*- C++ -*-===//
//
// A *linear layout* says where the elements of a tensor live. It is a map
// from hardware indices (a thread's register number, its lane in the warp,
// the warp in the CTA, the CTA in the cluster; or a shared-memory offset) to
// tensor coordinates, and every layout Kiln uses is *linear over GF(2)*: the
// image of an index is the XOR of the images of its set bits. Knowing the
// image of each single bit (a "basis vector") therefore describes the whole
// layout, and questions about layouts become small problems of linear algebra
// over bits: inverting a layout, composing two, deciding whether a
// conversion can stay inside a thread or a warp, finding duplicated data.
//
// This library knows nothing about MLIR; compiler/layout/BlockedLayouts.h
// builds the layouts of the kiln_gpu encodings on top of it. docs/layouts.md
// explains the algebra with examples.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LAYOUT_LINEARLAYOUT_H
#define KILN_LAYOUT_LINEARLAYOUT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace kiln::layout {

/// Names of the hardware input dimensions of a distributed layout: a value's
/// index among one thread's registers, the thread's lane within its warp, the
/// warp within its CTA, and the CTA within its cluster.
inline constexpr llvm::StringLiteral kRegister = "register";
inline constexpr llvm::StringLiteral kLane = "lane";
inline constexpr llvm::StringLiteral kWarp = "warp";
inline constexpr llvm::StringLiteral kBlock = "block";
/// The input dimension of a shared-memory layout: an element's offset, in
/// elements, from the start of the buffer.
inline constexpr llvm::StringLiteral kOffset = "offset";

/// The name of tensor dimension `d` as an output dimension: "dim0", "dim1"...
std::string tensorDimName(unsigned d);

/// A linear map over GF(2) from named input dimensions to named output
/// dimensions.
///
/// Each dimension has a name and a size that is a power of two; a coordinate
/// along a dimension of size 2^k is a k-bit unsigned number. For each input
/// dimension the layout stores one *basis vector* per bit of that dimension:
/// basis `i` of input dimension `d` is the output (one coordinate per output
/// dimension, in output-dimension order) of the input whose only set bit is
/// bit `i` of `d`. The output of any input is the XOR, coordinate by
/// coordinate, of the basis vectors of all its set bits (across all input
/// dimensions). For example the 1-D layout
///
///     register: (1) (2)      lane: (4) (8) (16) (32) (64)     -> dim0 = 128
///
/// gives each of 32 lanes four consecutive elements of a 128-element tensor:
/// lane 3, register 2 holds element 4 ^ 8 ^ 2 = 14.
///
/// Dimensions are ordered: input and output dimensions keep the order they
/// were given in (products append new ones at the end). Wherever dimensions
/// are *flattened* into one number (applyFlat, reshapeIns, reshapeOuts) the
/// first dimension is the least significant: flat input = in0 + size(in0) *
/// (in1 + size(in1) * ...). Note that this is the reverse of a row-major
/// tensor index; BlockedLayouts.h has row-major tensor helpers.
///
/// A layout may be neither injective (several inputs map to one output: the
/// data is *broadcast*, e.g. two lanes hold copies of one element) nor
/// surjective (some outputs are never produced). At most 64 input bits and
/// 64 output bits in total are supported (far beyond any GPU layout).
///
/// LinearLayout is a small value type: cheap to copy, compared with ==.
/// Misuse (unknown dimension names, sizes that are not powers of two,
/// mismatched dimensions) is a programming error and aborts through
/// llvm::report_fatal_error, in every build mode. Operations that can fail
/// for legitimate inputs (inverting a non-invertible layout) return
/// std::optional.
class LinearLayout {
public:
  /// One output coordinate per output dimension, in output-dimension order.
  using Vector = llvm::SmallVector<int32_t, 4>;

  /// An input dimension: its name and one basis vector per bit. Its size is
  /// 2^bases.size().
  struct InDim {
    std::string name;
    llvm::SmallVector<Vector, 8> bases;
  };

  /// An output dimension: its name and its size (a power of two). Every basis
  /// coordinate along it is below `size`.
  struct OutDim {
    std::string name;
    int32_t size = 1;
  };

  /// The empty layout: no input and no output dimensions. It maps the single
  /// (empty) input to the single (empty) output and is the unit of
  /// operator*.
  LinearLayout() = default;

  /// A layout with the given input dimensions (bases) and output dimensions
  /// (sizes). Aborts if the arguments are invalid (see create()).
  LinearLayout(llvm::ArrayRef<InDim> ins, llvm::ArrayRef<OutDim> outs);

  /// Like the constructor, but returns an error instead of aborting when:
  /// two input or two output dimensions share a name; an output size is not
  /// a power of two; a basis vector has the wrong number of coordinates or a
  /// coordinate outside [0, size) of its output dimension; or more than 64
  /// input or output bits are needed.
  static llvm::Expected<LinearLayout> create(llvm::ArrayRef<InDim> ins,
                                             llvm::ArrayRef<OutDim> outs);

  /// Like the constructor, with each output dimension's size the smallest
  /// power of two that holds every basis coordinate along it (at least 1):
  /// the layout is then surjective whenever its bases span everything below
  /// those sizes.
  static LinearLayout fromBases(llvm::ArrayRef<InDim> ins,
                                llvm::ArrayRef<std::string> outNames);

  /// The identity map from input dimension `inDim` of size `size` to output
  /// dimension `outDim` of the same size: bit i maps to coordinate 2^i.
  static LinearLayout identity1D(int32_t size, llvm::StringRef inDim,
                                 llvm::StringRef outDim);

  /// The map from input dimension `inDim` of size `size` to 0 along output
  /// dimension `outDim` (of size `outSize`, 1 by default): every input index
  /// holds the same element, i.e. the input is broadcast. With outSize 1 the
  /// output dimension carries no information; it is there so that a product
  /// with this layout keeps the output dimension's name in place.
  static LinearLayout zeros1D(int32_t size, llvm::StringRef inDim,
                              llvm::StringRef outDim, int32_t outSize = 1);

  //===--------------------------------------------------------------------===//
  // Dimensions and bases
  //===--------------------------------------------------------------------===//

  llvm::ArrayRef<InDim> getInDims() const { return ins; }
  llvm::ArrayRef<OutDim> getOutDims() const { return outs; }
  llvm::SmallVector<std::string> getInDimNames() const;
  llvm::SmallVector<std::string> getOutDimNames() const;
  bool hasInDim(llvm::StringRef name) const;
  bool hasOutDim(llvm::StringRef name) const;
  /// The position of a dimension in its list; aborts if there is none.
  unsigned getInDimIndex(llvm::StringRef name) const;
  unsigned getOutDimIndex(llvm::StringRef name) const;

  /// Size of an input dimension (2^bits); aborts on an unknown name.
  int32_t getInDimSize(llvm::StringRef name) const;
  int32_t getInDimSizeLog2(llvm::StringRef name) const;
  /// Size of an output dimension; aborts on an unknown name.
  int32_t getOutDimSize(llvm::StringRef name) const;
  int32_t getOutDimSizeLog2(llvm::StringRef name) const;
  /// Total number of input / output bits (log2 of the product of sizes).
  int32_t getTotalInDimSizeLog2() const;
  int32_t getTotalOutDimSizeLog2() const;
  /// Product of the input / output dimension sizes.
  uint64_t getTotalInDimSize() const { return 1ull << getTotalInDimSizeLog2(); }
  uint64_t getTotalOutDimSize() const {
    return 1ull << getTotalOutDimSizeLog2();
  }

  /// Basis vector `bit` of input dimension `inDim` (all output coordinates).
  llvm::ArrayRef<int32_t> getBasis(llvm::StringRef inDim, int32_t bit) const;
  /// One coordinate of that basis vector.
  int32_t getBasis(llvm::StringRef inDim, int32_t bit,
                   llvm::StringRef outDim) const;

  //===--------------------------------------------------------------------===//
  // Evaluation
  //===--------------------------------------------------------------------===//

  /// The output coordinates of an input. `inputs` names every input
  /// dimension exactly once, in any order; each value must be below its
  /// dimension's size. The result lists every output dimension in order.
  llvm::SmallVector<std::pair<std::string, int32_t>>
  apply(llvm::ArrayRef<std::pair<llvm::StringRef, int32_t>> inputs) const;

  /// The same with positional coordinates: one per input dimension, in
  /// order; returns one per output dimension, in order.
  Vector apply(llvm::ArrayRef<int32_t> inputs) const;

  /// The same with flattened indices (first dimension least significant, see
  /// the class comment): bit j of `input` is the j-th input bit overall.
  uint64_t applyFlat(uint64_t input) const;

  //===--------------------------------------------------------------------===//
  // Building layouts from layouts
  //===--------------------------------------------------------------------===//

  /// The product of two layouts: a layout whose input is the concatenation
  /// of both inputs and whose output is the concatenation of both outputs.
  ///
  /// Input dimensions are those of `*this` followed by those of `other` that
  /// `*this` lacks; output dimensions likewise. A dimension both layouts have
  /// is combined, `*this` supplying its low bits and `other` its high bits:
  /// for an input dimension its size is the product and its bases are those
  /// of `*this` followed by those of `other`; for an output dimension its
  /// size is the product and `other`'s coordinates along it are multiplied
  /// by `*this`'s size. Each layout's bases are zero along the output
  /// dimensions only the other one has.
  ///
  /// Products are associative, the empty layout is their unit, and they are
  /// how layouts are built up piece by piece:
  ///
  ///     identity1D(4, "register", "dim0") * identity1D(32, "lane", "dim0")
  ///
  /// gives each lane 4 consecutive elements of a 128-element tensor.
  friend LinearLayout operator*(const LinearLayout &lhs,
                                const LinearLayout &rhs);
  LinearLayout &operator*=(const LinearLayout &other) {
    return *this = *this * other;
  }

  /// Composition: the layout x -> outer(this(x)). Every output dimension of
  /// `*this` must be an input dimension of `outer`, with a size no larger;
  /// `outer`'s other input dimensions are taken as 0. The result has the
  /// input dimensions of `*this` and the output dimensions of `outer`.
  LinearLayout compose(const LinearLayout &outer) const;

  /// The inverse of a bijective layout (injective and surjective, so the
  /// total input and output sizes agree): inputs and outputs swap roles, and
  /// this->compose(inverse) and inverse.compose(*this) are identities.
  /// std::nullopt if the layout is not bijective.
  std::optional<LinearLayout> invert() const;

  /// A right inverse of a surjective layout: R with this(R(y)) == y for every
  /// output y. When the layout is not injective an output has several
  /// preimages; R picks the one that uses only *pivot* input bits (see
  /// getFreeVariableMasks: bits independent of all earlier bits), so every
  /// free bit of R(y) is 0. For a bijective layout this is the inverse.
  /// std::nullopt if the layout is not surjective.
  std::optional<LinearLayout> pseudoInvert() const;

  /// Factors `*this` through `target`: a layout C from the input dimensions
  /// of `*this` to the input dimensions of `target` with
  /// target(C(x)) == this(x) for all x, i.e. for each input of `*this` an
  /// input of `target` that produces the same output. Both layouts must have
  /// the same output dimensions (names and sizes, in any order). When
  /// several inputs of `target` qualify, C picks the one whose free bits are
  /// 0, as pseudoInvert does. std::nullopt if some output of `*this` is no
  /// output of `target`.
  ///
  /// For two layouts of one tensor, src and dst, dst.factorThrough(src) says
  /// where (in src's registers, lanes, warps) each of dst's elements is.
  std::optional<LinearLayout> factorThrough(const LinearLayout &target) const;

  /// The layout with its input dimensions in the order `names` (a
  /// permutation of the input dimension names). The map is unchanged.
  LinearLayout transposeIns(llvm::ArrayRef<std::string> names) const;
  /// The layout with its output dimensions in the order `names` (a
  /// permutation of the output dimension names). The map is unchanged.
  LinearLayout transposeOuts(llvm::ArrayRef<std::string> names) const;

  /// Replaces the input dimensions by `newIns` (names and sizes) with the
  /// same total size: the flattened input (first dimension least
  /// significant) is kept and re-split into the new dimensions.
  LinearLayout
  reshapeIns(llvm::ArrayRef<std::pair<std::string, int32_t>> newIns) const;
  /// Replaces the output dimensions by `newOuts` with the same total size:
  /// the flattened output (first dimension least significant) is kept and
  /// re-split into the new dimensions.
  LinearLayout
  reshapeOuts(llvm::ArrayRef<std::pair<std::string, int32_t>> newOuts) const;

  /// Renames one input / output dimension (the new name must be unused).
  LinearLayout renameInDim(llvm::StringRef from, llvm::StringRef to) const;
  LinearLayout renameOutDim(llvm::StringRef from, llvm::StringRef to) const;

  /// The restriction to some input dimensions and the projection onto some
  /// output dimensions: the inputs not listed are taken as 0 and the outputs
  /// not listed are dropped. Dimensions keep their relative order in
  /// `*this`; every listed name must exist.
  LinearLayout sublayout(llvm::ArrayRef<std::string> inNames,
                         llvm::ArrayRef<std::string> outNames) const;

  /// Changes the size of output dimension `outDim` to `newSize` (a power of
  /// two). When it shrinks, coordinates along it are taken modulo `newSize`
  /// (linear, since sizes are powers of two): inputs that used to reach
  /// beyond the new size now wrap around and hold copies. When it grows, the
  /// map is unchanged and the layout no longer covers the new range.
  LinearLayout resizeOutDim(llvm::StringRef outDim, int32_t newSize) const;

  /// Removes the bits of input dimension `inDim` whose basis is zero (bits
  /// that only duplicate data), keeping the other bits in order. The
  /// dimension shrinks accordingly; an input index of the result maps to
  /// what the index with the removed bits set to 0 mapped to before.
  LinearLayout removeZeroBases(llvm::StringRef inDim) const;

  //===--------------------------------------------------------------------===//
  // Properties
  //===--------------------------------------------------------------------===//

  /// The rank of the map over GF(2): log2 of the number of distinct outputs.
  int32_t getRank() const;
  /// Every output (every tensor element) is the image of some input.
  bool isSurjective() const;
  /// No two inputs have the same output (no data is duplicated).
  bool isInjective() const;
  /// Both: the layout is a bijection and invert() succeeds.
  bool isInvertible() const { return isInjective() && isSurjective(); }
  /// The given input dimensions contribute nothing: all their bases are
  /// zero, so the output does not depend on them (e.g. a layout trivial over
  /// "lane" and "warp" gives every thread the same elements). Names the
  /// layout lacks count as trivial (a missing dimension has size 1).
  bool isTrivialOver(llvm::ArrayRef<std::string> inNames) const;

  /// For each input dimension (in order), the mask of its bits whose basis
  /// is exactly zero: flipping such a bit never changes the output, so the
  /// indices that differ in it hold the same elements (pure broadcast).
  llvm::SmallVector<uint64_t> getZeroBasisMasks() const;

  /// For each input dimension (in order), the mask of its *free* bits. Going
  /// through all input bits in flattened order (first input dimension's bits
  /// first, low bits first), a bit is a *pivot* if its basis is linearly
  /// independent of the bases of all earlier bits, and *free* otherwise.
  /// Every output is produced by exactly one input whose free bits are all
  /// zero, and by 2^(number of free bits) inputs in all. So among inputs that
  /// hold copies of the same element, the one with all free bits clear is a
  /// canonical owner: with registers listed before lanes and warps, the
  /// duplicates are attributed to the later (lane, warp) dimensions, which is
  /// what a store or a reduction wants to skip. Zero bases are always free.
  llvm::SmallVector<uint64_t> getFreeVariableMasks() const;
  /// The free-bit mask of one input dimension.
  uint64_t getFreeVariableMask(llvm::StringRef inDim) const;

  /// The number of consecutive indices of `inDim`, starting from 0, that map
  /// to consecutive coordinates along `outDim` starting from 0, with every
  /// other output coordinate 0: the largest 2^k such that bit i of `inDim`
  /// maps to coordinate 2^i of `outDim` and 0 elsewhere, for all i < k. At
  /// least 1. With inDim = "register" and outDim the tensor's fastest
  /// dimension this is how many contiguous elements a thread owns in
  /// consecutive registers (see vectorWidth).
  int32_t getContiguity(llvm::StringRef inDim, llvm::StringRef outDim) const;

  /// Structural equality: the same dimensions (names, order, sizes) and the
  /// same bases.
  friend bool operator==(const LinearLayout &lhs, const LinearLayout &rhs);
  friend bool operator!=(const LinearLayout &lhs, const LinearLayout &rhs) {
    return !(lhs == rhs);
  }

  /// A readable rendering, for example
  ///
  ///     (register=4, lane=32) -> (dim0=128)
  ///       register: (1) (2)
  ///       lane: (4) (8) (16) (32) (64)
  ///
  /// one line per input dimension listing its basis vectors; "-" for a
  /// dimension of size 1.
  std::string toString() const;
  void print(llvm::raw_ostream &os) const;

private:
  // The bases of input bit `j` (flattened order) as a flat output value
  // (first output dimension least significant).
  llvm::SmallVector<uint64_t> flatColumns() const;
  uint64_t flattenOut(llvm::ArrayRef<int32_t> coords) const;
  // Solves for each flat output in `targets` (in this layout's output
  // space); std::nullopt if one is not in the image.
  std::optional<llvm::SmallVector<uint64_t>>
  solveFlat(llvm::ArrayRef<uint64_t> targets) const;

  llvm::SmallVector<InDim, 4> ins;
  llvm::SmallVector<OutDim, 4> outs;
};

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                                     const LinearLayout &layout) {
  layout.print(os);
  return os;
}

//===----------------------------------------------------------------------===//
// Layout conversion
//===----------------------------------------------------------------------===//

/// How a tensor moves from one distributed layout to another, cheapest
/// first.
enum class ConversionKind {
  /// The layouts are the same map: nothing to do.
  NoOp,
  /// Every thread already holds all the elements it needs, at register
  /// positions that are the same for every thread: the conversion renames
  /// registers (ConversionPlan::srcRegisters).
  RegisterPermutation,
  /// Every element a thread needs is held by some thread of the same warp:
  /// the conversion is a sequence of warp shuffles (shfl.sync), as described
  /// by ConversionPlan::dstToSrc.
  WarpShuffle,
  /// Data crosses warps (or CTAs): store through the source layout to shared
  /// memory, synchronize, load through the destination layout.
  SharedMemory,
};

/// "no-op", "register permutation", "warp shuffle" or "shared memory".
llvm::StringRef toString(ConversionKind kind);

/// The result of planConversion.
struct ConversionPlan {
  ConversionKind kind = ConversionKind::SharedMemory;

  /// For each destination hardware index (register, lane, warp, block: the
  /// destination layout's input dimensions), the source hardware index that
  /// holds the same tensor element: in dims are the destination's input
  /// dimensions, out dims are the source's input dimensions (the same names).
  /// The map respects `kind`: for RegisterPermutation it leaves lane, warp
  /// and block unchanged and the register it gives depends on the register
  /// alone; for WarpShuffle it leaves warp and block unchanged, so its
  /// "lane" output is the lane to read from (shfl.sync's source lane) and its
  /// "register" output the register that lane provides. When several source
  /// indices hold the element it picks the one whose free bits are 0
  /// (LinearLayout::factorThrough), among those the kind allows.
  LinearLayout dstToSrc;

  /// For RegisterPermutation: srcRegisters[r] is the source register that
  /// holds the element of destination register r, in every thread. It is a
  /// permutation when both layouts hold each element once per thread; it may
  /// repeat or skip registers when either duplicates elements in registers.
  /// Empty for the other kinds.
  llvm::SmallVector<int32_t> srcRegisters;

  /// A readable summary of the plan (kind and, per destination input bit,
  /// where its data comes from).
  std::string describe() const;
};

/// Decides the cheapest way to convert a tensor from distributed layout `src`
/// to distributed layout `dst`, following ConversionKind's order.
///
/// Both layouts map hardware dimensions (some of "register", "lane",
/// "warp", "block": the same names in both, in any order) to the same tensor
/// (the same output dimensions and sizes, in any order). They may differ in
/// the number of registers (or, in which case only SharedMemory applies, in
/// the size of any other input dimension). Returns std::nullopt if the
/// layouts are not of one tensor, or if `dst` needs an element that `src`
/// does not hold anywhere (src not surjective onto dst's image).
///
/// The decision is exact: RegisterPermutation is chosen iff every thread
/// holds in the source layout, at a register index that depends only on the
/// destination register, the element each of its destination registers
/// needs; WarpShuffle iff every element a thread needs is in its warp.
/// (When a thread holds all its elements but at lane-dependent register
/// positions, the plan is WarpShuffle with dstToSrc's lane output equal to
/// the thread's own lane: a select per register, no data exchange.)
std::optional<ConversionPlan> planConversion(const LinearLayout &src,
                                             const LinearLayout &dst);

/// How many contiguous elements along `fastestDim` a thread owns in
/// consecutive registers, starting from its register 0: the width of the
/// widest vector load or store the layout allows (before accounting for
/// element size or alignment). Same as getContiguity(kRegister, fastestDim);
/// 1 if the layout has no register dimension.
int32_t vectorWidth(const LinearLayout &layout, llvm::StringRef fastestDim);

} // namespace kiln::layout

#endif // KILN_LAYOUT_LINEARLAYOUT_H
