//===- KilnDescriptorOps.td - tensor descriptors -----------*- tablegen -*-===//
//
// Tensor descriptors (tl.make_tensor_descriptor, host TensorDescriptor
// kernel arguments) and the block loads, stores and reductions through them.
// A descriptor names a strided tensor in global memory (base, shape, strides)
// and the shape of the blocks moved through it; offsets are given at each
// access, and elements outside the tensor read as zero (or NaN) and are
// never written.
//
// kiln-lower-tensor-descriptors turns them into masked pointer loads and
// stores (every arch); on TMA targets a load through a kernel-argument
// descriptor keeps its tensor map, which kiln-pipeline-dots copies from on
// sm_90a (docs/architecture.md, "Tensor descriptors").
// Verifiers are in KilnDescriptorOps.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DESCRIPTOR_OPS_TD
#define KILN_DESCRIPTOR_OPS_TD

def Kiln_TensorDescType : Kiln_Type<"TensorDesc", "tensordesc"> {
  let summary = "A descriptor of a strided tensor in global memory";
  let description = [{
    The value of tl.make_tensor_descriptor or of a descriptor kernel
    argument: base pointer, shape (i32) and strides (i64, in elements) of a
    tensor, and the shape of the blocks loaded and stored through it,
    `blockType` (whose element type is the tensor's).
  }];
  let parameters = (ins "::mlir::RankedTensorType":$blockType);
  let assemblyFormat = "`<` $blockType `>`";
  let builders = [
    TypeBuilderWithInferredContext<(ins "::mlir::RankedTensorType":$blockType), [{
      return $_get(blockType.getContext(), blockType);
    }]>
  ];
}

def Kiln_TensorDesc : Type<CPred<"::llvm::isa<::kiln::TensorDescType>($_self)">,
                           "kiln tensor descriptor">;
def Kiln_MakeTensorDescOp : Kiln_Op<"make_tensor_desc", [Pure,
    AttrSizedOperandSegments]> {
  let summary = "A tensor descriptor, as tl.make_tensor_descriptor";
  let description = [{
    `shape` (i32) and `strides` (i64, in elements) describe the tensor at
    `base`, one per dimension of the result's block type; the last stride
    is 1. `tensor_map`, present for kernel-argument descriptors, is the
    launcher's encoding of the same tensor. `padding` is the value that
    loads read outside the tensor.
  }];
  let arguments = (ins Kiln_Ptr:$base, Variadic<I32>:$shape,
                       Variadic<I64>:$strides, Optional<Kiln_TensorMap>:$tensor_map,
                       DefaultValuedAttr<Kiln_PaddingOption, "::kiln::PaddingOption::Zero">:$padding);
  let results = (outs Kiln_TensorDesc:$result);
  let assemblyFormat = [{
    $base `,` `[` $shape `]` `,` `[` $strides `]` (`,` `tensor_map` $tensor_map^)?
    (`padding` `=` $padding^)? attr-dict `:` type($base) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kiln_DescriptorLoadOp : Kiln_Op<"descriptor_load", [
    MemoryEffects<[MemRead]>]> {
  let summary = "Load a block through a tensor descriptor (desc.load)";
  let description = [{
    Reads the block of the descriptor's block shape whose first element is
    at `offsets` (i32, one per dimension) in the tensor; elements outside
    the tensor read as the descriptor's padding.
  }];
  let arguments = (ins Kiln_TensorDesc:$desc, Variadic<I32>:$offsets,
                       DefaultValuedAttr<Kiln_CacheModifier, "::kiln::CacheModifier::None">:$cache,
                       DefaultValuedAttr<Kiln_EvictionPolicy, "::kiln::EvictionPolicy::Normal">:$evict);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $desc `[` $offsets `]` (`cache` `=` $cache^)? (`evict` `=` $evict^)?
    attr-dict `:` type($desc) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kiln_DescriptorStoreOp : Kiln_Op<"descriptor_store", [
    MemoryEffects<[MemWrite]>]> {
  let summary = "Store a block through a tensor descriptor (desc.store)";
  let description = [{
    Writes `value`, of the descriptor's block type, to the block at
    `offsets`; elements outside the tensor are not written.
  }];
  let arguments = (ins Kiln_TensorDesc:$desc, AnyRankedTensor:$value,
                       Variadic<I32>:$offsets);
  let assemblyFormat = [{
    $desc `[` $offsets `]` `,` $value attr-dict `:` type($desc) `,` type($value)
  }];
  let hasVerifier = 1;
}

def Kiln_DescriptorReduceOp : Kiln_Op<"descriptor_reduce", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Combine a block into memory atomically (desc.atomic_add, ...)";
  let description = [{
    For each element of the block at `offsets` inside the tensor, atomically
    replaces it by `old kind value` (relaxed, GPU scope, as TMA reductions
    are); elements outside the tensor are left alone. `kind` is an atomic
    RMW kind as kiln.atomic_rmw takes it (fadd for floats, umax/umin for
    unsigned integers).
  }];
  let arguments = (ins Kiln_RMWOp:$kind, Kiln_TensorDesc:$desc,
                       AnyRankedTensor:$value, Variadic<I32>:$offsets);
  let assemblyFormat = [{
    $kind $desc `[` $offsets `]` `,` $value attr-dict `:` type($desc) `,` type($value)
  }];
  let hasVerifier = 1;
}

#endif // KILN_DESCRIPTOR_OPS_TD
