//===- TensorCoreFlavour.h - which dots the tensor cores compute -*- C++
//-*-===//
//
// The one rule that layout assignment, the pipeliner and the lowerings share
// (docs/architecture.md, "Which dots run on the tensor cores"). A 2-D dot
// runs on the tensor cores when its types are one of
//
//   a, b                      accumulator   mma.sync (sm_80+)   wgmma (sm_90a)
//   f16, f16 / bf16, bf16     f32           m16n8k16            m64nNk16
//   f16, f16                  f16           m16n8k16            m64nNk16
//   f32, f32 (tf32 precision) f32           m16n8k8             m64nNk8
//   i8, i8                    i32           m16n8k32            m64nNk32
//   e4m3/e5m2 (any pair)      f32           m16n8k32 (sm_89+)   m64nNk32
//
// (Before sm_89, tl.dot widens e5m2 operands to f16, exactly: m16n8k16.)
//
// An fp16 accumulator (tl.dot's out_dtype=tl.float16 on fp16 operands, as
// upstream runs it) holds two elements per 32-bit register, in the places
// the fp32 accumulator's first and second elements of each pair take.
//
// Every one of these instructions takes 32 bytes of K of each operand, so a
// fragment is the same bytes for every flavour: what changes is how many
// elements a 32-bit register holds. ldmatrix and wgmma's transpose bits move
// 16-bit elements only, so 32- and 8-bit operands are read K-contiguous by
// ldmatrix (or element by element otherwise) and reach wgmma only when both
// tiles are K-contiguous.
//
// fp32 operands with input_precision "tf32x3", "bf16x3" or "bf16x6" run on
// mma.sync too (never wgmma: the operands are split in registers): each
// operand word x is split into a high part h = round(x) and a low part
// l = x - h (and for bf16x6 a third, l's own remainder), and the product
// is the sum of the instructions over the pairs of parts that matter:
// l*h + h*l + h*h (bf16x6: six products). tf32x3 splits into tf32 words
// (m16n8k8 per 8 of K); the bf16 emulations pack the tf32 fragments of
// two k steps into bf16 pairs, which is the m16n8k16 fragment with K
// permuted the same way in a and b (so the sum is unchanged). The low
// parts of a non-finite x are zero and the high parts that multiply a
// low part are clamped to the largest finite value, so an infinite
// operand gives the infinite product instead of a NaN from inf - inf or
// 0 * inf, as upstream's emulation does.
//
// Batched 3-D dots of these flavours take mma.sync per batch (the staged
// lowering, compiler/conversion/DotToLLVM.cpp). Everything else (fp64, fp32
// with "ieee") takes the multiply-add loop.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_TENSORCOREFLAVOUR_H
#define KILN_IR_TENSORCOREFLAVOUR_H

#include "compiler/ir/Dialects.h"
#include "compiler/ir/ElementTypes.h"
#include "compiler/ir/TargetInfo.h"

#include <optional>
#include <string>

namespace kiln {

/// Shared memory the staged dot lowering (compiler/conversion/DotToLLVM.cpp)
/// uses for a and b together: within the 48 KiB every target allows
/// statically, with room for the accumulators' other users.
inline constexpr int64_t kDotStagingBytes = 40 * 1024;

/// Bytes the staged tensor-core lowering takes for `batch` stacks of a
/// (m rows) and b (n columns) with `k` of K each, rows padded by one 32-bit
/// word, plus one spare element per thread for each operand.
inline int64_t stagedDotBytes(int64_t batch, int64_t m, int64_t n, int64_t k,
                              int64_t elementBytes, int64_t threads) {
  return (batch * (m + n) * (k + 4 / elementBytes) + 2 * threads) *
         elementBytes;
}

struct TensorCoreFlavour {
  /// How fp32 operands are split into tensor-core words (see above).
  enum class Split { None, TF32x3, BF16x3, BF16x6 };

  unsigned elementBytes = 2; // of a and b: 1, 2 or 4
  bool integer = false;      // i8 into i32
  bool fp8 = false;
  bool halfAccumulator = false; // f16 sums, two to a 32-bit register
  Split split = Split::None;

  /// K per operand fragment: 32 bytes of each operand's row (for fp32
  /// operands, one m16n8k8 tf32 instruction's).
  int64_t kStep() const { return 32 / elementBytes; }
  /// K one group of instructions covers: two fragments for the bf16
  /// emulations (one m16n8k16), else one. K must be a multiple of it.
  int64_t kGroup() const {
    return split == Split::BF16x3 || split == Split::BF16x6 ? 2 * kStep()
                                                            : kStep();
  }
  /// Whether ldmatrix .trans and wgmma's transpose bits apply (16-bit).
  bool transposable() const { return elementBytes == 2; }

  /// Whether wgmma can take a from registers: 16-bit fragments as the
  /// accumulator holds them, 8-bit ones exchanged within each quad first
  /// (compiler/conversion/WgmmaToLLVM.cpp).
  bool registerA() const { return elementBytes <= 2; }

  /// PTX's name of an operand type of this flavour.
  static std::string ptxType(mlir::Type t) {
    if (t.isF16())
      return "f16";
    if (t.isBF16())
      return "bf16";
    if (t.isF32())
      return "tf32";
    if (t.isInteger(8))
      return "s8";
    return mlir::isa<mlir::Float8E4M3FNType>(t) ? "e4m3" : "e5m2";
  }
  /// PTX's name of the accumulator type.
  std::string accumulatorType() const {
    return integer ? "s32" : halfAccumulator ? "f16" : "f32";
  }

