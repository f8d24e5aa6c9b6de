// Unit tests of the linear-layout algebra (compiler/layout/LinearLayout.h)
// and the named layouts built on it (compiler/layout/BlockedLayouts.h).
//
// Named layouts are checked against independent references: a brute-force,
// integer-arithmetic implementation of the blocked semantics, the 1-D
// formula the kiln_gpu lowering uses, the fragment formulas of the PTX ISA
// for mma.m16n8k{8,16,32,64}, and the byte-address swizzle of the hardware.
// The algebra is checked by its laws on random layouts, and the conversion
// planner against a brute-force search over every hardware index.

#include "compiler/layout/BlockedLayouts.h"
#include "compiler/layout/LinearLayout.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <random>
#include <set>

namespace kiln::layout {
namespace {

using InDim = LinearLayout::InDim;
using OutDim = LinearLayout::OutDim;
using Coords = std::vector<int32_t>;

Coords toCoords(llvm::ArrayRef<int32_t> v) {
  return Coords(v.begin(), v.end());
}

/// The output of positional input `in`, as a std::vector.
Coords at(const LinearLayout &l, std::vector<int32_t> in) {
  return toCoords(l.apply(llvm::ArrayRef<int32_t>(in)));
}

/// The output of a distributed layout (register, lane, warp, block).
Coords atHw(const LinearLayout &l, int32_t reg, int32_t lane, int32_t warp) {
  return at(l, {reg, lane, warp, 0});
}

/// A layout with random bases (coordinates below each output size).
LinearLayout randomLayout(std::mt19937 &rng,
                          std::vector<std::pair<std::string, int32_t>> ins,
                          std::vector<OutDim> outs) {
  llvm::SmallVector<InDim, 4> dims;
  for (auto &[name, size] : ins) {
    InDim dim{name, {}};
    for (int32_t s = 1; s < size; s *= 2) {
      LinearLayout::Vector basis;
      for (const OutDim &out : outs)
        basis.push_back(int32_t(rng() % uint32_t(out.size)));
      dim.bases.push_back(basis);
    }
    dims.push_back(dim);
  }
  return LinearLayout(dims, outs);
}

/// A random bijective layout between the given dimensions (equal total
/// sizes): random bases until they are independent.
LinearLayout randomInvertible(std::mt19937 &rng,
                              std::vector<std::pair<std::string, int32_t>> ins,
                              std::vector<OutDim> outs) {
  for (;;) {
    LinearLayout l = randomLayout(rng, ins, outs);
    if (l.isInvertible())
      return l;
  }
}

/// Every input of `l`, as positional coordinates.
std::vector<std::vector<int32_t>> allInputs(const LinearLayout &l) {
  std::vector<std::vector<int32_t>> result{{}};
  for (const InDim &in : l.getInDims()) {
    std::vector<std::vector<int32_t>> next;
    for (auto &prefix : result)
      for (int32_t v = 0; v < (1 << in.bases.size()); ++v) {
        auto extended = prefix;
        extended.push_back(v);
        next.push_back(extended);
      }
    result = next;
  }
  return result;
}

/// The two layouts compute the same function (same dimensions in the same
/// order assumed).
void expectSameMap(const LinearLayout &a, const LinearLayout &b) {
  ASSERT_EQ(a.getInDimNames(), b.getInDimNames());
  for (auto &in : allInputs(a))
    ASSERT_EQ(at(a, in), at(b, in));
}

//===----------------------------------------------------------------------===//
// Basics
//===----------------------------------------------------------------------===//

TEST(LinearLayoutTest, Identity1D) {
  LinearLayout l = LinearLayout::identity1D(8, "lane", "dim0");
  EXPECT_EQ(l.getInDimSize("lane"), 8);
  EXPECT_EQ(l.getOutDimSize("dim0"), 8);
  for (int32_t i = 0; i < 8; ++i)
    EXPECT_EQ(at(l, {i}), Coords{i});
  EXPECT_TRUE(l.isInvertible());
  EXPECT_EQ(l.toString(), "(lane=8) -> (dim0=8)\n  lane: (1) (2) (4)");
}

TEST(LinearLayoutTest, Zeros1D) {
  LinearLayout l = LinearLayout::zeros1D(4, "warp", "dim1");
  EXPECT_EQ(l.getInDimSize("warp"), 4);
  EXPECT_EQ(l.getOutDimSize("dim1"), 1);
  for (int32_t i = 0; i < 4; ++i)
    EXPECT_EQ(at(l, {i}), Coords{0});
  EXPECT_TRUE(l.isSurjective());
  EXPECT_FALSE(l.isInjective());
  EXPECT_TRUE(l.isTrivialOver({"warp"}));
  EXPECT_EQ(l.getZeroBasisMasks()[0], 0b11u);
  EXPECT_EQ(LinearLayout::zeros1D(4, "warp", "dim1", 16).getOutDimSize("dim1"),
            16);
}

TEST(LinearLayoutTest, HeaderExample) {
  // Four consecutive elements per lane: lane 3, register 2 holds 14.
  LinearLayout l = LinearLayout::identity1D(4, kRegister, "dim0") *
                   LinearLayout::identity1D(32, kLane, "dim0");
  EXPECT_EQ(l.toString(), "(register=4, lane=32) -> (dim0=128)\n"
                          "  register: (1) (2)\n"
                          "  lane: (4) (8) (16) (32) (64)");
  EXPECT_EQ(at(l, {2, 3}), Coords{14});
  auto named = l.apply({{kLane, 3}, {kRegister, 2}});
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0].first, "dim0");
  EXPECT_EQ(named[0].second, 14);
  EXPECT_EQ(l.applyFlat(2 | (3 << 2)), 14u);
}

TEST(LinearLayoutTest, ApplyIsXorOfBases) {
  std::mt19937 rng(1);
  for (int iter = 0; iter < 50; ++iter) {
    LinearLayout l = randomLayout(rng, {{"a", 8}, {"b", 4}, {"c", 2}},
                                  {{"x", 16}, {"y", 4}});
    for (auto &in : allInputs(l)) {
      Coords expected(2, 0);
      for (size_t d = 0; d < in.size(); ++d)
        for (int bit = 0; (1 << bit) < (1 << l.getInDims()[d].bases.size());
             ++bit)
          if (in[d] >> bit & 1)
            for (int k = 0; k < 2; ++k)
              expected[k] ^= l.getInDims()[d].bases[bit][k];
      EXPECT_EQ(at(l, in), expected);
      // The flat form agrees: inputs a + 8*(b + 4*c), outputs x + 16*y.
      uint64_t flatIn = in[0] | in[1] << 3 | in[2] << 5;
      EXPECT_EQ(l.applyFlat(flatIn), uint64_t(expected[0] | expected[1] << 4));
    }
  }
}

TEST(LinearLayoutTest, CreateValidates) {
  auto rejects = [](llvm::ArrayRef<InDim> ins, llvm::ArrayRef<OutDim> outs) {
    llvm::Expected<LinearLayout> l = LinearLayout::create(ins, outs);
    if (l)
      return false;
    llvm::consumeError(l.takeError());
    return true;
  };
  EXPECT_TRUE(rejects({}, {{"dim0", 3}}));                   // not 2^k
  EXPECT_TRUE(rejects({}, {{"dim0", 0}}));                   // not 2^k
  EXPECT_TRUE(rejects({{"a", {{4}}}}, {{"dim0", 4}}));       // out of range
  EXPECT_TRUE(rejects({{"a", {{1, 1}}}}, {{"dim0", 4}}));    // arity
  EXPECT_TRUE(rejects({{"a", {}}, {"a", {}}}, {}));          // duplicate in
  EXPECT_TRUE(rejects({}, {{"x", 2}, {"x", 2}}));            // duplicate out
  EXPECT_FALSE(rejects({{"a", {{3}, {0}}}}, {{"dim0", 4}})); // fine
  llvm::Expected<LinearLayout> ok =
      LinearLayout::create({{"a", {{3}, {0}}}}, {{"dim0", 4}});
  ASSERT_TRUE(bool(ok));
  EXPECT_EQ(at(*ok, {3}), Coords{3});
}

TEST(LinearLayoutTest, FromBasesPicksTightSizes) {
  LinearLayout l = LinearLayout::fromBases(
      {{"r", {{1, 0}, {4, 0}}}, {"l", {{0, 2}}}}, {"dim0", "dim1"});
  EXPECT_EQ(l.getOutDimSize("dim0"), 8);
  EXPECT_EQ(l.getOutDimSize("dim1"), 4);
  EXPECT_EQ(
      LinearLayout::fromBases({{"r", {{0}}}}, {"dim0"}).getOutDimSize("dim0"),
      1);
}

TEST(LinearLayoutTest, Accessors) {
  LinearLayout l({{"register", {{0, 1}, {0, 2}}}, {"lane", {{1, 0}}}},
                 {{"dim0", 2}, {"dim1", 4}});
  EXPECT_EQ(l.getInDimNames(),
            (llvm::SmallVector<std::string>{"register", "lane"}));
  EXPECT_EQ(l.getOutDimNames(),
            (llvm::SmallVector<std::string>{"dim0", "dim1"}));
  EXPECT_TRUE(l.hasInDim("lane"));
  EXPECT_FALSE(l.hasInDim("warp"));
  EXPECT_TRUE(l.hasOutDim("dim1"));
  EXPECT_EQ(l.getInDimIndex("lane"), 1u);
  EXPECT_EQ(l.getOutDimIndex("dim1"), 1u);
  EXPECT_EQ(l.getInDimSizeLog2("register"), 2);
  EXPECT_EQ(l.getOutDimSizeLog2("dim1"), 2);
  EXPECT_EQ(l.getTotalInDimSizeLog2(), 3);
  EXPECT_EQ(l.getTotalOutDimSize(), 8u);
  EXPECT_EQ(l.getTotalInDimSize(), 8u);
  EXPECT_EQ(toCoords(l.getBasis("register", 1)), (Coords{0, 2}));
  EXPECT_EQ(l.getBasis("lane", 0, "dim0"), 1);
  EXPECT_EQ(l.getRank(), 3);
}

TEST(LinearLayoutTest, EmptyLayout) {
  LinearLayout empty;
  EXPECT_EQ(empty.getTotalInDimSize(), 1u);
  EXPECT_TRUE(empty.isInvertible());
  EXPECT_EQ(empty.toString(), "() -> ()");
  EXPECT_EQ(empty, LinearLayout());
}

