//===- KilnShapeOps.td - shape operations of kiln ---------*- tablegen -*-===//
//
// Operations that move tensor elements around without computing: broadcast,
// expand_dims, reshape, trans, join, split and cat. Verifiers are in
// KilnShapeOps.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_SHAPE_OPS_TD
#define KILN_SHAPE_OPS_TD

def Kiln_BroadcastOp : Kiln_Op<"broadcast", [Pure,
    SameOperandsAndResultElementType]> {
  let summary = "Repeat a tensor along its size-1 dimensions";
  let description = [{
    The result has the operand's rank; every dimension is either the
    operand's or, where the operand's is 1, any size (the element repeats).
  }];
  let arguments = (ins AnyRankedTensor:$src);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_ExpandDimsOp : Kiln_Op<"expand_dims", [Pure,
    SameOperandsAndResultElementType]> {
  let summary = "Insert a size-1 dimension at `axis`";
  let arguments = (ins AnyRankedTensor:$src, I32Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_ReshapeOp : Kiln_Op<"reshape", [Pure,
    SameOperandsAndResultElementType]> {
  let summary = "The same elements in another shape";
  let description = [{
    Row-major reinterpretation of the operand's elements in the result's
    shape (same element count). With `allow_reorder`, the order of the
    elements in the result is unspecified (tl.reshape(can_reorder=True),
    tl.view, tl.ravel), which lets layouts avoid data movement. Kiln
    reorders only where nothing can see the order: a flattening that only
    reductions read (tl.sum(x) of a whole tile); elsewhere it keeps the
    row-major order, as upstream Triton does in practice.
  }];
  let arguments = (ins AnyRankedTensor:$src,
                       DefaultValuedAttr<BoolAttr, "false">:$allow_reorder);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// With allow_reorder, a flattening to 1-D that only reductions read:
    /// the order of its elements is never seen.
    bool flattensForReduction();
  }];
}

def Kiln_TransOp : Kiln_Op<"trans", [Pure, SameOperandsAndResultElementType]> {
  let summary = "Permute the dimensions of a tensor";
  let description = [{
    Result dimension i is operand dimension order[i] (numpy.transpose).
  }];
  let arguments = (ins AnyRankedTensor:$src, DenseI32ArrayAttr:$order);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$src `,` $order attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  // An identity order, or a trans undoing another (x.T.T), folds to the
  // operand where the types agree.
  let hasFolder = 1;
}

def Kiln_JoinOp : Kiln_Op<"join", [Pure, SameTypeOperands]> {
  let summary = "Stack two tensors along a new minor dimension of size 2";
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_SplitOp : Kiln_Op<"split", [Pure, AllTypesMatch<["lhs", "rhs"]>]> {
  let summary = "Split a tensor along its minor dimension, which has size 2";
  let description = [{
    The inverse of kiln.join: `lhs` holds the elements at index 0 of the last
    dimension, `rhs` those at index 1. A 1-D operand gives two scalars.
  }];
  let arguments = (ins AnyRankedTensor:$src);
  let results = (outs AnyType:$lhs, AnyType:$rhs);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($lhs)";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Kiln_ExtractOp : Kiln_Op<"extract", [Pure,
    SameOperandsAndResultElementType]> {
  let summary = "The rectangular piece of a tensor at static offsets";
  let description = [{
    result[i] = src[offsets + i], with the result's shape. Each offset is a
    multiple of the result's dimension there (the pieces tile the operand).
    Not a Triton construct: canonicalization makes it of the halves that
    split(permute(reshape(x, [..., 2, n]), swap of the last two)) takes of
    x's last dimension (tutorial 09's epilogue subtiling), so that layout
    assignment can keep them in the operand's layout, registers renamed.
  }];
  let arguments = (ins AnyRankedTensor:$src, DenseI64ArrayAttr:$offsets);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$src $offsets attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_CatOp : Kiln_Op<"cat", [Pure, SameTypeOperands]> {
  let summary = "Concatenate two tensors along dimension 0, in any order";
  let description = [{
    The result holds the elements of both operands; as with tl.cat, the order
    of the elements is unspecified (only use where order does not matter).
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_GatherOp : Kiln_Op<"gather", [Pure]> {
  let summary = "Pick elements of a tensor along one axis by index";
  let description = [{
    tl.gather: result[.., i, ..] = src[.., index[.., i, ..], ..] along
    `axis`, `index` agreeing with `src` on every other dimension; the
    result has `index`'s shape and `src`'s element type. An index outside
    [0, size of the axis) gives 0 (upstream leaves it undefined). Lowered
    through shared memory: src written once, each result element read at
    its index.
  }];
  let arguments = (ins AnyRankedTensor:$src,
                       RankedTensorOf<[AnySignlessInteger]>:$index,
                       I32Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$src `[` $index `]` attr-dict `:` type($src) `,` type($index) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_HistogramOp : Kiln_Op<"histogram", [Pure]> {
  let summary = "Count a 1-D tensor's values into bins 0 .. N-1";
  let description = [{
    tl.histogram: result[b] is how many elements of `input` (those `mask`
    keeps, when given) equal b; values outside [0, number of bins) count
    nowhere. Lowered to shared-memory atomics, one an element.
  }];
  let arguments = (ins RankedTensorOf<[AnySignlessInteger]>:$input,
                       Optional<RankedTensorOf<[I1]>>:$mask);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = "$input (`,` $mask^)? attr-dict `:` type(operands) `->` type($result)";
  let hasVerifier = 1;
}

#endif // KILN_SHAPE_OPS_TD
