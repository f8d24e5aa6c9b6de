//===- KilnGPUSharedMemory.td - shared memory as IR --------*- tablegen -*-===//
//
// Shared memory that outlives one op: buffers with an explicit byte layout
// (a shared encoding), copies into them from global memory that run
// asynchronously, the waits and barriers that order them, and tensor-core
// dots that read their operands straight from such buffers. The software
// pipeliner (kiln-pipeline-dots) produces these ops; kiln-allocate-shared
// gives each buffer its offset.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_GPU_SHARED_MEMORY_TD
#define KILN_GPU_SHARED_MEMORY_TD

include "compiler/ir/KilnEnums.td"

def KilnGPU_NVMMASharedEncodingAttr
    : AttrDef<KilnGPU_Dialect, "NVMMASharedEncoding"> {
  let mnemonic = "nvmma_shared";
  let summary = "The swizzled tile layout the tensor cores read";
  let description = [{
    A tile whose contiguous dimension is the last one (or the first, when
    `transposed`: a column-major tile, such as the K x N operand of
    `x @ w.T`) cut into panels of `swizzle` bytes along that dimension;
    panel p holds, for every line (row, or column when transposed), its
    `swizzle` bytes at p * lines * swizzle + line * swizzle. Within each
    1024-byte group the 16-byte chunk index is XORed with address bits 7
    and up, exactly as the hardware's 128/64/32-byte swizzle modes do: so
    `ldmatrix`, `cp.async` writers and `wgmma` descriptors see the same
    bytes conflict-free. `swizzle` = 0 means no swizzle: plain row-major.
    layout::NvmmaShared computes offsets; layout::nvmmaShared gives the map
    as a linear layout.
  }];
  let parameters = (ins "unsigned":$swizzle,
                        DefaultValuedParameter<"bool", "false">:$transposed);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def KilnGPU_MemDescType : TypeDef<KilnGPU_Dialect, "MemDesc"> {
  let mnemonic = "memdesc";
  let summary = "A buffer in shared memory";
  let description = [{
    `!kiln_gpu.memdesc<3x128x64xf16, #kiln_gpu.nvmma_shared<swizzle = 128>>`:
    a shared-memory buffer of that shape, element type and layout. The
    leading dimensions index whole tiles (a ring of pipeline stages); the
    encoding lays out each tile of the last two dimensions.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        "::mlir::Attribute":$encoding);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// Bytes of the whole buffer.
    int64_t getSizeInBytes() const;
    /// Bytes of one tile (the last two dimensions).
    int64_t getTileBytes() const;
  }];
}

def KilnGPU_MemDesc : Type<CPred<"::llvm::isa<::kiln::gpu::MemDescType>($_self)">,
                           "shared-memory buffer", "::kiln::gpu::MemDescType">;