TEST(LinearLayoutTest, Equality) {
  LinearLayout a = LinearLayout::identity1D(4, "r", "x");
  EXPECT_EQ(a, LinearLayout::identity1D(4, "r", "x"));
  EXPECT_NE(a, LinearLayout::identity1D(4, "r", "y"));
  EXPECT_NE(a, LinearLayout::identity1D(4, "s", "x"));
  EXPECT_NE(a, LinearLayout::identity1D(8, "r", "x"));
  EXPECT_NE(a, LinearLayout::zeros1D(4, "r", "x", 4));
  // Same map, outputs in another order: not structurally equal.
  LinearLayout b = LinearLayout::identity1D(2, "r", "x") *
                   LinearLayout::identity1D(2, "r", "y");
  EXPECT_NE(b, b.transposeOuts({"y", "x"}));
  EXPECT_EQ(b, b.transposeOuts({"y", "x"}).transposeOuts({"x", "y"}));
}

//===----------------------------------------------------------------------===//
// Products
//===----------------------------------------------------------------------===//

TEST(LinearLayoutTest, ProductOfDisjointDims) {
  LinearLayout l = LinearLayout::identity1D(4, "register", "dim1") *
                   LinearLayout::identity1D(2, "lane", "dim0");
  EXPECT_EQ(l.toString(), "(register=4, lane=2) -> (dim1=4, dim0=2)\n"
                          "  register: (1, 0) (2, 0)\n"
                          "  lane: (0, 1)");
}

TEST(LinearLayoutTest, ProductCombinesSharedDims) {
  // Register bits: first from the left factor, then from the right one;
  // the right factor's coordinates along shared outputs are shifted above
  // the left factor's.
  LinearLayout l = LinearLayout::identity1D(2, "register", "dim1") *
                   LinearLayout::identity1D(4, "lane", "dim1") *
                   LinearLayout::identity1D(2, "register", "dim1");
  EXPECT_EQ(l.getOutDimSize("dim1"), 16);
  EXPECT_EQ(l.toString(), "(register=4, lane=4) -> (dim1=16)\n"
                          "  register: (1) (8)\n"
                          "  lane: (2) (4)");
  // A zero layout with output size 1 keeps the output's place but shifts
  // nothing.
  LinearLayout z = LinearLayout::identity1D(4, "lane", "dim0") *
                   LinearLayout::zeros1D(2, "warp", "dim0") *
                   LinearLayout::identity1D(2, "warp", "dim0");
  EXPECT_EQ(z.toString(), "(lane=4, warp=4) -> (dim0=8)\n"
                          "  lane: (1) (2)\n"
                          "  warp: (0) (4)");
}

TEST(LinearLayoutTest, ProductIsAssociativeWithUnit) {
  std::mt19937 rng(2);
  for (int iter = 0; iter < 200; ++iter) {
    LinearLayout a = randomLayout(rng, {{"r", 4}, {"l", 2}}, {{"x", 4}});
    LinearLayout b =
        randomLayout(rng, {{"l", 4}, {"w", 2}}, {{"y", 2}, {"x", 8}});
    LinearLayout c = randomLayout(rng, {{"w", 2}, {"r", 2}}, {{"x", 2}});
    EXPECT_EQ((a * b) * c, a * (b * c));
    EXPECT_EQ(LinearLayout() * a, a);
    EXPECT_EQ(a * LinearLayout(), a);
  }
}

TEST(LinearLayoutTest, ProductOfInvertiblesIsInvertible) {
  std::mt19937 rng(3);
  for (int iter = 0; iter < 50; ++iter) {
    LinearLayout a = randomInvertible(rng, {{"r", 8}}, {{"x", 8}});
    LinearLayout b =
        randomInvertible(rng, {{"r", 2}, {"l", 4}}, {{"x", 4}, {"y", 2}});
    EXPECT_TRUE((a * b).isInvertible());
  }
}

//===----------------------------------------------------------------------===//
// Composition and inversion
//===----------------------------------------------------------------------===//

TEST(LinearLayoutTest, ComposeKnownExample) {
  // Reverse the bits of a 3-bit index, then swap its two halves.
  LinearLayout reverse({{"i", {{4}, {2}, {1}}}}, {{"j", 8}});
  LinearLayout shift({{"j", {{1}, {2}, {0}}}}, {{"k", 4}});
  LinearLayout both = reverse.compose(shift);
  EXPECT_EQ(both.getInDimNames(), (llvm::SmallVector<std::string>{"i"}));
  EXPECT_EQ(both.getOutDimNames(), (llvm::SmallVector<std::string>{"k"}));
  for (int32_t i = 0; i < 8; ++i)
    EXPECT_EQ(at(both, {i}), at(shift, {at(reverse, {i})[0]}));
  EXPECT_EQ(both.toString(), "(i=8) -> (k=4)\n  i: (0) (2) (1)");
}

TEST(LinearLayoutTest, ComposeIsAssociative) {
  std::mt19937 rng(4);
  for (int iter = 0; iter < 100; ++iter) {
    LinearLayout a =
        randomLayout(rng, {{"r", 4}, {"l", 8}}, {{"x", 8}, {"y", 4}});
    LinearLayout b = randomLayout(rng, {{"y", 4}, {"x", 8}}, {{"u", 16}});
    LinearLayout c = randomLayout(rng, {{"u", 16}}, {{"v", 4}, {"w", 8}});
    EXPECT_EQ(a.compose(b).compose(c), a.compose(b.compose(c)));
    for (auto &in : allInputs(a)) {
      Coords mid = at(a, in);
      Coords viaB = at(b, {mid[1], mid[0]}); // b's inputs are (y, x)
      EXPECT_EQ(at(a.compose(b), in), viaB);
    }
  }
}

TEST(LinearLayoutTest, InvertKnownExample) {
  // A 2x4 tile: register -> column, lane -> row and (lane bit 1) column.
  LinearLayout l({{"register", {{0, 1}}}, {"lane", {{1, 0}, {0, 2}}}},
                 {{"dim0", 2}, {"dim1", 4}});
  std::optional<LinearLayout> inv = l.invert();
  ASSERT_TRUE(inv.has_value());
  EXPECT_EQ(inv->toString(), "(dim0=2, dim1=4) -> (register=2, lane=4)\n"
                             "  dim0: (0, 1)\n"
                             "  dim1: (1, 0) (0, 2)");
  // Element (1, 3) lives in register 1 of lane 3.
  EXPECT_EQ(at(*inv, {1, 3}), (Coords{1, 3}));
}

TEST(LinearLayoutTest, InvertLaws) {
  std::mt19937 rng(5);
  for (int iter = 0; iter < 200; ++iter) {
    LinearLayout l =
        randomInvertible(rng, {{"register", 4}, {"lane", 8}, {"warp", 2}},
                         {{"dim0", 16}, {"dim1", 4}});
    std::optional<LinearLayout> inv = l.invert();
    ASSERT_TRUE(inv.has_value());
    // invert(invert(L)) == L.
    std::optional<LinearLayout> back = inv->invert();
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, l);
    // L then L^-1 is the identity on L's inputs, and vice versa.
    for (auto &in : allInputs(l))
      EXPECT_EQ(at(l.compose(*inv), in), in);
    for (auto &out : allInputs(*inv))
      EXPECT_EQ(at(inv->compose(l), out), out);
    // The pseudo-inverse of an invertible layout is its inverse.
    EXPECT_EQ(*l.pseudoInvert(), *inv);
  }
}

TEST(LinearLayoutTest, InvertRejectsNonBijective) {
  // Broadcast (two lanes hold each element): not injective.
  LinearLayout dup({{"lane", {{1}, {0}}}}, {{"dim0", 2}});
  EXPECT_FALSE(dup.invert().has_value());
  EXPECT_TRUE(dup.pseudoInvert().has_value());
  // Half the tensor missing: not surjective; no pseudo-inverse either.
  LinearLayout partial({{"lane", {{1}}}}, {{"dim0", 4}});
  EXPECT_FALSE(partial.invert().has_value());
  EXPECT_FALSE(partial.pseudoInvert().has_value());
}

TEST(LinearLayoutTest, PseudoInvertPicksPivotPreimage) {
  std::mt19937 rng(6);
  int checked = 0;
  for (int iter = 0; iter < 400; ++iter) {
    LinearLayout l =
        randomLayout(rng, {{"register", 4}, {"lane", 8}, {"warp", 4}},
                     {{"dim0", 8}, {"dim1", 4}});
    if (!l.isSurjective()) {
      EXPECT_FALSE(l.pseudoInvert().has_value());
      continue;
    }
    ++checked;
    std::optional<LinearLayout> r = l.pseudoInvert();
    ASSERT_TRUE(r.has_value());
    llvm::SmallVector<uint64_t> free = l.getFreeVariableMasks();
    for (auto &y : allInputs(*r)) {
      Coords x = at(*r, y);
      EXPECT_EQ(at(l, x), y);
      for (size_t d = 0; d < x.size(); ++d)
        EXPECT_EQ(uint64_t(x[d]) & free[d], 0u);
    }
  }
  EXPECT_GT(checked, 50);
}

TEST(LinearLayoutTest, FactorThrough) {
  std::mt19937 rng(7);
  int solved = 0;
  for (int iter = 0; iter < 300; ++iter) {
    LinearLayout target = randomLayout(rng, {{"register", 4}, {"lane", 4}},
                                       {{"dim0", 4}, {"dim1", 4}});
    LinearLayout self =
        randomLayout(rng, {{"register", 2}, {"lane", 4}, {"warp", 2}},
                     {{"dim1", 4}, {"dim0", 4}});
    std::optional<LinearLayout> c = self.factorThrough(target);
    // Brute force: is every output of self an output of target?
    std::set<Coords> reach;
    for (auto &in : allInputs(target))
      reach.insert(at(target, in));
    bool covered = true;
    for (auto &in : allInputs(self)) {
      Coords out = at(self, in);
      covered &= reach.count({out[1], out[0]}) > 0;
    }
    ASSERT_EQ(c.has_value(), covered);
    if (!c)
      continue;
    ++solved;
    EXPECT_EQ(c->getInDimNames(), self.getInDimNames());
    EXPECT_EQ(c->getOutDimNames(), target.getInDimNames());
    for (auto &in : allInputs(self)) {
      Coords viaTarget = at(target, at(*c, in));
      Coords direct = at(self, in);
      EXPECT_EQ(viaTarget, (Coords{direct[1], direct[0]}));
    }
  }
  EXPECT_GT(solved, 30);
}

