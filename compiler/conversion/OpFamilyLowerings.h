//===- OpFamilyLowerings.h - pattern sets of the kiln op families -*- C++
//-*-===//
//
// One populate function per lowering file: each adds the patterns of one
// family of kiln ops (element-wise, memory, reductions, layouts, atomics,
// library calls, inline PTX, scans, ...) to the kiln-to-llvm conversion.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CONVERSION_OPFAMILYLOWERINGS_H
#define KILN_CONVERSION_OPFAMILYLOWERINGS_H

#include "compiler/conversion/LoweringUtils.h"

namespace kiln {

/// Element-wise arith and kiln ops, one element at a time (or one per run
/// of equal values, see Constancies).
void populateElementwiseToLLVMPatterns(KilnTypeConverter &converter,
                                       const Constancies &constancies,
                                       mlir::RewritePatternSet &patterns);
/// kiln.reduce along any axis: in-thread, shuffles, shared memory.
void populateReduceToLLVMPatterns(KilnTypeConverter &converter,
                                  mlir::RewritePatternSet &patterns);
/// math and kiln math ops: fast approximations, libdevice.
void populateMathToNVVMPatterns(KilnTypeConverter &converter,
                                mlir::RewritePatternSet &patterns);
/// Ops that create tensors or move their elements between threads.
void populateLayoutToLLVMPatterns(KilnTypeConverter &converter,
                                  mlir::RewritePatternSet &patterns);
/// kiln.load and kiln.store: vectorized, predicated global accesses; a
/// load issues one access per run of equal addresses and masks
/// (`constancies`).
void populateMemoryToLLVMPatterns(KilnTypeConverter &converter,
                                  const AccessWidths &widths,
                                  const Constancies &constancies,
                                  mlir::RewritePatternSet &patterns);

/// kiln.dot: per-thread fused multiply-adds over dot-operand layouts.
void populateDotToLLVMPatterns(KilnTypeConverter &converter,
                               mlir::RewritePatternSet &patterns);
/// kiln_gpu buffers, async copies (cp.async), their waits, barriers and
/// proxy fences.
void populateSharedMemoryToLLVMPatterns(KilnTypeConverter &converter,
                                        mlir::RewritePatternSet &patterns);
/// kiln_gpu.shared_dot as wgmma.mma_async with descriptors; dot_wait.
void populateWgmmaToLLVMPatterns(KilnTypeConverter &converter,
                                 mlir::RewritePatternSet &patterns);
/// kiln.make_tensor_map: a tensor map the program encodes in its share of
/// the global scratch buffer (tensormap.replace, cp_fenceproxy).
void populateTensorMapsToLLVMPatterns(KilnTypeConverter &converter,
                                      mlir::RewritePatternSet &patterns);
/// The ops of warp-specialized kernels: mbarrier arrivals, the warp index,
/// setmaxnreg and the tensor-map acquire fence.
void populateWarpSpecializationToLLVMPatterns(
    KilnTypeConverter &converter, mlir::RewritePatternSet &patterns);
/// In a warp-specialized kernel, the CTA barriers the consumers reach after
/// their setmaxnreg.inc become `bar.sync 1, consumerThreads`.
void nameConsumerBarriers(mlir::ModuleOp module, unsigned consumerThreads);
/// kiln.extern_elementwise: calls of declared libdevice functions.
void populateExternCallsToLLVMPatterns(KilnTypeConverter &converter,
                                       mlir::RewritePatternSet &patterns);
/// kiln.precise_sqrt, kiln.precise_divf: sqrt.rn and div.rn.
void populatePreciseMathToNVVMPatterns(KilnTypeConverter &converter,
                                       mlir::RewritePatternSet &patterns);
/// kiln.ptr_cast.
void populatePointerCastsToLLVMPatterns(KilnTypeConverter &converter,
                                        mlir::RewritePatternSet &patterns);
/// kiln.atomic_rmw, kiln.atomic_cas: predicated atom.global instructions.
/// `computeCapability` (80 for sm_80) picks native or emulated bf16 adds.
void populateAtomicsToLLVMPatterns(KilnTypeConverter &converter,
                                   unsigned computeCapability,
                                   const AccessWidths &widths,
                                   mlir::RewritePatternSet &patterns);
/// kiln.inline_asm_elementwise: the user's PTX per (packed) element group.
void populateInlineAsmToLLVMPatterns(KilnTypeConverter &converter,
                                     mlir::RewritePatternSet &patterns);
/// kiln.map_elementwise: its region's ops copied once per (packed) element
/// group of the thread, between casts to and from the tensors' converted
/// types. Runs before structured control flow becomes branches, so that the
/// copies' scf ops lower with the function's.
mlir::LogicalResult inlineMapElementwise(mlir::ModuleOp module,
                                         KilnTypeConverter &converter);
/// kiln.scan along any axis: in-thread, shuffles, shared memory.
void populateScanToLLVMPatterns(KilnTypeConverter &converter,
                                mlir::RewritePatternSet &patterns);
/// arith.truncf/extf to and from fp8: cvt from sm_89, software before.
void populateFp8CastsToLLVMPatterns(KilnTypeConverter &converter,
                                    unsigned computeCapability,
                                    mlir::RewritePatternSet &patterns);
/// arith.truncf rounding toward zero (fp_downcast_rounding="rtz"): cvt.rz.
void populateRoundTowardZeroToLLVMPatterns(KilnTypeConverter &converter,
                                           mlir::RewritePatternSet &patterns);
/// kiln.print and kiln.assert: the driver's vprintf and __assertfail.
void populateDebugOpsToLLVMPatterns(KilnTypeConverter &converter,
                                    mlir::RewritePatternSet &patterns);

} // namespace kiln

#endif // KILN_CONVERSION_OPFAMILYLOWERINGS_H
