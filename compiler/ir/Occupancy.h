//===- Occupancy.h - how many blocks of a kernel one SM holds -------------===//
//
// The occupancy calculator's arithmetic over TargetInfo's per-SM resources:
// blocks resident at once are limited by threads, shared memory and
// registers (allocated per warp in units of 256). The driver uses it to ask
// ptxas for at most as many registers as the kernel's shared memory leaves
// room for (compiler/driver/Pipeline.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_OCCUPANCY_H
#define KILN_IR_OCCUPANCY_H

#include "compiler/ir/TargetInfo.h"

#include <algorithm>

namespace kiln {

/// Blocks of `threads` threads that one SM holds at once when each uses
/// `sharedBytes` of shared memory, not counting registers.
inline unsigned blocksPerSMBeforeRegisters(const TargetInfo &target,
                                           unsigned threads,
                                           int64_t sharedBytes) {
  unsigned blocks =
      std::min(target.maxBlocksPerSM(), target.maxThreadsPerSM() / threads);
  int64_t perBlock =
      std::max<int64_t>(sharedBytes, 0) + TargetInfo::kSharedReservedPerBlock;
  return std::min<int64_t>(blocks, target.sharedBytesPerSM() / perBlock);
}

/// Blocks of `threads` threads, each thread using `registers` registers,
/// whose registers one SM holds at once.
inline unsigned blocksPerSMByRegisters(unsigned threads, unsigned registers) {
  unsigned unit = TargetInfo::kRegisterUnitPerWarp;
  unsigned perWarp =
      (std::max(registers, 1u) * TargetInfo::kThreadsPerWarp + unit - 1) /
      unit * unit;
  unsigned warps = TargetInfo::kRegistersPerSM / perWarp;
  return warps / ((threads + TargetInfo::kThreadsPerWarp - 1) /
                  TargetInfo::kThreadsPerWarp);
}

/// Blocks of `threads` threads, with `sharedBytes` of shared memory and
/// `registers` registers a thread each, that one SM holds at once.
inline unsigned blocksPerSM(const TargetInfo &target, unsigned threads,
                            int64_t sharedBytes, unsigned registers) {
  return std::min(blocksPerSMBeforeRegisters(target, threads, sharedBytes),
                  blocksPerSMByRegisters(threads, registers));
}

/// The most registers per thread with which `blocks` blocks of `threads`
/// threads fit one SM's registers (at most kMaxRegistersPerThread); 0 when
/// not even one register does.
inline unsigned registerBudget(unsigned threads, unsigned blocks) {
  unsigned warps = blocks * ((threads + TargetInfo::kThreadsPerWarp - 1) /
                             TargetInfo::kThreadsPerWarp);
  if (warps == 0)
    return TargetInfo::kMaxRegistersPerThread;
  unsigned unit = TargetInfo::kRegisterUnitPerWarp;
  unsigned perWarp = TargetInfo::kRegistersPerSM / warps / unit * unit;
  return std::min(perWarp / TargetInfo::kThreadsPerWarp,
                  TargetInfo::kMaxRegistersPerThread);
}

/// Warp specialization (kiln-pipeline-dots): one producer warpgroup of
/// kProducerWarps warps, after the kernel's num_warps consumers, issues TMA
/// copies and keeps kProducerRegisters registers per thread; the consumers
/// take what that leaves of the registers of the SM's share for the block
/// (setmaxnreg), at most kMaxConsumerRegisters. The kernel starts with
/// registerBudget(all threads, blocks) each, its `.maxnreg`.
constexpr unsigned kProducerWarps = 4;
constexpr unsigned kProducerRegisters = 40;
constexpr unsigned kMaxConsumerRegisters = 240;
/// Fewer registers than this, and consumers running wgmma on a 128-row
/// accumulator spill: tutorial 06's attention at HEAD_DIM 64 takes 168
/// without specialization.
constexpr unsigned kMinConsumerRegisters = 168;

/// The registers per thread a warp-specialized kernel starts with (its
/// `.maxnreg`): what all `threads` may have with `blocks` blocks per SM, a
/// multiple of 8.
inline unsigned warpSpecializedStartRegisters(unsigned threads,
                                              unsigned blocks = 1) {
  return registerBudget(threads, blocks) / 8 * 8;
}

/// The registers per thread that `consumerWarps` consumer warps take
/// beside the producer warpgroup with `blocks` blocks per SM: a multiple of
/// 8, as setmaxnreg needs, and never below what the kernel starts with,
/// which `setmaxnreg.inc` may not lower (4 consumer warps alone on an SM
/// start with 248).
inline unsigned consumerRegisters(unsigned consumerWarps, unsigned blocks = 1) {
  unsigned left =
      TargetInfo::kRegistersPerSM / std::max(blocks, 1u) -
      kProducerWarps * TargetInfo::kThreadsPerWarp * kProducerRegisters;
  unsigned each = left / (consumerWarps * TargetInfo::kThreadsPerWarp) / 8 * 8;
  unsigned start = warpSpecializedStartRegisters(
      (consumerWarps + kProducerWarps) * TargetInfo::kThreadsPerWarp, blocks);
  return std::max(std::min(each, kMaxConsumerRegisters), start);
}

/// Blocks per SM for a warp-specialized kernel: as many as its shared
/// memory allows while its consumers keep kMinConsumerRegisters (tutorial
/// 06 at HEAD_DIM 64: two, where one left the SM with 4 consumer warps).
inline unsigned warpSpecializedBlocks(const TargetInfo &target,
                                      unsigned consumerWarps,
                                      int64_t sharedBytes) {
  unsigned threads =
      (consumerWarps + kProducerWarps) * TargetInfo::kThreadsPerWarp;
  unsigned blocks =
      std::max(blocksPerSMBeforeRegisters(target, threads, sharedBytes), 1u);
  while (blocks > 1 &&
         consumerRegisters(consumerWarps, blocks) < kMinConsumerRegisters)
    --blocks;
  return blocks;
}

} // namespace kiln

#endif // KILN_IR_OCCUPANCY_H
