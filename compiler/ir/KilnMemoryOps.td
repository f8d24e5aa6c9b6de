//===- KilnMemoryOps.td - atomics and block pointers -------*- tablegen -*-===//
//
// Atomic read-modify-write and compare-and-swap on global memory, block
// pointers (tl.make_block_ptr / tl.advance), the program-wide barrier, and
// the enums that kiln.load and kiln.store carry (cache modifier, eviction
// policy, padding).
// Verifiers are in KilnMemoryOps.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_MEMORY_OPS_TD
#define KILN_MEMORY_OPS_TD

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Kiln_CacheModifier : I32EnumAttr<"CacheModifier",
    "cache operator of a load or store (PTX ld/st qualifiers)", [
      I32EnumAttrCase<"None", 0, "none">,
      I32EnumAttrCase<"CA", 1, "ca">,
      I32EnumAttrCase<"CG", 2, "cg">,
      I32EnumAttrCase<"CV", 3, "cv">,
      I32EnumAttrCase<"WB", 4, "wb">,
      I32EnumAttrCase<"CS", 5, "cs">,
      I32EnumAttrCase<"WT", 6, "wt">,
    ]> {
  let cppNamespace = "::kiln";
}

def Kiln_EvictionPolicy : I32EnumAttr<"EvictionPolicy",
    "L2 eviction priority of a load or store", [
      I32EnumAttrCase<"Normal", 0, "evict_normal">,
      I32EnumAttrCase<"EvictFirst", 1, "evict_first">,
      I32EnumAttrCase<"EvictLast", 2, "evict_last">,
    ]> {
  let cppNamespace = "::kiln";
}

def Kiln_PaddingOption : I32EnumAttr<"PaddingOption",
    "value of out-of-bounds elements of a block-pointer load", [
      I32EnumAttrCase<"Zero", 0, "zero">,
      I32EnumAttrCase<"NaN", 1, "nan">,
    ]> {
  let cppNamespace = "::kiln";
}

def Kiln_RMWOp : I32EnumAttr<"RMWOp", "atomic read-modify-write operation", [
      I32EnumAttrCase<"Add", 0, "add">,
      I32EnumAttrCase<"FAdd", 1, "fadd">,
      I32EnumAttrCase<"Max", 2, "max">,
      I32EnumAttrCase<"UMax", 3, "umax">,
      I32EnumAttrCase<"Min", 4, "min">,
      I32EnumAttrCase<"UMin", 5, "umin">,
      I32EnumAttrCase<"And", 6, "and">,
      I32EnumAttrCase<"Or", 7, "or">,
      I32EnumAttrCase<"Xor", 8, "xor">,
      I32EnumAttrCase<"Xchg", 9, "xchg">,
    ]> {
  let cppNamespace = "::kiln";
}

def Kiln_MemSemantic : I32EnumAttr<"MemSemantic",
    "memory ordering of an atomic", [
      I32EnumAttrCase<"Relaxed", 0, "relaxed">,
      I32EnumAttrCase<"Acquire", 1, "acquire">,
      I32EnumAttrCase<"Release", 2, "release">,
      I32EnumAttrCase<"AcqRel", 3, "acq_rel">,
    ]> {
  let cppNamespace = "::kiln";
}

def Kiln_MemScope : I32EnumAttr<"MemScope",
    "the threads an atomic synchronizes with", [
      I32EnumAttrCase<"GPU", 0, "gpu">,
      I32EnumAttrCase<"CTA", 1, "cta">,
      I32EnumAttrCase<"System", 2, "sys">,
    ]> {
  let cppNamespace = "::kiln";
}

//===----------------------------------------------------------------------===//
// Block pointers
//===----------------------------------------------------------------------===//

def Kiln_BlockPointerType : Kiln_Type<"BlockPointer", "block_ptr"> {
  let summary = "A pointer to a block of a strided tensor in global memory";
  let description = [{
    The value of tl.make_block_ptr: a base pointer, the shape and strides of
    the whole tensor, and the offsets of a block of `tensorType`'s shape.
    Loading through it gives a `tensorType`.
  }];
  let parameters = (ins "::mlir::RankedTensorType":$tensorType);
  let assemblyFormat = "`<` $tensorType `>`";
  let builders = [
    TypeBuilderWithInferredContext<(ins "::mlir::RankedTensorType":$tensorType), [{
      return $_get(tensorType.getContext(), tensorType);
    }]>
  ];
}

def Kiln_BlockPtr : Type<CPred<"::llvm::isa<::kiln::BlockPointerType>($_self)">,
                         "kiln block pointer">;

