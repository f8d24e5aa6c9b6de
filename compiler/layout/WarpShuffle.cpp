//===- WarpShuffle.cpp - layout conversions as warp shuffles --------------===//
#include "compiler/layout/WarpShuffle.h"
#include "compiler/layout/Echelon.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/bit.h"

using namespace llvm;

namespace kiln::layout {

int32_t ThreadLinear::operator()(uint32_t tid) const {
  return constant ^ xorOfColumns<int32_t>(byBit, tid);
}

bool ThreadLinear::isConstant() const {
  return llvm::all_of(byBit, [](int32_t v) { return v == 0; });
}

SmallVector<ThreadLinear::ParityTerm> ThreadLinear::parityTerms() const {
  // The nonzero values among byBit, as columns of an echelon; its pivots are
  // a basis of the image, and solving for each byBit[i] says which basis
  // vectors it contains.
  Echelon echelon;
  SmallVector<unsigned> pivots;
  for (auto [bit, v] : llvm::enumerate(byBit))
    if (v != 0 && echelon.add(uint32_t(v), unsigned(bit)))
      pivots.push_back(unsigned(bit));
  SmallVector<ParityTerm> result;
  for (unsigned pivot : pivots)
    result.push_back({byBit[pivot], 0});
  for (auto [bit, v] : llvm::enumerate(byBit)) {
    if (v == 0)
      continue;
    uint64_t combination = *echelon.solve(uint32_t(v));
    for (auto [j, pivot] : llvm::enumerate(pivots))
      if ((combination >> pivot) & 1)
        result[j].threadMask |= uint32_t(1) << bit;
  }
  return result;
}

bool WarpShufflePlan::readsOwnLane() const {
  for (const ShuffleStep &step : steps) {
    if (step.readLane.constant != 0)
      return false;
    for (auto [bit, v] : llvm::enumerate(step.readLane.byBit))
      if (v != (int32_t(bit) < laneBits ? int32_t(1) << bit : 0))
        return false;
  }
  return true;
}

int64_t WarpShufflePlan::estimatedInstructions(int32_t elementBits) const {
  int64_t words = elementBits > 32 ? 2 : 1;
  int64_t total = 0;
  bool shuffles = !readsOwnLane();
  for (const ShuffleStep &step : steps) {
    if (shuffles)
      total += words;
    total += (int64_t(1) << step.send.parityTerms().size()) - 1;
    if (!selector.isConstant())
      total += int64_t(step.destinations.size());
  }
  return total;
}

namespace {

/// The `out` component of `map`'s basis for bit `bit` of input `in`; 0 when
/// either dimension is absent.
int32_t component(const LinearLayout &map, StringRef in, int32_t bit,
                  StringRef out) {
  if (!map.hasInDim(in) || !map.hasOutDim(out) ||
      bit >= map.getInDimSizeLog2(in))
    return 0;
  return map.getBasis(in, bit, out);
}

} // namespace

std::optional<WarpShufflePlan> planWarpShuffle(const LinearLayout &src,
                                               const LinearLayout &dst) {
  std::optional<ConversionPlan> conversion = planConversion(src, dst);
  if (!conversion || conversion->kind != ConversionKind::WarpShuffle)
    return std::nullopt;
  if (dst.hasInDim(kBlock) && dst.getInDimSizeLog2(kBlock) > 0)
    return std::nullopt;
  const LinearLayout &map = conversion->dstToSrc;

  WarpShufflePlan plan;
  int32_t layoutLaneBits =
      dst.hasInDim(kLane) ? dst.getInDimSizeLog2(kLane) : 0;
  if (layoutLaneBits > plan.laneBits)
    return std::nullopt;
  plan.warpBits = dst.hasInDim(kWarp) ? dst.getInDimSizeLog2(kWarp) : 0;
  int32_t threadBits = plan.laneBits + plan.warpBits;

  // Source register = A r ^ B t, source lane = C r ^ D t (see the header).
  SmallVector<int32_t> a, c, b, d;
  int32_t registerBits =
      dst.hasInDim(kRegister) ? dst.getInDimSizeLog2(kRegister) : 0;
  for (int32_t i = 0; i < registerBits; ++i) {
    a.push_back(component(map, kRegister, i, kRegister));
    c.push_back(component(map, kRegister, i, kLane));
  }
  for (int32_t k = 0; k < threadBits; ++k) {
    StringRef in = k < plan.laneBits ? kLane : kWarp;
    int32_t bit = k < plan.laneBits ? k : k - plan.laneBits;
    b.push_back(component(map, in, bit, kRegister));
    d.push_back(component(map, in, bit, kLane));
  }

  // Provider-side selection needs M with B t = M(D t, warp of t). Q t =
  // (D t, warp) as a tid-shaped vector; an echelon of Q's columns, completed
  // to a basis of all tid vectors by unit vectors (on which M is 0), solves
  // for M one unit vector at a time. Where readers that want different
  // registers would read one provider, reading another lane that holds
  // copies of the provider's registers (src lane bits with a zero basis)
  // separates them.
  SmallVector<int32_t> copyLanes;
  for (int32_t i = 0, e = src.hasInDim(kLane) ? src.getInDimSizeLog2(kLane) : 0;
       i < e; ++i)
    if (llvm::all_of(src.getBasis(kLane, i), [](int32_t v) { return v == 0; }))
      copyLanes.push_back(int32_t(1) << i);
  Echelon echelon;
  SmallVector<int32_t> columnValues; // M of each echelon column
  bool providerSide = true;
  for (int32_t k = 0; k < threadBits && providerSide; ++k) {
    auto q = [&](int32_t lane) {
      uint64_t value = uint32_t(lane);
      if (k >= plan.laneBits)
        value |= uint64_t(1) << k;
      return value;
    };
    std::optional<uint64_t> combination = echelon.solve(q(d[k]));
    if (combination &&
        xorOfColumns<int32_t>(columnValues, *combination) != b[k]) {
      // Try the copies of the provider this reader would read.
      combination.reset();
      bool separated = false;
      for (uint64_t which = 1;
           which < (uint64_t(1) << copyLanes.size()) && !separated; ++which) {
        int32_t moved = d[k] ^ xorOfColumns<int32_t>(copyLanes, which);
        if (!echelon.solve(q(moved))) {
          d[k] = moved;
          separated = true;
        }
      }
      providerSide = separated;
    }
    if (!combination)
      echelon.add(q(d[k]), unsigned(columnValues.size()));
    columnValues.push_back(b[k]);
  }
  SmallVector<int32_t> m(threadBits, 0);
  if (providerSide) {
    for (int32_t u = 0; u < threadBits; ++u) {
      echelon.add(uint64_t(1) << u, unsigned(columnValues.size()));
      columnValues.push_back(0);
    }
    for (int32_t u = 0; u < threadBits; ++u)
      m[u] =
          xorOfColumns<int32_t>(columnValues, *echelon.solve(uint64_t(1) << u));
  }

  // Destination registers that read the same (register, lane) of the source
  // share their steps.
  MapVector<std::pair<int32_t, int32_t>, SmallVector<int32_t>> groups;
  for (int32_t r = 0, e = int32_t(1) << registerBits; r < e; ++r)
    groups[{xorOfColumns<int32_t>(a, uint32_t(r)),
            xorOfColumns<int32_t>(c, uint32_t(r))}]
        .push_back(r);

  ThreadLinear readLaneFromThread{0, d};
  if (providerSide) {
    ThreadLinear sendFromThread{0, m};
    for (auto &[key, destinations] : groups) {
      auto [srcRegister, srcLane] = key;
      ShuffleStep step;
      // The provider in lane s serves readers with D t = s ^ C r.
      step.send = sendFromThread;
      step.send.constant = srcRegister ^ sendFromThread(uint32_t(srcLane));
      step.readLane = readLaneFromThread;
      step.readLane.constant = srcLane;
      step.destinations = destinations;
      plan.steps.push_back(std::move(step));
    }
    return plan;
  }

  // Reader-side selection: one shuffle per value of B t.
  plan.selector = {0, b};
  SmallVector<int32_t> basis;
  Echelon image;
  for (int32_t v : b)
    if (v != 0 && image.add(uint32_t(v), unsigned(basis.size())))
      basis.push_back(v);
  for (auto &[key, destinations] : groups) {
    auto [srcRegister, srcLane] = key;
    for (uint64_t which = 0; which < (uint64_t(1) << basis.size()); ++which) {
      int32_t v = xorOfColumns<int32_t>(basis, which);
      ShuffleStep step;
      step.send = {srcRegister ^ v, SmallVector<int32_t>(threadBits, 0)};
      step.readLane = readLaneFromThread;
      step.readLane.constant = srcLane;
      step.selectorValue = v;
      step.destinations = destinations;
      plan.steps.push_back(std::move(step));
    }
  }
  return plan;
}

std::optional<WarpShufflePlan> cheaperWarpShuffle(const LinearLayout &src,
                                                  const LinearLayout &dst,
                                                  int32_t elementBits) {
  std::optional<WarpShufflePlan> plan = planWarpShuffle(src, dst);
  if (!plan)
    return std::nullopt;
  // Registers whose index has a bit of a zero basis are copies of lower
  // ones: only the others are stored.
  uint64_t copies = src.getZeroBasisMasks()[src.getInDimIndex(kRegister)];
  int64_t stores = 0;
  for (int32_t k = 0; k < src.getInDimSize(kRegister); ++k)
    stores += (uint64_t(k) & copies) == 0;
  // Shuffles and shared-memory accesses issue at about the same rate; each
  // barrier counts as a few instructions for the wait it adds.
  constexpr int64_t kBarrierCost = 4;
  int64_t shared = stores + dst.getInDimSize(kRegister) + 2 * kBarrierCost;
  if (plan->estimatedInstructions(elementBits) > shared)
    return std::nullopt;
  return plan;
}

} // namespace kiln::layout
