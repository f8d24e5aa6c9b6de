//===- TargetInfo.h - what an NVIDIA architecture can do ------------------===//
//
// Passes and lowerings ask a TargetInfo instead of comparing compute
// capabilities: which tensor-core instructions exist, whether cp.async and
// TMA do, how much shared memory a CTA may have. The module names its target
// in the `kiln_gpu.target` attribute ("sm_90a"); TargetInfo::of reads it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_TARGETINFO_H
#define KILN_IR_TARGETINFO_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace kiln {

class TargetInfo {
public:
  static constexpr llvm::StringLiteral kAttrName = "kiln_gpu.target";

  /// An NVIDIA architecture from sm_80 on that LLVM 22's NVPTX backend has:
  /// sm_XY, sm_XYa (arch-specific) or sm_XYf (family); nullopt otherwise. Which
  /// of them the installed ptxas accepts is the driver's and the rules'
  /// business (`kilnc archs`).
  static std::optional<TargetInfo> parse(llvm::StringRef name) {
    // LLVM 22's NVPTX archs from sm_80 on (kiln::supportedArchs()).
    static const char *const kKnown[] = {
        "sm_80",   "sm_86",   "sm_87",   "sm_88",   "sm_89",
        "sm_90",   "sm_90a",  "sm_100",  "sm_100a", "sm_100f",
        "sm_101",  "sm_101a", "sm_101f", "sm_103",  "sm_103a",
        "sm_103f", "sm_110",  "sm_110a", "sm_110f", "sm_120",
        "sm_120a", "sm_120f", "sm_121",  "sm_121a", "sm_121f"};
    bool known = false;
    for (const char *k : kKnown)
      known |= name == k;
    llvm::StringRef digits = name;
    if (!known || !digits.consume_front("sm_"))
      return std::nullopt;
    TargetInfo t;
    t.name_ = name.str();
    t.archSpecific_ = digits.consume_back("a");
    if (!t.archSpecific_)
      digits.consume_back("f");
    if (digits.size() < 2 || digits.size() > 3 ||
        digits.getAsInteger(10, t.computeCapability_) ||
        t.computeCapability_ < 80)
      return std::nullopt;
    return t;
  }

  /// The module's target, or sm_80 when it names none (kiln-opt on a
  /// hand-written test).
  static TargetInfo of(mlir::ModuleOp module) {
    if (auto name = module->getAttrOfType<mlir::StringAttr>(kAttrName))
      if (auto t = parse(name.getValue()))
        return *t;
    return *parse("sm_80");
  }

  llvm::StringRef name() const { return name_; }
  /// 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121.
  unsigned computeCapability() const { return computeCapability_; }
  /// Threads per warp: 32 on every NVIDIA target.
  static constexpr unsigned kThreadsPerWarp = 32;

  /// mma.sync.m16n8k16 (fp16/bf16), m16n8k8 (tf32), m16n8k32 (int8).
  bool hasMmaSync() const { return computeCapability_ >= 80; }
  /// mma.sync with fp8 (e4m3/e5m2) operands.
  bool hasFp8MmaSync() const { return computeCapability_ >= 89; }
  /// mma.sync whose fp8 the tensor cores run as such: sm_90's has none of
  /// its own (ptxas expands each m16n8k32 into two fp16 products and an add
  /// a register), so its fp8 fragments are widened to fp16 first
  /// (compiler/conversion/MmaSyncInstructions.h).
  bool hasNativeFp8MmaSync() const {
    return hasFp8MmaSync() && computeCapability_ != 90;
  }
  /// wgmma.mma_async: only the arch-specific sm_90a.
  bool hasWgmma() const { return computeCapability_ == 90 && archSpecific_; }
  /// cp.async (Ampere and later).
  bool hasCpAsync() const { return computeCapability_ >= 80; }
  /// ldmatrix (sm_75 and later).
  bool hasLdmatrix() const { return computeCapability_ >= 75; }
  /// stmatrix, ldmatrix's inverse (sm_90 and later).
  bool hasStmatrix() const { return computeCapability_ >= 90; }
  /// Bulk tensor copies (TMA) and mbarrier transaction counts.
  bool hasTma() const { return computeCapability_ >= 90; }
  /// Thread-block clusters.
  bool hasClusters() const { return computeCapability_ >= 90; }
  /// min.xorsign.abs.f32: |a| capped at |b|, signed by sign(a) ^ sign(b).
  bool hasXorsignAbsMin() const { return computeCapability_ >= 86; }

  /// Shared memory any kernel may use without opting in.
  static constexpr int64_t kStaticSharedLimit = 48 * 1024;
  /// The most dynamic shared memory a CTA may opt in to
  /// (cudaDevAttrMaxSharedMemoryPerBlockOptin).
  int64_t maxSharedBytes() const {
    switch (computeCapability_) {
    case 80:
    case 87:
      return 163 * 1024;
    case 86:
    case 88:
    case 89:
    case 120:
    case 121:
      return 99 * 1024;
    default: // 90, 100, 103, 110
      return 227 * 1024;
    }
  }
  /// Registers one thread may use.
  static constexpr unsigned kMaxRegistersPerThread = 255;

  // Per-SM resources, for occupancy (the CUDA occupancy calculator's figures).
  /// 32-bit registers of one SM, allocated to warps in units of 256.
  static constexpr unsigned kRegistersPerSM = 64 * 1024;
  static constexpr unsigned kRegisterUnitPerWarp = 256;
  /// Shared memory the runtime reserves for each resident CTA.
  static constexpr int64_t kSharedReservedPerBlock = 1024;
  /// Shared memory of one SM (the opt-in limit plus the reserve).
  int64_t sharedBytesPerSM() const {
    return maxSharedBytes() + kSharedReservedPerBlock;
  }
  unsigned maxThreadsPerSM() const {
    switch (computeCapability_) {
    case 86:
    case 87:
    case 88:
    case 89:
    case 120:
    case 121:
      return 1536;
    default: // 80, 90, 100, 103, 110
      return 2048;
    }
  }
  unsigned maxBlocksPerSM() const {
    switch (computeCapability_) {
    case 86:
    case 87:
    case 88:
      return 16;
    case 89:
    case 120:
    case 121:
      return 24;
    default: // 80, 90, 100, 103, 110
      return 32;
    }
  }

private:
  std::string name_;
  unsigned computeCapability_ = 0;
  bool archSpecific_ = false;
};

} // namespace kiln

#endif // KILN_IR_TARGETINFO_H
