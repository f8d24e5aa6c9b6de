//===- KilnOps.td - operations of the kiln dialect ---------*- tablegen -*-===//
#ifndef KILN_OPS_TD
#define KILN_OPS_TD

include "compiler/ir/KilnDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/IR/BuiltinTypes.td"

def Kiln_Ptr : Type<CPred<"::llvm::isa<::kiln::PointerType>($_self)">, "kiln pointer">;
def Kiln_PtrTensor : RankedTensorOf<[Kiln_Ptr]>;
def Kiln_PtrLike : AnyTypeOf<[Kiln_Ptr, Kiln_PtrTensor]>;
def Kiln_IntLike : AnyTypeOf<[AnySignlessInteger, RankedTensorOf<[AnySignlessInteger]>]>;
def Kiln_BoolLike : AnyTypeOf<[I1, RankedTensorOf<[I1]>]>;

include "mlir/IR/EnumAttr.td"
include "compiler/ir/KilnEnums.td"
include "compiler/ir/KilnMemoryOps.td"
include "compiler/ir/KilnDescriptorOps.td"
include "compiler/ir/KilnShapeOps.td"
include "compiler/ir/KilnComputeOps.td"

def Kiln_ProgramIdOp : Kiln_Op<"program_id", [Pure]> {
  let summary = "Index of this program instance along a grid axis";
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<2>]>:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
}

def Kiln_NumProgramsOp : Kiln_Op<"num_programs", [Pure]> {
  let summary = "Number of program instances along a grid axis";
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<2>]>:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
}

def Kiln_MakeRangeOp : Kiln_Op<"make_range", [Pure]> {
  let summary = "The 1-D tensor [start, end) of i32";
  let arguments = (ins I32Attr:$start, I32Attr:$end);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Kiln_SplatOp : Kiln_Op<"splat", [Pure,
    TypesMatchWith<"result element type matches the scalar",
                   "result", "src", "::llvm::cast<::mlir::RankedTensorType>($_self).getElementType()">]> {
  let summary = "A tensor with every element equal to a scalar";
  let arguments = (ins AnyType:$src);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
}

def Kiln_AddPtrOp : Kiln_Op<"addptr", [Pure, AllTypesMatch<["ptr", "result"]>]> {
  let summary = "Pointer plus an element offset";
  let description = [{
    Advances `ptr` by `offset` elements of the pointee type (C semantics).
    The offset has the shape of the pointer operand.
  }];
  let arguments = (ins Kiln_PtrLike:$ptr, Kiln_IntLike:$offset);
  let results = (outs Kiln_PtrLike:$result);
  let assemblyFormat = "$ptr `,` $offset attr-dict `:` type($ptr) `,` type($offset)";
  let hasVerifier = 1;
}

def Kiln_LoadOp : Kiln_Op<"load", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Load from global memory, optionally masked";
  let description = [{
    Reads the elements addressed by `ptr`. Where `mask` is false nothing is
    read and the element is `other` (undefined when `other` is absent).
    Through a block pointer, the dimensions in `boundary_check` are checked
    against the tensor's shape and out-of-bounds elements read as `padding`
    (undefined when absent); block-pointer loads take no mask. `cache`,
    `evict` and `is_volatile` are tl.load's cache_modifier, eviction_policy
    and volatile. A load reads memory; a volatile one also counts as a
    write, so that it is neither removed, merged nor hoisted out of a loop
    (a spin-wait on another block's flag), as upstream's.

    `tensor_map` and `box_offsets`, set only by kiln-lower-tensor-descriptors
    on targets with TMA, say that the same elements are the box at those
    offsets (outermost first) of a kernel argument's tensor map, which reads
    zero outside the tensor as the masked load does: a pass that stages the
    load in shared memory may copy the box with TMA instead. Lowerings that
    do not know them ignore them (the pointers stay the load's meaning).
  }];
  let arguments = (ins AnyTypeOf<[Kiln_PtrLike, Kiln_BlockPtr]>:$ptr,
                       Optional<Kiln_BoolLike>:$mask, Optional<AnyType>:$other,
                       Optional<Kiln_TensorMap>:$tensor_map,
                       Variadic<I32>:$box_offsets,
                       OptionalAttr<DenseI32ArrayAttr>:$boundary_check,
                       OptionalAttr<Kiln_PaddingOption>:$padding,
                       DefaultValuedAttr<Kiln_CacheModifier, "::kiln::CacheModifier::None">:$cache,
                       DefaultValuedAttr<Kiln_EvictionPolicy, "::kiln::EvictionPolicy::Normal">:$evict,
                       UnitAttr:$is_volatile);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $ptr (`,` `mask` $mask^)? (`,` `other` $other^)?
    (`tensor_map` $tensor_map^ `[` $box_offsets `]`)?
    (`boundary_check` `=` $boundary_check^)? (`padding` `=` $padding^)?
    (`cache` `=` $cache^)? (`evict` `=` $evict^)? (`volatile` $is_volatile^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$ptr,
                   "::mlir::Value":$mask, "::mlir::Value":$other), [{
      build($_builder, $_state, result, ptr, mask, other, ::mlir::Value(),
            ::mlir::ValueRange(), ::mlir::DenseI32ArrayAttr(),
            ::kiln::PaddingOptionAttr(), ::kiln::CacheModifier::None,
            ::kiln::EvictionPolicy::Normal, /*is_volatile=*/false);
    }]>,
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$ptr,
                   "::mlir::Value":$mask, "::mlir::Value":$other,
                   "::mlir::DenseI32ArrayAttr":$boundary_check,
                   "::kiln::PaddingOptionAttr":$padding,
                   "::kiln::CacheModifier":$cache,
                   "::kiln::EvictionPolicy":$evict, "bool":$is_volatile), [{
      build($_builder, $_state, result, ptr, mask, other, ::mlir::Value(),
            ::mlir::ValueRange(), boundary_check, padding, cache, evict,
            is_volatile);
    }]>
  ];
  let hasVerifier = 1;
}