//===----------------------------------------------------------------------===//
// Reshaping, transposing, restricting
//===----------------------------------------------------------------------===//

TEST(LinearLayoutTest, TransposeInsAndOuts) {
  std::mt19937 rng(8);
  LinearLayout l =
      randomLayout(rng, {{"a", 4}, {"b", 2}, {"c", 8}}, {{"x", 4}, {"y", 8}});
  LinearLayout t = l.transposeIns({"c", "a", "b"}).transposeOuts({"y", "x"});
  EXPECT_EQ(t.getInDimNames(), (llvm::SmallVector<std::string>{"c", "a", "b"}));
  for (auto &in : allInputs(l)) {
    Coords out = at(l, in);
    EXPECT_EQ(at(t, {in[2], in[0], in[1]}), (Coords{out[1], out[0]}));
  }
  EXPECT_EQ(t.transposeIns({"a", "b", "c"}).transposeOuts({"x", "y"}), l);
}

TEST(LinearLayoutTest, ReshapeOutsKnownExample) {
  // 2 x 4 outputs (dim0 least significant in the flat index) viewed as 8.
  LinearLayout l({{"i", {{1, 0}, {0, 1}, {0, 2}}}}, {{"dim0", 2}, {"dim1", 4}});
  LinearLayout flat = l.reshapeOuts({{"flat", 8}});
  for (int32_t i = 0; i < 8; ++i) {
    Coords c = at(l, {i});
    EXPECT_EQ(at(flat, {i}), Coords{c[0] + 2 * c[1]});
  }
  LinearLayout back = flat.reshapeOuts({{"dim0", 2}, {"dim1", 4}});
  EXPECT_EQ(back, l);
  LinearLayout other = flat.reshapeOuts({{"p", 4}, {"q", 2}});
  for (int32_t i = 0; i < 8; ++i) {
    int32_t f = at(flat, {i})[0];
    EXPECT_EQ(at(other, {i}), (Coords{f % 4, f / 4}));
  }
}

TEST(LinearLayoutTest, ReshapeIns) {
  std::mt19937 rng(9);
  LinearLayout l = randomLayout(rng, {{"register", 4}, {"lane", 8}},
                                {{"dim0", 16}, {"dim1", 2}});
  LinearLayout t = l.reshapeIns({{"thread", 32}});
  for (int32_t r = 0; r < 4; ++r)
    for (int32_t lane = 0; lane < 8; ++lane)
      EXPECT_EQ(at(t, {r + 4 * lane}), at(l, {r, lane}));
  EXPECT_EQ(t.reshapeIns({{"register", 4}, {"lane", 8}}), l);
}

TEST(LinearLayoutTest, Sublayout) {
  LinearLayout l(
      {{"register", {{0, 1}}}, {"lane", {{1, 0}, {0, 2}}}, {"warp", {{2, 2}}}},
      {{"dim0", 4}, {"dim1", 4}});
  LinearLayout s = l.sublayout({"warp", "lane"}, {"dim1"});
  EXPECT_EQ(s.toString(), "(lane=4, warp=2) -> (dim1=4)\n"
                          "  lane: (0) (2)\n"
                          "  warp: (2)");
  EXPECT_TRUE(l.sublayout({"lane"}, {"dim0", "dim1"}).isInjective());
  EXPECT_TRUE(l.isTrivialOver({}));
  EXPECT_FALSE(l.isTrivialOver({"warp"}));
  EXPECT_TRUE(l.sublayout({"register"}, {"dim0"}).isTrivialOver({"register"}));
}

TEST(LinearLayoutTest, ResizeOutDimWrapsOrWidens) {
  LinearLayout l = LinearLayout::identity1D(16, "lane", "dim0");
  LinearLayout small = l.resizeOutDim("dim0", 4);
  for (int32_t i = 0; i < 16; ++i)
    EXPECT_EQ(at(small, {i}), Coords{i % 4});
  EXPECT_EQ(small.getZeroBasisMasks()[0], 0b1100u);
  LinearLayout large = l.resizeOutDim("dim0", 64);
  EXPECT_EQ(large.getOutDimSize("dim0"), 64);
  EXPECT_FALSE(large.isSurjective());
  EXPECT_TRUE(large.isInjective());
}

TEST(LinearLayoutTest, RemoveZeroBasesAndRename) {
  LinearLayout l({{"register", {{0}, {1}, {0}, {2}}}}, {{"dim0", 4}});
  LinearLayout r = l.removeZeroBases("register");
  EXPECT_EQ(r.toString(), "(register=4) -> (dim0=4)\n  register: (1) (2)");
  EXPECT_EQ(
      r.renameInDim("register", "reg").renameOutDim("dim0", "x").toString(),
      "(reg=4) -> (x=4)\n  reg: (1) (2)");
}

//===----------------------------------------------------------------------===//
// Properties
//===----------------------------------------------------------------------===//

TEST(LinearLayoutTest, InjectiveSurjectiveAgreeWithBruteForce) {
  std::mt19937 rng(10);
  for (int iter = 0; iter < 300; ++iter) {
    LinearLayout l =
        randomLayout(rng, {{"register", 2 << (iter % 3)}, {"lane", 4}},
                     {{"dim0", 4}, {"dim1", 1 << (iter % 4)}});
    std::map<Coords, int> count;
    for (auto &in : allInputs(l))
      ++count[at(l, in)];
    bool injective =
        llvm::all_of(count, [](auto &kv) { return kv.second == 1; });
    bool surjective = count.size() == l.getTotalOutDimSize();
    EXPECT_EQ(l.isInjective(), injective) << l.toString();
    EXPECT_EQ(l.isSurjective(), surjective) << l.toString();
    EXPECT_EQ(uint64_t(1) << l.getRank(), count.size());
  }
}

TEST(LinearLayoutTest, FreeVariablesCountDuplicates) {
  std::mt19937 rng(11);
  for (int iter = 0; iter < 300; ++iter) {
    LinearLayout l =
        randomLayout(rng, {{"register", 4}, {"lane", 8}, {"warp", 2}},
                     {{"dim0", 8}, {"dim1", 2}});
    llvm::SmallVector<uint64_t> free = l.getFreeVariableMasks();
    llvm::SmallVector<uint64_t> zero = l.getZeroBasisMasks();
    int numFree = 0;
    for (size_t d = 0; d < free.size(); ++d) {
      numFree += llvm::popcount(free[d]);
      EXPECT_EQ(zero[d] & ~free[d], 0u); // zero bases are free
      EXPECT_EQ(l.getFreeVariableMask(l.getInDims()[d].name), free[d]);
    }
    // Every reachable output has 2^numFree preimages, exactly one of them
    // with all free bits clear.
    std::map<Coords, std::pair<int, int>> preimages; // (all, with free bits 0)
    for (auto &in : allInputs(l)) {
      bool canonical = true;
      for (size_t d = 0; d < in.size(); ++d)
        canonical &= (uint64_t(in[d]) & free[d]) == 0;
      auto &[all, canon] = preimages[at(l, in)];
      ++all;
      canon += canonical;
    }
    for (auto &[out, counts] : preimages) {
      EXPECT_EQ(counts.first, 1 << numFree);
      EXPECT_EQ(counts.second, 1);
    }
  }
}

TEST(LinearLayoutTest, FreeVariablesKnownCase) {
  // Lane bit 0 duplicates register bit 0 (non-zero, but dependent); warp bit
  // 0 is a pure broadcast.
  LinearLayout l(
      {{"register", {{1}, {2}}}, {"lane", {{1}, {4}}}, {"warp", {{0}}}},
      {{"dim0", 8}});
  EXPECT_EQ(l.getFreeVariableMasks(), (llvm::SmallVector<uint64_t>{0, 1, 1}));
  EXPECT_EQ(l.getZeroBasisMasks(), (llvm::SmallVector<uint64_t>{0, 0, 1}));
}

TEST(LinearLayoutTest, Contiguity) {
  LinearLayout l({{"register", {{0, 1}, {0, 2}, {1, 0}, {0, 4}}}},
                 {{"dim0", 2}, {"dim1", 8}});
  EXPECT_EQ(l.getContiguity("register", "dim1"), 4);
  EXPECT_EQ(l.getContiguity("register", "dim0"), 1);
  EXPECT_EQ(l.getContiguity("lane", "dim0"), 1); // no such input: 1
  EXPECT_EQ(vectorWidth(l, "dim1"), 4);
  // A zero basis breaks contiguity.
  LinearLayout dup({{"register", {{1}, {0}, {2}}}}, {{"dim0", 4}});
  EXPECT_EQ(vectorWidth(dup, "dim0"), 2);
}

//===----------------------------------------------------------------------===//
// Blocked layouts
//===----------------------------------------------------------------------===//

struct BlockedParams {
  std::vector<int64_t> shape;
  std::vector<unsigned> spt, tpw, wpc, order;

  std::string str() const {
    auto list = [](auto &v) {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i)
        s += (i ? "," : "") + std::to_string(v[i]);
      return s + "]";
    };
    return "shape=" + list(shape) + " spt=" + list(spt) + " tpw=" + list(tpw) +
           " wpc=" + list(wpc) + " order=" + list(order);
  }
};

LinearLayout makeBlocked(const BlockedParams &p) {
  return blocked(p.shape, p.spt, p.tpw, p.wpc, p.order);
}