// A descriptor argument's tensor map (KilnDescriptorOps.td); here because
// kiln.atomic_rmw carries one too.
def Kiln_TensorMapType : Kiln_Type<"TensorMap", "tensormap"> {
  let summary = "A CUDA tensor map passed to the kernel by value";
  let description = [{
    The 128-byte, 64-byte-aligned CUtensorMap of a descriptor kernel
    argument, encoded by the launcher (cuTensorMapEncodeTiled). The entry
    point receives it by value (a `.param .align 64 .b8 [128]`); its value
    is the parameter's generic address, which TMA instructions take.
  }];
}

def Kiln_TensorMap : Type<CPred<"::llvm::isa<::kiln::TensorMapType>($_self)">,
                          "kiln tensor map", "::kiln::TensorMapType">,
                     BuildableType<"::kiln::TensorMapType::get($_builder.getContext())">;

def Kiln_MakeTensorMapOp : Kiln_Op<"make_tensor_map", [
    AttrSizedOperandSegments, MemoryEffects<[MemWrite]>]> {
  let summary = "A tensor map the kernel encodes (tl.make_tensor_descriptor, TMA)";
  let description = [{
    The tensor map of the tensor at `base` with extents `shape` (i32) and
    strides `strides` (i64, in elements; the last is 1), outermost first,
    for TMA copies of boxes `box` (outermost first) into or out of shared
    tiles with a `swizzle`-byte swizzle. The program encodes it in its own
    128 bytes of the kernel's global scratch buffer (`scratch`, the hidden
    last parameter), at byte `scratch_offset` of its share, once every
    thread reaches it; the value is the map's generic address.

    kiln-lower-tensor-descriptors makes one per descriptor access that TMA
    may serve, without `box` and `swizzle`; kiln-pipeline-dots and
    kiln-tma-stores set them when they adopt the map; kiln-place-tensor-maps
    drops the maps nobody adopted, merges equal ones and sets
    `scratch_offset`.

    `assumes_alignment`: the 16-byte aligned base and strides that tensor
    maps need were not proved (they come from memory) but taken from
    tl.make_tensor_descriptor's contract; the program checks them before it
    encodes the map and traps when they break it. A map made where it may
    be encoded again (past the entry block) waits for the program's bulk
    copies first, which may still read the old one.
  }];
  let arguments = (ins Kiln_Ptr:$base, Variadic<I32>:$shape,
                       Variadic<I64>:$strides, Kiln_Ptr:$scratch,
                       OptionalAttr<DenseI64ArrayAttr>:$box,
                       OptionalAttr<I32Attr>:$swizzle,
                       OptionalAttr<I64Attr>:$scratch_offset,
                       UnitAttr:$assumes_alignment);
  let results = (outs Kiln_TensorMap:$result);
  let assemblyFormat = [{
    $base `,` `[` $shape `]` `,` `[` $strides `]` `,` `scratch` $scratch
    attr-dict `:` type($base) `,` type($scratch)
  }];
  let hasVerifier = 1;
}

