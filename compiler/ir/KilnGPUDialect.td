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

def KilnGPU_Dialect : Dialect {
  let name = "kiln_gpu";
  let cppNamespace = "::kiln::gpu";
  let summary = "Thread layouts of kiln tensors";
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    static constexpr ::llvm::StringLiteral kNumWarpsAttrName = "kiln_gpu.num_warps";
    static constexpr ::llvm::StringLiteral kThreadsPerWarpAttrName = "kiln_gpu.threads_per_warp";
  }];
}

def KilnGPU_BlockedEncodingAttr : AttrDef<KilnGPU_Dialect, "BlockedEncoding"> {
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

#endif // KILN_GPU_DIALECT_TD