/// The blocked semantics in integer arithmetic: registers hold one chunk's
/// elements (dimensions in `order`), then one chunk per tile repetition
/// (dimensions in `order`); lane and warp ids split along `order`; the
/// position is taken modulo the tensor size.
struct BlockedReference {
  const BlockedParams &p;
  size_t rank() const { return p.shape.size(); }
  int64_t tile(size_t d) const {
    return int64_t(p.spt[d]) * p.tpw[d] * p.wpc[d];
  }
  int64_t reps(size_t d) const {
    return std::max<int64_t>(1, p.shape[d] / tile(d));
  }
  int64_t numRegisters() const {
    int64_t n = 1;
    for (size_t d = 0; d < rank(); ++d)
      n *= p.spt[d] * reps(d);
    return n;
  }
  int64_t numLanes() const {
    return std::accumulate(p.tpw.begin(), p.tpw.end(), int64_t(1),
                           std::multiplies<>());
  }
  int64_t numWarps() const {
    return std::accumulate(p.wpc.begin(), p.wpc.end(), int64_t(1),
                           std::multiplies<>());
  }
  /// Coordinates of (register, lane, warp); entries past the rank are 0.
  std::array<int32_t, 3> operator()(int64_t reg, int64_t lane,
                                    int64_t warp) const {
    int64_t laneId[3], warpId[3], elem[3], rep[3];
    for (unsigned d : p.order) {
      laneId[d] = lane % p.tpw[d];
      lane /= p.tpw[d];
      warpId[d] = warp % p.wpc[d];
      warp /= p.wpc[d];
      elem[d] = reg % p.spt[d];
      reg /= p.spt[d];
    }
    for (unsigned d : p.order) {
      rep[d] = reg % reps(d);
      reg /= reps(d);
    }
    std::array<int32_t, 3> c{};
    for (size_t d = 0; d < rank(); ++d)
      c[d] = int32_t((rep[d] * tile(d) + warpId[d] * p.tpw[d] * p.spt[d] +
                      laneId[d] * p.spt[d] + elem[d]) %
                     p.shape[d]);
    return c;
  }
};

void checkBlockedAgainstReference(const BlockedParams &p) {
  SCOPED_TRACE(p.str());
  LinearLayout l = makeBlocked(p);
  BlockedReference ref{p};
  ASSERT_EQ(l.getInDimNames(), (llvm::SmallVector<std::string>{
                                   "register", "lane", "warp", "block"}));
  ASSERT_EQ(l.getInDimSize(kRegister), ref.numRegisters());
  ASSERT_EQ(l.getInDimSize(kLane), ref.numLanes());
  ASSERT_EQ(l.getInDimSize(kWarp), ref.numWarps());
  ASSERT_EQ(l.getInDimSize(kBlock), 1);
  for (size_t d = 0; d < p.shape.size(); ++d)
    ASSERT_EQ(l.getOutDimSize(tensorDimName(d)), p.shape[d]);
  // The layout's output for every (register, lane, warp), computed as the
  // XOR of its outputs for the register, the lane and the warp alone (apply
  // is linear; ApplyIsXorOfBases checks that) to keep millions of
  // comparisons fast in unoptimized builds.
  size_t rank = p.shape.size();
  auto table = [&](int64_t n, int which) {
    std::vector<std::array<int32_t, 3>> t(n);
    for (int64_t i = 0; i < n; ++i) {
      int32_t in[4] = {0, 0, 0, 0};
      in[which] = int32_t(i);
      LinearLayout::Vector out = l.apply(llvm::ArrayRef<int32_t>(in));
      t[i] = {};
      std::copy(out.begin(), out.end(), t[i].begin());
    }
    return t;
  };
  auto regs = table(ref.numRegisters(), 0), lanes = table(ref.numLanes(), 1),
       warps = table(ref.numWarps(), 2);
  for (int64_t w = 0; w < ref.numWarps(); ++w)
    for (int64_t lane = 0; lane < ref.numLanes(); ++lane)
      for (int64_t r = 0; r < ref.numRegisters(); ++r) {
        std::array<int32_t, 3> expected = ref(r, lane, w);
        for (size_t d = 0; d < rank; ++d)
          if ((regs[r][d] ^ lanes[lane][d] ^ warps[w][d]) != expected[d])
            FAIL() << "register " << r << " lane " << lane << " warp " << w;
      }
  // Every element is held somewhere; duplicates only where the tensor is
  // smaller than the tile or than a chunk.
  EXPECT_TRUE(l.isSurjective());
  bool fits = true;
  for (size_t d = 0; d < p.shape.size(); ++d)
    fits &= p.shape[d] >= ref.tile(d);
  if (fits)
    EXPECT_TRUE(l.isInjective());
}

/// All ways to write 2^log2 as an ordered product of `rank` powers of two.
std::vector<std::vector<unsigned>> splits(unsigned log2, size_t rank) {
  if (rank == 1)
    return {{1u << log2}};
  std::vector<std::vector<unsigned>> result;
  for (unsigned first = 0; first <= log2; ++first)
    for (auto &rest : splits(log2 - first, rank - 1)) {
      std::vector<unsigned> s{1u << first};
      s.insert(s.end(), rest.begin(), rest.end());
      result.push_back(s);
    }
  return result;
}

TEST(BlockedLayoutTest, OneDimensionalExhaustive) {
  for (int64_t shape : {1, 2, 8, 32, 64, 128, 512, 2048})
    for (unsigned spt : {1, 2, 4, 8})
      for (unsigned tpw : {8, 32})
        for (unsigned wpc : {1, 2, 4, 8})
          checkBlockedAgainstReference({{shape}, {spt}, {tpw}, {wpc}, {0}});
}

TEST(BlockedLayoutTest, TwoDimensionalExhaustive) {
  // Every split of 32 lanes and of 4 warps over two dimensions, chunks of 1
  // or 4 elements, both orders, tensors from smaller than one chunk to
  // several tiles along both dimensions (a tile has 128 or 512 elements).
  const int64_t sizes[] = {1, 2, 8, 32, 128, 512};
  auto spts = splits(2, 2);
  spts.push_back({1, 1});
  for (auto &tpw : splits(5, 2))
    for (auto &wpc : splits(2, 2))
      for (auto &spt : spts)
        for (int64_t s0 : sizes)
          for (int64_t s1 : sizes) {
            if (s0 * s1 > 4096)
              continue;
            for (auto order :
                 {std::vector<unsigned>{0, 1}, std::vector<unsigned>{1, 0}})
              checkBlockedAgainstReference({{s0, s1}, spt, tpw, wpc, order});
          }
}

TEST(BlockedLayoutTest, ThreeDimensionalSampled) {
  std::mt19937 rng(12);
  auto tpwSplits = splits(5, 3);
  auto wpcSplits = splits(3, 3);
  for (int iter = 0; iter < 1000; ++iter) {
    BlockedParams p;
    for (int d = 0; d < 3; ++d) {
      p.shape.push_back(int64_t(1) << (rng() % 6));
      p.spt.push_back(1u << (rng() % 3));
    }
    p.tpw = tpwSplits[rng() % tpwSplits.size()];
    p.wpc = wpcSplits[rng() % wpcSplits.size()];
    p.order = {0, 1, 2};
    for (int k = 0; k < int(rng() % 6); ++k)
      std::next_permutation(p.order.begin(), p.order.end());
    checkBlockedAgainstReference(p);
  }
}

TEST(BlockedLayoutTest, EveryOrderOfRankThree) {
  std::vector<unsigned> order{0, 1, 2};
  do {
    checkBlockedAgainstReference(
        {{4, 16, 8}, {1, 2, 4}, {2, 4, 4}, {2, 1, 2}, order});
    checkBlockedAgainstReference(
        {{2, 2, 64}, {2, 1, 2}, {4, 2, 4}, {1, 2, 2}, order});
  } while (std::next_permutation(order.begin(), order.end()));
}

TEST(BlockedLayoutTest, MatchesTheOneDimensionalLowering) {
  // compiler/conversion/LoweringUtils.cpp: element k of thread tid is
  // (k / S) * tile + tid * S + k % S, masked when the tile is larger.
  for (int64_t size : {4, 64, 128, 256, 1024, 4096})
    for (unsigned S : {1, 2, 4, 8})
      for (unsigned warps : {1, 4, 8}) {
        LinearLayout l = blocked({size}, {S}, {32}, {warps}, {0});
        int64_t tile = int64_t(S) * 32 * warps;
        int64_t perThread = S * std::max<int64_t>(1, size / tile);
        ASSERT_EQ(l.getInDimSize(kRegister), perThread);
        for (int64_t tid = 0; tid < 32 * warps; ++tid)
          for (int64_t k = 0; k < perThread; ++k) {
            int64_t index = (k / S) * tile + tid * S + k % S;
            if (tile > size)
              index &= size - 1;
            ASSERT_EQ(atHw(l, int32_t(k), int32_t(tid % 32), int32_t(tid / 32)),
                      Coords{int32_t(index)});
          }
      }
}

TEST(BlockedLayoutTest, KnownLayout) {
  // 16 x 16 with 2x2 per thread... printed to show the structure.
  LinearLayout l = blocked({16, 16}, {2, 2}, {4, 8}, {2, 1}, {1, 0});
  EXPECT_EQ(l.toString(),
            "(register=4, lane=32, warp=2, block=1) -> (dim0=16, dim1=16)\n"
            "  register: (0, 1) (1, 0)\n"
            "  lane: (0, 2) (0, 4) (0, 8) (2, 0) (4, 0)\n"
            "  warp: (8, 0)\n"
            "  block: -");
  // Tensor smaller than the tile: 8 x 16 -> warp 1 duplicates warp 0.
  LinearLayout small = blocked({8, 16}, {2, 2}, {4, 8}, {2, 1}, {1, 0});
  EXPECT_EQ(small.getFreeVariableMask(kWarp), 1u);
  EXPECT_TRUE(
      small.sublayout({"warp"}, {"dim0", "dim1"}).isTrivialOver({"warp"}));
  // Larger: 32 x 32 -> two repetitions along each dimension, dim1 first.
  LinearLayout large = blocked({32, 32}, {2, 2}, {4, 8}, {2, 1}, {1, 0});
  EXPECT_EQ(large.getInDimSize(kRegister), 16);
  EXPECT_EQ(toCoords(large.getBasis(kRegister, 2)), (Coords{0, 16}));
  EXPECT_EQ(toCoords(large.getBasis(kRegister, 3)), (Coords{16, 0}));
}

