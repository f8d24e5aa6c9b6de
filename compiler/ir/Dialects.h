//===- Dialects.h - the kiln and kiln_gpu dialects -----------------------===//
//
// Declares the kiln (tensor-level) and kiln_gpu (layout) dialects, their
// types, attributes and operations.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_DIALECTS_H
#define KILN_IR_DIALECTS_H

#include "compiler/layout/LinearLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "compiler/ir/KilnDialect.h.inc"
#include "compiler/ir/KilnGPUDialect.h.inc"

#include "compiler/ir/KilnEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "compiler/ir/KilnTypes.h.inc"

#include "compiler/ir/KilnGPUAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "compiler/ir/KilnGPUAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "compiler/ir/KilnGPUTypes.h.inc"

#define GET_OP_CLASSES
#include "compiler/ir/KilnOps.h.inc"

#define GET_OP_CLASSES
#include "compiler/ir/KilnGPUOps.h.inc"

namespace kiln {
/// Registers every dialect kilnc and kiln-opt use.
void registerAllDialects(mlir::DialectRegistry &registry);

/// The element type of a tensor, or the type itself for scalars.
mlir::Type getElementTypeOrSelf(mlir::Type type);

/// The size and alignment of a CUDA tensor map (cuda.h's CUtensorMap): a
/// !kiln.tensormap kernel parameter is this many bytes, passed by value.
inline constexpr unsigned kTensorMapBytes = 128;
inline constexpr unsigned kTensorMapAlignment = 64;

/// On a kernel that makes tensor descriptors: its last parameter is the
/// global scratch buffer the programs encode tensor maps in
/// (kiln-lower-tensor-descriptors adds it on every arch).
inline constexpr char kGlobalScratchAttr[] = "kiln.global_scratch";
/// On the module: the bytes of that buffer each program uses
/// (kiln-place-tensor-maps; 0 when no map is encoded).
inline constexpr char kGlobalScratchBytesAttr[] =
    "kiln_gpu.global_scratch_bytes";
/// On the module: kiln-pipeline-dots kept a dot in flight until a later
/// iteration's wait (its defer-waits option).
inline constexpr char kDeferredDotWaitsAttr[] = "kiln_gpu.deferred_dot_waits";
/// On the module: kiln-pipeline-dots pipelined a loop on a wgmma target
/// whose dot reads an operand computed before it (its invariant-rings
/// option).
inline constexpr char kInvariantOperandRingsAttr[] =
    "kiln_gpu.invariant_operand_rings";
/// On the module: kiln-tma-stores kept a store's tile across its loop under
/// a scratch margin below its default (its scratch-margin option).
inline constexpr char kTightTmaStoreTilesAttr[] =
    "kiln_gpu.tight_tma_store_tiles";
/// On the module: kiln-stage-dots copied a dot operand into its tile where
/// it was loaded (its copy-at-loads option).
inline constexpr char kCopiedAtLoadsAttr[] = "kiln_gpu.copied_at_loads";
/// On the module: kiln-stage-dots staged a dot whose tiles fit only beside
/// the buffers live with them, not beside all (its beside-live-buffers
/// option).
inline constexpr char kStagedBesideLiveBuffersAttr[] =
    "kiln_gpu.staged_beside_live_buffers";
/// On a loop kiln-pipeline-dots rewrote: how many iterations ahead its
/// copies run (kiln-prefetch-loads loads as far ahead).
inline constexpr char kStageLeadAttr[] = "kiln_gpu.stage_lead";
} // namespace kiln

#endif // KILN_IR_DIALECTS_H