def Kiln_StoreOp : Kiln_Op<"store", [AttrSizedOperandSegments,
    MemoryEffects<[MemWrite]>]> {
  let summary = "Store to global memory, optionally masked";
  let description = [{
    Writes `value` where `mask` is true (everywhere when absent). Through a
    block pointer, elements outside the tensor in the `boundary_check`
    dimensions are not written; block-pointer stores take no mask.

    `tensor_map` and `box_offsets`, set only by kiln-lower-tensor-descriptors
    on targets with TMA, say that the same elements are the box at those
    offsets (outermost first) of a kernel argument's tensor map, whose
    stores drop what falls outside the tensor as the mask does:
    kiln-tma-stores may store the box with TMA instead. Lowerings that do
    not know them ignore them.
  }];
  let arguments = (ins AnyTypeOf<[Kiln_PtrLike, Kiln_BlockPtr]>:$ptr,
                       AnyType:$value, Optional<Kiln_BoolLike>:$mask,
                       Optional<Kiln_TensorMap>:$tensor_map,
                       Variadic<I32>:$box_offsets,
                       OptionalAttr<DenseI32ArrayAttr>:$boundary_check,
                       DefaultValuedAttr<Kiln_CacheModifier, "::kiln::CacheModifier::None">:$cache,
                       DefaultValuedAttr<Kiln_EvictionPolicy, "::kiln::EvictionPolicy::Normal">:$evict);
  let assemblyFormat = [{
    $ptr `,` $value (`,` `mask` $mask^)?
    (`tensor_map` $tensor_map^ `[` $box_offsets `]`)?
    (`boundary_check` `=` $boundary_check^)? (`cache` `=` $cache^)?
    (`evict` `=` $evict^)?
    attr-dict `:` type($ptr) `,` type($value) (`,` type($mask)^)?
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$ptr, "::mlir::Value":$value,
                   "::mlir::Value":$mask), [{
      build($_builder, $_state, ptr, value, mask, ::mlir::Value(),
            ::mlir::ValueRange(), ::mlir::DenseI32ArrayAttr(),
            ::kiln::CacheModifier::None, ::kiln::EvictionPolicy::Normal);
    }]>,
    OpBuilder<(ins "::mlir::Value":$ptr, "::mlir::Value":$value,
                   "::mlir::Value":$mask,
                   "::mlir::DenseI32ArrayAttr":$boundary_check,
                   "::kiln::CacheModifier":$cache,
                   "::kiln::EvictionPolicy":$evict), [{
      build($_builder, $_state, ptr, value, mask, ::mlir::Value(),
            ::mlir::ValueRange(), boundary_check, cache, evict);
    }]>
  ];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions and scans: the combine function is the op's region.
//===----------------------------------------------------------------------===//

def Kiln_ReduceOp : Kiln_Op<"reduce", [Pure, SingleBlock, RecursiveMemoryEffects]> {
  let summary = "Reduce tensors along one axis with a combine function";
  let description = [{
    Combines the elements of each operand along `axis` with the region, which
    takes (accumulated values..., next values...) as scalars and yields the
    combined values with `kiln.reduce.return`. The results have the operands'
    shapes without `axis` (scalars for 1-D operands). The order in which
    elements are combined is unspecified: the function must be associative
    (and, in practice, commutative) for the result to be deterministic.
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$srcs, I32Attr:$axis);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$combineOp);
  let assemblyFormat = "$srcs attr-dict `:` functional-type($srcs, $results) $combineOp";
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  // ReduceOfNegation.cpp: a signed max/min of negated integers becomes the
  // complement of the dual reduction (a ptxas miscompile workaround).
  let hasCanonicalizer = 1;
}

def Kiln_ReduceReturnOp : Kiln_Op<"reduce.return",
    [HasParent<"ReduceOp">, Pure, ReturnLike, Terminator]> {
  let summary = "Yields the combined values of a reduction step";
  let arguments = (ins Variadic<AnyType>:$result);
  let assemblyFormat = "$result attr-dict `:` type($result)";
}

def Kiln_ScanOp : Kiln_Op<"scan", [Pure, SingleBlock, RecursiveMemoryEffects]> {
  let summary = "Inclusive prefix scan along one axis with a combine function";
  let description = [{
    Like kiln.reduce, but every position gets the combination of the elements
    before it (inclusive) along `axis`, from the end when `reverse`. The
    results have the operands' shapes.
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$srcs, I32Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$combineOp);
  let assemblyFormat = "$srcs attr-dict `:` functional-type($srcs, $results) $combineOp";
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Kiln_ScanReturnOp : Kiln_Op<"scan.return",
    [HasParent<"ScanOp">, Pure, ReturnLike, Terminator]> {
  let summary = "Yields the combined values of a scan step";
  let arguments = (ins Variadic<AnyType>:$result);
  let assemblyFormat = "$result attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// A scalar function over every element: the function is the op's region.
//===----------------------------------------------------------------------===//

def Kiln_MapElementwiseOp : Kiln_Op<"map_elementwise",
    [SingleBlock, RecursiveMemoryEffects]> {
  let summary = "A scalar function applied to the elements, as tl.map_elementwise";
  let description = [{
    The region runs once per `pack` consecutive elements a thread holds. It
    takes `pack` elements of each operand as scalars (those of the first
    operand, then of the second, ...) and yields `pack` elements of each
    result (the first result's, then the second's, ...) with
    `kiln.map_elementwise.return`. Operands and results share one shape.
    Unlike element-wise arithmetic, the region may branch per element: only
    the branch an element takes runs.
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$srcs,
                       ConfinedAttr<I32Attr, [IntMinValue<1>]>:$pack);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$srcs attr-dict `:` functional-type($srcs, $results) $body";
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Kiln_MapElementwiseReturnOp : Kiln_Op<"map_elementwise.return",
    [HasParent<"MapElementwiseOp">, Pure, ReturnLike, Terminator]> {
  let summary = "Yields the results of one call of a map_elementwise function";
  let arguments = (ins Variadic<AnyType>:$result);
  let assemblyFormat = "$result attr-dict `:` type($result)";
}

#endif // KILN_OPS_TD