TEST(BlockedLayoutTest, VectorWidth) {
  EXPECT_EQ(
      vectorWidth(blocked({64, 64}, {1, 4}, {4, 8}, {4, 1}, {1, 0}), "dim1"),
      4);
  EXPECT_EQ(
      vectorWidth(blocked({64, 64}, {1, 4}, {4, 8}, {4, 1}, {1, 0}), "dim0"),
      1);
  // The tensor is narrower than a chunk: only 2 distinct contiguous elements.
  EXPECT_EQ(
      vectorWidth(blocked({64, 2}, {1, 4}, {32, 1}, {2, 1}, {1, 0}), "dim1"),
      2);
  EXPECT_EQ(
      vectorWidth(blocked({64, 64}, {4, 1}, {8, 4}, {1, 4}, {0, 1}), "dim0"),
      4);
  // One thread, no lanes: tile repetitions continue the run.
  EXPECT_EQ(vectorWidth(blocked({64}, {4}, {1}, {1}, {0}), "dim0"), 64);
  // 8 per thread, but the second half of the chunk order is along dim0.
  EXPECT_EQ(
      vectorWidth(blocked({64, 64}, {2, 4}, {8, 4}, {1, 1}, {1, 0}), "dim1"),
      4);
}

TEST(BlockedLayoutTest, BroadcastBits) {
  // 16 elements, 4 warps of 32 lanes: lane bit 4 and both warp bits hold
  // copies.
  LinearLayout l = blocked({16}, {1}, {32}, {4}, {0});
  EXPECT_EQ(l.getZeroBasisMasks(),
            (llvm::SmallVector<uint64_t>{0, 0b10000, 0b11, 0}));
  EXPECT_EQ(l.getFreeVariableMasks(),
            (llvm::SmallVector<uint64_t>{0, 0b10000, 0b11, 0}));
  // sizePerThread larger than the tensor: registers duplicate.
  LinearLayout r = blocked({2}, {4}, {32}, {1}, {0});
  EXPECT_EQ(r.getZeroBasisMasks()[0], 0b10u);
  EXPECT_EQ(r.getFreeVariableMasks()[1], 0b11111u); // every lane: copies
  // Nothing duplicated when the tensor covers the tile.
  EXPECT_EQ(blocked({256}, {2}, {32}, {4}, {0}).getFreeVariableMasks(),
            (llvm::SmallVector<uint64_t>{0, 0, 0, 0}));
}

//===----------------------------------------------------------------------===//
// Slice layouts
//===----------------------------------------------------------------------===//

TEST(SliceLayoutTest, KnownCase) {
  // Rows of 32 split over 4 lanes x 4 registers x 2 repetitions; reducing
  // along dim1 leaves one register and lanes 0-1 bits broadcast.
  LinearLayout parent = blocked({32, 32}, {1, 4}, {8, 4}, {4, 1}, {1, 0});
  LinearLayout s = slice(parent, 1);
  EXPECT_EQ(s.toString(),
            "(register=1, lane=32, warp=4, block=1) -> (dim0=32)\n"
            "  register: -\n"
            "  lane: (0) (0) (1) (2) (4)\n"
            "  warp: (8) (16)\n"
            "  block: -");
  EXPECT_EQ(s.getFreeVariableMask(kLane), 0b11u);
  // Reducing along dim0 instead renumbers dim1 as dim0.
  LinearLayout s0 = slice(parent, 0);
  EXPECT_EQ(s0.getOutDimNames(), (llvm::SmallVector<std::string>{"dim0"}));
  EXPECT_EQ(s0.getInDimSize(kRegister), 8);
  EXPECT_EQ(s0.getFreeVariableMask(kWarp), 0b11u);
  EXPECT_EQ(s0.getFreeVariableMask(kLane), 0b11100u);
}

TEST(SliceLayoutTest, ProjectsTheParent) {
  // For random blocked parents: each slice element is the parent's element
  // with `dim` dropped, at the parent register obtained by inserting zero
  // bits where register bits were removed; and each thread holds exactly
  // the projections of its parent elements.
  std::mt19937 rng(13);
  auto tpwSplits = splits(5, 3);
  auto wpcSplits = splits(2, 3);
  for (int iter = 0; iter < 300; ++iter) {
    BlockedParams p;
    for (int d = 0; d < 3; ++d) {
      p.shape.push_back(int64_t(1) << (rng() % 5));
      p.spt.push_back(1u << (rng() % 2));
    }
    p.tpw = tpwSplits[rng() % tpwSplits.size()];
    p.wpc = wpcSplits[rng() % wpcSplits.size()];
    p.order = {2, 1, 0};
    for (int k = 0; k < int(rng() % 6); ++k)
      std::next_permutation(p.order.begin(), p.order.end());
    LinearLayout parent = makeBlocked(p);
    unsigned dim = rng() % 3;
    SCOPED_TRACE(p.str() + " dim=" + std::to_string(dim));
    LinearLayout s = slice(parent, dim);
    ASSERT_EQ(s.getOutDims().size(), 2u);
    // Which parent register bits survived.
    std::vector<int> keptBits;
    for (int bit = 0; bit < parent.getInDimSizeLog2(kRegister); ++bit) {
      auto b = parent.getBasis(kRegister, bit);
      bool onlyDim = b[dim] != 0;
      for (unsigned d = 0; d < 3; ++d)
        onlyDim &= d == dim || b[d] == 0;
      if (!onlyDim)
        keptBits.push_back(bit);
    }
    ASSERT_EQ(s.getInDimSizeLog2(kRegister), int(keptBits.size()));
    for (int32_t w = 0; w < parent.getInDimSize(kWarp); ++w)
      for (int32_t lane = 0; lane < 32; ++lane) {
        std::set<Coords> parentSet, sliceSet;
        for (int32_t r = 0; r < parent.getInDimSize(kRegister); ++r) {
          Coords c = atHw(parent, r, lane, w);
          c.erase(c.begin() + dim);
          parentSet.insert(c);
        }
        for (int32_t r = 0; r < s.getInDimSize(kRegister); ++r) {
          int32_t parentReg = 0;
          for (size_t i = 0; i < keptBits.size(); ++i)
            if (r >> i & 1)
              parentReg |= 1 << keptBits[i];
          Coords c = atHw(parent, parentReg, lane, w);
          c.erase(c.begin() + dim);
          ASSERT_EQ(atHw(s, r, lane, w), c);
          sliceSet.insert(c);
        }
        ASSERT_EQ(sliceSet, parentSet);
      }
  }
}

//===----------------------------------------------------------------------===//
// MMA v2 layouts, against the PTX ISA's fragment formulas
//===----------------------------------------------------------------------===//

// PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type",
// accumulators C/D (f32): groupID = lane >> 2, threadID_in_group = lane % 4,
//   row = groupID for c0, c1; groupID + 8 for c2, c3
//   col = threadID_in_group * 2 + (i & 1)
Coords ptxAccumulator(int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  return {i < 2 ? g : g + 8, t * 2 + (i & 1)};
}

TEST(MmaLayoutTest, AccumulatorOneWarpMatchesPtx) {
  LinearLayout l = mmaV2({16, 8}, {1, 1});
  ASSERT_EQ(l.getInDimSize(kRegister), 4);
  ASSERT_EQ(l.getInDimSize(kWarp), 1);
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(atHw(l, i, lane, 0), ptxAccumulator(lane, i))
          << "lane " << lane << " c" << i;
  EXPECT_TRUE(l.isInvertible());
}

TEST(MmaLayoutTest, AccumulatorHandWorkedLanes) {
  // Lane 5: groupID 1, threadID_in_group 1.
  LinearLayout l = mmaV2({16, 8}, {1, 1});
  EXPECT_EQ(atHw(l, 0, 5, 0), (Coords{1, 2}));
  EXPECT_EQ(atHw(l, 1, 5, 0), (Coords{1, 3}));
  EXPECT_EQ(atHw(l, 2, 5, 0), (Coords{9, 2}));
  EXPECT_EQ(atHw(l, 3, 5, 0), (Coords{9, 3}));
  // Lane 31: groupID 7, threadID_in_group 3.
  EXPECT_EQ(atHw(l, 0, 31, 0), (Coords{7, 6}));
  EXPECT_EQ(atHw(l, 3, 31, 0), (Coords{15, 7}));
}

TEST(MmaLayoutTest, AccumulatorWarpsAndRepetitions) {
  // 64 x 32 with 2 x 2 warps: warp w takes tile (w / 2, w % 2); the 32 x 16
  // warp tile repeats twice along N (register bit 2), then twice along M
  // (register bit 3).
  LinearLayout l = mmaV2({64, 32}, {2, 2});
  ASSERT_EQ(l.getInDimSize(kRegister), 16);
  ASSERT_EQ(l.getInDimSize(kWarp), 4);
  for (int w = 0; w < 4; ++w)
    for (int lane = 0; lane < 32; ++lane)
      for (int rm = 0; rm < 2; ++rm)
        for (int rn = 0; rn < 2; ++rn)
          for (int i = 0; i < 4; ++i) {
            Coords inTile = ptxAccumulator(lane, i);
            Coords expected{rm * 32 + (w / 2) * 16 + inTile[0],
                            rn * 16 + (w % 2) * 8 + inTile[1]};
            EXPECT_EQ(atHw(l, i + 4 * rn + 8 * rm, lane, w), expected);
          }
  EXPECT_TRUE(l.isInvertible());
  EXPECT_EQ(vectorWidth(l, "dim1"), 2);
}

TEST(MmaLayoutTest, WgmmaWarpgroupsAlongN) {
  // 128 x 256 with 4 warps along M and two warpgroups along N, 128 columns
  // each: warp w takes rows 16 (w % 4) of each m64 tile and columns
  // 128 (w / 4); its fragment repeats along N over those columns (register
  // bits 2-5), then over the second m64 tile (register bit 6).
  LinearLayout l = wgmmaSplitN({128, 256}, {4, 2}, 128);
  ASSERT_EQ(l.getInDimSize(kRegister), 128);
  ASSERT_EQ(l.getInDimSize(kWarp), 8);
  for (int w = 0; w < 8; ++w)
    for (int lane = 0; lane < 32; ++lane)
      for (int rm = 0; rm < 2; ++rm)
        for (int rn = 0; rn < 16; ++rn)
          for (int i = 0; i < 4; ++i) {
            Coords inTile = ptxAccumulator(lane, i);
            Coords expected{rm * 64 + (w % 4) * 16 + inTile[0],
                            (w / 4) * 128 + rn * 8 + inTile[1]};
            EXPECT_EQ(atHw(l, i + 4 * rn + 64 * rm, lane, w), expected)
                << "warp " << w << " lane " << lane << " c" << i;
          }
  EXPECT_TRUE(l.isInvertible());
  // One warpgroup along N: the mma.sync layout with warps along M.
  EXPECT_EQ(wgmmaSplitN({128, 64}, {4, 1}, 64), mmaV2({128, 64}, {4, 1}));
}

