//===- LinearLayout.cpp - layouts as linear maps over GF(2) ---------------===//
//
// Internally most operations work on *flat* columns: the basis of input bit j
// (input bits numbered across all input dimensions, first dimension first) as
// one 64-bit number, the concatenation of its output coordinates (first
// output dimension in the low bits). A layout is then a 64x64 bit matrix and
// the linear algebra is a few loops over uint64_t.
//
//===----------------------------------------------------------------------===//
#include "compiler/layout/LinearLayout.h"
#include "compiler/layout/Echelon.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVectorExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace llvm;

namespace kiln::layout {
namespace {

[[noreturn]] void fail(const Twine &message) {
  report_fatal_error("kiln::layout: " + message);
}

int32_t log2Exact(int64_t size, const Twine &what) {
  if (size <= 0 || !isPowerOf2_64(uint64_t(size)))
    fail(what + " size " + Twine(size) + " is not a power of two");
  return int32_t(Log2_64(uint64_t(size)));
}

Echelon echelonOf(ArrayRef<uint64_t> columns) {
  Echelon echelon;
  for (auto [j, column] : llvm::enumerate(columns))
    echelon.add(column, j);
  return echelon;
}

template <typename Dims> int findDim(const Dims &dims, StringRef name) {
  for (auto [i, dim] : llvm::enumerate(dims))
    if (dim.name == name)
      return int(i);
  return -1;
}

/// Checks that `names` is a permutation of the names of `dims`.
template <typename Dims>
void checkPermutation(const Dims &dims, ArrayRef<std::string> names,
                      StringRef what) {
  if (names.size() != dims.size())
    fail(Twine("transpose") + what + ": expected " + Twine(dims.size()) +
         " names, got " + Twine(names.size()));
  StringSet<> seen;
  for (const std::string &name : names)
    if (findDim(dims, name) < 0 || !seen.insert(name).second)
      fail(Twine("transpose") + what + ": '" + name +
           "' is unknown or repeated");
}

/// The layout with input dimensions `inDims` (names and sizes) whose input
/// bit j (flattened) maps to the flat output `columns[j]` of `outDims`.
LinearLayout fromFlatColumns(ArrayRef<std::pair<std::string, int32_t>> inDims,
                             ArrayRef<uint64_t> columns,
                             ArrayRef<LinearLayout::OutDim> outDims) {
  SmallVector<LinearLayout::InDim, 4> ins;
  size_t next = 0;
  for (const auto &[name, size] : inDims) {
    LinearLayout::InDim in{name, {}};
    for (int32_t i = 0, e = log2Exact(size, name); i < e; ++i) {
      if (next == columns.size())
        fail("internal error: too few columns");
      uint64_t flat = columns[next++];
      LinearLayout::Vector coords;
      for (const LinearLayout::OutDim &out : outDims) {
        coords.push_back(int32_t(flat & uint64_t(out.size - 1)));
        flat >>= Log2_32(uint32_t(out.size));
      }
      in.bases.push_back(std::move(coords));
    }
    ins.push_back(std::move(in));
  }
  if (next != columns.size())
    fail("internal error: too many columns");
  return LinearLayout(ins, outDims);
}

} // namespace

std::string tensorDimName(unsigned d) { return "dim" + std::to_string(d); }

//===----------------------------------------------------------------------===//
// Construction
//===----------------------------------------------------------------------===//

Expected<LinearLayout> LinearLayout::create(ArrayRef<InDim> ins,
                                            ArrayRef<OutDim> outs) {
  auto error = [](const Twine &message) {
    return createStringError(inconvertibleErrorCode(),
                             "kiln::layout: " + message.str());
  };
  StringSet<> inNames, outNames;
  int64_t outBits = 0, inBits = 0;
  for (const OutDim &out : outs) {
    if (!outNames.insert(out.name).second)
      return error("output dimension '" + out.name + "' appears twice");
    if (out.size <= 0 || !isPowerOf2_32(uint32_t(out.size)))
      return error("output dimension '" + out.name + "' has size " +
                   Twine(out.size) + ", not a power of two");
    outBits += Log2_32(uint32_t(out.size));
  }
  for (const InDim &in : ins) {
    if (!inNames.insert(in.name).second)
      return error("input dimension '" + in.name + "' appears twice");
    if (in.bases.size() > 30)
      return error("input dimension '" + in.name + "' is too large");
    inBits += in.bases.size();
    for (auto [bit, basis] : llvm::enumerate(in.bases)) {
      if (basis.size() != outs.size())
        return error("basis " + Twine(bit) + " of '" + in.name + "' has " +
                     Twine(basis.size()) + " coordinates, expected " +
                     Twine(outs.size()));
      for (auto [k, coord] : llvm::enumerate(basis))
        if (coord < 0 || coord >= outs[k].size)
          return error("basis " + Twine(bit) + " of '" + in.name +
                       "' has coordinate " + Twine(coord) + " along '" +
                       outs[k].name + "' of size " + Twine(outs[k].size));
    }
  }
  if (inBits > 64 || outBits > 64)
    return error("more than 64 input or output bits");
  LinearLayout layout;
  layout.ins.assign(ins.begin(), ins.end());
  layout.outs.assign(outs.begin(), outs.end());
  return layout;
}

LinearLayout::LinearLayout(ArrayRef<InDim> ins, ArrayRef<OutDim> outs) {
  Expected<LinearLayout> layout = create(ins, outs);
  if (!layout)
    report_fatal_error(layout.takeError());
  *this = std::move(*layout);
}

LinearLayout LinearLayout::fromBases(ArrayRef<InDim> ins,
                                     ArrayRef<std::string> outNames) {
  SmallVector<OutDim> outs;
  for (auto [k, name] : llvm::enumerate(outNames)) {
    int32_t max = 0;
    for (const InDim &in : ins)
      for (const Vector &basis : in.bases)
        if (k < basis.size())
          max = std::max(max, basis[k]);
    outs.push_back({name, int32_t(PowerOf2Ceil(uint64_t(max) + 1))});
  }
  return LinearLayout(ins, outs);
}

LinearLayout LinearLayout::identity1D(int32_t size, StringRef inDim,
                                      StringRef outDim) {
  int32_t bits = log2Exact(size, "identity1D");
  InDim in{inDim.str(), {}};
  for (int32_t i = 0; i < bits; ++i)
    in.bases.push_back({int32_t(1) << i});
  return LinearLayout({in}, {{outDim.str(), size}});
}

LinearLayout LinearLayout::zeros1D(int32_t size, StringRef inDim,
                                   StringRef outDim, int32_t outSize) {
  int32_t bits = log2Exact(size, "zeros1D");
  InDim in{inDim.str(), {}};
  for (int32_t i = 0; i < bits; ++i)
    in.bases.push_back({0});
  return LinearLayout({in}, {{outDim.str(), outSize}});
}

//===----------------------------------------------------------------------===//
// Dimensions and bases
//===----------------------------------------------------------------------===//

SmallVector<std::string> LinearLayout::getInDimNames() const {
  return llvm::map_to_vector(ins, [](const InDim &d) { return d.name; });
}

SmallVector<std::string> LinearLayout::getOutDimNames() const {
  return llvm::map_to_vector(outs, [](const OutDim &d) { return d.name; });
}

bool LinearLayout::hasInDim(StringRef name) const {
  return findDim(ins, name) >= 0;
}

bool LinearLayout::hasOutDim(StringRef name) const {
  return findDim(outs, name) >= 0;
}

unsigned LinearLayout::getInDimIndex(StringRef name) const {
  int index = findDim(ins, name);
  if (index < 0)
    fail("no input dimension '" + name + "' in " + toString());
  return unsigned(index);
}

unsigned LinearLayout::getOutDimIndex(StringRef name) const {
  int index = findDim(outs, name);
  if (index < 0)
    fail("no output dimension '" + name + "' in " + toString());
  return unsigned(index);
}

int32_t LinearLayout::getInDimSizeLog2(StringRef name) const {
  return int32_t(ins[getInDimIndex(name)].bases.size());
}

int32_t LinearLayout::getInDimSize(StringRef name) const {
  return int32_t(1) << getInDimSizeLog2(name);
}

int32_t LinearLayout::getOutDimSize(StringRef name) const {
  return outs[getOutDimIndex(name)].size;
}

int32_t LinearLayout::getOutDimSizeLog2(StringRef name) const {
  return int32_t(Log2_32(uint32_t(getOutDimSize(name))));
}

int32_t LinearLayout::getTotalInDimSizeLog2() const {
  int32_t bits = 0;
  for (const InDim &in : ins)
    bits += int32_t(in.bases.size());
  return bits;
}

int32_t LinearLayout::getTotalOutDimSizeLog2() const {
  int32_t bits = 0;
  for (const OutDim &out : outs)
    bits += int32_t(Log2_32(uint32_t(out.size)));
  return bits;
}

ArrayRef<int32_t> LinearLayout::getBasis(StringRef inDim, int32_t bit) const {
  const InDim &in = ins[getInDimIndex(inDim)];
  if (bit < 0 || size_t(bit) >= in.bases.size())
    fail("input dimension '" + inDim + "' has no bit " + Twine(bit));
  return in.bases[bit];
}

int32_t LinearLayout::getBasis(StringRef inDim, int32_t bit,
                               StringRef outDim) const {
  return getBasis(inDim, bit)[getOutDimIndex(outDim)];
}

//===----------------------------------------------------------------------===//
// Flat representation
//===----------------------------------------------------------------------===//

uint64_t LinearLayout::flattenOut(ArrayRef<int32_t> coords) const {
  uint64_t flat = 0;
  unsigned shift = 0;
  for (auto [k, out] : llvm::enumerate(outs)) {
    flat |= uint64_t(coords[k]) << shift;
    shift += Log2_32(uint32_t(out.size));
  }
  return flat;
}

SmallVector<uint64_t> LinearLayout::flatColumns() const {
  SmallVector<uint64_t> columns;
  for (const InDim &in : ins)
    for (const Vector &basis : in.bases)
      columns.push_back(flattenOut(basis));
  return columns;
}

std::optional<SmallVector<uint64_t>>
LinearLayout::solveFlat(ArrayRef<uint64_t> targets) const {
  Echelon echelon = echelonOf(flatColumns());
  SmallVector<uint64_t> solutions;
  for (uint64_t target : targets) {
    std::optional<uint64_t> solution = echelon.solve(target);
    if (!solution)
      return std::nullopt;
    solutions.push_back(*solution);
  }
  return solutions;
}

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

LinearLayout::Vector LinearLayout::apply(ArrayRef<int32_t> inputs) const {
  if (inputs.size() != ins.size())
    fail("apply: expected " + Twine(ins.size()) + " coordinates, got " +
         Twine(inputs.size()));
  Vector result(outs.size(), 0);
  for (auto [i, in] : llvm::enumerate(ins)) {
    int32_t value = inputs[i];
    if (value < 0 || (uint64_t(value) >> in.bases.size()) != 0)
      fail("apply: " + in.name + "=" + Twine(value) + " is out of range");
    for (auto [bit, basis] : llvm::enumerate(in.bases))
      if ((value >> bit) & 1)
        for (size_t k = 0; k < outs.size(); ++k)
          result[k] ^= basis[k];
  }
  return result;
}

SmallVector<std::pair<std::string, int32_t>>
LinearLayout::apply(ArrayRef<std::pair<StringRef, int32_t>> inputs) const {
  SmallVector<int32_t> positional(ins.size(), 0);
  SmallVector<bool> given(ins.size(), false);
  for (const auto &[name, value] : inputs) {
    unsigned index = getInDimIndex(name);
    if (given[index])
      fail("apply: input dimension '" + name + "' given twice");
    given[index] = true;
    positional[index] = value;
  }
  if (llvm::count(given, false) != 0)
    fail("apply: every input dimension needs a coordinate");
  Vector result = apply(positional);
  SmallVector<std::pair<std::string, int32_t>> named;
  for (auto [k, out] : llvm::enumerate(outs))
    named.push_back({out.name, result[k]});
  return named;
}

uint64_t LinearLayout::applyFlat(uint64_t input) const {
  SmallVector<uint64_t> columns = flatColumns();
  if (columns.size() < 64 && (input >> columns.size()) != 0)
    fail("applyFlat: input " + Twine(input) + " is out of range");
  return xorOfColumns<uint64_t>(columns, input);
}

//===----------------------------------------------------------------------===//
// Building layouts from layouts
//===----------------------------------------------------------------------===//

LinearLayout operator*(const LinearLayout &lhs, const LinearLayout &rhs) {
  using InDim = LinearLayout::InDim;
  using OutDim = LinearLayout::OutDim;
  SmallVector<OutDim> outs(lhs.outs.begin(), lhs.outs.end());
  // Where each of rhs's output dimensions goes, and the shift of its
  // coordinates there.
  SmallVector<std::pair<size_t, unsigned>> rhsOut;
  for (const OutDim &out : rhs.outs) {
    int index = findDim(outs, out.name);
    if (index < 0) {
      rhsOut.push_back({outs.size(), 0});
      outs.push_back(out);
      continue;
    }
    unsigned shift = Log2_32(uint32_t(outs[index].size));
    if (uint64_t(outs[index].size) * uint64_t(out.size) > (uint64_t(1) << 30))
      fail("product: output dimension '" + out.name + "' is too large");
    outs[index].size *= out.size;
    rhsOut.push_back({size_t(index), shift});
  }

  SmallVector<InDim, 4> ins;
  for (const InDim &in : lhs.ins) {
    InDim copy{in.name, {}};
    for (const LinearLayout::Vector &basis : in.bases) {
      LinearLayout::Vector widened(basis.begin(), basis.end());
      widened.resize(outs.size(), 0);
      copy.bases.push_back(std::move(widened));
    }
    ins.push_back(std::move(copy));
  }
  for (const InDim &in : rhs.ins) {
    int index = findDim(ins, in.name);
    if (index < 0) {
      index = int(ins.size());
      ins.push_back(InDim{in.name, {}});
    }
    for (const LinearLayout::Vector &basis : in.bases) {
      LinearLayout::Vector moved(outs.size(), 0);
      for (auto [k, coord] : llvm::enumerate(basis))
        moved[rhsOut[k].first] = coord << rhsOut[k].second;
      ins[index].bases.push_back(std::move(moved));
    }
  }
  return LinearLayout(ins, outs);
}

LinearLayout LinearLayout::compose(const LinearLayout &outer) const {
  for (const OutDim &out : outs) {
    int index = findDim(outer.ins, out.name);
    if (index < 0)
      fail("compose: output dimension '" + out.name +
           "' is no input dimension of the outer layout");
    if ((uint64_t(1) << outer.ins[index].bases.size()) < uint64_t(out.size))
      fail("compose: output dimension '" + out.name +
           "' is larger than the outer layout's input");
  }
  SmallVector<InDim, 4> result;
  for (const InDim &in : ins) {
    InDim composed{in.name, {}};
    for (const Vector &basis : in.bases) {
      SmallVector<int32_t> outerInput(outer.ins.size(), 0);
      for (auto [k, out] : llvm::enumerate(outs))
        outerInput[findDim(outer.ins, out.name)] = basis[k];
      composed.bases.push_back(outer.apply(outerInput));
    }
    result.push_back(std::move(composed));
  }
  return LinearLayout(result, outer.outs);
}

std::optional<LinearLayout> LinearLayout::invert() const {
  if (!isInvertible())
    return std::nullopt;
  return pseudoInvert();
}

std::optional<LinearLayout> LinearLayout::pseudoInvert() const {
  if (!isSurjective())
    return std::nullopt;
  SmallVector<uint64_t> targets;
  for (int32_t o = 0, e = getTotalOutDimSizeLog2(); o < e; ++o)
    targets.push_back(uint64_t(1) << o);
  std::optional<SmallVector<uint64_t>> solutions = solveFlat(targets);
  if (!solutions)
    fail("internal error: surjective layout without a preimage");
  SmallVector<std::pair<std::string, int32_t>> newIns;
  for (const OutDim &out : outs)
    newIns.push_back({out.name, out.size});
  SmallVector<OutDim> newOuts;
  for (const InDim &in : ins)
    newOuts.push_back({in.name, int32_t(1) << in.bases.size()});
  return fromFlatColumns(newIns, *solutions, newOuts);
}

std::optional<LinearLayout>
LinearLayout::factorThrough(const LinearLayout &target) const {
  if (outs.size() != target.outs.size())
    fail("factorThrough: the layouts have different output dimensions");
  for (const OutDim &out : outs) {
    int index = findDim(target.outs, out.name);
    if (index < 0 || target.outs[index].size != out.size)
      fail("factorThrough: output dimension '" + out.name +
           "' differs between the layouts");
  }
  LinearLayout aligned = transposeOuts(target.getOutDimNames());
  std::optional<SmallVector<uint64_t>> solutions =
      target.solveFlat(aligned.flatColumns());
  if (!solutions)
    return std::nullopt;
  SmallVector<std::pair<std::string, int32_t>> newIns;
  for (const InDim &in : ins)
    newIns.push_back({in.name, int32_t(1) << in.bases.size()});
  SmallVector<OutDim> newOuts;
  for (const InDim &in : target.ins)
    newOuts.push_back({in.name, int32_t(1) << in.bases.size()});
  return fromFlatColumns(newIns, *solutions, newOuts);
}

LinearLayout LinearLayout::transposeIns(ArrayRef<std::string> names) const {
  checkPermutation(ins, names, "Ins");
  LinearLayout result = *this;
  for (auto [i, name] : llvm::enumerate(names))
    result.ins[i] = ins[findDim(ins, name)];
  return result;
}

LinearLayout LinearLayout::transposeOuts(ArrayRef<std::string> names) const {
  checkPermutation(outs, names, "Outs");
  SmallVector<int> from;
  for (const std::string &name : names)
    from.push_back(findDim(outs, name));
  LinearLayout result = *this;
  for (auto [k, index] : llvm::enumerate(from))
    result.outs[k] = outs[index];
  for (InDim &in : result.ins)
    for (Vector &basis : in.bases) {
      Vector old = basis;
      for (auto [k, index] : llvm::enumerate(from))
        basis[k] = old[index];
    }
  return result;
}

LinearLayout LinearLayout::reshapeIns(
    ArrayRef<std::pair<std::string, int32_t>> newIns) const {
  SmallVector<Vector> bases;
  for (const InDim &in : ins)
    bases.append(in.bases.begin(), in.bases.end());
  SmallVector<InDim, 4> result;
  size_t next = 0;
  for (const auto &[name, size] : newIns) {
    InDim in{name, {}};
    for (int32_t i = 0, e = log2Exact(size, "reshapeIns: " + name); i < e;
         ++i) {
      if (next == bases.size())
        fail("reshapeIns: the new input dimensions are larger");
      in.bases.push_back(bases[next++]);
    }
    result.push_back(std::move(in));
  }
  if (next != bases.size())
    fail("reshapeIns: the new input dimensions are smaller");
  return LinearLayout(result, outs);
}

LinearLayout LinearLayout::reshapeOuts(
    ArrayRef<std::pair<std::string, int32_t>> newOuts) const {
  SmallVector<OutDim> outDims;
  int64_t bits = 0;
  for (const auto &[name, size] : newOuts) {
    bits += log2Exact(size, "reshapeOuts: " + name);
    outDims.push_back({name, size});
  }
  if (bits != getTotalOutDimSizeLog2())
    fail("reshapeOuts: total size changes");
  SmallVector<std::pair<std::string, int32_t>> inDims;
  for (const InDim &in : ins)
    inDims.push_back({in.name, int32_t(1) << in.bases.size()});
  return fromFlatColumns(inDims, flatColumns(), outDims);
}

LinearLayout LinearLayout::renameInDim(StringRef from, StringRef to) const {
  LinearLayout result = *this;
  unsigned index = getInDimIndex(from);
  if (from != to && hasInDim(to))
    fail("renameInDim: '" + to + "' already exists");
  result.ins[index].name = to.str();
  return result;
}

LinearLayout LinearLayout::renameOutDim(StringRef from, StringRef to) const {
  LinearLayout result = *this;
  unsigned index = getOutDimIndex(from);
  if (from != to && hasOutDim(to))
    fail("renameOutDim: '" + to + "' already exists");
  result.outs[index].name = to.str();
  return result;
}

LinearLayout LinearLayout::sublayout(ArrayRef<std::string> inNames,
                                     ArrayRef<std::string> outNames) const {
  for (const std::string &name : inNames)
    (void)getInDimIndex(name);
  for (const std::string &name : outNames)
    (void)getOutDimIndex(name);
  SmallVector<size_t> keptOuts;
  SmallVector<OutDim> newOuts;
  for (auto [k, out] : llvm::enumerate(outs))
    if (llvm::is_contained(outNames, out.name)) {
      keptOuts.push_back(k);
      newOuts.push_back(out);
    }
  SmallVector<InDim, 4> newIns;
  for (const InDim &in : ins) {
    if (!llvm::is_contained(inNames, in.name))
      continue;
    InDim kept{in.name, {}};
    for (const Vector &basis : in.bases) {
      Vector projected;
      for (size_t k : keptOuts)
        projected.push_back(basis[k]);
      kept.bases.push_back(std::move(projected));
    }
    newIns.push_back(std::move(kept));
  }
  return LinearLayout(newIns, newOuts);
}

LinearLayout LinearLayout::resizeOutDim(StringRef outDim,
                                        int32_t newSize) const {
  log2Exact(newSize, "resizeOutDim: " + outDim);
  LinearLayout result = *this;
  unsigned k = getOutDimIndex(outDim);
  result.outs[k].size = newSize;
  for (InDim &in : result.ins)
    for (Vector &basis : in.bases)
      basis[k] &= newSize - 1;
  return result;
}

LinearLayout LinearLayout::removeZeroBases(StringRef inDim) const {
  LinearLayout result = *this;
  auto &bases = result.ins[getInDimIndex(inDim)].bases;
  llvm::erase_if(bases, [](const Vector &basis) {
    return llvm::all_of(basis, [](int32_t c) { return c == 0; });
  });
  return result;
}

//===----------------------------------------------------------------------===//
// Properties
//===----------------------------------------------------------------------===//

int32_t LinearLayout::getRank() const {
  return int32_t(echelonOf(flatColumns()).rank());
}

bool LinearLayout::isSurjective() const {
  return getRank() == getTotalOutDimSizeLog2();
}

bool LinearLayout::isInjective() const {
  return getRank() == getTotalInDimSizeLog2();
}

bool LinearLayout::isTrivialOver(ArrayRef<std::string> inNames) const {
  for (const InDim &in : ins) {
    if (!llvm::is_contained(inNames, in.name))
      continue;
    for (const Vector &basis : in.bases)
      if (llvm::any_of(basis, [](int32_t c) { return c != 0; }))
        return false;
  }
  return true;
}

SmallVector<uint64_t> LinearLayout::getZeroBasisMasks() const {
  SmallVector<uint64_t> masks;
  for (const InDim &in : ins) {
    uint64_t mask = 0;
    for (auto [bit, basis] : llvm::enumerate(in.bases))
      if (llvm::all_of(basis, [](int32_t c) { return c == 0; }))
        mask |= uint64_t(1) << bit;
    masks.push_back(mask);
  }
  return masks;
}

SmallVector<uint64_t> LinearLayout::getFreeVariableMasks() const {
  Echelon echelon;
  SmallVector<uint64_t> masks;
  unsigned j = 0;
  for (const InDim &in : ins) {
    uint64_t mask = 0;
    for (auto [bit, basis] : llvm::enumerate(in.bases))
      if (!echelon.add(flattenOut(basis), j++))
        mask |= uint64_t(1) << bit;
    masks.push_back(mask);
  }
  return masks;
}

uint64_t LinearLayout::getFreeVariableMask(StringRef inDim) const {
  return getFreeVariableMasks()[getInDimIndex(inDim)];
}

int32_t LinearLayout::getContiguity(StringRef inDim, StringRef outDim) const {
  unsigned k = getOutDimIndex(outDim);
  if (!hasInDim(inDim))
    return 1;
  int32_t width = 1;
  for (auto [bit, basis] : llvm::enumerate(ins[getInDimIndex(inDim)].bases)) {
    for (size_t o = 0; o < outs.size(); ++o)
      if (basis[o] != (o == k ? int32_t(1) << bit : 0))
        return width;
    width *= 2;
  }
  return width;
}

bool operator==(const LinearLayout &lhs, const LinearLayout &rhs) {
  if (lhs.ins.size() != rhs.ins.size() || lhs.outs.size() != rhs.outs.size())
    return false;
  for (auto [a, b] : llvm::zip(lhs.outs, rhs.outs))
    if (a.name != b.name || a.size != b.size)
      return false;
  for (auto [a, b] : llvm::zip(lhs.ins, rhs.ins))
    if (a.name != b.name || a.bases != b.bases)
      return false;
  return true;
}

void LinearLayout::print(raw_ostream &os) const {
  os << "(";
  llvm::interleaveComma(ins, os, [&](const InDim &in) {
    os << in.name << "=" << (uint64_t(1) << in.bases.size());
  });
  os << ") -> (";
  llvm::interleaveComma(
      outs, os, [&](const OutDim &out) { os << out.name << "=" << out.size; });
  os << ")";
  for (const InDim &in : ins) {
    os << "\n  " << in.name << ":";
    if (in.bases.empty())
      os << " -";
    for (const Vector &basis : in.bases) {
      os << " (";
      llvm::interleaveComma(basis, os);
      os << ")";
    }
  }
}

std::string LinearLayout::toString() const {
  std::string text;
  raw_string_ostream os(text);
  print(os);
  return text;
}

//===----------------------------------------------------------------------===//
// Layout conversion
//===----------------------------------------------------------------------===//

StringRef toString(ConversionKind kind) {
  switch (kind) {
  case ConversionKind::NoOp:
    return "no-op";
  case ConversionKind::RegisterPermutation:
    return "register permutation";
  case ConversionKind::WarpShuffle:
    return "warp shuffle";
  case ConversionKind::SharedMemory:
    return "shared memory";
  }
  llvm_unreachable("unknown ConversionKind");
}

std::string ConversionPlan::describe() const {
  std::string text;
  raw_string_ostream os(text);
  os << toString(kind);
  if (kind == ConversionKind::RegisterPermutation) {
    os << ": dst register r <- src register [";
    llvm::interleaveComma(srcRegisters, os);
    os << "][r]";
  }
  ArrayRef<LinearLayout::OutDim> srcDims = dstToSrc.getOutDims();
  for (const LinearLayout::InDim &in : dstToSrc.getInDims())
    for (auto [bit, basis] : llvm::enumerate(in.bases)) {
      os << "\n  dst " << in.name << " bit " << bit << " <- src (";
      for (auto [k, dim] : llvm::enumerate(srcDims))
        os << (k ? ", " : "") << dim.name << "=" << basis[k];
      os << ")";
    }
  return text;
}

namespace {

/// Tries one level of planConversion: data may move along the `moving` input
/// dimensions of `src` only. Returns the flat columns of dstToSrc.
std::optional<SmallVector<uint64_t>> solveLevel(const LinearLayout &src,
                                                const LinearLayout &dst,
                                                ArrayRef<StringRef> moving,
                                                bool requireStatic) {
  auto isMoving = [&](StringRef name) {
    return llvm::is_contained(moving, name);
  };
  // Flat input-bit offsets of src's dimensions, and src's flat columns.
  StringMap<unsigned> srcOffset;
  SmallVector<uint64_t> srcColumns;
  Echelon echelon;
  for (const LinearLayout::InDim &in : src.getInDims()) {
    srcOffset[in.name] = srcColumns.size();
    for (const LinearLayout::Vector &basis : in.bases) {
      uint64_t column = 0;
      unsigned shift = 0;
      for (auto [k, out] : llvm::enumerate(src.getOutDims())) {
        column |= uint64_t(basis[k]) << shift;
        shift += Log2_32(uint32_t(out.size));
      }
      if (isMoving(in.name))
        echelon.add(column, srcColumns.size());
      srcColumns.push_back(column);
    }
  }
  SmallVector<uint64_t> result;
  for (const LinearLayout::InDim &in : dst.getInDims()) {
    bool stays = !isMoving(in.name);
    if (stays && src.getInDimSizeLog2(in.name) != int32_t(in.bases.size()))
      return std::nullopt;
    for (auto [bit, basis] : llvm::enumerate(in.bases)) {
      uint64_t target = 0;
      unsigned shift = 0;
      for (auto [k, out] : llvm::enumerate(dst.getOutDims())) {
        target |= uint64_t(basis[k]) << shift;
        shift += Log2_32(uint32_t(out.size));
      }
      uint64_t self = 0;
      if (stays) {
        unsigned j = srcOffset[in.name] + bit;
        self = uint64_t(1) << j;
        target ^= srcColumns[j];
        if (requireStatic && target != 0)
          return std::nullopt;
      }
      std::optional<uint64_t> solution = echelon.solve(target);
      if (!solution)
        return std::nullopt;
      result.push_back(*solution ^ self);
    }
  }
  return result;
}

} // namespace

std::optional<ConversionPlan> planConversion(const LinearLayout &src,
                                             const LinearLayout &dstIn) {
  // One tensor: the same output dimensions and sizes.
  if (src.getOutDims().size() != dstIn.getOutDims().size() ||
      src.getInDims().size() != dstIn.getInDims().size())
    return std::nullopt;
  for (const LinearLayout::OutDim &out : dstIn.getOutDims())
    if (!src.hasOutDim(out.name) || src.getOutDimSize(out.name) != out.size)
      return std::nullopt;
  for (const LinearLayout::InDim &in : dstIn.getInDims())
    if (!src.hasInDim(in.name))
      return std::nullopt;
  // Align dst's outputs with src's so that flat outputs agree.
  LinearLayout dst = dstIn.transposeOuts(src.getOutDimNames());

  SmallVector<std::pair<std::string, int32_t>> dstIns;
  for (const LinearLayout::InDim &in : dst.getInDims())
    dstIns.push_back({in.name, int32_t(1) << in.bases.size()});
  SmallVector<LinearLayout::OutDim> srcIns;
  for (const LinearLayout::InDim &in : src.getInDims())
    srcIns.push_back({in.name, int32_t(1) << in.bases.size()});

  ConversionPlan plan;
  auto finish = [&](ConversionKind kind, ArrayRef<uint64_t> columns) {
    plan.kind = kind;
    plan.dstToSrc = fromFlatColumns(dstIns, columns, srcIns);
    return plan;
  };

  if (dst.transposeIns(src.getInDimNames()) == src) {
    SmallVector<uint64_t> identity;
    StringMap<unsigned> srcOffset;
    unsigned offset = 0;
    for (const LinearLayout::InDim &in : src.getInDims()) {
      srcOffset[in.name] = offset;
      offset += in.bases.size();
    }
    for (const LinearLayout::InDim &in : dst.getInDims())
      for (size_t bit = 0; bit < in.bases.size(); ++bit)
        identity.push_back(uint64_t(1) << (srcOffset[in.name] + bit));
    return finish(ConversionKind::NoOp, identity);
  }

  StringRef inRegisters[] = {kRegister};
  if (auto columns =
          solveLevel(src, dst, inRegisters, /*requireStatic=*/true)) {
    finish(ConversionKind::RegisterPermutation, *columns);
    if (dst.hasInDim(kRegister)) {
      unsigned reg = dst.getInDimIndex(kRegister);
      unsigned srcReg = src.getInDimIndex(kRegister);
      for (int32_t r = 0, e = dst.getInDimSize(kRegister); r < e; ++r) {
        SmallVector<int32_t> input(dst.getInDims().size(), 0);
        input[reg] = r;
        plan.srcRegisters.push_back(plan.dstToSrc.apply(input)[srcReg]);
      }
    }
    return plan;
  }
  StringRef inWarp[] = {kRegister, kLane};
  if (auto columns = solveLevel(src, dst, inWarp, /*requireStatic=*/false))
    return finish(ConversionKind::WarpShuffle, *columns);
  SmallVector<StringRef> everything;
  for (const LinearLayout::InDim &in : src.getInDims())
    everything.push_back(in.name);
  if (auto columns = solveLevel(src, dst, everything, /*requireStatic=*/false))
    return finish(ConversionKind::SharedMemory, *columns);
  return std::nullopt;
}

int32_t vectorWidth(const LinearLayout &layout, StringRef fastestDim) {
  return layout.getContiguity(kRegister, fastestDim);
}

} // namespace kiln::layout
