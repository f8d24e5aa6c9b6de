//===- WarpShuffle.h - layout conversions as warp shuffles ------*- C++ -*-===//
//
// When planConversion says a conversion stays within each warp, the data can
// move by `shfl.sync.idx` instead of through shared memory: no barrier, no
// shared memory, no address arithmetic. This file turns the plan's linear map
// (destination register/lane/warp -> source register/lane) into a short list
// of shuffles, each a linear function of the thread index, and nothing here
// depends on MLIR: the lowering emits the steps as they are.
//
// For destination register r of the thread with index bits t (lane bits,
// then warp bits), the plan gives the source as linear maps:
//   source register = A r ^ B t,   source lane = C r ^ D t.
// A shuffle's reader names the lane it reads from, but the *provider* chooses
// the value it sends, so a provider has to know which register its reader
// wants. When B t is a function of what the provider knows (its own lane
// D t ^ C r and the warp), it sends `A r ^ M(its lane, warp)`: one shuffle per
// destination register, plus a register select in the provider. Otherwise
// every provider sends each candidate register in turn and readers keep the
// one they need: 2^rank(B) shuffles per destination register.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LAYOUT_WARPSHUFFLE_H
#define KILN_LAYOUT_WARPSHUFFLE_H

#include "compiler/layout/LinearLayout.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace kiln::layout {

/// A linear function of the thread index tid.x (lane in bits 0-4, warp
/// above): the XOR of `byBit[i]` over the set bits i of tid, XORed with
/// `constant`.
struct ThreadLinear {
  int32_t constant = 0;
  llvm::SmallVector<int32_t> byBit;

  int32_t operator()(uint32_t tid) const;
  /// Whether the value does not depend on the thread.
  bool isConstant() const;

  /// The thread-dependent part over a basis of its image: the XOR of
  /// `value` over the terms whose parity of (tid & threadMask) is odd. One
  /// term per independent value, so a select chooses among 2^terms values.
  struct ParityTerm {
    int32_t value;
    uint32_t threadMask;
  };
  llvm::SmallVector<ParityTerm> parityTerms() const;
};

/// One `shfl.sync.idx` of a warp-shuffle conversion.
struct ShuffleStep {
  /// The source register each thread sends.
  ThreadLinear send;
  /// The lane each thread reads from (its warp is its own).
  ThreadLinear readLane;
  /// A thread keeps the value when WarpShufflePlan::selector gives
  /// `selectorValue` for it...
  int32_t selectorValue = 0;
  /// ...as these destination registers.
  llvm::SmallVector<int32_t> destinations;
};

/// A layout conversion as warp shuffles.
struct WarpShufflePlan {
  /// Lanes per warp and warps per CTA, as log2 (tid.x has laneBits + warpBits
  /// significant bits).
  int32_t laneBits = 5;
  int32_t warpBits = 0;
  /// Which steps a thread keeps (see ShuffleStep::selectorValue); constant 0
  /// when every thread keeps every step.
  ThreadLinear selector;
  llvm::SmallVector<ShuffleStep> steps;

  /// Every thread reads its own lane in every step: no data crosses lanes,
  /// the steps are register selects.
  bool readsOwnLane() const;
  /// `shfl.sync` instructions per thread for elements of `elementBits`
  /// (one per step and 32-bit word; none when readsOwnLane), plus the
  /// selects that choose registers: an estimate of the conversion's cost
  /// in instructions.
  int64_t estimatedInstructions(int32_t elementBits) const;
};

/// Plans the conversion from `src` to `dst` (distributed layouts of one
/// tensor over register, lane and warp, and block of size 1) as warp
/// shuffles. std::nullopt unless planConversion's kind is WarpShuffle.
std::optional<WarpShufflePlan> planWarpShuffle(const LinearLayout &src,
                                               const LinearLayout &dst);

/// The plan for converting `src` to `dst` within warps (planWarpShuffle)
/// when it costs no more instructions than an exchange through shared
/// memory: a store per distinct source element, a load per destination
/// element and two barriers. The conversion's lowering and the layout
/// assignment that decides which conversions to avoid both follow it.
std::optional<WarpShufflePlan> cheaperWarpShuffle(const LinearLayout &src,
                                                  const LinearLayout &dst,
                                                  int32_t elementBits);

} // namespace kiln::layout

#endif // KILN_LAYOUT_WARPSHUFFLE_H