TEST(MmaLayoutTest, AFragmentsInRegisters) {
  // Attention's p in the scores' layout (64 rows, all 8 warps along M, the
  // second warpgroup a copy of the first) holds the A fragments of p @ v
  // with its warpgroups along N: both read all 64 rows.
  EXPECT_TRUE(holdsAFragments(mmaV2({64, 64}, {8, 1}),
                              wgmmaSplitN({64, 512}, {4, 2}, 256)));
  // And of the one layout of 128-row attention.
  EXPECT_TRUE(
      holdsAFragments(mmaV2({128, 64}, {8, 1}), mmaV2({128, 128}, {8, 1})));
  EXPECT_TRUE(
      holdsAFragments(mmaV2({128, 64}, {4, 1}), mmaV2({128, 128}, {4, 1})));
  // Not where p's warpgroups hold different columns of it (p in p @ v's
  // own layout), nor with warps across its columns, nor with other warps.
  EXPECT_FALSE(holdsAFragments(wgmmaSplitN({64, 64}, {4, 2}, 32),
                               wgmmaSplitN({64, 512}, {4, 2}, 256)));
  EXPECT_FALSE(
      holdsAFragments(mmaV2({64, 64}, {4, 2}), mmaV2({64, 128}, {4, 2})));
  EXPECT_FALSE(
      holdsAFragments(mmaV2({128, 64}, {8, 1}), mmaV2({128, 128}, {4, 1})));
  // Not a blocked tile, nor a K that is not whole fragments.
  EXPECT_FALSE(
      holdsAFragments(blocked({64, 64}, {1, 8}, {4, 8}, {8, 1}, {1, 0}),
                      wgmmaSplitN({64, 512}, {4, 2}, 256)));
  EXPECT_FALSE(holdsAFragments(mmaV2({64, 8}, {8, 1}),
                               wgmmaSplitN({64, 512}, {4, 2}, 256)));
}

TEST(MmaLayoutTest, BatchedAccumulatorWarpsAlongBatchFirst) {
  // 4 x 32 x 16 with [2, 2, 1] warps: warp w takes batch w / 2 and rows
  // 16 (w % 2) of it; each batch is the 2-D accumulator, the warps' tile
  // repeats along N (register bit 2), then the batch (register bit 3).
  LinearLayout l = mmaV2({4, 32, 16}, {2, 2, 1});
  ASSERT_EQ(l.getInDimSize(kRegister), 16);
  ASSERT_EQ(l.getInDimSize(kWarp), 4);
  for (int w = 0; w < 4; ++w)
    for (int lane = 0; lane < 32; ++lane)
      for (int rb = 0; rb < 2; ++rb)
        for (int rn = 0; rn < 2; ++rn)
          for (int i = 0; i < 4; ++i) {
            Coords inTile = ptxAccumulator(lane, i);
            Coords expected{rb * 2 + w / 2, (w % 2) * 16 + inTile[0],
                            rn * 8 + inTile[1]};
            EXPECT_EQ(atHw(l, i + 4 * rn + 8 * rb, lane, w), expected)
                << "warp " << w << " lane " << lane << " c" << i;
          }
  EXPECT_TRUE(l.isInvertible());
}

// Operand A (M x K) per the PTX ISA, for each kWidth: the fragment formulas
// of m16n8k8 (.tf32), m16n8k16 (.f16), m16n8k32 (.s8) and m16n8k64 (.s4).
Coords ptxOperandA(unsigned kWidth, int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  switch (kWidth) {
  case 1: // row = g for a0, a2; g + 8 for a1, a3. col = t for a0, a1; t + 4.
    return {(i == 0 || i == 2) ? g : g + 8, i < 2 ? t : t + 4};
  case 2: // row = g for i < 2 || 4 <= i < 6, else g + 8;
          // col = 2t + (i & 1), + 8 for i >= 4.
    return {(i < 2 || (i >= 4 && i < 6)) ? g : g + 8,
            t * 2 + (i & 1) + (i >= 4 ? 8 : 0)};
  case 4: // row = g for i < 4 || 8 <= i < 12, else g + 8;
          // col = 4t + (i & 3), + 16 for i >= 8.
    return {(i < 4 || (i >= 8 && i < 12)) ? g : g + 8,
            t * 4 + (i & 3) + (i >= 8 ? 16 : 0)};
  case 8: // row = g for i < 8 || 16 <= i < 24, else g + 8;
          // col = 8t + (i & 7), + 32 for i >= 16.
    return {(i < 8 || (i >= 16 && i < 24)) ? g : g + 8,
            t * 8 + (i & 7) + (i >= 16 ? 32 : 0)};
  }
  return {};
}

// Operand B (K x N): row = kWidth * t + (i % kWidth), + 4 * kWidth for the
// second half of the fragment; col = g (all four instruction shapes).
Coords ptxOperandB(unsigned kWidth, int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  switch (kWidth) {
  case 1: // row = t for b0, t + 4 for b1.
    return {i == 0 ? t : t + 4, g};
  case 2: // row = 2t + (i & 1), + 8 for i >= 2.
    return {t * 2 + (i & 1) + (i >= 2 ? 8 : 0), g};
  case 4: // row = 4t + (i & 3), + 16 for i >= 4.
    return {t * 4 + (i & 3) + (i >= 4 ? 16 : 0), g};
  case 8: // row = 8t + (i & 7), + 32 for i >= 8.
    return {t * 8 + (i & 7) + (i >= 8 ? 32 : 0), g};
  }
  return {};
}

TEST(MmaLayoutTest, OperandsOneWarpMatchPtx) {
  for (unsigned kWidth : {1, 2, 4, 8}) {
    SCOPED_TRACE("kWidth " + std::to_string(kWidth));
    int64_t k = 8 * kWidth;
    LinearLayout a = dotOperandMmaV2({16, k}, 0, {1, 1}, kWidth);
    LinearLayout b = dotOperandMmaV2({k, 8}, 1, {1, 1}, kWidth);
    ASSERT_EQ(a.getInDimSize(kRegister), int32_t(4 * kWidth));
    ASSERT_EQ(b.getInDimSize(kRegister), int32_t(2 * kWidth));
    for (int lane = 0; lane < 32; ++lane) {
      for (int i = 0; i < int(4 * kWidth); ++i)
        EXPECT_EQ(atHw(a, i, lane, 0), ptxOperandA(kWidth, lane, i))
            << "A lane " << lane << " a" << i;
      for (int i = 0; i < int(2 * kWidth); ++i)
        EXPECT_EQ(atHw(b, i, lane, 0), ptxOperandB(kWidth, lane, i))
            << "B lane " << lane << " b" << i;
    }
    EXPECT_TRUE(a.isInvertible());
    EXPECT_TRUE(b.isInvertible());
    EXPECT_EQ(vectorWidth(a, "dim1"), int32_t(kWidth));
    EXPECT_EQ(vectorWidth(b, "dim0"), int32_t(kWidth));
  }
}

TEST(MmaLayoutTest, OperandsHandWorkedF16) {
  // m16n8k16 .f16, lane 6: groupID 1, threadID_in_group 2.
  LinearLayout a = dotOperandMmaV2({16, 16}, 0, {1, 1}, 2);
  EXPECT_EQ(atHw(a, 0, 6, 0), (Coords{1, 4}));  // a0
  EXPECT_EQ(atHw(a, 1, 6, 0), (Coords{1, 5}));  // a1
  EXPECT_EQ(atHw(a, 2, 6, 0), (Coords{9, 4}));  // a2
  EXPECT_EQ(atHw(a, 5, 6, 0), (Coords{1, 13})); // a5
  EXPECT_EQ(atHw(a, 7, 6, 0), (Coords{9, 13})); // a7
  LinearLayout b = dotOperandMmaV2({16, 8}, 1, {1, 1}, 2);
  EXPECT_EQ(atHw(b, 0, 6, 0), (Coords{4, 1}));  // b0
  EXPECT_EQ(atHw(b, 3, 6, 0), (Coords{13, 1})); // b3
}

TEST(MmaLayoutTest, OperandWarpsAndRepetitions) {
  // 2 x 2 warps. A: 64 x 32, K repetitions first; warps of one warp row
  // (w / 2) hold the same data.
  LinearLayout a = dotOperandMmaV2({64, 32}, 0, {2, 2}, 2);
  ASSERT_EQ(a.getInDimSize(kRegister), 8 * 2 * 2);
  for (int w = 0; w < 4; ++w)
    for (int lane = 0; lane < 32; ++lane)
      for (int rm = 0; rm < 2; ++rm)
        for (int rk = 0; rk < 2; ++rk)
          for (int i = 0; i < 8; ++i) {
            Coords inTile = ptxOperandA(2, lane, i);
            Coords expected{rm * 32 + (w / 2) * 16 + inTile[0],
                            rk * 16 + inTile[1]};
            EXPECT_EQ(atHw(a, i + 8 * rk + 16 * rm, lane, w), expected);
          }
  EXPECT_EQ(a.getFreeVariableMask(kWarp), 0b01u);
  // B: 32 x 32, K repetitions first; warps of one warp column (w % 2) hold
  // the same data.
  LinearLayout b = dotOperandMmaV2({32, 32}, 1, {2, 2}, 2);
  ASSERT_EQ(b.getInDimSize(kRegister), 4 * 2 * 2);
  for (int w = 0; w < 4; ++w)
    for (int lane = 0; lane < 32; ++lane)
      for (int rn = 0; rn < 2; ++rn)
        for (int rk = 0; rk < 2; ++rk)
          for (int i = 0; i < 4; ++i) {
            Coords inTile = ptxOperandB(2, lane, i);
            Coords expected{rk * 16 + inTile[0],
                            rn * 16 + (w % 2) * 8 + inTile[1]};
            EXPECT_EQ(atHw(b, i + 4 * rk + 8 * rn, lane, w), expected);
          }
  EXPECT_EQ(b.getFreeVariableMask(kWarp), 0b10u);
}

