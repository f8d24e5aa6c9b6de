//===- KilnGPUDialect.td - layouts for GPU execution -------*- tablegen -*-===//
//
// kiln_gpu says which thread holds which tensor element. Its layouts are
// encodings on builtin tensor types; the module carries the launch shape
// (kiln_gpu.num_warps, kiln_gpu.threads_per_warp).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_GPU_DIALECT_TD
#define KILN_GPU_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def KilnGPU_Dialect : Dialect {
  let name = "kiln_gpu";
  let cppNamespace = "::kiln::gpu";
  let summary = "Thread layouts of kiln tensors";
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    static constexpr ::llvm::StringLiteral kNumWarpsAttrName = "kiln_gpu.num_warps";
    static constexpr ::llvm::StringLiteral kThreadsPerWarpAttrName = "kiln_gpu.threads_per_warp";
    /// Warps beyond num_warps that a warp-specialized kernel's producer
    /// runs in (compiler/ir/KilnGPUWarpSpecialization.td).
    static constexpr ::llvm::StringLiteral kProducerWarpsAttrName = "kiln_gpu.producer_warps";
  }];
}

// What every distributed encoding answers; passes and lowerings ask this
// instead of switching over the encodings (compiler/ir/DistributedEncodings.cpp).
def KilnGPU_DistributedEncoding : AttrInterface<"DistributedEncodingAttr"> {
  let cppNamespace = "::kiln::gpu";
  let description = [{
    A layout of a tensor's elements over the registers, lanes and warps of
    a CTA, as a linear layout (compiler/layout/LinearLayout.h).
  }];
  let methods = [
    InterfaceMethod<"The rank of the tensors it lays out.", "unsigned",
                    "getRank">,
    InterfaceMethod<[{How far one tile (every lane and warp once) reaches
                      along `dim`.}], "int64_t", "getTileExtent",
                    (ins "unsigned":$dim)>,
    InterfaceMethod<[{The layout over `shape` as a linear layout from
                      (register, lane, warp) to coordinates; none when the
                      shape does not fit (rank, or not powers of two).}],
                    "std::optional<::kiln::layout::LinearLayout>",
                    "toLinearLayout", (ins "::llvm::ArrayRef<int64_t>":$shape)>,
  ];
}

def KilnGPU_BlockedEncodingAttr : AttrDef<KilnGPU_Dialect, "BlockedEncoding",
    [DeclareAttrInterfaceMethods<KilnGPU_DistributedEncoding>]> {
  let mnemonic = "blocked";
  let summary = "Each thread holds sizePerThread contiguous elements, repeated";
  let description = [{
    A tensor dimension is split into chunks of `sizePerThread` contiguous
    elements, dealt to the `threadsPerWarp` lanes of a warp and then to
    `warpsPerCTA` warps; when the tensor is larger than one such tile, the
    tile repeats and each thread holds one chunk per repetition. `order`
    lists dimensions fastest-varying first. A thread's elements, in its
    register order, are its chunks in tile order.
  }];
  let parameters = (ins
    ArrayRefParameter<"unsigned">:$sizePerThread,
    ArrayRefParameter<"unsigned">:$threadsPerWarp,
    ArrayRefParameter<"unsigned">:$warpsPerCTA,
    ArrayRefParameter<"unsigned">:$order
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def KilnGPU_SliceEncodingAttr : AttrDef<KilnGPU_Dialect, "SliceEncoding",
    [DeclareAttrInterfaceMethods<KilnGPU_DistributedEncoding>]> {
  let mnemonic = "slice";
  let summary = "The parent layout with one dimension reduced away";
  let description = [{
    The layout of a tensor of rank r whose elements sit where `parent` (of
    rank r + 1) puts the elements of a reduction along `dim`: the threads
    that held a row along `dim` all hold its reduced value. Results of
    reductions have it, and `expand_dims(x, dim)` turns it back into
    `parent` without moving data.
  }];
  let parameters = (ins "unsigned":$dim, "::mlir::Attribute":$parent);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def KilnGPU_MmaEncodingAttr : AttrDef<KilnGPU_Dialect, "MmaEncoding",
    [DeclareAttrInterfaceMethods<KilnGPU_DistributedEncoding>]> {
  let mnemonic = "mma";
  let summary = "The accumulator layout of mma.sync m16n8 tensor-core tiles";
  let description = [{
    A 2-D tensor in 16 x 8 tiles, one per warp at a time, laid out as the
    C/D fragments of NVIDIA's `mma.sync.aligned.m16n8k*` instructions (sm_80
    and later): lane l holds columns 2(l%4), 2(l%4)+1 of rows l/4 and
    l/4 + 8. Warps split the tensor `warpsPerCTA` = [along M, along N]; the
    warps' tile repeats over larger tensors (layout::mmaV2). A 3-D tensor
    (a batched dot's B x M x N) has warpsPerCTA = [along B, along M, along
    N], each batch laid out as the 2-D tensor.

    `instrN` (wgmma with warpgroups along N, 2-D only; 0 otherwise): the
    columns each warpgroup's instruction computes. Warps then go along M
    first, four to a warpgroup, and each warpgroup along N takes `instrN`
    adjacent columns (layout::wgmmaSplitN) rather than interleaved 8-column
    tiles. Printed only when set: `#kiln_gpu.mma<{warpsPerCTA = [4, 2],
    instrN = 128}>`.
  }];
  let parameters = (ins ArrayRefParameter<"unsigned">:$warpsPerCTA,
                        DefaultValuedParameter<"unsigned", "0">:$instrN);
  let skipDefaultBuilders = 1;
  let builders = [
    AttrBuilder<(ins "::llvm::ArrayRef<unsigned>":$warpsPerCTA,
                     CArg<"unsigned", "0">:$instrN), [{
      return $_get($_ctxt, warpsPerCTA, instrN);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

class KilnGPU_Op<string mnemonic, list<Trait> traits = []>
    : Op<KilnGPU_Dialect, mnemonic, traits>;

def KilnGPU_ConvertLayoutOp : KilnGPU_Op<"convert_layout", [Pure]> {
  let summary = "The same tensor in another layout";
  let description = [{
    Moves elements between threads (through registers, shuffles or shared
    memory) so that the result holds the operand's values under the result
    type's layout. Shape and element type stay.
  }];
  let arguments = (ins AnyRankedTensor:$src);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

include "compiler/ir/KilnGPUSharedMemory.td"
include "compiler/ir/KilnGPUWarpSpecialization.td"

#endif // KILN_GPU_DIALECT_TD
