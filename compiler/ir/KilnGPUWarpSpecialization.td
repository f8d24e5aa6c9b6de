//===- KilnGPUWarpSpecialization.td - producer and consumer warps -*- tablegen -*-===//
//
// A warp-specialized kernel (kiln-pipeline-dots, for a loop marked
// `tl.range(..., warp_specialize=True)` on sm_90a) runs its program as two
// roles: the consumer warps (the kernel's num_warps) compute, and one extra
// warpgroup, the producer, issues the TMA copies that fill the rings the
// consumers read. The roles hand ring slots to each other through mbarriers:
// a slot's "full" barrier counts the bytes TMA lands, its "empty" barrier
// counts the consumer threads done reading it. These ops are the pieces
// that handshake and the role split need beyond kiln_gpu's shared-memory
// ops.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_GPU_WARP_SPECIALIZATION_TD
#define KILN_GPU_WARP_SPECIALIZATION_TD

def KilnGPU_ArriveBarrierOp : KilnGPU_Op<"arrive_barrier"> {
  let summary = "Every executing thread arrives once on a shared mbarrier";
  let description = [{
    `mbarrier.arrive.shared::cta.b64` by each thread that runs it: a
    consumer thread announcing that it no longer reads a ring slot. The
    barrier's phase completes when its count of arrivals is reached.
  }];
  let arguments = (ins KilnGPU_MemDesc:$barrier);
  let assemblyFormat = "$barrier attr-dict `:` type($barrier)";
  let hasVerifier = 1;
}

def KilnGPU_WarpIndexOp : KilnGPU_Op<"warp_index", [Pure]> {
  let summary = "The executing warp's index in the program (tid.x / 32)";
  let results = (outs I32:$result);
  let assemblyFormat = "attr-dict";
}

def KilnGPU_SetMaxRegistersOp : KilnGPU_Op<"set_max_registers"> {
  let summary = "Moves the warpgroup's register budget (setmaxnreg)";
  let description = [{
    `setmaxnreg.inc` (when `increase`) or `.dec` to `count` registers per
    thread, executed by all threads of a warpgroup: the producer gives back
    the registers it does not need, the consumers take them. `count` is a
    multiple of 8 in [24, 256]; the kernel's `.maxnreg` must let all its
    warps start.
  }];
  let arguments = (ins I32Attr:$count, UnitAttr:$increase);
  let assemblyFormat = "(`increase` $increase^)? $count attr-dict";
  let hasVerifier = 1;
}

def KilnGPU_TensorMapAcquireOp : KilnGPU_Op<"tensor_map_acquire"> {
  let summary = "Makes a map the kernel encoded visible to this thread's TMA";
  let description = [{
    `fence.proxy.tensormap::generic.acquire.gpu` on the map's 128 bytes: a
    thread other than the one that encoded the map (kiln.make_tensor_map)
    issues TMA copies with it, after a barrier orders the two.
  }];
  let arguments = (ins KilnGPU_TensorMapArg:$tensor_map);
  let assemblyFormat = "$tensor_map attr-dict";
}

#endif // KILN_GPU_WARP_SPECIALIZATION_TD