def KilnGPU_LocalAllocOp : KilnGPU_Op<"local_alloc"> {
  let summary = "A shared-memory buffer, placed by kiln-allocate-shared";
  let description = [{
    The buffer lives from here to its last use; `offset` (bytes from the
    start of the kernel's shared memory) is set by kiln-allocate-shared,
    which lets buffers whose lives do not overlap share bytes.
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset);
  let results = (outs KilnGPU_MemDesc:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def KilnGPU_MemDescIndexOp : KilnGPU_Op<"memdesc_index", [Pure]> {
  let summary = "One tile of a buffer: the leading index applied";
  let arguments = (ins KilnGPU_MemDesc:$src, I32:$index);
  let results = (outs KilnGPU_MemDesc:$result);
  let assemblyFormat = "$src `[` $index `]` attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def KilnGPU_MemDescTransOp : KilnGPU_Op<"memdesc_trans", [Pure]> {
  let summary = "A tile read transposed: a view of the same bytes";
  let description = [{
    The rows of `src` become the columns of the result. An nvmma_shared
    tile stores lines along its contiguous dimension, so the transpose is
    the same bytes with the shape swapped and `transposed` flipped: a tile
    loaded once can be both operands' kind (attention backward reads qᵀ as
    the b of k @ qᵀ and its transpose as the b of dsᵀ @ q).
  }];
  let arguments = (ins KilnGPU_MemDesc:$src);
  let results = (outs KilnGPU_MemDesc:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The type of `src`'s transposed view.
    static MemDescType transposedType(MemDescType src);
  }];
}

def KilnGPU_AsyncCopyOp : KilnGPU_Op<"async_copy"> {
  let summary = "Global memory to a shared tile, without waiting (cp.async)";
  let description = [{
    Each element addressed by `ptrs` is copied to its place in the tile
    `dst`; where `mask` is false the element is zero. The copy joins the
    current group of the issuing thread; kiln_gpu.async_wait waits for
    groups. Lowered to 16-, 8- or 4-byte `cp.async` as wide as axis info
    proves the addresses contiguous and aligned. With `kiln_gpu.runs`
    (compiler/ir/TileRuns.h), runs of equal pointers along a dimension
    share one place in a tile that much smaller, copied by one thread.
  }];
  let arguments = (ins AnyRankedTensor:$ptrs, KilnGPU_MemDesc:$dst,
                       Optional<AnyRankedTensor>:$mask);
  let assemblyFormat = [{
    $ptrs `,` $dst (`mask` $mask^)? attr-dict `:` type($ptrs) `,` type($dst) (`,` type($mask)^)?
  }];
  let hasVerifier = 1;
}

def KilnGPU_AsyncCommitGroupOp : KilnGPU_Op<"async_commit_group"> {
  let summary = "Closes the thread's current group of async copies";
  let assemblyFormat = "attr-dict";
}

def KilnGPU_AsyncWaitOp : KilnGPU_Op<"async_wait"> {
  let summary = "Waits until at most `pending` groups of this thread's copies are in flight";
  let arguments = (ins I32Attr:$pending);
  let assemblyFormat = "attr-dict";
}

def KilnGPU_BarrierOp : KilnGPU_Op<"barrier"> {
  let summary = "All threads of the CTA meet (bar.sync 0)";
  let assemblyFormat = "attr-dict";
}

def KilnGPU_FenceAsyncSharedOp : KilnGPU_Op<"fence_async_shared"> {
  let summary = "Orders generic-proxy shared writes before async-proxy reads";
  let description = [{
    `fence.proxy.async.shared::cta`: shared memory written by ordinary or
    cp.async stores becomes visible to wgmma, which reads through the async
    proxy.
  }];
  let assemblyFormat = "attr-dict";
}

// A kiln.tensormap value (a constraint only: the type is the kiln dialect's).
def KilnGPU_TensorMapArg
    : Type<CPred<"::llvm::isa<::kiln::TensorMapType>($_self)">,
           "kiln tensor map", "::kiln::TensorMapType">,
      BuildableType<"::kiln::TensorMapType::get($_builder.getContext())">;

def KilnGPU_InitBarrierOp : KilnGPU_Op<"init_barrier"> {
  let summary = "Makes a shared mbarrier ready for `count` arrivals a phase";
  let description = [{
    `mbarrier.init` by one thread of the CTA; a kiln_gpu.barrier must follow
    before any thread uses it. `barrier` is one 8-byte mbarrier
    (memdesc<1x1xi64>).
  }];
  let arguments = (ins KilnGPU_MemDesc:$barrier, I32Attr:$count);
  let assemblyFormat = "$barrier `,` $count attr-dict `:` type($barrier)";
  let hasVerifier = 1;
}

def KilnGPU_InvalBarrierOp : KilnGPU_Op<"inval_barrier"> {
  let summary = "Retires a shared mbarrier so its bytes can hold other data";
  let description = [{
    `mbarrier.inval` by one thread, once no thread waits on it any more.
  }];
  let arguments = (ins KilnGPU_MemDesc:$barrier);
  let assemblyFormat = "$barrier attr-dict `:` type($barrier)";
  let hasVerifier = 1;
}

def KilnGPU_WaitBarrierOp : KilnGPU_Op<"wait_barrier"> {
  let summary = "Waits until the mbarrier's phase of parity `phase` completes";
  let description = [{
    Every thread spins on `mbarrier.try_wait.parity`; once it returns, the
    bytes that TMA copies counted on this phase are visible to the thread.
  }];
  let arguments = (ins KilnGPU_MemDesc:$barrier, I32:$phase);
  let assemblyFormat = "$barrier `,` $phase attr-dict `:` type($barrier)";
  let hasVerifier = 1;
}

def KilnGPU_AsyncTmaCopyOp : KilnGPU_Op<"async_tma_copy"> {
  let summary = "A box of a tensor map to a shared tile, counted on an mbarrier (TMA)";
  let description = [{
    Where `pred` holds, one thread arrives on `barrier` expecting the tile's
    bytes and issues `cp.async.bulk.tensor` copies of the box whose first
    element is at `offsets` (outermost first) in the tensor `tensor_map`
    describes, one per `swizzle`-byte panel of the nvmma_shared tile `dst`
    (the tensor map's box is one panel: rows x swizzle bytes). Elements
    outside the tensor land as zeros. The barrier's phase completes when all
    bytes have landed; kiln_gpu.wait_barrier waits for it.
  }];
  let arguments = (ins KilnGPU_TensorMapArg:$tensor_map, Variadic<I32>:$offsets,
                       KilnGPU_MemDesc:$dst, KilnGPU_MemDesc:$barrier,
                       I1:$pred);
  let assemblyFormat = [{
    $tensor_map `[` $offsets `]` `,` $dst `,` $barrier `,` $pred attr-dict
    `:` type($dst) `,` type($barrier)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The box one copy moves into `tile` (rows x one swizzle panel, in
    /// elements, outermost first): what the launcher encodes the map with.
    static ::llvm::SmallVector<int64_t, 2> boxShape(MemDescType tile);
    /// Marks a copy that a warp-specialized kernel's producer warp issues:
    /// its first lane does, rather than thread 0 of the program.
    static constexpr ::llvm::StringLiteral kWarpIssuedAttr =
        "kiln_gpu.warp_issued";
  }];
}

def KilnGPU_LocalStoreOp : KilnGPU_Op<"local_store"> {
  let summary = "Writes a distributed tensor into a shared tile";
  let description = [{
    Each thread writes its elements of `value` where the nvmma_shared tile
    `dst` (of the value's shape and element type) keeps them, in chunks of
    contiguous elements. A kiln_gpu.barrier (and, for readers through the
    async proxy, kiln_gpu.fence_async_shared first) must come before other
    threads read them.
  }];
  let arguments = (ins AnyRankedTensor:$value, KilnGPU_MemDesc:$dst);
  let assemblyFormat = [{
    $value `,` $dst attr-dict `:` type($value) `,` type($dst)
  }];
  let hasVerifier = 1;
}

def KilnGPU_LocalLoadOp : KilnGPU_Op<"local_load"> {
  let summary = "Reads a distributed tensor from a shared tile";
  let description = [{
    Each thread reads its elements of the result from where the
    nvmma_shared tile `src` (of the result's shape and element type) keeps
    them, in chunks of contiguous elements: local_store's reverse. The
    bytes must be visible to the thread: its own cp.async copies waited
    for, other threads' writes ordered by a kiln_gpu.barrier. A tile that
    async copies filled from pointers of the result's layout is read back
    by each thread from exactly the chunks it copied. (The pipeliner reads
    a ring's tile this way where a dot operand is computed from the loaded
    values: a weight dequantized in registers.) With `kiln_gpu.runs`, the
    tile keeps one copy of each run of elements (as the async copies that
    filled it wrote them), and every element of a run reads it.
  }];
  let arguments = (ins KilnGPU_MemDesc:$src);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $src attr-dict `:` type($src) `->` type($result)
  }];
  let hasVerifier = 1;
}

def KilnGPU_AsyncTmaStoreOp : KilnGPU_Op<"async_tma_store"> {
  let summary = "A shared tile to a box of a tensor map (TMA), as a bulk group";
  let description = [{
    Thread 0 issues `cp.async.bulk.tensor` stores of the nvmma_shared tile
    `src` to the box whose first element is at `offsets` (outermost first)
    in the tensor `tensor_map` describes, one per `swizzle`-byte panel (the
    map's box is one panel: rows x swizzle bytes), and commits them as one
    bulk group. Elements outside the tensor are not written. The tile must
    not change until kiln_gpu.tma_store_wait. With `reduce` (add, and, or,
    xor), each element is combined into memory atomically instead
    (`cp.reduce.async.bulk.tensor`).
  }];
  let arguments = (ins KilnGPU_TensorMapArg:$tensor_map, Variadic<I32>:$offsets,
                       KilnGPU_MemDesc:$src, OptionalAttr<StrAttr>:$reduce);
  let assemblyFormat = [{
    $tensor_map `[` $offsets `]` `,` $src attr-dict `:` type($src)
  }];
  let hasVerifier = 1;
}

def KilnGPU_TmaStoreWaitOp : KilnGPU_Op<"tma_store_wait"> {
  let summary = "Waits until the TMA stores issued so far have read their tiles";
  let description = [{
    Thread 0 waits (`cp.async.bulk.wait_group.read 0`) until its bulk stores
    have read `src`, which lives to here; a kiln_gpu.barrier must follow
    before other threads write its bytes.
  }];
  let arguments = (ins KilnGPU_MemDesc:$src);
  let assemblyFormat = "$src attr-dict `:` type($src)";
}

def KilnGPU_SharedDotOp : KilnGPU_Op<"shared_dot"> {
  let summary = "d = a × b + c on the tensor cores, a and b read from shared tiles";
  let description = [{
    a (M × K) and b (K × N) are shared tiles in an nvmma_shared layout; c and
    d are in the mma accumulator layout. a may instead be a register tensor
    in the accumulator's mma layout with all warps along M (attention's P in
    P @ V): each thread then already holds its A fragments. A 16-row a may
    also be in the mma layout with all warps along M, wrapping around its
    rows, beside an accumulator with all warps along N (decode attention's
    P over a group's query heads): every warp holds all of a. On sm_90a with warps along M in
    groups of four and M a multiple of 64 this is `wgmma.mma_async` with
    shared-memory descriptors; when `async` is set the result is not ready
    until a kiln_gpu.dot_wait releases it. Elsewhere it is `ldmatrix` plus
    `mma.sync.m16n8k16`, synchronous. `input_precision` says how fp32
    operands are multiplied, as on kiln.dot (absent: tf32); the emulations
    (tf32x3, bf16x3, bf16x6) take mma.sync.

    `use_c`, when given, says at run time whether c is added: false makes d
    = a × b whatever c holds (wgmma's scale-d; a flattened loop's first
    iteration of each tile, whose accumulator restarts from zero).

    `add_c_after` makes d = c + (a × b) with the product summed from zero on
    its own and c added in fp32 afterwards: fp8's `acc += tl.dot(a, b)`,
    which kiln.dot keeps apart so that c is not accumulated at the tensor
    cores' reduced precision. The wgmma lowering computes it a slice of N at
    a time, so the product never holds a whole second accumulator of
    registers (kiln-sum-dots-apart). Synchronous, fp32 only.

    `max_num_imprecise_acc`, as on kiln.dot: where it is at most K, the
    wgmma lowering sums fp8 products that many of K at a time (a multiple
    of the instruction's K), each partial sum added to the fp32 accumulator
    (synchronously, whatever `async` says).
  }];
  let arguments = (ins AnyType:$a, KilnGPU_MemDesc:$b,
                       AnyRankedTensor:$c, Optional<I1>:$use_c,
                       UnitAttr:$async,
                       OptionalAttr<Kiln_InputPrecision>:$input_precision,
                       UnitAttr:$add_c_after,
                       OptionalAttr<I32Attr>:$max_num_imprecise_acc);
  let results = (outs AnyRankedTensor:$d);
  let assemblyFormat = [{
    $a `,` $b `,` $c (`use_c` $use_c^)? attr-dict `:` type($a) `,` type($b) `,` type($c) `->` type($d)
  }];
  let hasVerifier = 1;
}

def KilnGPU_DotWaitOp : KilnGPU_Op<"dot_wait"> {
  let summary = "Waits until at most `pending` async dots of this warpgroup are in flight";
  let description = [{
    `wgmma.wait_group`: the values pass through unchanged, but only from
    here on may they be read (their registers are tied to the dots still
    writing them).
  }];
  let arguments = (ins Variadic<AnyType>:$inputs, I32Attr:$pending);
  let results = (outs Variadic<AnyType>:$outputs);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs) `->` type($outputs)";
  let hasVerifier = 1;
}

#endif // KILN_GPU_SHARED_MEMORY_TD
