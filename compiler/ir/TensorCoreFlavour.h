//===- TensorCoreFlavour.h - which dots the tensor cores compute -*- C++ -*-===//
//
// The one rule that layout assignment, the pipeliner and the lowerings share
// (docs/architecture.md, "Which dots run on the tensor cores"). A 2-D dot
// runs on the tensor cores when its types are one of
//
//   a, b                      accumulator   mma.sync (sm_80+)   wgmma (sm_90a)
//   f16, f16 / bf16, bf16     f32           m16n8k16            m64nNk16
//   f32, f32 (tf32 precision) f32           m16n8k8             m64nNk8
//   i8, i8                    i32           m16n8k32            m64nNk32
//   e4m3/e5m2 (any pair)      f32           m16n8k32 (sm_89+)   m64nNk32
//
// Every one of these instructions takes 32 bytes of K of each operand, so a
// fragment is the same bytes for every flavour: what changes is how many
// elements a 32-bit register holds. ldmatrix and wgmma's transpose bits move
// 16-bit elements only, so 32- and 8-bit operands are read K-contiguous by
// ldmatrix (or element by element otherwise) and reach wgmma only when both
// tiles are K-contiguous. Everything else (fp64, fp32 with "ieee" or the
// 3x/6x emulations, fp16 accumulators, batched 3-D dots) takes the
// multiply-add loop.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_TENSORCOREFLAVOUR_H
#define KILN_IR_TENSORCOREFLAVOUR_H

#include "compiler/ir/ElementTypes.h"
#include "compiler/ir/TargetInfo.h"

#include <optional>
#include <string>

namespace kiln {

struct TensorCoreFlavour {
  unsigned elementBytes = 2; // of a and b: 1, 2 or 4
  bool integer = false;      // i8 into i32
  bool fp8 = false;

  /// K per instruction: 32 bytes of each operand's row.
  int64_t kStep() const { return 32 / elementBytes; }
  /// Whether ldmatrix .trans and wgmma's transpose bits apply (16-bit).
  bool transposable() const { return elementBytes == 2; }

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
  std::string accumulatorType() const { return integer ? "s32" : "f32"; }

  /// Whether mma.sync has this flavour on `target`.
  bool hasMmaSync(const TargetInfo &target) const {
    return fp8 ? target.hasFp8MmaSync() : target.hasMmaSync();
  }

  /// Whether wgmma computes an m x n accumulator of this flavour whose mma
  /// layout puts `warpsAlongM` of the `numWarps` warps along M, with a and
  /// b K-contiguous or not, a in registers or not.
  bool fitsWgmma(const TargetInfo &target, int64_t m, int64_t n,
                 unsigned numWarps, unsigned warpsAlongM, bool aKContiguous,
                 bool bKContiguous, bool aInRegisters) const {
    if (!target.hasWgmma() || warpsAlongM != numWarps || numWarps % 4 != 0 ||
        m % (16 * int64_t(numWarps)) != 0 || m % 64 != 0 || n % 8 != 0 ||
        n > 256)
      return false;
    // Integer wgmma: N a multiple of 8 up to 32, of 16 beyond.
    if (integer && n > 32 && n % 16 != 0)
      return false;
    if (!transposable() && !(aKContiguous && bKContiguous))
      return false;
    return !aInRegisters || transposable();
  }
};

/// The tensor-core flavour of a 2-D dot with these operand and accumulator
/// types (`tf32`: its input precision lets fp32 operands round to tf32) on
/// `target`; none when the dot takes the multiply-add loop there.
inline std::optional<TensorCoreFlavour>
tensorCoreFlavour(mlir::Type a, mlir::Type b, mlir::Type acc, bool tf32,
                  const TargetInfo &target) {
  TensorCoreFlavour f;
  if ((a.isF16() || a.isBF16()) && b == a && acc.isF32()) {
    f.elementBytes = 2;
  } else if (a.isF32() && b.isF32() && acc.isF32() && tf32) {
    f.elementBytes = 4;
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
  return f;
}

} // namespace kiln

#endif // KILN_IR_TENSORCOREFLAVOUR_H