def Kiln_MakeBlockPtrOp : Kiln_Op<"make_block_ptr", [Pure,
    AttrSizedOperandSegments]> {
  let summary = "A block pointer into a strided tensor, as tl.make_block_ptr";
  let description = [{
    `shape` and `strides` (in elements, i64) describe the whole tensor at
    `base`; `offsets` (i32) locate the block; `order` lists the dimensions
    from fastest- to slowest-varying in memory.
  }];
  let arguments = (ins Kiln_Ptr:$base, Variadic<I64>:$shape,
                       Variadic<I64>:$strides, Variadic<I32>:$offsets,
                       DenseI32ArrayAttr:$order);
  let results = (outs Kiln_BlockPtr:$result);
  let assemblyFormat = [{
    $base `,` `[` $shape `]` `,` `[` $strides `]` `,` `[` $offsets `]` `,` $order
    attr-dict `:` type($base) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kiln_AdvanceOp : Kiln_Op<"advance", [Pure, AllTypesMatch<["ptr", "result"]>]> {
  let summary = "Move a block pointer's offsets, as tl.advance";
  let arguments = (ins Kiln_BlockPtr:$ptr, Variadic<I32>:$offsets);
  let results = (outs Kiln_BlockPtr:$result);
  let assemblyFormat = "$ptr `,` `[` $offsets `]` attr-dict `:` type($ptr)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pointer casts
//===----------------------------------------------------------------------===//

def Kiln_PtrCastOp : Kiln_Op<"ptr_cast", [Pure]> {
  let summary = "Reinterpret pointers as pointers to another element type";
  let arguments = (ins Kiln_PtrLike:$src);
  let results = (outs Kiln_PtrLike:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_PtrToIntOp : Kiln_Op<"ptr_to_int", [Pure]> {
  let summary = "The address of a pointer as an i64";
  let arguments = (ins Kiln_PtrLike:$src);
  let results = (outs Kiln_IntLike:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_IntToPtrOp : Kiln_Op<"int_to_ptr", [Pure]> {
  let summary = "A pointer at an i64 address";
  let arguments = (ins Kiln_IntLike:$src);
  let results = (outs Kiln_PtrLike:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Atomics
//===----------------------------------------------------------------------===//

def Kiln_AtomicRMWOp : Kiln_Op<"atomic_rmw", [AllTypesMatch<["val", "result"]>,
    AttrSizedOperandSegments, MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Atomic read-modify-write; returns the old values";
  let description = [{
    For each element where `mask` is true (all when absent), atomically
    replaces `*ptr` by `*ptr op val` and returns the old value. On floats,
    max and min compare values (-0.0 below +0.0), as upstream Triton's
    sign-split integer atomics do; add on floats is fadd.

    `tensor_map` and `box_offsets`, set only by kiln-lower-tensor-descriptors
    for a descriptor reduction (whose old values nobody reads) on targets
    with TMA, say that the same elements are the box at those offsets of a
    kernel argument's tensor map: kiln-tma-stores may reduce the box into
    memory with TMA instead. Lowerings that do not know them ignore them.
  }];
  let arguments = (ins Kiln_RMWOp:$rmw_op, Kiln_PtrLike:$ptr, AnyType:$val,
                       Optional<Kiln_BoolLike>:$mask,
                       Optional<Kiln_TensorMap>:$tensor_map,
                       Variadic<I32>:$box_offsets, Kiln_MemSemantic:$sem,
                       Kiln_MemScope:$scope);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $rmw_op $sem $scope $ptr `,` $val (`,` `mask` $mask^)?
    (`tensor_map` $tensor_map^ `[` $box_offsets `]`)?
    attr-dict `:` type($ptr) `,` type($val) (`,` type($mask)^)?
  }];
  let builders = [
    OpBuilder<(ins "::kiln::RMWOp":$rmw_op, "::mlir::Value":$ptr,
                   "::mlir::Value":$val, "::mlir::Value":$mask,
                   "::kiln::MemSemantic":$sem, "::kiln::MemScope":$scope), [{
      build($_builder, $_state, val.getType(), rmw_op, ptr, val, mask,
            ::mlir::Value(), ::mlir::ValueRange(), sem, scope);
    }]>
  ];
  let hasVerifier = 1;
}

def Kiln_AtomicCASOp : Kiln_Op<"atomic_cas", [
    MemoryEffects<[MemRead, MemWrite]>,
    AllTypesMatch<["cmp", "val", "result"]>]> {
  let summary = "Atomic compare-and-swap; returns the old values";
  let description = [{
    For each element, atomically stores `val` at `ptr` if `*ptr == cmp`, and
    returns the old value.
  }];
  let arguments = (ins Kiln_PtrLike:$ptr, AnyType:$cmp, AnyType:$val,
                       Kiln_MemSemantic:$sem, Kiln_MemScope:$scope);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $sem $scope $ptr `,` $cmp `,` $val attr-dict `:` type($ptr) `,` type($val)
  }];
  let hasVerifier = 1;
}

def Kiln_BarrierOp : Kiln_Op<"barrier", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Synchronizes the program's threads (tl.debug_barrier)";
  let description = [{
    Every thread of the program waits here until all have arrived, and their
    memory accesses before it are visible to all after it (bar.sync 0).
  }];
  let assemblyFormat = "attr-dict";
}

def Kiln_PrintOp : Kiln_Op<"print", [MemoryEffects<[MemWrite]>]> {
  let summary = "Prints values from every thread (tl.device_print)";
  let description = [{
    Every thread prints, through the CUDA driver's printf, one line per
    element it holds of each operand: the program id, the element's index,
    `prefix` and the value (`hex`: as hexadecimal bits). `isSigned` tells,
    per operand, whether integers are signed.
  }];
  let arguments = (ins StrAttr:$prefix, BoolAttr:$hex,
                       DenseBoolArrayAttr:$isSigned, Variadic<AnyType>:$args);
  let assemblyFormat = "$prefix attr-dict ($args^ `:` type($args))?";
}

def Kiln_AssertOp : Kiln_Op<"assert", [MemoryEffects<[MemWrite]>]> {
  let summary = "Stops the kernel where a condition is false (tl.device_assert)";
  let description = [{
    When any element of `condition` is false, the thread calls the CUDA
    driver's __assertfail with `message`, `file`, `line` and `function`: the
    kernel stops and the launch's stream reports an error. Emitted only in
    debug builds (kilnc --debug), as upstream keeps it only with debug=True.
  }];
  let arguments = (ins Kiln_BoolLike:$condition, StrAttr:$message,
                       StrAttr:$file, I32Attr:$line, StrAttr:$function);
  let assemblyFormat = "$condition `,` $message attr-dict `:` type($condition)";
}

#endif // KILN_MEMORY_OPS_TD