TEST(MmaLayoutTest, AccumulatorFeedsOperandAInRegisters) {
  // The f16 accumulator of one matmul is, register for register, operand A
  // of the next (the flash-attention trick): no conversion needed.
  for (auto warps :
       {std::vector<unsigned>{1, 1}, std::vector<unsigned>{4, 1}}) {
    int64_t m = 16 * warps[0];
    LinearLayout acc = mmaV2({m, 64}, warps);
    LinearLayout opA = dotOperandMmaV2({m, 64}, 0, warps, 2);
    std::optional<ConversionPlan> plan = planConversion(acc, opA);
    ASSERT_TRUE(plan.has_value());
    EXPECT_EQ(plan->kind, ConversionKind::NoOp);
  }
}

//===----------------------------------------------------------------------===//
// Shared-memory layouts
//===----------------------------------------------------------------------===//

TEST(SharedLayoutTest, SwizzledHandWorked) {
  // 8 x 8, vec 2, perPhase 1, maxPhase 4: row r XORs columns with (r % 4) * 2.
  LinearLayout l = swizzledShared({8, 8}, 2, 1, 4, {1, 0});
  EXPECT_EQ(at(l, {10}), (Coords{1, 0})); // (1, 0) is stored at 8 + (0 ^ 2)
  EXPECT_EQ(at(l, {27}), (Coords{3, 5})); // (3, 5) at 24 + (5 ^ 6)
  EXPECT_EQ(at(l, {43}), (Coords{5, 1})); // (5, 1) at 40 + (1 ^ 2)
  EXPECT_EQ(l.toString(),
            "(offset=64) -> (dim0=8, dim1=8)\n"
            "  offset: (0, 1) (0, 2) (0, 4) (1, 2) (2, 4) (4, 0)");
  // No swizzling: plain row-major.
  LinearLayout plain = swizzledShared({4, 8}, 1, 1, 1, {1, 0});
  for (int32_t o = 0; o < 32; ++o)
    EXPECT_EQ(at(plain, {o}), (Coords{o / 8, o % 8}));
}

TEST(SharedLayoutTest, SwizzledMatchesFormula) {
  for (auto shape : {std::vector<int64_t>{8, 8}, std::vector<int64_t>{32, 16},
                     std::vector<int64_t>{4, 64}, std::vector<int64_t>{64, 2}})
    for (unsigned vec : {1, 2, 4, 8})
      for (unsigned perPhase : {1, 2, 4})
        for (unsigned maxPhase : {1, 2, 4, 8})
          for (auto order :
               {std::vector<unsigned>{1, 0}, std::vector<unsigned>{0, 1}}) {
            LinearLayout l =
                swizzledShared(shape, vec, perPhase, maxPhase, order);
            ASSERT_TRUE(l.isInvertible());
            int64_t cols = shape[order[0]], rows = shape[order[1]];
            for (int64_t r = 0; r < rows; ++r)
              for (int64_t c = 0; c < cols; ++c) {
                int64_t swizzled = c ^ ((r / perPhase % maxPhase * vec) % cols);
                Coords expected(2);
                expected[order[0]] = int32_t(c);
                expected[order[1]] = int32_t(r);
                ASSERT_EQ(at(l, {int32_t(r * cols + swizzled)}), expected);
              }
          }
}

TEST(SharedLayoutTest, SwizzledThreeDimensional) {
  // Slices along order[2] are stacked, each swizzled the same way.
  LinearLayout l = swizzledShared({4, 8, 8}, 2, 2, 2, {2, 1, 0});
  for (int32_t z = 0; z < 4; ++z)
    for (int32_t r = 0; r < 8; ++r)
      for (int32_t c = 0; c < 8; ++c) {
        int32_t offset = z * 64 + r * 8 + (c ^ ((r / 2 % 2) * 2));
        ASSERT_EQ(at(l, {offset}), (Coords{z, r, c}));
      }
}

/// The hardware view of an NVMMA layout: element (row, col) of a 2-D tensor
/// with `cols` columns contiguous, at the byte address the TMA unit writes
/// it to (column blocks of swizzleBytes, each rows x swizzleBytes, then the
/// 16-byte chunk index XORed with address bits 7 and up).
int64_t nvmmaAddress(int64_t row, int64_t col, int64_t rows,
                     unsigned swizzleBytes, unsigned elementBytes) {
  int64_t blockCols = swizzleBytes / elementBytes;
  int64_t address = (col / blockCols) * rows * swizzleBytes +
                    row * swizzleBytes + (col % blockCols) * elementBytes;
  int64_t chunkBits = swizzleBytes / 16 - 1; // 1, 3 or 7
  return address ^ (((address >> 7) & chunkBits) << 4);
}

TEST(SharedLayoutTest, NvmmaHandWorked) {
  // 128-byte swizzle of f16, 64 columns: chunk index ^= row % 8.
  LinearLayout l = nvmmaShared({16, 64}, 128, 16, {1, 0});
  EXPECT_EQ(at(l, {72}), (Coords{1, 0}));  // byte 128 -> 128 ^ 16 = 144
  EXPECT_EQ(at(l, {153}), (Coords{2, 9})); // byte 274 -> 274 ^ 32 = 306
  EXPECT_EQ(at(l, {8}), (Coords{0, 8}));   // row 0 is unswizzled
  // 32-byte swizzle of f32, 8 columns: chunk ^= (row / 4) % 2.
  LinearLayout s = nvmmaShared({8, 8}, 32, 32, {1, 0});
  EXPECT_EQ(at(s, {32}), (Coords{4, 4})); // byte 128 holds (4, 4)
  EXPECT_EQ(at(s, {36}), (Coords{4, 0}));
}

TEST(SharedLayoutTest, NvmmaMatchesHardwareAddress) {
  for (unsigned swizzleBytes : {32, 64, 128})
    for (unsigned bits : {8, 16, 32})
      for (int64_t rows : {1, 2, 8, 16, 64})
        for (int64_t blocks : {1, 2, 4})
          for (auto order :
               {std::vector<unsigned>{1, 0}, std::vector<unsigned>{0, 1}}) {
            unsigned bytes = bits / 8;
            int64_t cols = blocks * swizzleBytes / bytes;
            std::vector<int64_t> shape(2);
            shape[order[0]] = cols;
            shape[order[1]] = rows;
            SCOPED_TRACE("swizzle " + std::to_string(swizzleBytes) + " bits " +
                         std::to_string(bits) + " rows " +
                         std::to_string(rows) + " cols " +
                         std::to_string(cols));
            LinearLayout l = nvmmaShared(shape, swizzleBytes, bits, order);
            ASSERT_TRUE(l.isInvertible());
            for (int64_t r = 0; r < rows; ++r)
              for (int64_t c = 0; c < cols; ++c) {
                int64_t address = nvmmaAddress(r, c, rows, swizzleBytes, bytes);
                Coords expected(2);
                expected[order[0]] = int32_t(c);
                expected[order[1]] = int32_t(r);
                ASSERT_EQ(at(l, {int32_t(address / bytes)}), expected);
              }
            if (blocks == 1)
              EXPECT_EQ(l, swizzledShared(shape, 16 / bytes, 128 / swizzleBytes,
                                          swizzleBytes / 16, order));
          }
  // No swizzle: plain.
  EXPECT_EQ(nvmmaShared({8, 32}, 0, 16, {1, 0}),
            swizzledShared({8, 32}, 1, 1, 1, {1, 0}));
}

//===----------------------------------------------------------------------===//
// Layout conversion
//===----------------------------------------------------------------------===//

/// Brute force over every hardware index: what planConversion must decide.
std::optional<ConversionKind> bruteForceKind(const LinearLayout &src,
                                             const LinearLayout &dst) {
  int32_t srcRegs = src.getInDimSize(kRegister),
          dstRegs = dst.getInDimSize(kRegister);
  int32_t lanes = dst.getInDimSize(kLane), warps = dst.getInDimSize(kWarp);
  if (src == dst)
    return ConversionKind::NoOp;
  // All of dst's elements held somewhere?
  std::set<Coords> all;
  std::vector<std::set<Coords>> perWarp(warps);
  for (int32_t w = 0; w < warps; ++w)
    for (int32_t l = 0; l < lanes; ++l)
      for (int32_t r = 0; r < srcRegs; ++r) {
        Coords c = atHw(src, r, l, w);
        all.insert(c);
        perWarp[w].insert(c);
      }
  bool inWarp = true;
  for (int32_t w = 0; w < warps; ++w)
    for (int32_t l = 0; l < lanes; ++l)
      for (int32_t r = 0; r < dstRegs; ++r) {
        Coords c = atHw(dst, r, l, w);
        if (!all.count(c))
          return std::nullopt;
        inWarp &= perWarp[w].count(c) > 0;
      }
  // A register r' per destination register r, the same in every thread.
  bool statically = true;
  for (int32_t r = 0; r < dstRegs && statically; ++r) {
    bool found = false;
    for (int32_t s = 0; s < srcRegs && !found; ++s) {
      bool ok = true;
      for (int32_t w = 0; w < warps && ok; ++w)
        for (int32_t l = 0; l < lanes && ok; ++l)
          ok = atHw(src, s, l, w) == atHw(dst, r, l, w);
      found = ok;
    }
    statically = found;
  }
  if (statically)
    return ConversionKind::RegisterPermutation;
  if (inWarp)
    return ConversionKind::WarpShuffle;
  return ConversionKind::SharedMemory;
}

/// planConversion's answer is the brute-force one, and its map is right.
void checkPlan(const LinearLayout &src, const LinearLayout &dst) {
  SCOPED_TRACE("src " + src.toString() + "\ndst " + dst.toString());
  std::optional<ConversionPlan> plan = planConversion(src, dst);
  std::optional<ConversionKind> expected = bruteForceKind(src, dst);
  ASSERT_EQ(plan.has_value(), expected.has_value());
  if (!plan)
    return;
  ASSERT_EQ(plan->kind, *expected) << plan->describe();
  const LinearLayout &map = plan->dstToSrc;
  ASSERT_EQ(map.getInDimNames(), dst.getInDimNames());
  ASSERT_EQ(map.getOutDimNames(), src.getInDimNames());
  for (auto &x : allInputs(dst)) {
    Coords y = at(map, x);
    ASSERT_EQ(at(src, y), at(dst, x));
    switch (plan->kind) {
    case ConversionKind::NoOp:
      ASSERT_EQ(y, x);
      break;
    case ConversionKind::RegisterPermutation:
      ASSERT_EQ(y[1], x[1]);
      ASSERT_EQ(y[2], x[2]);
      ASSERT_EQ(y[0], plan->srcRegisters[x[0]]);
      break;
    case ConversionKind::WarpShuffle:
      ASSERT_EQ(y[2], x[2]);
      break;
    case ConversionKind::SharedMemory:
      break;
    }
  }
  if (plan->kind != ConversionKind::RegisterPermutation)
    EXPECT_TRUE(plan->srcRegisters.empty());
}

