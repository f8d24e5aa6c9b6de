//===- Passes.td - Kiln's passes ---------------------------*- tablegen -*-===//
#ifndef KILN_PASSES_TD
#define KILN_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnUnrollLoops : Pass<"kiln-unroll-loops", "mlir::ModuleOp"> {
  let summary = "Unroll loops marked with tl.range's loop_unroll_factor";
  let description = [{
    A loop with `kiln.loop_unroll_factor` N > 1 runs N copies of its body
    per iteration, followed by a loop over the trip count's remainder
    (MLIR's loopUnrollByFactor), as upstream unrolls before pipelining.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def KilnRewriteBlockPointers : Pass<"kiln-rewrite-block-pointers", "mlir::ModuleOp"> {
  let summary = "Replace block pointers by their scalar parts and tensors of pointers";
  let description = [{
    Every `!kiln.block_ptr` value becomes its base pointer, shape and strides
    (i64) and offsets (i32); kiln.advance adds to the offsets. A load or
    store through a block pointer becomes one on the tensor of pointers
    base + sum over d of (offset_d + arange(0, B_d)) * stride_d, masked by
    0 <= offset_d + i_d < shape_d over its boundary_check dimensions, with
    out-of-bounds loads reading zero or NaN as padding says. Loops and ifs
    that carry block pointers carry the parts that change instead.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def KilnLowerTensorDescriptors : Pass<"kiln-lower-tensor-descriptors", "mlir::ModuleOp"> {
  let summary = "Lower tensor-descriptor accesses to masked pointer loads and stores";
  let description = [{
    Upstream Triton's fallback semantics, valid on every arch. Every
    `!kiln.tensordesc` value becomes its base pointer, shape (i32) and
    strides (i64); kiln.descriptor_load, kiln.descriptor_store and
    kiln.descriptor_reduce at offsets o become kiln.load, kiln.store and
    kiln.atomic_rmw on the tensor of pointers base + sum over d of
    (o_d + arange(0, B_d)) * stride_d, masked by 0 <= o_d + i_d < shape_d in
    every dimension: out-of-bounds elements read as the descriptor's padding
    (zero or NaN) and are never written. A descriptor's tensor map is not
    read. Loops and ifs that carry descriptors carry their parts instead.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def KilnPlaceTensorMaps : Pass<"kiln-place-tensor-maps", "mlir::ModuleOp"> {
  let summary = "Keep the tensor maps TMA uses and place them in the global scratch buffer";
  let description = [{
    After kiln-pipeline-dots and kiln-tma-stores: a kiln.make_tensor_map
    that no TMA copy or store reads is dropped (the masked accesses that
    named it lose it), equal maps (same tensor, box and swizzle) merge, and
    each kept map gets `scratch_offset`, its 128 bytes in each program's
    share of the global scratch buffer. A module whose kernel takes that
    buffer gets `kiln_gpu.global_scratch_bytes`, the share's size.
  }];
}

def KilnCarryPointers : Pass<"kiln-carry-pointers", "mlir::ModuleOp"> {
  let summary = "Carry a matmul loop's pointers instead of computing them from the induction variable";
  let description = [{
    A load in a loop that holds a dot, whose pointers grow by the same
    amount each iteration (affine in the induction variable), reads a
    carried pointer tensor instead: it starts at the pointers' value for
    the first iteration and advances by their step (no tensor-map loads).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def KilnAssignLayouts : Pass<"kiln-assign-layouts", "mlir::ModuleOp"> {
  let summary = "Give every tensor a kiln_gpu layout chosen for coalesced, vectorized access";
  let description = [{
    Turns kiln IR into kiln_gpu IR. For each tensor shape the pass picks a
    blocked layout whose per-thread chunk is as wide as the widest global
    access of that shape can be vectorized (from axis info: contiguity and
    divisibility of the pointers, at most 128 bits), and no wider than the
    tensor's share per thread. The module gets `kiln_gpu.num_warps` and
    `kiln_gpu.threads_per_warp`.
  }];
  let options = [
    Option<"numWarps", "num-warps", "unsigned", /*default=*/"4",
           "Warps per program instance (CTA)">,
  ];
  let dependentDialects = ["::kiln::gpu::KilnGPUDialect"];
}

def KilnFlattenLoops : Pass<"kiln-flatten-loops", "mlir::ModuleOp"> {
  let summary = "Fuse a loop marked flatten (tl.range's option) with the loop it holds";
  let description = [{
    A loop with `kiln.flatten` set whose body is pure ops A, one inner loop
    with bounds defined outside, and ops C becomes one loop over both trip
    counts: A runs in an scf.if at each inner loop's first iteration (its
    values carried), the inner loop's carried values restart there (a
    select), and C runs in an scf.if at its last. The pipeliner then keeps
    copies in flight across the outer iterations (a persistent kernel's
    tiles). When the inner loop runs no iteration, or the product does not
    fit the induction variable, the original nested loop runs. Targets
    without wgmma keep the nested loops.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def KilnPipelineDots : Pass<"kiln-pipeline-dots", "mlir::ModuleOp"> {
  let summary = "Software-pipeline the operand loads of loop dots through cp.async rings";
  let description = [{
    In a loop whose body loads both operands of one tensor-core dot (fp16 or
    bf16 into fp32, mma layout), the loads become cp.async copies into rings
    of `num-stages` shared tiles, issued num-stages - 1 iterations ahead, and
    the dot becomes kiln_gpu.shared_dot on the tile that has landed (async,
    with kiln_gpu.dot_wait keeping one in flight, where it will be wgmma).
    A loop's `kiln.num_stages` attribute (tl.range's num_stages) overrides
    the option. Loops it cannot prove safe to pipeline are left alone.
  }];
  let options = [
    Option<"numStages", "num-stages", "unsigned", /*default=*/"3",
           "Pipeline stages (shared tiles per operand); below 2, nothing is pipelined">,
    Option<"deferWaits", "defer-waits", "bool", /*default=*/"true",
           "Keep a dot whose carried result the next iteration reads after "
           "an earlier dot's wait (attention's p @ v) in flight until that "
           "wait; false waits for it in its own iteration. The module gets "
           "kiln_gpu.deferred_dot_waits where it deferred one">,
    Option<"invariantRings", "invariant-rings", "bool", /*default=*/"true",
           "On wgmma targets at 8 warps, pipeline a loop whose dot reads an "
           "operand computed before it (attention's scaled q: written to its "
           "tile once, before the loop). The module gets "
           "kiln_gpu.invariant_operand_rings where it did (kilnc compiles "
           "again without it and keeps the form with more blocks an SM)">,
  ];
  let dependentDialects = ["::kiln::gpu::KilnGPUDialect",
                           "::mlir::arith::ArithDialect"];
}

def KilnStageDots : Pass<"kiln-stage-dots", "mlir::ModuleOp"> {
  let summary = "Stage the operands of dots left in registers through shared memory for wgmma (mma.sync without it)";
  let description = [{
    On targets with wgmma, a kiln.dot that kiln-pipeline-dots left alone
    (outside a loop, in a loop with num_stages 1 or one it cannot pipeline)
    and that wgmma can compute becomes a kiln_gpu.shared_dot: its operands
    are written to nvmma_shared tiles allocated right before it (a stays in
    registers where it is in the accumulator's layout), behind a proxy
    fence and a barrier, with a barrier after it. Dots whose tiles do not
    fit beside the function's other buffers (those live beside them, with
    beside-live-buffers) keep mma.sync. An operand loaded
    in the block that stages it is copied into its tile with cp.async where
    it is loaded (copy-at-loads). On targets without wgmma (sm_80-89,
    plain sm_90) 16-bit dots are staged the same way for mma.sync, which
    reads the tiles with ldmatrix: no proxy fence and no wait.
  }];
  let options = [
    Option<"copyAtLoads", "copy-at-loads", "bool", /*default=*/"true",
           "Copy operands loaded in the staging block into their tiles where "
           "they are loaded. The module gets kiln_gpu.copied_at_loads where "
           "a copy was made (its tile lives from the load on; kilnc compiles "
           "again without them where shared memory then runs out)">,
    Option<"besideLiveBuffers", "beside-live-buffers", "bool",
           /*default=*/"true",
           "Where a dot's tiles do not fit beside every buffer of the "
           "function, place them as kiln-allocate-shared would among the "
           "buffers live beside them. The module gets "
           "kiln_gpu.staged_beside_live_buffers where a dot was staged so "
           "(kilnc compiles again without it where the scratch of single ops "
           "then runs out of shared memory)">,
  ];
  let dependentDialects = ["::kiln::gpu::KilnGPUDialect"];
}

def KilnTmaStores : Pass<"kiln-tma-stores", "mlir::ModuleOp"> {
  let summary = "Store descriptor blocks through shared memory with TMA (sm_90a)";
  let description = [{
    On targets with wgmma, a kiln.store that carries a kernel argument's
    tensor map (kiln-lower-tensor-descriptors) is written to an nvmma_shared
    tile and stored by thread 0 with cp.async.bulk.tensor, one box per
    swizzle panel; the box and swizzle join `kiln_gpu.tensor_maps`. A
    kiln.atomic_rmw reduction with a tensor map (adds, and/or/xor) becomes a
    TMA reduction (cp.reduce.async.bulk.tensor) the same way.
  }];
  let options = [
    Option<"scratchMargin", "scratch-margin", "int64_t", /*default=*/"16384",
           "Bytes left for single ops' scratch when deciding whether a store "
           "in a loop keeps its tile across the loop. A tile kept that would "
           "not fit under the default marks the module "
           "kiln_gpu.tight_tma_store_tiles (kilnc compiles again with the "
           "default where shared memory then runs out)">,
  ];
}

def KilnPrefetchLoads : Pass<"kiln-prefetch-loads", "mlir::ModuleOp"> {
  let summary = "Issue a tensor-core loop's small non-operand loads ahead, up to as far as its copies";
  let description = [{
    In a loop kiln-pipeline-dots rewrote (it holds a kiln_gpu.shared_dot), a
    load of at most 8 registers a thread whose address comes from the
    induction variable, loop invariants and pure carried recurrences is
    loaded ahead (masked off past the last) and carried, so the iteration
    that reads it does not wait for global memory (attention backward's m
    and Di, a quantized GEMM's scales): as many iterations ahead as the
    loop's copies run (the `kiln_gpu.stage_lead` mark kiln-pipeline-dots
    leaves, which this pass removes) when it feeds a dot operand and the
    values in flight beyond the next iteration's take at most 6 registers a
    thread over the loop, else one iteration.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def KilnSumDotsApart : Pass<"kiln-sum-dots-apart", "mlir::ModuleOp"> {
  let summary = "Make c + dot(a, b, 0) one shared_dot that adds c after its product, a slice of N at a time";
  let description = [{
    An async kiln_gpu.shared_dot with a zero fp32 accumulator whose waited
    result only an arith.addf reads (fp8's `acc += tl.dot(a, b)`, kept
    apart from the dot for precision) becomes a synchronous shared_dot
    with `add_c_after` and the addf's other operand as c, where the
    accumulator takes at least 96 registers a thread: its wgmma lowering
    sums the product a slice of N at a time and adds each slice to c, so
    the product never needs a second whole tile of registers. The sums
    are the same, element by element.
  }];
}

def KilnAllocateShared : Pass<"kiln-allocate-shared", "mlir::ModuleOp"> {
  let summary = "Give every shared buffer an offset, reusing bytes of buffers whose lives do not overlap";
  let description = [{
    Sets `offset` on every kiln_gpu.local_alloc (first fit, 1024-byte
    aligned, by liveness over program order with loops kept whole),
    `kiln_gpu.scratch_base` on tensor ops inside a buffer's life (where the
    scratch arrays of their lowering must start), and the module's
    `kiln_gpu.buffer_bytes`.
  }];
}

def KilnDropClosingBarriers : Pass<"kiln-drop-closing-barriers", "mlir::ModuleOp"> {
  let summary = "Drop barriers whose work the next barrier does, and repeated proxy fences";
  let description = [{
    After kiln-allocate-shared: a kiln_gpu.barrier goes when no op between
    it and the next barrier touches bytes that the ops since the barrier
    before it wrote, or writes bytes they read (tiles by their offsets,
    scratch from its base on). At a loop body's end the walk goes on through
    the next iteration to its first barrier, and a barrier after the loop
    orders the last iteration where the code there conflicts. Ops with
    regions and unlisted kiln_gpu ops count as touching every byte; a wait
    for copies or a proxy fence before a barrier keeps it. Outside loops
    only a barrier after pure reads goes, before ops that take no scratch.
    First, a
    kiln_gpu.fence_async_shared after another with no generic-proxy access
    of shared memory between them (only wgmma dots) goes.
  }];
}

def KilnToLLVM : Pass<"kiln-to-llvm", "mlir::ModuleOp"> {
  let summary = "Lower kiln_gpu IR to the LLVM and NVVM dialects";
  let description = [{
    Each tensor becomes the LLVM struct of the elements the thread holds under
    its layout; elementwise ops apply per element; global loads and stores
    become predicated, vectorized `ld.global`/`st.global` (up to 128 bits,
    as wide as axis info proves the access contiguous, aligned and uniformly
    masked). The kernel function gets `nvvm.kernel` and its thread count.
  }];
  let options = [
    Option<"computeCapability", "compute-capability", "unsigned",
           /*default=*/"80",
           "Target compute capability (90 for sm_90a): picks native or "
           "emulated instructions where the architectures differ">,
  ];
  // cf: scf lowers to it inside this pass, before the LLVM conversion.
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
                           "::mlir::cf::ControlFlowDialect"];
}

#endif // KILN_PASSES_TD
