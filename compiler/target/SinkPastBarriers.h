//===- SinkPastBarriers.h - scalar arithmetic next to its use -------------===//
//
// Scalar arithmetic that the kernel source writes early but only a later
// access reads, past a barrier, stays where it was written: the address of
// the target logit in triton-lang/kernels' cross-entropy forward
// (`PROBS + row * N + idx`, idx loaded first, read after the reductions).
// ptxas then kept the idx load first and scheduled the address right after
// it, among the logit loads, so the warp waited for idx before issuing the
// last of them (10% of the kernel's stall samples). Moved down to its use,
// ptxas issues the logit loads together and idx's under the reductions, as
// for Triton's PTX, whose address is computed at the end.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TARGET_SINKPASTBARRIERS_H
#define KILN_TARGET_SINKPASTBARRIERS_H

namespace llvm {
class Function;
} // namespace llvm

namespace kiln {

/// Moves each side-effect-free scalar instruction of `function` computed
/// from a scalar loaded in its block, whose users are all later in the
/// block with a barrier (llvm.nvvm.barrier*, inline bar.sync) before the
/// first of them, to just before that first user; the last such
/// instruction first, so that whole chains move. Returns whether
/// `function` changed. Kernels on tensor cores keep the order they were
/// tuned with (PTXEmission.cpp does not call it there).
bool sinkPastBarriers(llvm::Function &function);

} // namespace kiln

#endif // KILN_TARGET_SINKPASTBARRIERS_H