  /// Whether mma.sync has this flavour on `target`.
  bool hasMmaSync(const TargetInfo &target) const {
    return fp8 ? target.hasFp8MmaSync() : target.hasMmaSync();
  }

  /// Whether wgmma computes an m x n accumulator of this flavour whose mma
  /// layout puts `warpsAlongM` of the `numWarps` warps along M and gives
  /// each warpgroup along N `columns` of the n (n itself when all warps go
  /// along M), with a and b K-contiguous or not, a in registers or not.
  /// Warps along M may cover more rows than m has (a 64-row tile at 8
  /// warps, all along M): the warpgroups beyond m / 64 then compute copies
  /// of the first ones' tiles (attention's scores when p @ v splits N). a in
  /// registers must hold each warpgroup's fragments
  /// (layout::holdsAFragments): the callers check its layout.
  bool fitsWgmma(const TargetInfo &target, int64_t m, int64_t n,
                 unsigned numWarps, unsigned warpsAlongM, int64_t columns,
                 bool aKContiguous, bool bKContiguous,
                 bool aInRegisters) const {
    if (!target.hasWgmma() || split != Split::None || numWarps % 4 != 0 ||
        warpsAlongM % 4 != 0 || columns <= 0 || n % columns != 0 ||
        int64_t(warpsAlongM) * (n / columns) != int64_t(numWarps) ||
        m % 64 != 0 ||
        (m % (16 * int64_t(warpsAlongM)) != 0 &&
         (16 * int64_t(warpsAlongM)) % m != 0) ||
        columns % 8 != 0 || columns > 256)
      return false;
    // Integer wgmma: N a multiple of 8 up to 32, of 16 beyond.
    if (integer && columns > 32 && columns % 16 != 0)
      return false;
    if (!transposable() && !(aKContiguous && bKContiguous))
      return false;
    // 8-bit a in registers: in the accumulator's layout, all warps on M.
    return !aInRegisters ||
           (registerA() && (elementBytes == 2 || columns == n));
  }

  /// The columns each warpgroup takes when an m x n accumulator's warps
  /// cannot all go along M (m < 16 * numWarps: a 64-row tile at 8 warps, as
  /// DeepSeek-V3's and gemlite's GEMMs ask) and split N between warpgroups
  /// instead, as upstream does; 0 when that does not apply. Each warpgroup's
  /// columns of b start on a whole swizzle panel: 128 bytes of 16-bit
  /// columns or more, where b may be N-major (8-bit b is K-major, its
  /// columns whole 8-line swizzle atoms).
  int64_t columnsSplittingN(int64_t m, int64_t n, unsigned numWarps) const {
    if (m % 64 != 0 || numWarps % 4 != 0 || m >= 16 * int64_t(numWarps))
      return 0;
    int64_t alongM = m / 16, alongN = int64_t(numWarps) / alongM;
    if (int64_t(numWarps) % alongM != 0 || n % alongN != 0)
      return 0;
    int64_t columns = n / alongN;
    if ((transposable() && columns * elementBytes < 128) || columns < 8 ||
        columns > 256 || (columns & (columns - 1)) != 0)
      return 0;
    return columns;
  }
};

/// The tensor-core flavour of a 2-D dot with these operand and accumulator
/// types and input precision (which says how fp32 operands are multiplied)
/// on `target`; none when the dot takes the multiply-add loop there.
inline std::optional<TensorCoreFlavour>
tensorCoreFlavour(mlir::Type a, mlir::Type b, mlir::Type acc,
                  InputPrecision precision, const TargetInfo &target) {
  TensorCoreFlavour f;
  if ((a.isF16() || a.isBF16()) && b == a && acc.isF32()) {
    f.elementBytes = 2;
  } else if (a.isF16() && b.isF16() && acc.isF16()) {
    f.elementBytes = 2;
    f.halfAccumulator = true;
  } else if (a.isF32() && b.isF32() && acc.isF32() &&
             precision != InputPrecision::IEEE) {
    f.elementBytes = 4;
    f.split =
        precision == InputPrecision::TF32x3   ? TensorCoreFlavour::Split::TF32x3
        : precision == InputPrecision::BF16x3 ? TensorCoreFlavour::Split::BF16x3
        : precision == InputPrecision::BF16x6 ? TensorCoreFlavour::Split::BF16x6
                                              : TensorCoreFlavour::Split::None;
  } else if (a.isInteger(8) && b.isInteger(8) && acc.isInteger(32)) {
    f.elementBytes = 1;
    f.integer = true;
  } else if (isFp8(a) && isFp8(b) && acc.isF32()) {
    f.elementBytes = 1;
    f.fp8 = true;
  } else {
    return std::nullopt;
  }
  if (!f.hasMmaSync(target) && !target.hasWgmma())
    return std::nullopt;
  // The emulations split words in registers: mma.sync only.
  if (f.split != TensorCoreFlavour::Split::None && !f.hasMmaSync(target))
    return std::nullopt;
  return f;
}

} // namespace kiln

#endif // KILN_IR_TENSORCOREFLAVOUR_H