TEST(ConversionTest, IdenticalIsNoOp) {
  LinearLayout l = blocked({64, 64}, {1, 4}, {4, 8}, {4, 1}, {1, 0});
  auto plan = planConversion(l, l);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->kind, ConversionKind::NoOp);
  EXPECT_TRUE(plan->dstToSrc.isInvertible());
  // Different parameters, same layout: 2 rows per thread is the same as one
  // row repeated twice.
  auto same = planConversion(blocked({2, 32}, {2, 1}, {1, 32}, {1, 1}, {1, 0}),
                             blocked({2, 32}, {1, 1}, {1, 32}, {1, 1}, {1, 0}));
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(same->kind, ConversionKind::NoOp);
  checkPlan(l, l);
}

TEST(ConversionTest, RegisterOrderOnly) {
  // A 2 x 2 chunk per thread, chunk order dim1-first vs dim0-first; lanes go
  // along dim1 either way.
  LinearLayout src = blocked({2, 64}, {2, 2}, {1, 32}, {1, 1}, {1, 0});
  LinearLayout dst = blocked({2, 64}, {2, 2}, {1, 32}, {1, 1}, {0, 1});
  auto plan = planConversion(src, dst);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->kind, ConversionKind::RegisterPermutation);
  EXPECT_EQ(plan->srcRegisters, (llvm::SmallVector<int32_t>{0, 2, 1, 3}));
  checkPlan(src, dst);
  checkPlan(dst, src);
}

TEST(ConversionTest, WithinWarp) {
  // 4 consecutive elements per lane vs one element per lane four times over:
  // 128 elements, one warp.
  LinearLayout src = blocked({128}, {4}, {32}, {1}, {0});
  LinearLayout dst = blocked({128}, {1}, {32}, {1}, {0});
  auto plan = planConversion(src, dst);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->kind, ConversionKind::WarpShuffle);
  // dst lane l, register 0 holds element l, i.e. src lane l / 4, register
  // l % 4.
  for (int32_t lane = 0; lane < 32; ++lane)
    EXPECT_EQ(at(plan->dstToSrc, {0, lane, 0, 0}),
              (Coords{lane % 4, lane / 4, 0, 0}));
  checkPlan(src, dst);
  // Same with 4 warps, each warp keeping its quarter: still a shuffle.
  checkPlan(blocked({512}, {4}, {32}, {4}, {0}),
            blocked({512}, {1}, {32}, {4}, {0}));
}

TEST(ConversionTest, AcrossWarps) {
  LinearLayout src = blocked({256}, {4}, {32}, {2}, {0});
  LinearLayout dst = blocked({256}, {1}, {32}, {2}, {0});
  auto plan = planConversion(src, dst);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->kind, ConversionKind::SharedMemory);
  checkPlan(src, dst);
  // A 2-D transpose of the thread arrangement with 4 warps.
  checkPlan(blocked({64, 64}, {1, 4}, {4, 8}, {4, 1}, {1, 0}),
            blocked({64, 64}, {4, 1}, {8, 4}, {1, 4}, {0, 1}));
}

TEST(ConversionTest, BroadcastSourcesAndDestinations) {
  // Reduction result (sliced) to a 1-D blocked layout and back.
  LinearLayout parent = blocked({32, 32}, {1, 4}, {8, 4}, {4, 1}, {1, 0});
  LinearLayout reduced = slice(parent, 1);
  LinearLayout flat = blocked({32}, {1}, {32}, {4}, {0});
  checkPlan(reduced, flat);
  checkPlan(flat, reduced);
  // Every warp holds the whole tensor: any rearrangement stays in the warp.
  LinearLayout everywhere = blocked({32}, {1}, {32}, {4}, {0});
  LinearLayout pairs = blocked({32}, {2}, {32}, {4}, {0});
  auto plan = planConversion(everywhere, pairs);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->kind, ConversionKind::WarpShuffle);
  checkPlan(everywhere, pairs);
  checkPlan(pairs, everywhere);
  checkPlan(blocked({16}, {1}, {32}, {4}, {0}),
            blocked({16}, {2}, {32}, {4}, {0}));
}

TEST(ConversionTest, LaneDependentRegistersAreAShuffle) {
  // Lane 1 holds the same two elements as in src, in swapped registers.
  LinearLayout src(
      {{"register", {{0, 1}}}, {"lane", {{1, 0}}}, {"warp", {}}, {"block", {}}},
      {{"dim0", 2}, {"dim1", 2}});
  LinearLayout dst(
      {{"register", {{0, 1}}}, {"lane", {{1, 1}}}, {"warp", {}}, {"block", {}}},
      {{"dim0", 2}, {"dim1", 2}});
  auto plan = planConversion(src, dst);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->kind, ConversionKind::WarpShuffle);
  // ... but each lane reads its own registers.
  for (int32_t lane = 0; lane < 2; ++lane)
    for (int32_t r = 0; r < 2; ++r)
      EXPECT_EQ(at(plan->dstToSrc, {r, lane, 0, 0})[1], lane);
  checkPlan(src, dst);
}

TEST(ConversionTest, MissingDataOrDifferentTensors) {
  LinearLayout half(
      {{"register", {}}, {"lane", {{1}}}, {"warp", {}}, {"block", {}}},
      {{"dim0", 4}});
  LinearLayout full(
      {{"register", {{2}}}, {"lane", {{1}}}, {"warp", {}}, {"block", {}}},
      {{"dim0", 4}});
  EXPECT_FALSE(planConversion(half, full).has_value());
  EXPECT_TRUE(planConversion(full, half).has_value());
  EXPECT_FALSE(planConversion(blocked({64}, {1}, {32}, {1}, {0}),
                              blocked({128}, {1}, {32}, {1}, {0}))
                   .has_value());
  EXPECT_FALSE(planConversion(blocked({64}, {1}, {32}, {1}, {0}),
                              blocked({8, 8}, {1, 1}, {4, 8}, {1, 1}, {1, 0}))
                   .has_value());
}

TEST(ConversionTest, DescribeIsReadable) {
  auto plan = planConversion(blocked({2, 64}, {2, 2}, {1, 32}, {1, 1}, {1, 0}),
                             blocked({2, 64}, {2, 2}, {1, 32}, {1, 1}, {0, 1}));
  ASSERT_TRUE(plan.has_value());
  std::string text = plan->describe();
  EXPECT_EQ(
      text.substr(0, text.find('\n')),
      "register permutation: dst register r <- src register [0, 2, 1, 3][r]");
  EXPECT_NE(text.find("dst register bit 0 <- src (register=2, lane=0, warp=0, "
                      "block=0)"),
            std::string::npos);
}

TEST(ConversionTest, RandomBlockedPairsAgreeWithBruteForce) {
  std::mt19937 rng(14);
  auto tpwSplits = splits(5, 2);
  auto wpcSplits = splits(2, 2);
  std::map<ConversionKind, int> seen;
  for (int iter = 0; iter < 300; ++iter) {
    std::vector<int64_t> shape{int64_t(1) << (rng() % 6), int64_t(1)
                                                              << (rng() % 6)};
    auto random = [&] {
      BlockedParams p{shape,
                      {1u << (rng() % 3), 1u << (rng() % 3)},
                      tpwSplits[rng() % tpwSplits.size()],
                      wpcSplits[rng() % wpcSplits.size()],
                      {0, 1}};
      if (rng() % 2)
        p.order = {1, 0};
      return makeBlocked(p);
    };
    LinearLayout src = random(), dst = random();
    // Nudge some pairs towards the cheaper kinds: same lanes and warps, or
    // same warps.
    if (iter % 3 == 1)
      dst =
          LinearLayout({{"register", llvm::SmallVector<LinearLayout::Vector, 8>(
                                         src.getInDims()[0].bases.rbegin(),
                                         src.getInDims()[0].bases.rend())},
                        src.getInDims()[1],
                        src.getInDims()[2],
                        src.getInDims()[3]},
                       src.getOutDims());
    if (iter % 3 == 2) {
      auto lanes = src.getInDims()[1].bases;
      std::shuffle(lanes.begin(), lanes.end(), rng);
      dst = LinearLayout({src.getInDims()[0],
                          {"lane", lanes},
                          src.getInDims()[2],
                          src.getInDims()[3]},
                         src.getOutDims());
    }
    checkPlan(src, dst);
    if (auto plan = planConversion(src, dst))
      ++seen[plan->kind];
  }
  // Every kind occurs.
  EXPECT_GT(seen[ConversionKind::NoOp], 0);
  EXPECT_GT(seen[ConversionKind::RegisterPermutation], 0);
  EXPECT_GT(seen[ConversionKind::WarpShuffle], 0);
  EXPECT_GT(seen[ConversionKind::SharedMemory], 0);
}

TEST(ConversionTest, MmaAndBlocked) {
  LinearLayout acc = mmaV2({32, 32}, {2, 2});
  checkPlan(acc, blocked({32, 32}, {1, 4}, {4, 8}, {4, 1}, {1, 0}));
  checkPlan(blocked({32, 32}, {1, 4}, {4, 8}, {4, 1}, {1, 0}), acc);
  // Accumulator to operand B of the next product: different threads.
  checkPlan(acc, dotOperandMmaV2({32, 32}, 1, {2, 2}, 2));
  checkPlan(dotOperandMmaV2({32, 32}, 0, {2, 2}, 2), acc);
}

TEST(ConversionTest, OutputOrderDoesNotMatter) {
  LinearLayout src = blocked({2, 64}, {2, 2}, {1, 32}, {1, 1}, {1, 0});
  LinearLayout dst = blocked({2, 64}, {2, 2}, {1, 32}, {1, 1}, {0, 1});
  auto plan = planConversion(src, dst.transposeOuts({"dim1", "dim0"}));
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->kind, ConversionKind::RegisterPermutation);
  auto noop = planConversion(src, src.transposeOuts({"dim1", "dim0"}));
  ASSERT_TRUE(noop.has_value());
  EXPECT_EQ(noop->kind, ConversionKind::NoOp);
}

} // namespace
} // namespace kiln::layout
